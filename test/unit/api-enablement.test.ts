/**
 * --runtime-config, feature gates and emulation versions deciding the served built-in resources
 * (src/api/api-enablement.ts), and the compatibility versions' bounds (src/api/effective-version.ts),
 * with upstream's messages.
 */
import {describe, expect, it} from '@jest/globals';
import {enabledResources, RuntimeConfigError, type ApiEnablementOptions} from '../../src/api/api-enablement.js';
import {effectiveVersion, versionForComponent} from '../../src/api/effective-version.js';
import {FeatureGates} from '../../src/api/feature-gates.js';
import {names} from '../../src/api/names.js';
import {builtinResources} from '../../src/api/resources.js';
import {compatibilityConfig} from '../../src/daemons/apiserver/config.js';
import {parseConfigurationMap} from '../../src/options/value-maps.js';

const g = names().groups;
const v = (minor: number) => ({major: 1, minor});

function served(runtimeConfig: Record<string, string>, more: Partial<Omit<ApiEnablementOptions, 'gates'>> & {gates?: Record<string, boolean>} = {}): Set<string> {
  const emulationVersion = more.emulationVersion ?? v(36);
  const result = enabledResources(builtinResources(), {
    binaryVersion: v(36),
    ...more,
    runtimeConfig,
    emulationVersion,
    gates: new FeatureGates(more.gates ?? {}, {emulationVersion}),
  });
  return new Set(result.resources.map((r) => `${r.group}/${r.version}/${r.plural}`));
}

describe('runtime-config', () => {
  it('serves stable versions and leaves beta versions off by default', () => {
    const s = served({});
    expect(s.has('/v1/pods')).toBe(true);
    expect(s.has(`${g.networking}/v1/servicecidrs`)).toBe(true);
    expect(s.has(`${g.coordination}/v1beta1/leasecandidates`)).toBe(false);
    expect(s.has(`${g.admissionregistration}/v1beta1/mutatingadmissionpolicies`)).toBe(false);
  });

  it('a beta version needs both its runtime-config and its feature gate', () => {
    const key = `${g.coordination}/v1beta1`;
    expect(served({[key]: 'true'}).has(`${key}/leasecandidates`)).toBe(false);
    expect(served({[key]: 'true'}, {gates: {CoordinatedLeaderElection: true}}).has(`${key}/leasecandidates`)).toBe(true);
    const all = served({'api/beta': 'true'}, {gates: {AllBeta: true}});
    expect(all.has(`${g.certificates}/v1beta1/clustertrustbundles`)).toBe(true);
    expect(all.has(`${g.admissionregistration}/v1beta1/mutatingadmissionpolicybindings`)).toBe(true);
    // A bare group/version key (ConfigurationMap: the empty value) means true; api/beta must say true or false, as upstream.
    expect(served(parseConfigurationMap(`${g.certificates}/v1beta1`), {gates: {ClusterTrustBundle: true}}).has(`${g.certificates}/v1beta1/clustertrustbundles`)).toBe(true);
    expect(() => served(parseConfigurationMap('api/beta'))).toThrow('invalid value api/beta=');
  });

  it('switches whole groups and single resources; resources win over versions', () => {
    const s = served({[`${g.storage}/v1`]: 'false', [`${g.storage}/v1/storageclasses`]: 'true', 'apps/v1/deployments': 'false'});
    expect(s.has(`${g.storage}/v1/storageclasses`)).toBe(true);
    expect(s.has(`${g.storage}/v1/csidrivers`)).toBe(false);
    expect(s.has('apps/v1/deployments')).toBe(false);
    expect(s.has('apps/v1/statefulsets')).toBe(true);
    // api/all=false with one group back on; api/v1 is the core group.
    const only = served({'api/all': 'false', 'api/v1': 'true'});
    expect(only.has('/v1/configmaps')).toBe(true);
    expect(only.has('apps/v1/deployments')).toBe(false);
  });

  it('refuses unknown groups, unregistered versions and bad keys with upstream\'s messages', () => {
    expect(() => served({'example.com/v1': 'true', 'other.io/v2': 'false'})).toThrow('unknown api groups example.com,other.io');
    expect(() => served({'apps/v1beta2': 'true'})).toThrow('group version apps/v1beta2 that has not been registered');
    expect(() => served({apps: 'true'})).toThrow('runtime-config invalid key apps');
    expect(() => served({'api/all': 'false'})).toThrow('invalid key with only api/all=false');
    expect(() => served({'api/beta': 'maybe'})).toThrow('invalid value api/beta=maybe');
    expect(() => served({'apps/v1': 'maybe'})).toThrow(RuntimeConfigError);
  });

  it('emulating 1.33 drops resources introduced later; naming one is an error unless forward compatible', () => {
    const at33 = served({}, {emulationVersion: v(33)});
    expect(at33.has(`${g.resource}/v1/resourceclaims`)).toBe(false); // GA in 1.34
    expect(at33.has(`${g.storage}/v1/volumeattributesclasses`)).toBe(false);
    expect(at33.has(`${g.networking}/v1/servicecidrs`)).toBe(true); // 1.33
    const key = `${g.admissionregistration}/v1beta1`;
    expect(() => served({[key]: 'true'}, {emulationVersion: v(33), gates: {MutatingAdmissionPolicy: true}})).toThrow(
      `cannot enable version ${key} in runtime-config because all the resources have been introduced after the current version 1.33. Consider setting --runtime-config-emulation-forward-compatible=true`,
    );
    expect(() => served({[`${key}/mutatingadmissionpolicies`]: 'true'}, {emulationVersion: v(33), gates: {MutatingAdmissionPolicy: true}})).toThrow(
      `cannot enable resource ${key}, Resource=mutatingadmissionpolicies in runtime-config because it is introduced at 1.34 after the current version 1.33`,
    );
    const forward = served({[key]: 'true'}, {emulationVersion: v(33), gates: {MutatingAdmissionPolicy: true}, runtimeConfigEmulationForwardCompatible: true});
    expect(forward.has(`${key}/mutatingadmissionpolicies`)).toBe(true);
  });
});

describe('emulation forward compatibility', () => {
  const vac = (version: string) => `${g.storage}/${version}/volumeattributesclasses`;
  const storageBeta = {[`${g.storage}/v1beta1`]: 'true'};
  // [case, runtime-config, options, served, not served]
  const CASES: [string, Record<string, string>, Partial<Omit<ApiEnablementOptions, 'gates'>>, string[], string[]][] = [
    ['1.33, storage v1beta1 on: the beta only (v1 is 1.34)', storageBeta, {emulationVersion: v(33)}, [vac('v1beta1')], [vac('v1')]],
    ['1.33, storage v1beta1 on, forward compatible: both', storageBeta, {emulationVersion: v(33), emulationForwardCompatible: true}, [vac('v1beta1'), vac('v1')], []],
    ['1.33, forward compatible without the beta: nothing to follow', {}, {emulationVersion: v(33), emulationForwardCompatible: true}, [], [vac('v1beta1'), vac('v1')]],
    ['1.33, resource v1beta2 on, forward compatible: v1 claims too', {[`${g.resource}/v1beta2`]: 'true'}, {emulationVersion: v(33), emulationForwardCompatible: true},
      [`${g.resource}/v1beta2/resourceclaims`, `${g.resource}/v1/resourceclaims`, `${g.resource}/v1/resourceslices`], [`${g.resource}/v1beta1/resourceclaims`]],
    ['1.33, resource v1beta1 on, forward compatible: every higher version (v1beta2 is off by default, v1 is 1.34)', {[`${g.resource}/v1beta1`]: 'true'},
      {emulationVersion: v(33), emulationForwardCompatible: true}, [`${g.resource}/v1beta1/deviceclasses`, `${g.resource}/v1beta2/deviceclasses`, `${g.resource}/v1/deviceclasses`], []],
    ['forward compatibility keeps what runtime-config switches off', {[`${g.resource}/v1beta1`]: 'true', [`${g.resource}/v1beta2`]: 'false'},
      {emulationVersion: v(33), emulationForwardCompatible: true}, [`${g.resource}/v1/resourceslices`], [`${g.resource}/v1beta2/resourceslices`]],
    ['1.33, resource v1beta1 only: no v1', {[`${g.resource}/v1beta1`]: 'true'}, {emulationVersion: v(33)}, [`${g.resource}/v1beta1/deviceclasses`], [`${g.resource}/v1/deviceclasses`]],
    ['1.34, networking v1beta1 on: betas beside v1', {[`${g.networking}/v1beta1`]: 'true'}, {emulationVersion: v(34)},
      [`${g.networking}/v1beta1/ipaddresses`, `${g.networking}/v1beta1/servicecidrs`, `${g.networking}/v1/ipaddresses`], []],
    // runtime-config's own forward compatibility is unchanged: naming v1 needs its flag, not this one.
    ['1.33, v1 named with runtime-config forward compatibility', {[vac('v1')]: 'true'}, {emulationVersion: v(33), runtimeConfigEmulationForwardCompatible: true}, [vac('v1')], [vac('v1beta1')]],
  ];
  it.each(CASES)('%s', (_name, runtimeConfig, options, yes, no) => {
    const s = served(runtimeConfig, options);
    for (const r of yes) expect([r, s.has(r)]).toEqual([r, true]);
    for (const r of no) expect([r, s.has(r)]).toEqual([r, false]);
  });

  it('leaves the default served set without any of the betas', () => {
    for (const emulationVersion of [v(33), v(36)]) {
      const betas = [...served({}, {emulationVersion})].filter((r) => /^(storage|networking|resource)\.[^/]+\/v1beta/.test(r));
      expect(betas).toEqual([]);
    }
  });
});

describe('compatibility versions', () => {
  it('accepts n-3..n and refuses the rest naming the range', () => {
    expect(effectiveVersion(v(36), v(33))).toEqual({binary: v(36), emulation: v(33), minCompatibility: v(33)});
    expect(effectiveVersion(v(36), v(35))).toMatchObject({minCompatibility: v(34)});
    expect(() => effectiveVersion(v(36), v(32))).toThrow('emulation version 1.32 is not between [1.33.0, 1.36.0]');
    expect(() => effectiveVersion(v(36), v(37))).toThrow('emulation version 1.37 is not between [1.33.0, 1.36.0]');
    expect(() => effectiveVersion(v(36), v(34), v(35))).toThrow('minCompatibilityVersion version 1.35 is not between [1.33.0, 1.34]');
  });

  it('reads kube= and bare versions, refuses other components and bad text', () => {
    expect(versionForComponent(['kube=1.34'], 'emulated-version')).toEqual(v(34));
    expect(versionForComponent(['1.35'], 'emulated-version')).toEqual(v(35));
    expect(() => versionForComponent(['wardle=1.2'], 'emulated-version')).toThrow('--emulated-version: component not registered: wardle');
    expect(() => versionForComponent(['one.two'], 'emulated-version')).toThrow('--emulated-version: illegal version string "one.two"');
  });

  it('the server options: gates at the emulated version, forward compatibility only when emulating', () => {
    const c = compatibilityConfig({'emulated-version': ['1.35'], 'feature-gates': {}});
    expect(c.featureGates!.enabled('DRADeviceTaints')).toBe(false); // beta on only from 1.36
    expect(() => compatibilityConfig({'emulation-forward-compatible': true})).toThrow(
      '--emulation-forward-compatible: ServerRunOptions.EmulationForwardCompatible cannot be set to true if the emulation version is the same as the binary version',
    );
    expect(() => compatibilityConfig({'emulated-version': ['1.30']})).toThrow('emulation version 1.30 is not between [1.33.0, 1.36.0]');
  });
});
