import {describe, expect, it} from '@jest/globals';
import {
  assessNodeHealth,
  formatTime,
  parseMicroTime,
  type Lease,
  type Node,
  type NodeCondition,
  type NodeHealthData,
} from '../../src/daemons/controller-manager/node-lifecycle/index.js';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const timings = {nodeMonitorGracePeriodMs: 50_000, nodeStartupGracePeriodMs: 60_000};
const iso = (ms: number) => formatTime(ms);
const microIso = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

function readyNode(heartbeatMs: number, status = 'True', extra: NodeCondition[] = []): Node {
  return {
    metadata: {name: 'n1', creationTimestamp: iso(T0)},
    status: {
      conditions: [
        {type: 'Ready', status, reason: 'AgentReady', message: 'agent is posting ready status', lastHeartbeatTime: iso(heartbeatMs), lastTransitionTime: iso(T0)},
        ...extra,
      ],
    },
  };
}
const lease = (renewMs: number): Lease => ({metadata: {name: 'n1', namespace: 'orch-node-lease'}, spec: {holderIdentity: 'n1', renewTime: microIso(renewMs)}});

/**
 * Runs one health check every 5 s from `from` to `to` (as the controller does every
 * --node-monitor-period), with the node and lease given per time; returns the first time a status
 * update is asked for, and that update.
 */
function firstUnknown(
  nodeAt: (t: number) => Node,
  leaseAt: (t: number) => Lease | undefined,
  from: number,
  to: number,
  step = 5_000,
): {at: number; node: Node} | undefined {
  let saved: NodeHealthData | undefined;
  for (let t = from; t <= to; t += step) {
    const result = assessNodeHealth(nodeAt(t), leaseAt(t), saved, t, timings);
    if (result.statusUpdate) return {at: t, node: result.statusUpdate};
    saved = result.health;
  }
  return undefined;
}

describe('Ready becomes Unknown after the grace period', () => {
  it.each([
    // [description, last status heartbeat, last lease renewal, expected first Unknown (s after T0)]
    ['status and lease stop at T0', 0, 0, 55], // 50 s grace, checked every 5 s: first check past T0+50s
    ['lease renewed until 30 s', 0, 30, 85],
    ['status heartbeat until 20 s, no lease', 20, undefined, 75],
    ['lease until 100 s, status never again', 0, 100, 155],
  ])('%s', (_name, lastHeartbeatS, lastLeaseS, expectedS) => {
    const heartbeatAt = (t: number) => T0 + Math.min(t - T0, lastHeartbeatS * 1000);
    const leaseAt = (t: number) => (lastLeaseS === undefined ? undefined : lease(T0 + Math.min(t - T0, lastLeaseS * 1000)));
    const hit = firstUnknown((t) => readyNode(heartbeatAt(t)), leaseAt, T0, T0 + 400_000);
    expect(hit && (hit.at - T0) / 1000).toBe(expectedS);
  });

  it('a node renewing its lease every 10 s never goes Unknown, even with a stale status', () => {
    const hit = firstUnknown(() => readyNode(T0), (t) => lease(T0 + Math.floor((t - T0) / 10_000) * 10_000), T0, T0 + 600_000);
    expect(hit).toBeUndefined();
  });

  it('exactly at the grace period the node is still healthy; one millisecond later it is not', () => {
    const first = assessNodeHealth(readyNode(T0), undefined, undefined, T0, timings);
    expect(assessNodeHealth(readyNode(T0), undefined, first.health, T0 + 50_000, timings).statusUpdate).toBeUndefined();
    expect(assessNodeHealth(readyNode(T0), undefined, first.health, T0 + 50_001, timings).statusUpdate).toBeDefined();
  });

  it('the update sets Ready, MemoryPressure, DiskPressure and PIDPressure Unknown, not NetworkUnavailable', () => {
    const extra: NodeCondition[] = [
      {type: 'MemoryPressure', status: 'False', lastHeartbeatTime: iso(T0), lastTransitionTime: iso(T0)},
      {type: 'NetworkUnavailable', status: 'False', lastHeartbeatTime: iso(T0), lastTransitionTime: iso(T0)},
    ];
    const first = assessNodeHealth(readyNode(T0, 'True', extra), undefined, undefined, T0, timings);
    const now = T0 + 60_000;
    const result = assessNodeHealth(readyNode(T0, 'True', extra), undefined, first.health, now, timings);
    const byType = Object.fromEntries((result.statusUpdate!.status!.conditions ?? []).map((c) => [c.type, c]));
    expect(byType.Ready).toEqual({
      type: 'Ready',
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: 'Agent stopped posting node status.',
      lastHeartbeatTime: iso(T0), // untouched
      lastTransitionTime: iso(now),
    });
    expect(byType.MemoryPressure).toMatchObject({status: 'Unknown', reason: 'NodeStatusUnknown'});
    // Missing ones are added as never updated.
    expect(byType.DiskPressure).toMatchObject({status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Agent never posted node status.', lastHeartbeatTime: iso(T0)});
    expect(byType.PIDPressure).toMatchObject({status: 'Unknown', reason: 'NodeStatusNeverUpdated'});
    expect(byType.NetworkUnavailable.status).toBe('False');
    expect(result.observedReady.status).toBe('True');
    expect(result.currentReady?.status).toBe('Unknown');
    expect(result.health.readyTransitionTimestamp).toBe(now);
    expect(result.healthIfWriteFails.readyTransitionTimestamp).toBe(T0);
  });

  it('a NotReady node that goes silent becomes Unknown too', () => {
    const hit = firstUnknown(() => readyNode(T0, 'False'), () => undefined, T0, T0 + 100_000);
    expect(hit?.at).toBe(T0 + 55_000);
    expect(hit?.node.status?.conditions?.[0].status).toBe('Unknown');
  });

  it('a node already Unknown is not written again', () => {
    const node = readyNode(T0, 'Unknown');
    const first = assessNodeHealth(node, undefined, undefined, T0, timings);
    const later = assessNodeHealth(node, undefined, first.health, T0 + 120_000, timings);
    expect(later.statusUpdate).toBeUndefined();
    expect(later.currentReady?.status).toBe('Unknown');
  });

  it('the grace period is the configured one', () => {
    const short = {...timings, nodeMonitorGracePeriodMs: 20_000};
    const first = assessNodeHealth(readyNode(T0), undefined, undefined, T0, short);
    expect(assessNodeHealth(readyNode(T0), undefined, first.health, T0 + 20_001, short).statusUpdate).toBeDefined();
  });

  it('times are the controller\'s: a heartbeat stamped far in the future buys no extra time', () => {
    const future = T0 + 3_600_000;
    const hit = firstUnknown(() => readyNode(future), () => undefined, T0, T0 + 100_000);
    expect(hit?.at).toBe(T0 + 55_000);
  });
});

describe('startup grace period for nodes that never posted status', () => {
  const newNode = (): Node => ({metadata: {name: 'n1', creationTimestamp: iso(T0)}, status: {}});

  it('counts from the creation time, with the startup grace period', () => {
    const hit = firstUnknown(newNode, () => undefined, T0, T0 + 200_000);
    expect(hit?.at).toBe(T0 + 65_000); // first check past T0 + 60 s
    const ready = hit!.node.status!.conditions!.find((c) => c.type === 'Ready');
    expect(ready).toEqual({
      type: 'Ready',
      status: 'Unknown',
      reason: 'NodeStatusNeverUpdated',
      message: 'Agent never posted node status.',
      lastHeartbeatTime: iso(T0),
      lastTransitionTime: iso(T0 + 65_000),
    });
  });

  it('a controller that first sees the node late still counts from its creation', () => {
    const hit = firstUnknown(newNode, () => undefined, T0 + 40_000, T0 + 200_000);
    expect(hit?.at).toBe(T0 + 65_000);
  });

  it('before the grace period ends there is no Ready condition to act on', () => {
    const result = assessNodeHealth(newNode(), undefined, undefined, T0 + 30_000, timings);
    expect(result.currentReady).toBeUndefined();
    expect(result.observedReady.status).toBe('Unknown');
    expect(result.gracePeriodMs).toBe(60_000);
  });

  it('a node that only renews its lease is considered healthy', () => {
    const hit = firstUnknown(newNode, (t) => lease(t), T0, T0 + 600_000);
    expect(hit).toBeUndefined();
  });
});

describe('lease renewTime', () => {
  it('is read with microseconds', () => {
    expect(parseMicroTime('2025-01-01T00:00:00.000001Z') - parseMicroTime('2025-01-01T00:00:00Z')).toBe(1);
    expect(Number.isNaN(parseMicroTime(undefined))).toBe(true);
  });

  it('an older or equal renewTime is no sign of life', () => {
    let saved = assessNodeHealth(readyNode(T0), lease(T0 + 5_000), undefined, T0, timings).health;
    saved = assessNodeHealth(readyNode(T0), lease(T0 + 5_000), saved, T0 + 5_000, timings).health;
    const probe = saved.probeTimestamp;
    saved = assessNodeHealth(readyNode(T0), lease(T0 + 5_000), saved, T0 + 10_000, timings).health;
    expect(saved.probeTimestamp).toBe(probe);
    saved = assessNodeHealth(readyNode(T0), lease(T0 + 5_001), saved, T0 + 15_000, timings).health;
    expect(saved.probeTimestamp).toBe(T0 + 15_000);
  });
});
