import {describe, expect, it} from '@jest/globals';
import {
  TaintEvictionScheduler,
  desiredNoScheduleTaints,
  minTolerationMs,
  noExecuteTaintFor,
  noScheduleTaintChange,
  swapTaints,
  toleratesTaint,
  type Node,
  type Pod,
  type Taint,
  type Toleration,
} from '../../src/daemons/controller-manager/node-lifecycle/index.js';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const unreachable: Taint = {key: 'node.orch.io/unreachable', effect: 'NoExecute'};
const notReady: Taint = {key: 'node.orch.io/not-ready', effect: 'NoExecute'};

const nodeWith = (conditions: Record<string, string>, taints: Taint[] = [], unschedulable = false): Node => ({
  metadata: {name: 'n1'},
  spec: {taints, unschedulable},
  status: {conditions: Object.entries(conditions).map(([type, status]) => ({type, status}))},
});

describe('NoExecute taint for the Ready status', () => {
  it.each([
    ['Unknown', 'node.orch.io/unreachable', 'node.orch.io/not-ready'],
    [undefined, 'node.orch.io/unreachable', 'node.orch.io/not-ready'],
    ['False', 'node.orch.io/not-ready', 'node.orch.io/unreachable'],
    ['True', undefined, undefined],
  ])('Ready=%s -> %s (removing %s)', (status, key, opposite) => {
    const {taint, opposite: other} = noExecuteTaintFor(status);
    expect(taint?.key).toBe(key);
    expect(other?.key).toBe(opposite);
    if (taint) expect(taint.effect).toBe('NoExecute');
  });
});

describe('NoSchedule taints mirror the conditions', () => {
  it.each<[string, Record<string, string>, boolean, string[]]>([
    ['healthy', {Ready: 'True', MemoryPressure: 'False'}, false, []],
    ['not ready', {Ready: 'False'}, false, ['node.orch.io/not-ready']],
    ['unreachable', {Ready: 'Unknown'}, false, ['node.orch.io/unreachable']],
    ['pressures', {Ready: 'True', MemoryPressure: 'True', DiskPressure: 'True', PIDPressure: 'True'}, false, [
      'node.orch.io/memory-pressure',
      'node.orch.io/disk-pressure',
      'node.orch.io/pid-pressure',
    ]],
    ['network', {Ready: 'True', NetworkUnavailable: 'True'}, false, ['node.orch.io/network-unavailable']],
    ['cordoned', {Ready: 'True'}, true, ['node.orch.io/unschedulable']],
    ['pressure Unknown is no taint', {Ready: 'True', MemoryPressure: 'Unknown'}, false, []],
  ])('%s', (_name, conditions, unschedulable, keys) => {
    const taints = desiredNoScheduleTaints(nodeWith(conditions, [], unschedulable));
    expect(taints.map((t) => t.key)).toEqual(keys);
    expect(taints.every((t) => t.effect === 'NoSchedule' && !t.value)).toBe(true);
  });

  it('adds the missing, removes stale controller taints, and leaves foreign taints alone', () => {
    const node = nodeWith({Ready: 'Unknown'}, [
      {key: 'node.orch.io/not-ready', effect: 'NoSchedule'},
      {key: 'dedicated', value: 'gpu', effect: 'NoSchedule'},
      {key: 'node.orch.io/unreachable', effect: 'NoExecute'},
    ]);
    const change = noScheduleTaintChange(node);
    expect(change.add).toEqual([{key: 'node.orch.io/unreachable', effect: 'NoSchedule'}]);
    expect(change.remove).toEqual([{key: 'node.orch.io/not-ready', effect: 'NoSchedule'}]);
  });
});

describe('swapTaints', () => {
  it('stamps added taints, replaces by key and effect, and removes', () => {
    const current: Taint[] = [{key: 'dedicated', value: 'gpu', effect: 'NoSchedule'}, {...notReady, timeAdded: '2020-01-01T00:00:00Z'}];
    const result = swapTaints(current, [unreachable], [notReady], T0);
    expect(result).toEqual([{key: 'dedicated', value: 'gpu', effect: 'NoSchedule'}, {...unreachable, timeAdded: '2025-01-01T00:00:00Z'}]);
  });
});

describe('tolerations', () => {
  it.each<[string, Toleration, Taint, boolean]>([
    ['exists on the key', {key: 'node.orch.io/unreachable', operator: 'Exists'}, unreachable, true],
    ['empty key with Exists tolerates everything', {operator: 'Exists'}, unreachable, true],
    ['other effect', {key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoSchedule'}, unreachable, false],
    ['other key', {key: 'node.orch.io/not-ready', operator: 'Exists'}, unreachable, false],
    ['Equal with matching empty value', {key: 'node.orch.io/unreachable', operator: 'Equal'}, unreachable, true],
    ['default operator is Equal', {key: 'node.orch.io/unreachable', value: 'x'}, unreachable, false],
  ])('%s', (_name, toleration, taint, expected) => {
    expect(toleratesTaint(toleration, taint)).toBe(expected);
  });

  it.each<[string, Toleration[], number]>([
    ['none: now', [], 0],
    ['no seconds: forever', [{operator: 'Exists'}], -1],
    ['smallest wins', [{tolerationSeconds: 300}, {tolerationSeconds: 30}], 30_000],
    ['zero or negative: now', [{tolerationSeconds: 300}, {tolerationSeconds: 0}], 0],
    ['seconds beat forever', [{}, {tolerationSeconds: 60}], 60_000],
  ])('minimum toleration time: %s', (_name, tolerations, expected) => {
    expect(minTolerationMs(tolerations)).toBe(expected);
  });
});

describe('taint-based eviction scheduling', () => {
  const pod = (name: string, tolerations?: Toleration[]): Pod => ({metadata: {name, namespace: 'default'}, spec: {nodeName: 'n1', tolerations}});
  const defaultTolerations = (seconds: number): Toleration[] => [
    {key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds},
    {key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds},
  ];

  it('deletes intolerant pods now, tolerating pods after their seconds, never the ones tolerating forever', () => {
    const s = new TaintEvictionScheduler();
    const pods = [pod('plain'), pod('default-tolerations', defaultTolerations(300)), pod('daemon', [{operator: 'Exists', effect: 'NoExecute'}])];
    s.reconcileNode('n1', [unreachable], pods, T0);
    expect(s.due(T0).map((p) => p.name)).toEqual(['plain']);
    expect(s.fireTime('default', 'default-tolerations')).toBe(T0 + 300_000);
    expect(s.fireTime('default', 'daemon')).toBeUndefined();
    expect(s.pendingOn('n1')).toBe(2);
  });

  it('keeps the first deletion time when re-evaluated later', () => {
    const s = new TaintEvictionScheduler();
    s.reconcileNode('n1', [unreachable], [pod('p', defaultTolerations(300))], T0);
    s.reconcileNode('n1', [unreachable], [pod('p', defaultTolerations(300))], T0 + 100_000);
    expect(s.due(T0 + 299_999)).toEqual([]);
    expect(s.due(T0 + 300_000).map((p) => p.name)).toEqual(['p']);
  });

  it('cancels when the taints go away or the pod disappears', () => {
    const s = new TaintEvictionScheduler();
    s.reconcileNode('n1', [unreachable], [pod('a', defaultTolerations(300)), pod('b', defaultTolerations(300))], T0);
    const result = s.reconcileNode('n1', [unreachable], [pod('a', defaultTolerations(300))], T0 + 1);
    expect(result.cancelled).toEqual([]); // b is gone: nothing to announce
    expect(s.pendingOn('n1')).toBe(1);
    const cleared = s.reconcileNode('n1', [], [pod('a', defaultTolerations(300))], T0 + 2);
    expect(cleared.cancelled.map((p) => p.name)).toEqual(['a']);
    expect(s.due(T0 + 1_000_000)).toEqual([]);
  });

  it('a pod that must tolerate a second taint it does not tolerate is deleted now', () => {
    const s = new TaintEvictionScheduler();
    const onlyUnreachable: Toleration[] = [{key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300}];
    s.reconcileNode('n1', [unreachable, {key: 'maintenance', effect: 'NoExecute'}], [pod('p', onlyUnreachable)], T0);
    expect(s.due(T0).map((p) => p.name)).toEqual(['p']);
  });

  it('done() removes the pod from the pending evictions', () => {
    const s = new TaintEvictionScheduler();
    s.reconcileNode('n1', [notReady], [pod('p')], T0);
    const [ref] = s.due(T0);
    s.done(ref);
    expect(s.pendingOn('n1')).toBe(0);
  });
});
