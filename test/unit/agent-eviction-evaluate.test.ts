import { describe, expect, it } from '@jest/globals';
import {
  INITIAL_EVICTION_STATE,
  evaluate,
  rankPods,
  type EvictionConfig,
  type EvictionDecision,
  type EvictionPod,
  type EvictionState,
  type Observations,
} from '../../src/daemons/agent/eviction/index.js';
import { Gi, Mi, T0, configOf, observed, podOf } from './agent-eviction-fixtures.js';

/** Runs evaluate over a timeline, feeding each decision's state into the next step. */
function run(config: EvictionConfig, steps: { at: number; obs: Observations; pods?: EvictionPod[] }[]): EvictionDecision[] {
  let state: EvictionState = INITIAL_EVICTION_STATE;
  return steps.map(({ at, obs, pods }) => {
    const decision = evaluate(state, obs, config, at, pods ?? [podOf('victim', { memory: 300 * Mi })]);
    state = decision.nextState;
    return decision;
  });
}

const memory = (at: number, available: number) => ({ at, obs: observed(at, { 'memory.available': [available, 8 * Gi] }) });
const s = 1000;

describe('hard and soft thresholds over time', () => {
  const soft = configOf({ soft: 'memory.available<1536Mi', grace: 'memory.available=1m30s', transitionMs: 300 * s });
  it.each([
    {
      name: 'hard threshold trips at the first cycle that sees it',
      config: configOf({ hard: 'memory.available<1Gi' }),
      steps: [memory(T0, 800 * Mi)],
      evicts: [true],
    },
    {
      name: 'hard threshold not met: nothing happens',
      config: configOf({ hard: 'memory.available<1Gi' }),
      steps: [memory(T0, 2 * Gi)],
      evicts: [false],
    },
    {
      name: 'available exactly at the threshold is not below it',
      config: configOf({ hard: 'memory.available<1Gi' }),
      steps: [memory(T0, Gi)],
      evicts: [false],
    },
    {
      name: 'soft threshold evicts only once held for its grace period',
      config: soft,
      steps: [memory(T0, Gi), memory(T0 + 60 * s, Gi), memory(T0 + 89 * s, Gi), memory(T0 + 90 * s, Gi)],
      evicts: [false, false, false, true],
    },
    {
      name: 'soft timer resets when a cycle sees the signal recover before the grace period',
      config: soft,
      steps: [memory(T0, Gi), memory(T0 + 60 * s, 2 * Gi), memory(T0 + 70 * s, Gi), memory(T0 + 150 * s, Gi), memory(T0 + 160 * s, Gi)],
      evicts: [false, false, false, false, true],
    },
  ])('$name', ({ config, steps, evicts }) => {
    expect(run(config, steps).map((d) => d.evict !== undefined)).toEqual(evicts);
  });

  it('reports a pending soft threshold with its deadline, restarted after recovery', () => {
    const decisions = run(soft, [memory(T0, Gi), memory(T0 + 60 * s, 2 * Gi), memory(T0 + 70 * s, Gi)]);
    expect(decisions[0].thresholdsNotYetMet.map((p) => [p.threshold.id, p.deadline])).toEqual([['soft:memory.available', T0 + 90 * s]]);
    expect(decisions[1].thresholdsNotYetMet).toEqual([]);
    expect(decisions[2].thresholdsNotYetMet[0].deadline).toBe(T0 + 160 * s);
    // The condition needs no grace period: it is set while the soft threshold is still pending.
    expect(decisions[0].conditions.MemoryPressure).toBe(true);
  });
});

describe('pressure conditions', () => {
  it('stay set until clear for the whole transition period', () => {
    const config = configOf({ hard: 'memory.available<1Gi', transitionMs: 300 * s });
    const decisions = run(config, [
      memory(T0, 800 * Mi),
      memory(T0 + 10 * s, 2 * Gi),
      memory(T0 + 299 * s, 2 * Gi),
      memory(T0 + 300 * s, 2 * Gi),
    ]);
    expect(decisions.map((d) => d.conditions.MemoryPressure)).toEqual([true, true, true, false]);
  });

  it('a renewed observation restarts the countdown', () => {
    const config = configOf({ hard: 'memory.available<1Gi', transitionMs: 300 * s });
    const decisions = run(config, [memory(T0, 800 * Mi), memory(T0 + 200 * s, 800 * Mi), memory(T0 + 400 * s, 2 * Gi), memory(T0 + 500 * s, 2 * Gi)]);
    expect(decisions.map((d) => d.conditions.MemoryPressure)).toEqual([true, true, true, false]);
  });

  it.each([
    ['memory.available', 'MemoryPressure'],
    ['allocatableMemory.available', 'MemoryPressure'],
    ['nodefs.available', 'DiskPressure'],
    ['nodefs.inodesFree', 'DiskPressure'],
    ['imagefs.available', 'DiskPressure'],
    ['imagefs.inodesFree', 'DiskPressure'],
    ['containerfs.available', 'DiskPressure'],
    ['containerfs.inodesFree', 'DiskPressure'],
    ['pid.available', 'PIDPressure'],
  ] as const)('%s maps to %s only', (signal, condition) => {
    const config = configOf({ hard: `${signal}<50%` });
    const [decision] = run(config, [{ at: T0, obs: observed(T0, { [signal]: [10, 100] }) }]);
    expect(Object.entries(decision.conditions).filter(([, on]) => on).map(([type]) => type)).toEqual([condition]);
  });
});

describe('minimum reclaim', () => {
  it.each([
    { reclaim: 'memory.available=500Mi', evicts: [true, true, false], pressure: [true, true, true] },
    { reclaim: 'none', evicts: [true, false, false], pressure: [true, true, true] },
  ])('with $reclaim reclaim, acting keeps going until the threshold plus reclaim is free', ({ reclaim, evicts, pressure }) => {
    const config = configOf({ hard: 'memory.available<1Gi', reclaim: reclaim === 'none' ? undefined : reclaim, transitionMs: 300 * s });
    const decisions = run(config, [memory(T0, 800 * Mi), memory(T0 + 10 * s, 1200 * Mi), memory(T0 + 20 * s, 1600 * Mi)]);
    expect(decisions.map((d) => d.evict !== undefined)).toEqual(evicts);
    expect(decisions.map((d) => d.conditions.MemoryPressure)).toEqual(pressure);
  });

  it('a percentage reclaim is a share of capacity', () => {
    const config = configOf({ hard: 'nodefs.available<10%', reclaim: 'nodefs.available=5%' });
    const at = (t: number, free: number) => ({ at: t, obs: observed(t, { 'nodefs.available': [free, 100 * Gi] }) });
    const decisions = run(config, [at(T0, 9 * Gi), at(T0 + 10 * s, 14 * Gi), at(T0 + 20 * s, 16 * Gi)]);
    expect(decisions.map((d) => d.evict !== undefined)).toEqual([true, true, false]);
  });
});

describe('percentage thresholds', () => {
  it.each([
    // 10% of 100Gi is computed with upstream's float32 fraction: 10737418400 bytes, not 10Gi.
    { free: 10737418399, met: true },
    { free: 10737418400, met: false },
    { free: 9 * Gi, met: true },
  ])('nodefs.available<10% of 100Gi with $free free: met=$met', ({ free, met }) => {
    const [decision] = run(configOf({ hard: 'nodefs.available<10%' }), [
      { at: T0, obs: observed(T0, { 'nodefs.available': [free, 100 * Gi] }) },
    ]);
    expect(decision.evict !== undefined).toBe(met);
  });

  it.each(['0%', '100%'])('a %s threshold is never met (it only disables a default)', (pct) => {
    const [decision] = run(configOf({ hard: `nodefs.available<${pct}` }), [{ at: T0, obs: observed(T0, { 'nodefs.available': [0, 100 * Gi] }) }]);
    expect(decision.conditions.DiskPressure).toBe(false);
  });
});

describe('ranking', () => {
  const names = (pods: EvictionPod[]) => pods.map((p) => p.name);
  it.each([
    {
      resource: 'memory' as const,
      pods: [
        podOf('within-request-low-priority', { priority: -100, memoryRequest: '1Gi', memory: 500 * Mi }),
        podOf('over-by-100Mi', { memory: 100 * Mi }),
        podOf('over-by-200Mi', { memoryRequest: '200Mi', memory: 400 * Mi }),
        podOf('over-high-priority', { priority: 1000, memory: 2 * Gi }),
        podOf('no-stats', { noStats: true, priority: 5000 }),
      ],
      order: ['no-stats', 'over-by-200Mi', 'over-by-100Mi', 'over-high-priority', 'within-request-low-priority'],
    },
    {
      resource: 'pids' as const,
      pods: [
        podOf('few', { processes: 2 }),
        podOf('many-high-priority', { priority: 10, processes: 500 }),
        podOf('many', { processes: 50 }),
        podOf('low-priority', { priority: -1, processes: 1 }),
      ],
      order: ['low-priority', 'many', 'few', 'many-high-priority'],
    },
    {
      resource: 'ephemeral-storage' as const,
      pods: [
        podOf('within-request', { diskRequest: '10Gi', disk: 5 * Gi, priority: -5 }),
        podOf('over-small', { disk: Gi }),
        podOf('over-large', { diskRequest: '1Gi', disk: 4 * Gi }),
      ],
      order: ['over-large', 'over-small', 'within-request'],
    },
    {
      resource: 'inodes' as const,
      pods: [podOf('idle', { inodes: 0, priority: -5 }), podOf('some', { inodes: 10 }), podOf('lots', { inodes: 1000 })],
      // Inodes cannot be requested: any use exceeds the (zero) request, then priority, then amount.
      order: ['lots', 'some', 'idle'],
    },
  ])('$resource', ({ resource, pods, order }) => {
    expect(names(rankPods(pods, resource))).toEqual(order);
  });

  it('evicts the first ranked pod, skipping critical ones', () => {
    const pods = [
      podOf('critical', { critical: true, memory: 4 * Gi }),
      podOf('system', { priority: 2_000_000_000, memory: 4 * Gi }),
      podOf('greedy', { memory: Gi }),
      podOf('modest', { memory: 10 * Mi }),
    ];
    const [decision] = run(configOf({ hard: 'memory.available<1Gi' }), [{ ...memory(T0, 800 * Mi), pods }]);
    expect(decision.evict?.pod.name).toBe('greedy');
    expect(decision.candidates.map((c) => c.pod.name)).toEqual(['greedy', 'modest']);
  });

  it('evicts no one when only critical pods run, but still reports pressure', () => {
    const [decision] = run(configOf({ hard: 'memory.available<1Gi' }), [{ ...memory(T0, 800 * Mi), pods: [podOf('c', { critical: true })] }]);
    expect(decision.evict).toBeUndefined();
    expect(decision.conditions.MemoryPressure).toBe(true);
  });
});

describe('one pod per cycle', () => {
  it('with memory and disk both under pressure, reclaims memory first and evicts one pod', () => {
    const config = configOf({ hard: 'nodefs.available<10%,memory.available<1Gi,pid.available<1k' });
    const pods = [podOf('disk-hog', { disk: 50 * Gi }), podOf('mem-hog', { memory: 3 * Gi }), podOf('forker', { processes: 900 })];
    const obs = observed(T0, { 'memory.available': [500 * Mi, 8 * Gi], 'nodefs.available': [Gi, 100 * Gi], 'pid.available': [100, 32768] });
    const [decision] = run(config, [{ at: T0, obs, pods }]);
    expect(decision.thresholdsMet).toHaveLength(3);
    expect(decision.reclaim?.resource).toBe('memory');
    expect(decision.evict?.pod.name).toBe('mem-hog');
    expect(decision.conditions).toEqual({ MemoryPressure: true, DiskPressure: true, PIDPressure: true });
  });

  it('does not act twice on stats that were not refreshed', () => {
    const config = configOf({ hard: 'memory.available<1Gi' });
    const obs = observed(T0, { 'memory.available': [800 * Mi, 8 * Gi] });
    const decisions = run(config, [{ at: T0, obs }, { at: T0 + 10 * s, obs }, memory(T0 + 20 * s, 800 * Mi)]);
    expect(decisions.map((d) => d.evict !== undefined)).toEqual([true, false, true]);
    expect(decisions[1].conditions.MemoryPressure).toBe(true);
  });

  it('with both memory signals met, quotes allocatableMemory.available as upstream sorting does', () => {
    const config = configOf({ hard: 'memory.available<1Gi' }, true);
    const obs = observed(T0, { 'memory.available': [800 * Mi, 8 * Gi], 'allocatableMemory.available': [600 * Mi, 6 * Gi] });
    const [decision] = run(config, [{ at: T0, obs }]);
    expect(decision.evict?.signal).toBe('allocatableMemory.available');
    expect(decision.evict?.message).toContain('Threshold quantity: 1Gi, available: 600Mi. ');
  });
});

describe('grace period given to the evicted pod', () => {
  it.each([
    { kind: 'hard', max: 30, podGrace: 60, expected: 1 },
    { kind: 'soft', max: 0, podGrace: 30, expected: 0 },
    { kind: 'soft', max: 10, podGrace: 30, expected: 10 },
    { kind: 'soft', max: 60, podGrace: 30, expected: 30 },
    { kind: 'soft', max: 20, podGrace: undefined, expected: 20 },
    { kind: 'soft', max: -1, podGrace: 45, expected: 45 },
    { kind: 'soft', max: -1, podGrace: undefined, expected: 30 },
  ])('$kind, max $max, pod $podGrace -> $expected s', ({ kind, max, podGrace, expected }) => {
    const config =
      kind === 'hard'
        ? configOf({ hard: 'memory.available<1Gi', maxPodGrace: max })
        : configOf({ soft: 'memory.available<1Gi', grace: 'memory.available=1s', maxPodGrace: max });
    const pods = [podOf('p', { grace: podGrace, memory: Gi })];
    const decisions = run(config, [{ ...memory(T0, 800 * Mi), pods }, { ...memory(T0 + s, 800 * Mi), pods }]);
    expect(decisions.at(-1)!.evict?.gracePeriodSeconds).toBe(expected);
  });
});

describe('eviction message and status', () => {
  it.each([
    {
      name: 'memory, best-effort container over its (zero) request',
      hard: 'memory.available<1Gi',
      obs: observed(T0, { 'memory.available': [800 * Mi, 8 * Gi] }),
      pod: podOf('web', { memory: 300 * Mi }),
      message:
        'The node was low on resource: memory. Threshold quantity: 1Gi, available: 800Mi. Container app was using 300Mi, request is 0, has larger consumption of memory. ',
    },
    {
      name: 'memory, odd amounts in Ki and a written request',
      hard: 'memory.available<100Mi',
      obs: observed(T0, { 'memory.available': [84772 * 1024, 8 * Gi] }),
      pod: podOf('web', { memoryRequest: '128Mi', memory: 512 * Mi }),
      message:
        'The node was low on resource: memory. Threshold quantity: 100Mi, available: 84772Ki. Container app was using 512Mi, request is 128Mi, has larger consumption of memory. ',
    },
    {
      name: 'memory, container within its request is not named',
      hard: 'memory.available<1Gi',
      obs: observed(T0, { 'memory.available': [800 * Mi, 8 * Gi] }),
      pod: podOf('web', { memoryRequest: '1Gi', memory: 300 * Mi }),
      message: 'The node was low on resource: memory. Threshold quantity: 1Gi, available: 800Mi. ',
    },
    {
      name: 'disk percentage resolved in bytes',
      hard: 'nodefs.available<10%',
      obs: observed(T0, { 'nodefs.available': [5 * Gi, 100 * Gi] }),
      pod: podOf('logger', { disk: 3 * Gi, diskRequest: '1Gi' }),
      message:
        'The node was low on resource: ephemeral-storage. Threshold quantity: 10737418400, available: 5Gi. Container app was using 3Gi, request is 1Gi, has larger consumption of ephemeral-storage. ',
    },
    {
      name: 'pids print as counts and name no container',
      hard: 'pid.available<1000',
      obs: observed(T0, { 'pid.available': [900, 32768] }),
      pod: podOf('forker', { processes: 800 }),
      message: 'The node was low on resource: pids. Threshold quantity: 1k, available: 900. ',
    },
    {
      name: 'inodes',
      hard: 'nodefs.inodesFree<5%',
      obs: observed(T0, { 'nodefs.inodesFree': [32000, 1_000_000] }),
      pod: podOf('many-files', { inodes: 500_000 }),
      message: 'The node was low on resource: inodes. Threshold quantity: 50000, available: 32k. ',
    },
  ])('$name', ({ hard, obs, pod, message }) => {
    const [decision] = run(configOf({ hard }), [{ at: T0, obs, pods: [pod] }]);
    expect(decision.evict?.message).toBe(message);
    expect(decision.evict?.status).toEqual({
      phase: 'Failed',
      reason: 'Evicted',
      message,
      conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message, lastTransitionTime: '2025-01-01T00:00:00Z' }],
    });
  });
});
