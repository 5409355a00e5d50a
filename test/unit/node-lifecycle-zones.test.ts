import {describe, expect, it} from '@jest/globals';
import {
  DEFAULT_NODE_LIFECYCLE_OPTIONS,
  computeZoneState,
  handleDisruption,
  zoneDisplayName,
  zoneEvictionRate,
  zoneKey,
  type Node,
  type ZoneCounts,
  type ZoneState,
} from '../../src/daemons/controller-manager/node-lifecycle/index.js';

const opts = DEFAULT_NODE_LIFECYCLE_OPTIONS;

describe('zone key from labels', () => {
  const node = (labels?: Record<string, string>): Node => ({metadata: {name: 'n', labels}});
  it.each([
    ['no labels', undefined, ''],
    ['unrelated labels', {'orch.io/hostname': 'n'}, ''],
    ['region and zone', {'topology.orch.io/region': 'eu', 'topology.orch.io/zone': 'eu-1'}, 'eu:\x00:eu-1'],
    ['zone only', {'topology.orch.io/zone': 'a'}, ':\x00:a'],
    ['region only', {'topology.orch.io/region': 'r'}, 'r:\x00:'],
    ['beta labels win', {'failure-domain.beta.orch.io/zone': 'old', 'topology.orch.io/zone': 'new'}, ':\x00:old'],
  ])('%s', (_name, labels, expected) => {
    expect(zoneKey(node(labels))).toBe(expected);
  });

  it('is displayed as region/zone, the unlabelled zone as the cluster', () => {
    expect(zoneDisplayName('eu:\x00:eu-1')).toBe('eu/eu-1');
    expect(zoneDisplayName('')).toBe('(cluster)');
  });
});

describe('zone state from ready / not-ready counts (threshold 0.55)', () => {
  it.each<[number, number, ZoneState]>([
    [0, 0, 'Normal'], // no nodes counted
    [1, 0, 'Normal'],
    [0, 1, 'FullDisruption'],
    [0, 2, 'FullDisruption'],
    [0, 10, 'FullDisruption'],
    [1, 2, 'Normal'], // 67% not ready, but only 2 not ready: at least 3 are needed
    [0, 3, 'FullDisruption'],
    [1, 3, 'PartialDisruption'], // 75%, 3 not ready
    [2, 3, 'PartialDisruption'], // 60%
    [3, 3, 'Normal'], // 50% < 55%
    [9, 11, 'PartialDisruption'], // exactly 55%
    [10, 10, 'Normal'],
    [100, 2, 'Normal'],
    [45, 55, 'PartialDisruption'],
    [46, 54, 'Normal'],
  ])('%i ready, %i not ready -> %s', (ready, notReady, expected) => {
    expect(computeZoneState({ready, notReady}, 0.55)).toBe(expected);
  });

  it.each<[number, number, number, ZoneState]>([
    [0.0, 10, 3, 'PartialDisruption'], // threshold 0: any 3 not-ready nodes
    [0.0, 10, 2, 'Normal'],
    [1.0, 1, 3, 'Normal'], // 75% < 100%
    [0.3, 7, 3, 'PartialDisruption'],
  ])('threshold %f: %i ready, %i not ready -> %s', (threshold, ready, notReady, expected) => {
    expect(computeZoneState({ready, notReady}, threshold)).toBe(expected);
  });
});

describe('eviction rate per zone state', () => {
  it.each<[ZoneState, number, number]>([
    ['Normal', 3, 0.1],
    ['Normal', 500, 0.1],
    ['FullDisruption', 3, 0.1],
    ['PartialDisruption', 50, 0], // at the threshold: small zone, evictions stop
    ['PartialDisruption', 10, 0],
    ['PartialDisruption', 51, 0.01], // more than the threshold: secondary rate
    ['PartialDisruption', 1000, 0.01],
  ])('%s in a zone of %i nodes -> %f nodes/s', (state, size, rate) => {
    expect(zoneEvictionRate(state, size, opts)).toBe(rate);
  });

  it('the large-cluster threshold is configurable', () => {
    const rates = {...opts, largeClusterSizeThreshold: 5, secondaryNodeEvictionRate: 0.05};
    expect(zoneEvictionRate('PartialDisruption', 5, rates)).toBe(0);
    expect(zoneEvictionRate('PartialDisruption', 6, rates)).toBe(0.05);
  });
});

describe('handleDisruption across zones', () => {
  const counts = (entries: Record<string, [number, number]>) =>
    new Map<string, ZoneCounts>(Object.entries(entries).map(([zone, [ready, notReady]]) => [zone, {ready, notReady}]));
  const states = (entries: Record<string, ZoneState>) => new Map(Object.entries(entries));

  it('a new zone goes from Initial to its computed state with that state\'s rate', () => {
    const d = handleDisruption(new Map(), counts({a: [5, 0], b: [1, 3]}), opts);
    expect(Object.fromEntries(d.zoneStates)).toEqual({a: 'Normal', b: 'PartialDisruption'});
    expect(Object.fromEntries(d.limiterRates)).toEqual({a: 0.1, b: 0});
    expect(d.enterMasterDisruption).toBe(false);
  });

  it('zones whose state did not change keep their limiter', () => {
    const d = handleDisruption(states({a: 'Normal', b: 'Normal'}), counts({a: [5, 0], b: [2, 3]}), opts);
    expect(Object.fromEntries(d.limiterRates)).toEqual({b: 0});
    expect(d.zoneStates.get('b')).toBe('PartialDisruption');
  });

  it('partial disruption in a large zone uses the secondary rate', () => {
    const d = handleDisruption(states({big: 'Normal'}), counts({big: [20, 40]}), opts);
    expect(d.limiterRates.get('big')).toBe(0.01);
  });

  it('one fully disrupted zone among healthy ones keeps the primary rate', () => {
    const d = handleDisruption(states({a: 'Normal', b: 'Normal'}), counts({a: [5, 0], b: [0, 5]}), opts);
    expect(d.zoneStates.get('b')).toBe('FullDisruption');
    expect(d.limiterRates.get('b')).toBe(0.1);
    expect(d.enterMasterDisruption).toBe(false);
  });

  it('all zones fully disrupted: every limiter stops and taints are to be removed', () => {
    const d = handleDisruption(states({a: 'Normal', b: 'FullDisruption'}), counts({a: [0, 5], b: [0, 5]}), opts);
    expect(d.enterMasterDisruption).toBe(true);
    expect(Object.fromEntries(d.limiterRates)).toEqual({a: 0, b: 0});
    expect(Object.fromEntries(d.zoneStates)).toEqual({a: 'FullDisruption', b: 'FullDisruption'});
  });

  it('staying fully disrupted everywhere changes nothing', () => {
    const d = handleDisruption(states({a: 'FullDisruption', b: 'FullDisruption'}), counts({a: [0, 5], b: [0, 4]}), opts);
    expect(d.enterMasterDisruption).toBe(false);
    expect(d.exitMasterDisruption).toBe(false);
    expect(d.limiterRates.size).toBe(0);
  });

  it('leaving full disruption resets every zone limiter to its new state and asks for fresh grace periods', () => {
    const d = handleDisruption(states({a: 'FullDisruption', b: 'FullDisruption'}), counts({a: [5, 0], b: [0, 5]}), opts);
    expect(d.exitMasterDisruption).toBe(true);
    expect(Object.fromEntries(d.limiterRates)).toEqual({a: 0.1, b: 0.1});
    expect(Object.fromEntries(d.zoneStates)).toEqual({a: 'Normal', b: 'FullDisruption'});
  });

  it('a single-zone cluster with every node down is "all zones" disrupted', () => {
    const d = handleDisruption(states({'': 'Normal'}), counts({'': [0, 3]}), opts);
    expect(d.enterMasterDisruption).toBe(true);
    expect(d.limiterRates.get('')).toBe(0);
  });

  it('zones without nodes are forgotten', () => {
    const d = handleDisruption(states({a: 'Normal', gone: 'PartialDisruption'}), counts({a: [3, 0]}), opts);
    expect([...d.zoneStates.keys()]).toEqual(['a']);
  });

  it('no nodes at all: nothing to decide', () => {
    const d = handleDisruption(states({a: 'Normal'}), counts({}), opts);
    expect(d.zoneStates.size).toBe(0);
    expect(d.enterMasterDisruption).toBe(false);
  });
});
