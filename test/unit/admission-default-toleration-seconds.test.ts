import {describe, expect, it} from '@jest/globals';
import {DefaultTolerationSeconds, missingDefaultTolerations} from '../../src/daemons/apiserver/admission/plugins/default-toleration-seconds.js';
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
