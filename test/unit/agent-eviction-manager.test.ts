import { describe, expect, it } from '@jest/globals';
import { FakeClock } from '../../src/daemons/shared/clock.js';
import {
  EvictionManager,
  type EvictedPodStatus,
  type EvictionEvent,
  type EvictionPod,
  type Observations,
} from '../../src/daemons/agent/eviction/index.js';
import { Gi, Mi, T0, configOf, observed, podOf } from './agent-eviction-fixtures.js';

/** A node whose free memory the test sets; pods disappear once killed. */
function fakeNode(options: { hard?: string; soft?: string; grace?: string; failKill?: boolean; transitionMs?: number }) {
  const clock = new FakeClock(T0);
  let freeMemory = 4 * Gi;
  let pods: EvictionPod[] = [podOf('small', { memory: 10 * Mi }), podOf('big', { memory: Gi, grace: 20 })];
  const kills: { name: string; grace: number; status: EvictedPodStatus }[] = [];
  const events: EvictionEvent[] = [];
  const syncTimes: number[] = [];
  const manager = new EvictionManager({
    config: configOf({ hard: options.hard, soft: options.soft, grace: options.grace, transitionMs: options.transitionMs ?? 60_000, maxPodGrace: 5 }),
    clock,
    collectSignals: async () => (syncTimes.push(clock.now()), {
      observations: observed(clock.now(), { 'memory.available': [freeMemory, 8 * Gi], 'nodefs.available': [50 * Gi, 100 * Gi] }) as Observations,
      errors: {},
      time: clock.now(),
    }),
    listActivePods: () => pods,
    killPod: async (pod, grace, status) => {
      if (options.failKill) throw new Error('process would not die');
      kills.push({ name: pod.name, grace, status });
      pods = pods.filter((p) => p !== pod);
    },
    podCleanedUp: (pod) => !pods.includes(pod),
    recordEvent: (event) => events.push(event),
  });
  return { clock, manager, kills, events, syncTimes, setFree: (bytes: number) => (freeMemory = bytes) };
}

describe('EvictionManager.synchronize', () => {
  it('evicts one pod per cycle, the highest ranked, with upstream status and events', async () => {
    const node = fakeNode({ hard: 'memory.available<1Gi' });
    node.setFree(800 * Mi);
    expect((await node.manager.synchronize()).map((p) => p.name)).toEqual(['big']);
    expect(node.kills.map((k) => [k.name, k.grace, k.status.reason])).toEqual([['big', 1, 'Evicted']]);
    expect(node.events.map((e) => [e.reason, e.message])).toEqual([
      ['EvictionThresholdMet', 'Attempting to reclaim memory'],
      ['Evicted', 'The node was low on resource: memory. Threshold quantity: 1Gi, available: 800Mi. Container app was using 1Gi, request is 0, has larger consumption of memory. '],
    ]);
    expect(node.events[1].annotations).toEqual({ offending_containers: 'app', offending_containers_usage: '1Gi', starved_resource: 'memory' });
    expect(node.manager.conditions().MemoryPressure).toBe(true);

    await node.clock.advance(10_000);
    expect((await node.manager.synchronize()).map((p) => p.name)).toEqual(['small']);
    const snapshot = node.manager.snapshot();
    expect(snapshot.evictions.map((e) => e.name)).toEqual(['small', 'big']);
  });

  it('snapshot shows each signal against its thresholds, the soft countdown and the condition countdown', async () => {
    const node = fakeNode({ hard: 'memory.available<512Mi', soft: 'memory.available<1Gi', grace: 'memory.available=30s', transitionMs: 60_000 });
    node.setFree(800 * Mi);
    await node.manager.synchronize();
    let snapshot = node.manager.snapshot();
    const memory = snapshot.signals.find((s) => s.signal === 'memory.available')!;
    expect(memory).toMatchObject({ available: 800 * Mi, capacity: 8 * Gi, unit: 'bytes' });
    expect(memory.hard).toMatchObject({ value: '512Mi', quantity: 512 * Mi, met: false, actionable: false });
    expect(memory.soft).toMatchObject({ value: '1Gi', met: true, actionable: false, firstObservedAt: T0, deadline: T0 + 30_000 });
    expect(snapshot.signals.find((s) => s.signal === 'nodefs.available')).toMatchObject({ available: 50 * Gi, hard: undefined });
    expect(snapshot.conditions.find((c) => c.type === 'MemoryPressure')).toEqual({
      type: 'MemoryPressure', active: true, observedNow: true, lastObservedAt: T0, clearsAt: T0 + 60_000,
    });
    expect(node.kills).toEqual([]);

    await node.clock.advance(30_000);
    await node.manager.synchronize();
    // Soft eviction: min(--eviction-max-pod-grace-period 5, the pod's 20).
    expect(node.kills.map((k) => [k.name, k.grace])).toEqual([['big', 5]]);

    node.setFree(4 * Gi);
    await node.clock.advance(10_000);
    await node.manager.synchronize();
    snapshot = node.manager.snapshot();
    expect(snapshot.conditions.find((c) => c.type === 'MemoryPressure')).toMatchObject({ active: true, observedNow: false, clearsAt: T0 + 90_000 });
    await node.clock.advance(50_000);
    await node.manager.synchronize();
    expect(node.manager.conditions().MemoryPressure).toBe(false);
  });

  it('a failed kill is shown and still ends the cycle', async () => {
    const node = fakeNode({ hard: 'memory.available<1Gi', failKill: true });
    node.setFree(800 * Mi);
    expect((await node.manager.synchronize()).map((p) => p.name)).toEqual(['big']);
    expect(node.manager.snapshot().evictions[0]).toMatchObject({ name: 'big', error: 'process would not die' });
  });
});

describe('EvictionManager loop', () => {
  it('runs every 10 s, and again as soon as the evicted pod is cleaned up', async () => {
    const node = fakeNode({ hard: 'memory.available<1Gi' });
    node.manager.start();
    await node.clock.advance(0);
    node.setFree(800 * Mi);
    await node.clock.advance(10_000);
    expect(node.kills.map((k) => k.name)).toEqual(['big']);
    // The pod was gone at once, so the next cycle ran without the 10 s wait (it saw the same stats,
    // which are never acted on twice); the one after comes 10 s later and evicts the next pod.
    expect(node.syncTimes).toEqual([T0, T0 + 10_000, T0 + 10_000]);
    await node.clock.advance(10_000);
    expect(node.kills.map((k) => k.name)).toEqual(['big', 'small']);
    await node.manager.stop();
    await node.clock.advance(60_000);
    expect(node.syncTimes).toHaveLength(5);
  });
});
