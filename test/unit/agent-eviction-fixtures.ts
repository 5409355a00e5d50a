/** Builders shared by the agent eviction tests (not a test file itself). */
import { parseQuantity } from '../../src/options/quantity.js';
import { parseEvictionDurations, parseEvictionQuantities, parseEvictionThresholds } from '../../src/options/value-eviction.js';
import {
  buildEvictionConfig,
  type EvictionConfig,
  type EvictionPod,
  type EvictionSignal,
  type Observations,
} from '../../src/daemons/agent/eviction/index.js';

export const Ki = 1024;
export const Mi = 1024 ** 2;
export const Gi = 1024 ** 3;
export const T0 = Date.parse('2025-01-01T00:00:00Z');

export interface ConfigText {
  hard?: string;
  soft?: string;
  grace?: string;
  reclaim?: string;
  transitionMs?: number;
  maxPodGrace?: number;
}

/** A config from flag texts, without the allocatable copy unless asked (most tests look at one signal). */
export function configOf(text: ConfigText, enforceNodeAllocatablePods = false): EvictionConfig {
  return buildEvictionConfig({
    hard: text.hard === undefined ? [] : parseEvictionThresholds(text.hard),
    soft: text.soft === undefined ? undefined : parseEvictionThresholds(text.soft),
    softGracePeriods: text.grace === undefined ? undefined : parseEvictionDurations(text.grace),
    minimumReclaim: text.reclaim === undefined ? undefined : parseEvictionQuantities(text.reclaim),
    pressureTransitionPeriodMs: text.transitionMs,
    maxPodGracePeriodSeconds: text.maxPodGrace,
    enforceNodeAllocatablePods,
  });
}

/** Observations at `time`: `{signal: [available, capacity]}`. */
export function observed(time: number, values: Partial<Record<EvictionSignal, [number, number]>>): Observations {
  const result: Observations = {};
  for (const [signal, [available, capacity]] of Object.entries(values) as [EvictionSignal, [number, number]][]) {
    result[signal] = { available, capacity, time };
  }
  return result;
}

export interface PodText {
  priority?: number;
  critical?: boolean;
  grace?: number;
  /** Container `app` requests. */
  memoryRequest?: string;
  diskRequest?: string;
  /** Usage; omit `stats` entirely with noStats. */
  memory?: number;
  disk?: number;
  inodes?: number;
  processes?: number;
  noStats?: boolean;
}

export function podOf(name: string, text: PodText = {}): EvictionPod {
  const requests: NonNullable<EvictionPod['containers'][number]['requests']> = {};
  if (text.memoryRequest) requests.memory = parseQuantity(text.memoryRequest);
  if (text.diskRequest) requests['ephemeral-storage'] = parseQuantity(text.diskRequest);
  return {
    namespace: 'default',
    name,
    uid: `uid-${name}`,
    priority: text.priority,
    critical: text.critical,
    terminationGracePeriodSeconds: text.grace,
    containers: [{ name: 'app', requests }],
    usage: text.noStats
      ? undefined
      : {
          memoryBytes: text.memory ?? 0,
          diskBytes: text.disk ?? 0,
          diskInodes: text.inodes ?? 0,
          processes: text.processes ?? 0,
          containers: [{ name: 'app', memoryBytes: text.memory ?? 0, diskBytes: text.disk ?? 0 }],
        },
  };
}
