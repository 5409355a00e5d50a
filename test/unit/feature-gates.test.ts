/**
 * The feature gate registry: upstream's versioned defaults, --feature-gates validation with
 * upstream's messages (unknown gate, locked gate, PreAlpha, dependencies), the GA/deprecated
 * warnings, AllAlpha/AllBeta, and emulation versions moving the defaults.
 */
import {describe, expect, it} from '@jest/globals';
import {FeatureGates, knownFeatureGates} from '../../src/api/feature-gates.js';
import {featureGatesConfig} from '../../src/daemons/apiserver/config.js';

const at = (minor: number) => ({emulationVersion: {major: 1, minor}});

describe('feature gates', () => {
  it('has upstream defaults at 1.36: beta-on, beta-off, alpha, GA', () => {
    const gates = new FeatureGates({}, at(36));
    expect(gates.enabled('APIResponseCompression')).toBe(true);
    expect(gates.enabled('CoordinatedLeaderElection')).toBe(false);
    expect(gates.enabled('MutatingAdmissionPolicy')).toBe(false);
    expect(gates.enabled('StorageVersionAPI')).toBe(false);
    expect(gates.enabled('StructuredAuthenticationConfiguration')).toBe(true);
    expect(gates.spec('DRAAdminAccess')).toMatchObject({preRelease: 'GA', lockToDefault: true});
  });

  it('moves defaults with the emulated version', () => {
    // DRADeviceTaints: alpha (off) in 1.33-1.35, beta on in 1.36.
    expect(new FeatureGates({}, at(35)).enabled('DRADeviceTaints')).toBe(false);
    expect(new FeatureGates({}, at(36)).enabled('DRADeviceTaints')).toBe(true);
    // WatchList flipped off in 1.33 and on again in 1.34.
    expect(new FeatureGates({}, at(33)).enabled('WatchList')).toBe(false);
    expect(new FeatureGates({}, at(34)).enabled('WatchList')).toBe(true);
  });

  it('sets gates and reports them as explicit', () => {
    const gates = new FeatureGates({CoordinatedLeaderElection: true, 'kube:APIResponseCompression': false}, at(36));
    expect(gates.enabled('CoordinatedLeaderElection')).toBe(true);
    expect(gates.enabled('APIResponseCompression')).toBe(false);
    expect(gates.explicitlySet('CoordinatedLeaderElection')).toBe(true);
    expect(gates.explicitlySet('WatchList')).toBe(false);
  });

  it('refuses an unknown gate naming it', () => {
    expect(() => new FeatureGates({NoSuchGate: true}, at(36))).toThrow('unrecognized feature gate: NoSuchGate');
    expect(() => new FeatureGates({'other:WatchList': true}, at(36))).toThrow('component not registered: other');
  });

  it('refuses a locked gate set away from its default, with upstream\'s message', () => {
    expect(() => new FeatureGates({StructuredAuthorizationConfiguration: false}, at(36))).toThrow(
      'cannot set feature gate StructuredAuthorizationConfiguration to false, feature is locked to true',
    );
    // Setting it to its locked value is accepted, with the GA warning.
    const gates = new FeatureGates({StructuredAuthorizationConfiguration: true}, at(36));
    expect(gates.warnings).toEqual(['Setting GA feature gate StructuredAuthorizationConfiguration=true. It will be removed in a future release.']);
  });

  it('warns for deprecated gates', () => {
    const gates = new FeatureGates({KMSv1: true}, at(36));
    expect(gates.enabled('KMSv1')).toBe(true);
    expect(gates.warnings).toEqual(['Setting deprecated feature gate KMSv1=true. It will be removed in a future release.']);
  });

  it('refuses a gate before its first release (PreAlpha at the emulated version)', () => {
    expect(() => new FeatureGates({GangScheduling: true, GenericWorkload: true}, at(34))).toThrow(
      'cannot set feature gate GangScheduling to true, feature is PreAlpha at emulated version 1.34',
    );
  });

  it('checks dependencies as upstream', () => {
    expect(() => new FeatureGates({GangScheduling: true}, at(36))).toThrow(
      'GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]',
    );
    expect(new FeatureGates({GangScheduling: true, GenericWorkload: true}, at(36)).enabled('GangScheduling')).toBe(true);
  });

  it('AllAlpha turns every alpha gate on, explicit settings win', () => {
    const gates = new FeatureGates({AllAlpha: true, StorageVersionAPI: false}, at(36));
    expect(gates.enabled('GenericWorkload')).toBe(true);
    expect(gates.enabled('StorageVersionAPI')).toBe(false);
    expect(gates.enabled('CoordinatedLeaderElection')).toBe(false); // beta
    expect(new FeatureGates({AllBeta: true}, at(36)).enabled('CoordinatedLeaderElection')).toBe(true);
  });

  it('every table entry is well formed as upstream requires (increasing versions, no stage regressions)', () => {
    const order = {PreAlpha: 0, Alpha: 1, Beta: 2, GA: 3, Deprecated: 4};
    for (const [name, specs] of knownFeatureGates()) {
      for (let i = 1; i < specs.length; i++) {
        const [a, b] = [specs[i - 1]!, specs[i]!];
        expect({name, ok: a.version.major < b.version.major || a.version.minor < b.version.minor}).toEqual({name, ok: true});
        if (b.preRelease !== 'Deprecated') expect({name, ok: order[b.preRelease] >= order[a.preRelease]}).toEqual({name, ok: true});
      }
    }
  });

  it('the API server configuration reports a bad --feature-gates as a user error', () => {
    expect(() => featureGatesConfig({'feature-gates': {Bogus: true}})).toThrow('invalid argument for --feature-gates: unrecognized feature gate: Bogus');
    expect(featureGatesConfig({}).enabled('APIResponseCompression')).toBe(true);
  });
});
