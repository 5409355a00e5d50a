/**
 * Per-node health tracking: upstream's `tryUpdateNodeHealth` as a pure function.
 *
 * The controller keeps, per node, when it last saw a sign of life (`probeTimestamp`) on its own
 * clock, never trusting the node's timestamps: a new Ready heartbeat or a newer Lease renewTime both
 * count. Once `now` is past probeTimestamp + grace period, the node's Ready, MemoryPressure,
 * DiskPressure and PIDPressure conditions are turned Unknown and, if Ready changed, the status is
 * written back.
 */
import {
  MESSAGE_NODE_STATUS_NEVER_UPDATED,
  MESSAGE_NODE_STATUS_UNKNOWN,
  MONITORED_CONDITIONS,
  REASON_NODE_STATUS_NEVER_UPDATED,
  REASON_NODE_STATUS_UNKNOWN,
  findCondition,
  formatTime,
  type Lease,
  type Node,
  type NodeCondition,
} from './types.js';

/** What the controller remembers about a node between passes (in memory only). */
export interface NodeHealthData {
  /** The node's Ready condition as last seen; undefined when the node had none. */
  readyCondition?: NodeCondition;
  /** renewTime of the last Lease seen, in microseconds; undefined when no Lease was seen. */
  leaseRenewTimeUs?: number | null;
  /** Last sign of life, controller clock, ms. */
  probeTimestamp: number;
  /** Last observed change of the Ready condition, controller clock, ms. */
  readyTransitionTimestamp: number;
}

export interface HealthTimings {
  nodeMonitorGracePeriodMs: number;
  nodeStartupGracePeriodMs: number;
}

export interface HealthAssessment {
  /** The grace period that applied (startup grace when the node has no Ready condition). */
  gracePeriodMs: number;
  /** Ready as it was before this pass (a node without one counts as Unknown since its creation). */
  observedReady: NodeCondition;
  /** Ready after this pass; undefined while a node without one is still inside its startup grace. */
  currentReady: NodeCondition | undefined;
  /** The node with its conditions set Unknown, to write with a status update; undefined: no write. */
  statusUpdate?: Node;
  /** The data to remember: after a successful write when there is one, otherwise at once. */
  health: NodeHealthData;
  /** The data to remember when the status write fails (the controller then skips the node). */
  healthIfWriteFails: NodeHealthData;
}

/** RFC 3339 time (with any fraction) to microseconds since the epoch; NaN when absent or invalid. */
export function parseMicroTime(text: string | null | undefined): number {
  if (!text) return NaN;
  const match = /^(.*?:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(text);
  if (!match) return NaN;
  const seconds = Date.parse(match[1] + match[3]);
  const fraction = (match[2] ?? '').padEnd(6, '0').slice(0, 6);
  return seconds * 1000 + Number(fraction);
}

function parseTimeMs(text: string | null | undefined): number {
  const us = parseMicroTime(text);
  return Number.isNaN(us) ? 0 : Math.floor(us / 1000);
}

function sameTime(a: string | null | undefined, b: string | null | undefined): boolean {
  const [x, y] = [parseMicroTime(a), parseMicroTime(b)];
  return Number.isNaN(x) && Number.isNaN(y) ? true : x === y;
}

function sameCondition(a: NodeCondition | undefined, b: NodeCondition | undefined): boolean {
  if (!a || !b) return a === b;
  return (
    a.type === b.type &&
    a.status === b.status &&
    (a.reason ?? '') === (b.reason ?? '') &&
    (a.message ?? '') === (b.message ?? '') &&
    sameTime(a.lastHeartbeatTime, b.lastHeartbeatTime) &&
    sameTime(a.lastTransitionTime, b.lastTransitionTime)
  );
}

/**
 * One health check of one node at `now` (controller clock, ms). `saved` is what the previous pass
 * remembered (undefined the first time), `lease` the node's Lease from `orch-node-lease` if any.
 */
export function assessNodeHealth(
  node: Node,
  lease: Lease | undefined,
  saved: NodeHealthData | undefined,
  now: number,
  timings: HealthTimings,
): HealthAssessment {
  const creation = parseTimeMs(node.metadata.creationTimestamp);
  const currentReadyBefore = findCondition(node.status?.conditions, 'Ready');
  let health: NodeHealthData | undefined = saved && {...saved};
  let observedReady: NodeCondition;
  let gracePeriodMs: number;

  if (!currentReadyBefore) {
    // The agent never posted status: judge the node from its creation, with the startup grace.
    const creationText = node.metadata.creationTimestamp ?? formatTime(creation);
    observedReady = {type: 'Ready', status: 'Unknown', lastHeartbeatTime: creationText, lastTransitionTime: creationText};
    gracePeriodMs = timings.nodeStartupGracePeriodMs;
    // Upstream overwrites the saved status first, so a Ready condition that disappeared does not
    // reset the timestamps (its "removed" branch below is unreachable); kept as upstream has it.
    health = health
      ? {...health, readyCondition: undefined}
      : {probeTimestamp: creation, readyTransitionTimestamp: creation};
  } else {
    observedReady = {...currentReadyBefore};
    gracePeriodMs = timings.nodeMonitorGracePeriodMs;
  }

  const savedReady = health?.readyCondition;
  const savedLeaseUs = health?.leaseRenewTimeUs;
  const hadLease = health !== undefined && health.leaseRenewTimeUs !== undefined;
  if (!health) {
    health = {readyCondition: currentReadyBefore, probeTimestamp: now, readyTransitionTimestamp: now};
  } else if (!savedReady && currentReadyBefore) {
    // First Ready condition seen (e.g. the controller restarted with the node already running).
    health = {readyCondition: currentReadyBefore, probeTimestamp: now, readyTransitionTimestamp: now};
  } else if (savedReady && currentReadyBefore && !sameTime(savedReady.lastHeartbeatTime, currentReadyBefore.lastHeartbeatTime)) {
    const transitioned = !sameTime(savedReady.lastTransitionTime, currentReadyBefore.lastTransitionTime);
    health = {
      readyCondition: currentReadyBefore,
      probeTimestamp: now,
      readyTransitionTimestamp: transitioned ? now : health.readyTransitionTimestamp,
    };
  }

  // A renewed Lease is a sign of life on its own: a node that only renews its Lease stays healthy.
  // (The branches above rebuild the data without the saved Lease, as upstream does, so the next
  // pass counts the current Lease as new once more.)
  const observedLeaseUs = lease ? parseMicroTime(lease.spec?.renewTime) : undefined;
  const leaseToSave = observedLeaseUs === undefined || Number.isNaN(observedLeaseUs) ? (lease ? null : undefined) : observedLeaseUs;
  if (lease) {
    const renewed = !hadLease || (savedLeaseUs != null && leaseToSave != null && savedLeaseUs < leaseToSave);
    if (renewed) health = {...health, leaseRenewTimeUs: leaseToSave, probeTimestamp: now};
  }

  const result: HealthAssessment = {gracePeriodMs, observedReady, currentReady: currentReadyBefore, health, healthIfWriteFails: health};
  if (!(now > health.probeTimestamp + gracePeriodMs)) return result;

  const updated: Node = structuredClone(node);
  const conditions: NodeCondition[] = (updated.status = {...updated.status, conditions: [...(updated.status?.conditions ?? [])]}).conditions!;
  const nowText = formatTime(now);
  for (const type of MONITORED_CONDITIONS) {
    const condition = findCondition(conditions, type);
    if (!condition) {
      conditions.push({
        type,
        status: 'Unknown',
        reason: REASON_NODE_STATUS_NEVER_UPDATED,
        message: MESSAGE_NODE_STATUS_NEVER_UPDATED,
        lastHeartbeatTime: node.metadata.creationTimestamp ?? formatTime(creation),
        lastTransitionTime: nowText,
      });
    } else if (condition.status !== 'Unknown') {
      condition.status = 'Unknown';
      condition.reason = REASON_NODE_STATUS_UNKNOWN;
      condition.message = MESSAGE_NODE_STATUS_UNKNOWN;
      condition.lastTransitionTime = nowText;
    }
  }
  const currentReady = findCondition(conditions, 'Ready');
  result.currentReady = currentReady;
  if (sameCondition(currentReady, observedReady)) return result;

  result.statusUpdate = updated;
  result.health = {
    readyCondition: currentReady,
    leaseRenewTimeUs: leaseToSave,
    probeTimestamp: health.probeTimestamp,
    readyTransitionTimestamp: now,
  };
  return result;
}
