/**
 * The evicted pod's status and its message, in upstream's exact words (reference/eviction.md §7), and
 * the quantity printing those messages need.
 */
import type { ReclaimableResource } from './signals.js';
import type { EvictionPod } from './types.js';

const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const DECIMAL_SUFFIXES = ['', 'k', 'M', 'G', 'T', 'P', 'E'];

/**
 * An integer amount as resource.NewQuantity(n, BinarySI).String() prints it: the largest power-of-1024
 * suffix that keeps it whole (84772Ki), and plain digits below 1024 or when no suffix divides it.
 * options/quantity.ts canonicalizes parsed text; this covers amounts that were measured, not written.
 */
export function formatBinarySI(amount: number): string {
  let number = Math.trunc(amount);
  if (Math.abs(number) < 1024) return `${number}`;
  let exponent = 0;
  while (exponent < BINARY_SUFFIXES.length - 1 && number % 1024 === 0) {
    number /= 1024;
    exponent += 1;
  }
  return `${number}${BINARY_SUFFIXES[exponent]}`;
}

/** An integer amount as a DecimalSI quantity prints it: trailing zeros become k, M, G... (32000 -> 32k). */
export function formatDecimalSI(amount: number): string {
  let number = Math.trunc(amount);
  if (number === 0) return '0';
  let exponent = 0;
  while (exponent < DECIMAL_SUFFIXES.length - 1 && number % 1000 === 0) {
    number /= 1000;
    exponent += 1;
  }
  return `${number}${DECIMAL_SUFFIXES[exponent]}`;
}

export interface ThresholdMetInfo {
  /** The threshold's quantity as printed (its written quantity, or a percentage resolved to BinarySI). */
  quantity: string;
  /** The observed available amount as printed. */
  available: string;
}

/**
 * `The node was low on resource: memory. Threshold quantity: 100Mi, available: 84772Ki. Container app was
 * using 512Mi, request is 128Mi, has larger consumption of memory. ` Every sentence ends in ". ", the last
 * one included. Only memory and ephemeral-storage have per-container usage, so only they name containers.
 */
export function evictionMessage(resource: ReclaimableResource, pod: EvictionPod, metInfo?: ThresholdMetInfo): string {
  let message = `The node was low on resource: ${resource}. `;
  if (metInfo) message += `Threshold quantity: ${metInfo.quantity}, available: ${metInfo.available}. `;
  for (const offender of offendingContainers(resource, pod)) {
    message += `Container ${offender.name} was using ${offender.usage}, request is ${offender.request}, has larger consumption of ${resource}. `;
  }
  return message;
}

export interface OffendingContainer {
  name: string;
  usage: string;
  request: string;
}

/** Containers (in stats order, as upstream walks them) using more of the resource than they request; upstream's event annotations. */
export function offendingContainers(resource: ReclaimableResource, pod: EvictionPod): OffendingContainer[] {
  if (resource !== 'memory' && resource !== 'ephemeral-storage') return [];
  const result: OffendingContainer[] = [];
  for (const stats of pod.usage?.containers ?? []) {
    const container = pod.containers.find((c) => c.name === stats.name);
    if (!container) continue;
    const usage = resource === 'memory' ? stats.memoryBytes : stats.diskBytes;
    const request = container.requests?.[resource];
    if (usage !== undefined && usage > (request?.value ?? 0)) {
      result.push({ name: container.name, usage: formatBinarySI(usage), request: request?.text ?? '0' });
    }
  }
  return result;
}

export interface EvictedPodStatus {
  phase: 'Failed';
  reason: 'Evicted';
  message: string;
  conditions: [{ type: 'DisruptionTarget'; status: 'True'; reason: 'TerminationByKubelet'; message: string; lastTransitionTime: string }];
}

export function evictedPodStatus(message: string, now: number): EvictedPodStatus {
  return {
    phase: 'Failed',
    reason: 'Evicted',
    message,
    conditions: [
      {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'TerminationByKubelet',
        message,
        lastTransitionTime: new Date(Math.floor(now / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
      },
    ],
  };
}
