/**
 * Threshold configuration and arithmetic (reference/eviction.md §2-§5): the default hard thresholds,
 * attaching grace periods and minimum reclaim, and deciding which thresholds an observation meets.
 */
import {
  type EvictionDurations,
  type EvictionQuantities,
  type EvictionSignal,
  type EvictionThreshold,
  type EvictionValue,
  isDisabledThreshold,
} from '../../../options/types.js';
import { parseQuantity } from '../../../options/quantity.js';
import type { EvictionConfig, Observations, ThresholdConfig } from './types.js';

/** Upstream's Linux defaults for evictionHard. */
export const DEFAULT_EVICTION_HARD: readonly EvictionThreshold[] = [
  { signal: 'memory.available', operator: 'LessThan', value: { quantity: parseQuantity('100Mi') } },
  { signal: 'nodefs.available', operator: 'LessThan', value: { percentage: 10 } },
  { signal: 'nodefs.inodesFree', operator: 'LessThan', value: { percentage: 5 } },
  { signal: 'imagefs.available', operator: 'LessThan', value: { percentage: 15 } },
  { signal: 'imagefs.inodesFree', operator: 'LessThan', value: { percentage: 5 } },
];

export const DEFAULT_PRESSURE_TRANSITION_PERIOD_MS = 5 * 60_000;

export interface EvictionSettings {
  /** --eviction-hard / evictionHard; undefined (never set) means the defaults. */
  hard?: EvictionThreshold[];
  soft?: EvictionThreshold[];
  softGracePeriods?: EvictionDurations;
  minimumReclaim?: EvictionQuantities;
  /** 0 or undefined means 5m, as upstream defaults it. */
  pressureTransitionPeriodMs?: number;
  /** Default 0. */
  maxPodGracePeriodSeconds?: number;
  /** Keep the defaults for signals that `hard` does not name (newer upstream's mergeDefaultEvictionSettings). */
  mergeDefaultEvictionSettings?: boolean;
  /** --enforce-node-allocatable contains `pods` (the default): hard memory thresholds also guard allocatable. */
  enforceNodeAllocatablePods?: boolean;
}

/** Builds the thresholds the manager acts on. Throws upstream's error for a soft threshold without grace. */
export function buildEvictionConfig(settings: EvictionSettings): EvictionConfig {
  const thresholds: ThresholdConfig[] = [];
  const minReclaimOf = (signal: EvictionSignal): EvictionValue | undefined => {
    const reclaim = settings.minimumReclaim?.[signal];
    if (reclaim === undefined) return undefined;
    return 'percentage' in reclaim ? { percentage: reclaim.percentage } : { quantity: reclaim };
  };
  for (const threshold of effectiveHard(settings)) {
    if (isDisabledThreshold(threshold)) continue;
    thresholds.push({ ...threshold, id: `hard:${threshold.signal}`, gracePeriodMs: 0, minReclaim: minReclaimOf(threshold.signal) });
  }
  for (const threshold of settings.soft ?? []) {
    const grace = settings.softGracePeriods?.[threshold.signal];
    if (grace === undefined) {
      throw new Error(`grace period must be specified for the soft eviction threshold ${threshold.signal}`);
    }
    if (isDisabledThreshold(threshold)) continue;
    thresholds.push({ ...threshold, id: `soft:${threshold.signal}`, gracePeriodMs: grace.ms, minReclaim: minReclaimOf(threshold.signal) });
  }
  if (settings.enforceNodeAllocatablePods ?? true) {
    // Upstream copies every hard memory.available threshold onto the pods cgroup (addAllocatableThresholds).
    for (const threshold of thresholds.filter((t) => t.signal === 'memory.available' && isHard(t))) {
      thresholds.push({ ...threshold, id: `${threshold.id.split(':')[0]}:allocatableMemory.available`, signal: 'allocatableMemory.available' });
    }
  }
  return {
    thresholds,
    pressureTransitionPeriodMs: settings.pressureTransitionPeriodMs || DEFAULT_PRESSURE_TRANSITION_PERIOD_MS,
    maxPodGracePeriodSeconds: settings.maxPodGracePeriodSeconds ?? 0,
  };
}

/** Setting evictionHard replaces the defaults unless merging was asked for. */
function effectiveHard(settings: EvictionSettings): readonly EvictionThreshold[] {
  if (settings.hard === undefined) return DEFAULT_EVICTION_HARD;
  if (!settings.mergeDefaultEvictionSettings) return settings.hard;
  const named = new Set(settings.hard.map((t) => t.signal));
  return [...settings.hard, ...DEFAULT_EVICTION_HARD.filter((t) => !named.has(t.signal))];
}

export function isHard(threshold: ThresholdConfig): boolean {
  return threshold.gracePeriodMs === 0;
}

/**
 * The absolute amount of a threshold or reclaim value against a capacity. Upstream stores percentages
 * as float32 fractions and truncates `float64(capacity) * float64(fraction)` to an integer; doing the
 * same keeps a 10% threshold on the exact byte upstream would use.
 */
export function valueQuantity(value: EvictionValue, capacity: number): number {
  if (value.quantity) return value.quantity.value;
  const fraction = Math.fround(Math.fround(value.percentage ?? 0) / 100);
  return Math.trunc(capacity * fraction);
}

/** The amount under which `available` meets the threshold, plus the minimum reclaim when enforced. */
export function thresholdLevel(threshold: ThresholdConfig, capacity: number, enforceMinReclaim: boolean): number {
  const level = valueQuantity(threshold.value, capacity);
  if (!enforceMinReclaim || !threshold.minReclaim) return level;
  return level + valueQuantity(threshold.minReclaim, capacity);
}

/** Thresholds whose signal is observed below their level (grace periods ignored). */
export function thresholdsMet(
  thresholds: readonly ThresholdConfig[],
  observations: Observations,
  enforceMinReclaim: boolean,
): ThresholdConfig[] {
  return thresholds.filter((threshold) => {
    const observed = observations[threshold.signal];
    if (!observed) return false;
    return thresholdLevel(threshold, observed.capacity, enforceMinReclaim) > observed.available;
  });
}
