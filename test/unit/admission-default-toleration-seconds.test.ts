import {describe, expect, it} from '@jest/globals';
import {apiserverOptions} from '../../src/options/apiserver.js';
import {parseOptionValue} from '../../src/options/types.js';
import type {AdmissionPluginContext} from '../../src/daemons/apiserver/admission/interfaces.js';
import {DefaultTolerationSeconds, createDefaultTolerationSeconds, missingDefaultTolerations} from '../../src/daemons/apiserver/admission/plugins/default-toleration-seconds.js';
import {names} from '../../src/api/names.js';
import type {Toleration} from '../../src/daemons/apiserver/admission/plugins/pod-helpers.js';
import {pod, podAttributes} from '../helpers/admission-attributes.js';

const o = {notReadySeconds: 300, unreachableSeconds: 60};

describe('DefaultTolerationSeconds', () => {
  const notReady = () => names().taints.notReady;
  const unreachable = () => names().taints.unreachable;
  it.each<[string, Toleration[], Array<() => string>]>([
    ['no tolerations: both added', [], [notReady, unreachable]],
    ['tolerates not-ready NoExecute already', [{key: 'N', operator: 'Exists', effect: 'NoExecute'}], [unreachable]],
    ['an empty key tolerates both', [{operator: 'Exists'}], []],
    ['an empty effect counts for NoExecute', [{key: 'U', operator: 'Exists'}], [notReady]],
    ['a NoSchedule toleration does not count', [{key: 'N', operator: 'Exists', effect: 'NoSchedule'}], [notReady, unreachable]],
  ])('%s', (_title, given, expected) => {
    const tolerations = given.map((t) => ({...t, key: t.key === 'N' ? notReady() : t.key === 'U' ? unreachable() : t.key}));
    expect(missingDefaultTolerations(tolerations, o).map((t) => t.key)).toEqual(expected.map((f) => f()));
  });

  it('appends tolerations with the configured seconds to a pod, and leaves subresources alone', () => {
    const plugin = new DefaultTolerationSeconds(o);
    const p = pod();
    plugin.admit(podAttributes('CREATE', p));
    expect((p.spec as {tolerations: unknown[]}).tolerations).toEqual([
      {key: notReady(), operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300},
      {key: unreachable(), operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60},
    ]);
    const status = pod();
    plugin.admit(podAttributes('UPDATE', status, {subresource: 'status'}));
    expect((status.spec as {tolerations?: unknown}).tolerations).toBeUndefined();
    expect(plugin.handles('DELETE')).toBe(false);
  });
});

describe('DefaultTolerationSeconds: its options', () => {
  it.each(['default-not-ready-toleration-seconds', 'default-unreachable-toleration-seconds'])('--%s takes effect, defaults to 300 and refuses a negative count naming the option', (name) => {
    const spec = apiserverOptions.find((s) => s.name === name)!;
    expect(spec).toMatchObject({implemented: true, default: '300'});
    expect(parseOptionValue(spec, '120')).toBe(120);
    expect(() => parseOptionValue(spec, '-1')).toThrow(`--${name}`);
  });

  it('the factory reads the server options', () => {
    const plugin = createDefaultTolerationSeconds({serverOptions: {defaultNotReadyTolerationSeconds: 7}} as unknown as AdmissionPluginContext);
    const p = pod();
    plugin.admit(podAttributes('CREATE', p));
    expect((p.spec as {tolerations: Array<{tolerationSeconds: number}>}).tolerations.map((t) => t.tolerationSeconds)).toEqual([7, 300]);
  });
});
