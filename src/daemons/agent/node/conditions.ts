/**
 * The node conditions the agent owns (upstream nodestatus setters MemoryPressureCondition,
 * DiskPressureCondition, PIDPressureCondition and ReadyCondition), with upstream's texts in orch's
 * names: `KubeletReady` / `kubelet is posting ready status` become `AgentReady` /
 * `agent is posting ready status`, and so on.
 *
 * Timestamp rules, as upstream: every condition's lastHeartbeatTime is set on every computation;
 * lastTransitionTime moves only when the status changes (a new condition counts as a change from
 * Unknown). Conditions the agent does not own (NetworkUnavailable...) are left in place.
 */
import type { PressureCondition } from '../eviction/signals.js';
import type { ConditionStatus, NodeCondition } from './types.js';

export interface ConditionInputs {
  /** The eviction manager's pressure conditions (EvictionManager.conditions()). */
  pressure: Readonly<Record<PressureCondition, boolean>>;
  /** Why the node is not ready (runtime or network errors, missing capacity); empty when it is ready. */
  notReadyReasons: readonly string[];
}

/** A node event upstream records when a condition changes (`Node <name> status is now: <reason>`). */
export type NodeConditionEvent =
  | 'NodeReady' | 'NodeNotReady'
  | 'NodeHasSufficientMemory' | 'NodeHasInsufficientMemory'
  | 'NodeHasNoDiskPressure' | 'NodeHasDiskPressure'
  | 'NodeHasSufficientPID' | 'NodeHasInsufficientPID';

interface ConditionText {
  reason: string;
  message: string;
  event: NodeConditionEvent;
}

export const PRESSURE_TEXTS: Readonly<Record<PressureCondition, { true: ConditionText; false: ConditionText }>> = {
  MemoryPressure: {
    true: { reason: 'AgentHasInsufficientMemory', message: 'agent has insufficient memory available', event: 'NodeHasInsufficientMemory' },
    false: { reason: 'AgentHasSufficientMemory', message: 'agent has sufficient memory available', event: 'NodeHasSufficientMemory' },
  },
  DiskPressure: {
    true: { reason: 'AgentHasDiskPressure', message: 'agent has disk pressure', event: 'NodeHasDiskPressure' },
    false: { reason: 'AgentHasNoDiskPressure', message: 'agent has no disk pressure', event: 'NodeHasNoDiskPressure' },
  },
  PIDPressure: {
    true: { reason: 'AgentHasInsufficientPID', message: 'agent has insufficient PID available', event: 'NodeHasInsufficientPID' },
    false: { reason: 'AgentHasSufficientPID', message: 'agent has sufficient PID available', event: 'NodeHasSufficientPID' },
  },
};

export const READY_REASON = 'AgentReady';
export const READY_MESSAGE = 'agent is posting ready status';
export const NOT_READY_REASON = 'AgentNotReady';

/** The setters' order upstream: new conditions are appended in it. */
const PRESSURE_ORDER: readonly PressureCondition[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];

/** Upstream's errors.NewAggregate text: one error as is, several as `[a, b]`. */
export function aggregateMessage(reasons: readonly string[]): string {
  return reasons.length === 1 ? reasons[0] : `[${reasons.join(', ')}]`;
}

/** Resources whose absence from the capacity makes the node not ready (upstream's requiredCapacities). */
export function missingCapacity(capacity: Readonly<Record<string, string>> | undefined, localStorageCapacityIsolation: boolean): string | undefined {
  const required = ['cpu', 'memory', 'pods', ...(localStorageCapacityIsolation ? ['ephemeral-storage'] : [])];
  const missing = required.filter((name) => capacity?.[name] === undefined);
  return missing.length > 0 ? `missing node capacity for resources: ${missing.join(', ')}` : undefined;
}

export interface ConditionUpdate {
  conditions: NodeCondition[];
  /** Events for the conditions that changed status, in setter order. */
  events: NodeConditionEvent[];
}

/** The conditions after one status computation at `now` (RFC 3339). Does not modify `existing`. */
export function updateConditions(existing: readonly NodeCondition[] | undefined, inputs: ConditionInputs, now: string): ConditionUpdate {
  const conditions = (existing ?? []).map((c) => ({ ...c }));
  const events: NodeConditionEvent[] = [];
  const set = (type: string, status: ConditionStatus, text: { reason: string; message: string }, event?: NodeConditionEvent) => {
    let condition = conditions.find((c) => c.type === type);
    if (!condition) {
      // Upstream creates it as Unknown, so the first real status is a transition.
      condition = { type, status: 'Unknown' };
      conditions.push(condition);
    }
    condition.lastHeartbeatTime = now;
    // Ready rewrites its reason and message every time (its message carries the errors); the pressure
    // setters touch them only on a transition.
    if (condition.status !== status) {
      condition.lastTransitionTime = now;
      if (event) events.push(event);
    }
    if (condition.status !== status || type === 'Ready') {
      condition.status = status;
      condition.reason = text.reason;
      condition.message = text.message;
    }
  };

  for (const type of PRESSURE_ORDER) {
    const text = PRESSURE_TEXTS[type][inputs.pressure[type] ? 'true' : 'false'];
    set(type, inputs.pressure[type] ? 'True' : 'False', text, text.event);
  }
  const ready = inputs.notReadyReasons.length === 0;
  const readyWas = conditions.find((c) => c.type === 'Ready')?.status;
  set(
    'Ready',
    ready ? 'True' : 'False',
    ready ? { reason: READY_REASON, message: READY_MESSAGE } : { reason: NOT_READY_REASON, message: aggregateMessage(inputs.notReadyReasons) },
    // Upstream records NodeReady/NodeNotReady only on a change of an existing Ready condition.
    readyWas === undefined ? undefined : ready ? 'NodeReady' : 'NodeNotReady',
  );
  return { conditions, events };
}
