/**
 * What the agent's dashboard shows of eviction: every signal against its hard and soft thresholds, the
 * soft grace timers, the pressure conditions with the time they clear, and the last evictions. Built
 * purely from the manager's last decision so it can be tested without a manager.
 */
import { formatEvictionValue } from '../../../options/value-eviction.js';
import type { EvictionDecision } from './evaluate.js';
import { EVICTION_SIGNALS, PRESSURE_CONDITIONS, signalUnit, type EvictionSignal, type PressureCondition, type ReclaimableResource } from './signals.js';
import { isHard, valueQuantity } from './thresholds.js';
import type { EvictionConfig, EvictionState, Observations, ThresholdConfig } from './types.js';

export interface ThresholdSnapshot {
  id: string;
  /** As configured: `100Mi`, `10%`. */
  value: string;
  /** Resolved against the signal's capacity, when the signal is observed. */
  quantity?: number;
  minReclaim?: string;
  gracePeriodMs: number;
  /** Met this cycle (grace ignored; includes a threshold held by its minimum reclaim). */
  met: boolean;
  /** Met and past its grace period. */
  actionable: boolean;
  firstObservedAt?: number;
  /** Soft thresholds inside their grace period: when they become actionable. */
  deadline?: number;
}

export interface SignalSnapshot {
  signal: EvictionSignal;
  unit: 'bytes' | 'count';
  available?: number;
  capacity?: number;
  observedAt?: number;
  /** Why the signal could not be measured. */
  error?: string;
  hard?: ThresholdSnapshot;
  soft?: ThresholdSnapshot;
}

export interface ConditionSnapshot {
  type: PressureCondition;
  active: boolean;
  /** Seen this cycle (a threshold on it is met). */
  observedNow: boolean;
  lastObservedAt?: number;
  /** While active: when it clears if no threshold is met again. */
  clearsAt?: number;
}

export interface EvictionRecord {
  at: number;
  namespace: string;
  name: string;
  uid: string;
  signal: EvictionSignal;
  resource: ReclaimableResource;
  thresholdId: string;
  gracePeriodSeconds: number;
  message: string;
  /** The kill failed (the pod may still be running). */
  error?: string;
}

export interface EvictionSnapshot {
  at: number;
  lastSyncAt?: number;
  lastSyncError?: string;
  signals: SignalSnapshot[];
  conditions: ConditionSnapshot[];
  /** Newest first. */
  evictions: EvictionRecord[];
}

export interface SnapshotInput {
  now: number;
  config: EvictionConfig;
  observations: Observations;
  signalErrors?: Partial<Record<string, string>>;
  decision?: EvictionDecision;
  state: EvictionState;
  evictions: EvictionRecord[];
  lastSyncAt?: number;
  lastSyncError?: string;
}

export function buildSnapshot(input: SnapshotInput): EvictionSnapshot {
  const { config, observations, decision, state } = input;
  const actionable = new Set(decision?.thresholdsMet.map((m) => m.threshold.id) ?? []);
  const pending = new Map(decision?.thresholdsNotYetMet.map((p) => [p.threshold.id, p.deadline]) ?? []);
  const thresholdSnapshot = (threshold: ThresholdConfig): ThresholdSnapshot => {
    const observed = observations[threshold.signal];
    const firstObservedAt = state.thresholdsFirstObservedAt[threshold.id];
    return {
      id: threshold.id,
      value: formatEvictionValue(threshold.value),
      quantity: observed ? valueQuantity(threshold.value, observed.capacity) : undefined,
      minReclaim: threshold.minReclaim ? formatEvictionValue(threshold.minReclaim) : undefined,
      gracePeriodMs: threshold.gracePeriodMs,
      met: firstObservedAt !== undefined,
      actionable: actionable.has(threshold.id),
      firstObservedAt,
      deadline: pending.get(threshold.id),
    };
  };

  const signals: SignalSnapshot[] = [];
  for (const signal of EVICTION_SIGNALS) {
    const observed = observations[signal];
    const thresholds = config.thresholds.filter((t) => t.signal === signal);
    if (!observed && thresholds.length === 0) continue;
    const hard = thresholds.find(isHard);
    const soft = thresholds.find((t) => !isHard(t));
    signals.push({
      signal,
      unit: signalUnit(signal),
      available: observed?.available,
      capacity: observed?.capacity,
      observedAt: observed?.time,
      error: observed ? undefined : signalError(signal, input.signalErrors),
      hard: hard && thresholdSnapshot(hard),
      soft: soft && thresholdSnapshot(soft),
    });
  }

  const conditions = PRESSURE_CONDITIONS.map((type): ConditionSnapshot => {
    const lastObservedAt = state.conditionsLastObservedAt[type];
    const active = decision?.conditions[type] ?? false;
    return {
      type,
      active,
      observedNow: lastObservedAt !== undefined && lastObservedAt === input.lastSyncAt,
      lastObservedAt,
      clearsAt: active && lastObservedAt !== undefined ? lastObservedAt + config.pressureTransitionPeriodMs : undefined,
    };
  });

  return {
    at: input.now,
    lastSyncAt: input.lastSyncAt,
    lastSyncError: input.lastSyncError,
    signals,
    conditions,
    evictions: input.evictions,
  };
}

/** collectSignals reports errors per source (memory, fs, pid), not per signal. */
function signalError(signal: EvictionSignal, errors: Partial<Record<string, string>> | undefined): string | undefined {
  if (!errors) return undefined;
  if (signal === 'memory.available') return errors.memory;
  if (signal === 'pid.available') return errors.pid;
  if (signal === 'allocatableMemory.available') return undefined;
  return errors.fs;
}
