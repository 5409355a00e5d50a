/** The data the eviction manager's pieces exchange: observations, thresholds, pods, and its state. */
import type { EvictionSignal, EvictionValue, Quantity } from '../../../options/types.js';
import type { PressureCondition } from './signals.js';

/** One signal measured on this machine: bytes for memory and filesystems, counts for inodes and pids. */
export interface SignalObservation {
  available: number;
  capacity: number;
  /** When the underlying stats were taken (ms since the epoch); stale stats are never acted on. */
  time: number;
}

/** Signals without stats (e.g. no pods cgroup) are simply absent. */
export type Observations = Partial<Record<EvictionSignal, SignalObservation>>;

/** A configured threshold, after defaults, grace periods and minimum reclaim are attached. */
export interface ThresholdConfig {
  /** Stable key of this threshold: `hard:<signal>` or `soft:<signal>` (the flag it came from). */
  id: string;
  signal: EvictionSignal;
  /** The only operator upstream has: met while `available < value`. */
  operator: 'LessThan';
  value: EvictionValue;
  /** 0 for a hard threshold; upstream treats any threshold with grace 0 as hard. */
  gracePeriodMs: number;
  /** Extra amount that must be freed beyond the threshold once it has been acted on. */
  minReclaim?: EvictionValue;
}

export interface EvictionConfig {
  thresholds: ThresholdConfig[];
  /** How long a pressure condition stays reported after it was last observed. */
  pressureTransitionPeriodMs: number;
  /** Ceiling of a soft eviction's grace period in seconds; negative defers to the pod's own. */
  maxPodGracePeriodSeconds: number;
}

export type ContainerResource = 'memory' | 'ephemeral-storage';

export interface EvictionContainer {
  name: string;
  /** Requests as written in the pod spec; absent means 0 (printed "0" in messages). */
  requests?: Partial<Record<ContainerResource, Quantity>>;
}

export interface ContainerUsage {
  name: string;
  /** Working set bytes. */
  memoryBytes?: number;
  /** Writable layer + logs bytes. */
  diskBytes?: number;
}

/** What the agent measured of a pod. */
export interface PodUsage {
  /** Sum of the containers' working sets. */
  memoryBytes?: number;
  /** Local disk: container writable dirs + logs + local volumes (the process runtime has no image fs). */
  diskBytes?: number;
  /** Inodes used by the same files. */
  diskInodes?: number;
  /** Processes (threads) of the pod. */
  processes?: number;
  containers?: ContainerUsage[];
}

/** A pod as the eviction manager sees it: enough of the spec to rank and message, plus its usage. */
export interface EvictionPod {
  namespace: string;
  name: string;
  uid: string;
  /** spec.priority; 0 when unset. */
  priority?: number;
  /** Static pods, mirror pods and pods with priority >= 2000000000 are never evicted. */
  critical?: boolean;
  terminationGracePeriodSeconds?: number;
  containers: EvictionContainer[];
  initContainers?: EvictionContainer[];
  /** undefined when the agent has no stats for the pod (ranked before pods with stats, as upstream). */
  usage?: PodUsage;
}

/** What the decision step remembers between cycles. Plain data: easy to snapshot and to test. */
export interface EvictionState {
  /** When each currently met threshold (by id) was first seen met. */
  thresholdsFirstObservedAt: Record<string, number>;
  /** When each pressure condition was last seen. */
  conditionsLastObservedAt: Partial<Record<PressureCondition, number>>;
  /** Ids of the thresholds acted on last cycle: they stay met until their minimum reclaim is freed. */
  thresholdsMet: string[];
  /** The previous cycle's observations, to skip thresholds whose stats did not change since. */
  lastObservations: Observations;
}

export const INITIAL_EVICTION_STATE: EvictionState = Object.freeze({
  thresholdsFirstObservedAt: {},
  conditionsLastObservedAt: {},
  thresholdsMet: [],
  lastObservations: {},
}) as EvictionState;
