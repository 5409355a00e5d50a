/**
 * One eviction cycle's decision (reference/eviction.md §5), pure: it takes the previous state, this
 * cycle's observations and pods and the time, and returns the next state, the pressure conditions and
 * at most one pod to evict. The manager does the I/O around it.
 */
import { evictedPodStatus, evictionMessage, formatBinarySI, formatDecimalSI, type EvictedPodStatus, type ThresholdMetInfo } from './message.js';
import { isCriticalPod, rankPods } from './ranking.js';
import {
  PRESSURE_CONDITIONS,
  SIGNAL_CONDITION,
  SIGNAL_RESOURCE,
  isMemorySignal,
  signalUnit,
  type EvictionSignal,
  type PressureCondition,
  type ReclaimableResource,
} from './signals.js';
import { isHard, thresholdsMet, valueQuantity } from './thresholds.js';
import type { EvictionConfig, EvictionPod, EvictionState, Observations, ThresholdConfig } from './types.js';

/** Upstream's grace override for hard evictions (immediateEvictionGracePeriodSeconds). */
export const HARD_EVICTION_GRACE_PERIOD_SECONDS = 1;
/** What a pod gets when it does not say (the API's default terminationGracePeriodSeconds). */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;

export interface MetThreshold {
  threshold: ThresholdConfig;
  firstObservedAt: number;
}

export interface PendingThreshold extends MetThreshold {
  /** When the soft threshold becomes actionable if it stays met. */
  deadline: number;
}

export interface EvictionPlan {
  pod: EvictionPod;
  signal: EvictionSignal;
  resource: ReclaimableResource;
  threshold: ThresholdConfig;
  message: string;
  gracePeriodSeconds: number;
  status: EvictedPodStatus;
}

export interface EvictionDecision {
  nextState: EvictionState;
  conditions: Record<PressureCondition, boolean>;
  /** Thresholds met whose grace period has elapsed (acted on, unless their stats are stale). */
  thresholdsMet: MetThreshold[];
  /** Soft thresholds met but still inside their grace period. */
  thresholdsNotYetMet: PendingThreshold[];
  /** The threshold chosen to reclaim for this cycle, if any is actionable on fresh stats. */
  reclaim?: { threshold: ThresholdConfig; resource: ReclaimableResource };
  /** The pod to evict: the first of `candidates`. */
  evict?: EvictionPlan;
  /** Every evictable pod (critical pods skipped) in rank order, for display; only the first is evicted. */
  candidates: EvictionPlan[];
}

export function evaluate(
  state: EvictionState,
  observations: Observations,
  config: EvictionConfig,
  now: number,
  pods: readonly EvictionPod[],
): EvictionDecision {
  // Met now (grace ignored), plus those acted on last cycle that have not freed their minimum reclaim.
  const met = thresholdsMet(config.thresholds, observations, false);
  const previouslyActedOn = config.thresholds.filter((t) => state.thresholdsMet.includes(t.id));
  for (const unresolved of thresholdsMet(previouslyActedOn, observations, true)) {
    if (!met.some((t) => t.id === unresolved.id)) met.push(unresolved);
  }

  const thresholdsFirstObservedAt: Record<string, number> = {};
  for (const threshold of met) thresholdsFirstObservedAt[threshold.id] = state.thresholdsFirstObservedAt[threshold.id] ?? now;

  // Conditions need no grace period, and outlive their cause by the transition period (anti-flapping).
  const conditionsLastObservedAt = { ...state.conditionsLastObservedAt };
  for (const threshold of met) conditionsLastObservedAt[SIGNAL_CONDITION[threshold.signal]] = now;
  const conditions = Object.fromEntries(
    PRESSURE_CONDITIONS.map((type) => {
      const last = conditionsLastObservedAt[type];
      return [type, last !== undefined && now - last < config.pressureTransitionPeriodMs];
    }),
  ) as Record<PressureCondition, boolean>;

  const thresholdsMetList: MetThreshold[] = [];
  const thresholdsNotYetMet: PendingThreshold[] = [];
  for (const threshold of met) {
    const firstObservedAt = thresholdsFirstObservedAt[threshold.id];
    if (now - firstObservedAt >= threshold.gracePeriodMs) thresholdsMetList.push({ threshold, firstObservedAt });
    else thresholdsNotYetMet.push({ threshold, firstObservedAt, deadline: firstObservedAt + threshold.gracePeriodMs });
  }

  const nextState: EvictionState = {
    thresholdsFirstObservedAt,
    conditionsLastObservedAt,
    thresholdsMet: thresholdsMetList.map((m) => m.threshold.id),
    lastObservations: observations,
  };
  const decision: EvictionDecision = { nextState, conditions, thresholdsMet: thresholdsMetList, thresholdsNotYetMet, candidates: [] };

  // Never act twice on the same measurement: only thresholds whose stats were refreshed since last cycle.
  const actionable = thresholdsMetList
    .map((m) => m.threshold)
    .filter((threshold) => {
      const observed = observations[threshold.signal];
      const last = state.lastObservations[threshold.signal];
      return observed !== undefined && (last === undefined || observed.time > last.time);
    });
  if (actionable.length === 0) return decision;

  const ordered = byEvictionPriority(actionable);
  const threshold = ordered[0];
  const resource = SIGNAL_RESOURCE[threshold.signal];
  decision.reclaim = { threshold, resource };
  const metInfo = thresholdMetInfo(resource, ordered, observations);
  decision.candidates = rankPods(pods, resource)
    .filter((pod) => !isCriticalPod(pod))
    .map((pod) => {
      const message = evictionMessage(resource, pod, metInfo);
      return {
        pod,
        signal: threshold.signal,
        resource,
        threshold,
        message,
        gracePeriodSeconds: evictionGracePeriodSeconds(threshold, pod, config.maxPodGracePeriodSeconds),
        status: evictedPodStatus(message, now),
      };
    });
  decision.evict = decision.candidates[0];
  return decision;
}

/**
 * Upstream sorts with Less(i, j) = "i is a memory signal or j has no resource". That is not a strict
 * ordering, so the result depends on Go's algorithm, which is an insertion sort for the few (<= 12)
 * thresholds a node has: every memory threshold moves in front of all others, memory thresholds
 * included (so allocatableMemory.available, listed after memory.available, ends up first). Replaying the
 * same insertion sort picks the same threshold, and therefore the same message, as upstream.
 */
export function byEvictionPriority(thresholds: readonly ThresholdConfig[]): ThresholdConfig[] {
  const sorted = [...thresholds];
  const less = (i: number, _j: number) => isMemorySignal(sorted[i].signal);
  for (let i = 1; i < sorted.length; i++) {
    for (let j = i; j > 0 && less(j, j - 1); j--) [sorted[j], sorted[j - 1]] = [sorted[j - 1], sorted[j]];
  }
  return sorted;
}

/** The first threshold on the starved resource with an observation: what the message quotes. */
function thresholdMetInfo(
  resource: ReclaimableResource,
  thresholds: readonly ThresholdConfig[],
  observations: Observations,
): ThresholdMetInfo | undefined {
  for (const threshold of thresholds) {
    const observed = observations[threshold.signal];
    if (SIGNAL_RESOURCE[threshold.signal] !== resource || !observed) continue;
    // A written quantity prints as written (canonical); a percentage resolves to a BinarySI amount.
    const quantity = threshold.value.quantity?.text ?? formatBinarySI(valueQuantity(threshold.value, observed.capacity));
    const available = signalUnit(threshold.signal) === 'bytes' ? formatBinarySI(observed.available) : formatDecimalSI(observed.available);
    return { quantity, available };
  }
  return undefined;
}

/**
 * Hard: 1 s. Soft: --eviction-max-pod-grace-period, lowered to the pod's own terminationGracePeriodSeconds
 * when that is shorter; a negative maximum defers to the pod's own value (the seed's rule).
 */
export function evictionGracePeriodSeconds(threshold: ThresholdConfig, pod: EvictionPod, maxPodGracePeriodSeconds: number): number {
  if (isHard(threshold)) return HARD_EVICTION_GRACE_PERIOD_SECONDS;
  const own = pod.terminationGracePeriodSeconds;
  if (maxPodGracePeriodSeconds < 0) return own ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  return own === undefined ? maxPodGracePeriodSeconds : Math.min(maxPodGracePeriodSeconds, own);
}
