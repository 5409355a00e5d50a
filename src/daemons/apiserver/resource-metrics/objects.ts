/**
 * The resource metrics API's objects (k8s.io/metrics pkg/apis/metrics/v1beta1: NodeMetrics,
 * PodMetrics and their lists) from the agents' summaries, as metrics-server builds them: CPU as a
 * nano-core quantity, memory as a BinarySI byte quantity, `timestamp` and `window` of the sample.
 * Pure.
 */
import type {ResourceInfo} from '../../../api/resources.js';
import {names} from '../../../api/names.js';
import {parseQuantity} from '../../../options/quantity.js';
import {amountOf, formatAmount} from '../../../api/quantities.js';
import type {CPUStats, MemoryStats, NodeStats, PodStats} from '../../agent/server/summary.js';

export const METRICS_VERSION = 'v1beta1';

/** The two resources of the group, for discovery (get and list only, as metrics-server serves them). */
export function metricsResources(): ResourceInfo[] {
  const group = names().groups.metrics;
  const info = (kind: string, plural: string, namespaced: boolean): ResourceInfo => ({
    group, version: METRICS_VERSION, kind, plural, singular: '', namespaced, verbs: ['get', 'list'], subresources: [], storagePrefix: `${group}/${plural}`,
  });
  return [info('NodeMetrics', 'nodes', false), info('PodMetrics', 'pods', true)];
}

export interface Usage {
  cpu: string;
  memory: string;
}

/** A CPU rate and a working set as metrics-server's quantities; undefined when either is missing. */
export function usageOf(cpu?: CPUStats, memory?: MemoryStats): Usage | undefined {
  if (cpu?.usageNanoCores === undefined || memory?.workingSetBytes === undefined) return undefined;
  return {cpu: parseQuantity(`${Math.max(0, Math.round(cpu.usageNanoCores))}n`).text, memory: formatAmount(amountOf(Math.round(memory.workingSetBytes), 'BinarySI'))};
}

/** Go's Duration.String() of a window, as metrics-server writes it (`10.5s`, `1m0s`). */
export function windowText(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 60) return `${Number(seconds.toFixed(3))}s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m${Number((seconds - minutes * 60).toFixed(3))}s`;
}

interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
}

function apiVersion(): string {
  return `${names().groups.metrics}/${METRICS_VERSION}`;
}

/**
 * The span a rate covers. The summary does not carry it; the agent's rates cover at most this (its
 * baseline moves every 10 s, ../../agent/stats/cpu-rate.ts), as metrics-server's scrape window does.
 */
const DEFAULT_WINDOW_MS = 10_000;

export function nodeMetrics(node: ObjectMeta, stats: NodeStats, now: Date, windowMs = DEFAULT_WINDOW_MS): Record<string, unknown> | undefined {
  const usage = usageOf(stats.cpu, stats.memory);
  if (!usage) return undefined;
  return {
    kind: 'NodeMetrics',
    apiVersion: apiVersion(),
    metadata: {name: node.name, creationTimestamp: rfc3339(now), ...(node.labels ? {labels: node.labels} : {})},
    timestamp: rfc3339(new Date(stats.cpu!.time)),
    window: windowText(windowMs),
    usage,
  };
}

/** A pod's metrics; undefined unless every running container has CPU and memory (metrics-server drops such pods). */
export function podMetrics(pod: ObjectMeta, stats: PodStats, now: Date, windowMs = DEFAULT_WINDOW_MS): Record<string, unknown> | undefined {
  const containers: {name: string; usage: Usage}[] = [];
  let time: string | undefined;
  for (const c of stats.containers) {
    if (!c.cpu && !c.memory) continue; // not running: no process to measure
    const usage = usageOf(c.cpu, c.memory);
    if (!usage) return undefined;
    containers.push({name: c.name, usage});
    time ??= c.cpu?.time;
  }
  if (containers.length === 0) return undefined;
  return {
    kind: 'PodMetrics',
    apiVersion: apiVersion(),
    metadata: {name: pod.name, namespace: pod.namespace, creationTimestamp: rfc3339(now), ...(pod.labels ? {labels: pod.labels} : {})},
    timestamp: rfc3339(new Date(time ?? now)),
    window: windowText(windowMs),
    containers,
  };
}

export function metricsList(kind: 'NodeMetricsList' | 'PodMetricsList', items: Record<string, unknown>[]): Record<string, unknown> {
  return {kind, apiVersion: apiVersion(), metadata: {}, items};
}

/** RFC 3339 to the second, as metav1.Time marshals. */
function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
