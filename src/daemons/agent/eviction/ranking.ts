/**
 * Which pod goes first (reference/eviction.md §6): upstream's comparator chains per starved resource,
 * where later keys only break ties of earlier ones.
 */
import type { ReclaimableResource } from './signals.js';
import type { ContainerResource, EvictionContainer, EvictionPod } from './types.js';

/** Upstream's SystemCriticalPriority: pods at or above it are never evicted. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

type Compare = (a: EvictionPod, b: EvictionPod) => number;

export function podPriority(pod: EvictionPod): number {
  return pod.priority ?? 0;
}

export function isCriticalPod(pod: EvictionPod): boolean {
  return pod.critical === true || podPriority(pod) >= SYSTEM_CRITICAL_PRIORITY;
}

function requestOf(container: EvictionContainer, resource: ContainerResource): number {
  return container.requests?.[resource]?.value ?? 0;
}

/**
 * The pod's effective request: the larger of the containers' sum and the largest init container
 * (init containers run one at a time). Inodes and pids cannot be requested, so they count as 0.
 */
export function podRequest(pod: EvictionPod, resource: ReclaimableResource): number {
  if (resource !== 'memory' && resource !== 'ephemeral-storage') return 0;
  const containers = pod.containers.reduce((sum, c) => sum + requestOf(c, resource), 0);
  const init = Math.max(0, ...(pod.initContainers ?? []).map((c) => requestOf(c, resource)));
  return Math.max(containers, init);
}

/** The pod's measured usage of a resource; 0 when the stat is missing (as upstream's nil-safe helpers). */
export function podUsage(pod: EvictionPod, resource: ReclaimableResource): number {
  const usage = pod.usage;
  switch (resource) {
    case 'memory':
      return usage?.memoryBytes ?? 0;
    case 'ephemeral-storage':
      return usage?.diskBytes ?? 0;
    case 'inodes':
      return usage?.diskInodes ?? 0;
    case 'pids':
      return usage?.processes ?? 0;
  }
}

/** true sorts first (upstream cmpBool). */
function trueFirst(a: boolean, b: boolean): number {
  return a === b ? 0 : a ? -1 : 1;
}

/** Pods without stats go first: the manager cannot tell they are harmless. */
function withStats(compare: Compare): Compare {
  return (a, b) => {
    if (!a.usage || !b.usage) return trueFirst(!a.usage, !b.usage);
    return compare(a, b);
  };
}

const lowerPriorityFirst: Compare = (a, b) => podPriority(a) - podPriority(b);

const exceedsRequestsFirst = (resource: ReclaimableResource): Compare =>
  withStats((a, b) => trueFirst(podUsage(a, resource) > podRequest(a, resource), podUsage(b, resource) > podRequest(b, resource)));

const largerExcessFirst = (resource: ReclaimableResource): Compare =>
  withStats((a, b) => podUsage(b, resource) - podRequest(b, resource) - (podUsage(a, resource) - podRequest(a, resource)));

const moreProcessesFirst: Compare = withStats((a, b) => podUsage(b, 'pids') - podUsage(a, 'pids'));

function chain(...compares: Compare[]): Compare {
  return (a, b) => {
    for (const compare of compares) {
      const order = compare(a, b);
      if (order !== 0) return order;
    }
    return 0;
  };
}

const RANKERS: Readonly<Record<ReclaimableResource, Compare>> = {
  memory: chain(exceedsRequestsFirst('memory'), lowerPriorityFirst, largerExcessFirst('memory')),
  pids: chain(lowerPriorityFirst, moreProcessesFirst),
  'ephemeral-storage': chain(exceedsRequestsFirst('ephemeral-storage'), lowerPriorityFirst, largerExcessFirst('ephemeral-storage')),
  inodes: chain(exceedsRequestsFirst('inodes'), lowerPriorityFirst, largerExcessFirst('inodes')),
};

/** The pods in eviction order for a starved resource (a new array; ties keep their input order). */
export function rankPods(pods: readonly EvictionPod[], resource: ReclaimableResource): EvictionPod[] {
  return [...pods].sort(RANKERS[resource]);
}
