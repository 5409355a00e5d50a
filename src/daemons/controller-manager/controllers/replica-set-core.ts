/**
 * The pod-count logic shared by the ReplicaSet and ReplicationController controllers (upstream's
 * pkg/controller/replicaset and the helpers of pkg/controller/controller_utils.go), as pure
 * decisions: which pods an owner claims, adopts and releases; how many pods to create or which to
 * delete (upstream's ranking); slow-start batches; the expectations that keep a sync from
 * recreating pods whose creation it has not observed yet; and the status an owner reports.
 * The I/O (informers, queue, REST calls) lives in replicaset.ts.
 */
import { names } from '../../../api/names.js';
import { matchesLabels, type LabelRequirement } from '../../../api/selectors.js';
import type {OwnerReference} from '../../../api/meta.js';

// ---------------------------------------------------------------------------------------------
// The shapes read and written (only the fields these controllers use).

export type {OwnerReference};

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

export interface Condition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  lastUpdateTime?: string;
  reason?: string;
  message?: string;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: { nodeName?: string; [field: string]: unknown };
  status?: {
    phase?: string;
    conditions?: Condition[];
    containerStatuses?: { restartCount?: number }[];
    [field: string]: unknown;
  };
}

export interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[]; [field: string]: unknown };
  spec?: Record<string, unknown>;
}

export interface ReplicaStatus {
  replicas: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: Condition[];
  [field: string]: unknown;
}

/** A ReplicaSet or a ReplicationController: the selector's shape is the only difference. */
export interface ReplicaOwner {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: { replicas?: number; minReadySeconds?: number; template?: PodTemplate; selector?: unknown; [field: string]: unknown };
  status?: ReplicaStatus;
}

/** Parsed selector requirements; an empty list selects nothing (never "every pod" by accident). */
export type Selector = LabelRequirement[];

export function selectorMatches(selector: Selector, labels: Record<string, string> | undefined): boolean {
  return selector.length > 0 && matchesLabels(selector, labels);
}

/** Upstream's burstReplicas: the most pods one sync creates or deletes. */
export const BURST_REPLICAS = 500;
/** Upstream's SlowStartInitialBatchSize. */
export const SLOW_START_INITIAL_BATCH_SIZE = 1;
/** Upstream's ExpectationsTimeout: stale expectations stop blocking a sync after this. */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60 * 1000;
/** `controller.kubernetes.io/pod-deletion-cost` under orch's domain. */
export const podDeletionCostAnnotation = (): string => names().annotations.podDeletionCost;

// ---------------------------------------------------------------------------------------------
// Pod state.

export function isPodActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata.deletionTimestamp;
}

function readyCondition(pod: Pod): Condition | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'Ready');
}

export function isPodReady(pod: Pod): boolean {
  return readyCondition(pod)?.status === 'True';
}

/** Ready for at least minReadySeconds (upstream's IsPodAvailable). */
export function isPodAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  const condition = readyCondition(pod);
  if (condition?.status !== 'True') return false;
  if (minReadySeconds <= 0) return true;
  const since = condition.lastTransitionTime ? Date.parse(condition.lastTransitionTime) : NaN;
  return !Number.isNaN(since) && since + minReadySeconds * 1000 <= nowMs;
}

export function controllerRefOf(object: { metadata?: ObjectMeta }): OwnerReference | undefined {
  return object.metadata?.ownerReferences?.find((ref) => ref.controller === true);
}

export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

// ---------------------------------------------------------------------------------------------
// Claiming: upstream's PodControllerRefManager.ClaimPods.

export interface ClaimDecision<T = Pod> {
  /** Owned and matching: counted as the owner's pods. */
  owned: T[];
  /** Orphans matching the selector: the owner takes them (then they count too). */
  adopt: T[];
  /** Owned but no longer matching: the owner lets go of them. */
  release: T[];
}

/**
 * Splits candidate pods by ownership. Pods controlled by another owner are left alone; nothing is
 * adopted or released while the owner itself is being deleted, and a pod being deleted is not
 * adopted (upstream's rules).
 */
export function claimPods<T extends { metadata: ObjectMeta } = Pod>(owner: { metadata: ObjectMeta }, selector: Selector, pods: T[]): ClaimDecision<T> {
  const decision: ClaimDecision<T> = { owned: [], adopt: [], release: [] };
  const ownerDeleting = Boolean(owner.metadata.deletionTimestamp);
  for (const pod of pods) {
    const ref = controllerRefOf(pod);
    const matches = selectorMatches(selector, pod.metadata.labels);
    if (ref) {
      if (ref.uid !== owner.metadata.uid) continue;
      if (matches) decision.owned.push(pod);
      else if (!ownerDeleting) decision.release.push(pod);
      continue;
    }
    if (matches && !ownerDeleting && !pod.metadata.deletionTimestamp) decision.adopt.push(pod);
  }
  return decision;
}

/** The controller reference an owner puts on its pods (metav1.NewControllerRef). */
export function controllerRefTo(owner: { metadata: ObjectMeta }, apiVersion: string, kind: string): OwnerReference {
  return { apiVersion, kind, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

/**
 * The strategic merge patch adopting a pod (or a replica set); the object's uid makes the patch
 * fail if the object was replaced meanwhile.
 */
export function adoptionPatch(pod: { metadata: ObjectMeta }, ref: OwnerReference): unknown {
  return { metadata: { ownerReferences: [ref], uid: pod.metadata.uid } };
}

/** The strategic merge patch releasing a pod: its reference to the owner is deleted by uid. */
export function releasePatch(pod: { metadata: ObjectMeta }, ownerUid: string): unknown {
  return { metadata: { ownerReferences: [{ $patch: 'delete', uid: ownerUid }], uid: pod.metadata.uid } };
}

// ---------------------------------------------------------------------------------------------
// Creating pods from the template (upstream's GetPodFromTemplate).

export function podFromTemplate(owner: { metadata: ObjectMeta; spec?: { template?: PodTemplate } }, ref: OwnerReference): Pod {
  const template = owner.spec?.template ?? {};
  const meta = template.metadata ?? {};
  const metadata: ObjectMeta = {
    generateName: `${owner.metadata.name}-`,
    namespace: owner.metadata.namespace,
    labels: { ...(meta.labels ?? {}) },
    ownerReferences: [ref],
  };
  if (meta.annotations) metadata.annotations = { ...meta.annotations };
  if (meta.finalizers) metadata.finalizers = [...meta.finalizers];
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: structuredClone(template.spec ?? {}) };
}

// ---------------------------------------------------------------------------------------------
// How many to create, which to delete.

export type ReplicaPlan = { action: 'none' } | { action: 'create'; count: number } | { action: 'delete'; pods: Pod[] };

/**
 * Upstream's manageReplicas decision: create the missing pods, or delete the surplus ranked by
 * `rankPodsForDeletion`, at most `burst` per sync either way.
 */
export function planReplicas(desired: number, activePods: Pod[], relatedPods: Pod[], nowMs: number, burst = BURST_REPLICAS): ReplicaPlan {
  const diff = activePods.length - desired;
  if (diff < 0) return { action: 'create', count: Math.min(-diff, burst) };
  if (diff > 0) return { action: 'delete', pods: podsToDelete(activePods, relatedPods, Math.min(diff, burst), nowMs) };
  return { action: 'none' };
}

/** The `count` pods deleted first; ranking is skipped when every pod goes. */
export function podsToDelete(pods: Pod[], relatedPods: Pod[], count: number, nowMs: number): Pod[] {
  if (count >= pods.length) return [...pods];
  return rankPodsForDeletion(pods, relatedPods, nowMs).slice(0, count);
}

const PHASE_ORDER: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

function deletionCost(pod: Pod): number {
  const value = Number(pod.metadata.annotations?.[podDeletionCostAnnotation()]);
  return Number.isInteger(value) ? value : 0;
}

function maxRestarts(pod: Pod): number {
  return Math.max(0, ...(pod.status?.containerStatuses ?? []).map((s) => s.restartCount ?? 0));
}

function readySinceMs(pod: Pod): number | undefined {
  const time = readyCondition(pod)?.lastTransitionTime;
  return time ? Date.parse(time) : undefined;
}

function creationMs(pod: Pod): number | undefined {
  return pod.metadata.creationTimestamp ? Date.parse(pod.metadata.creationTimestamp) : undefined;
}

/** Upstream's logarithmicRankDiff: compares floor(log2(age in ns)), so ages of one magnitude tie. */
function logarithmicRankDiff(t1: number, t2: number, nowMs: number): number {
  const rank = (t: number) => {
    const ns = (nowMs - t) * 1e6;
    return ns > 0 ? Math.floor(Math.log2(ns)) : -1;
  };
  return rank(t1) - rank(t2);
}

/**
 * Compares two times where the later (younger) one, or a missing one, sorts first; with a clock,
 * times of the same logarithmic age bucket tie and the UID decides (upstream's LogarithmicScaleDown).
 */
function youngerFirst(a: Pod, b: Pod, ta: number | undefined, tb: number | undefined, nowMs: number): number {
  if (ta === undefined || tb === undefined) return ta === undefined ? (tb === undefined ? 0 : -1) : 1;
  const diff = logarithmicRankDiff(ta, tb, nowMs);
  if (diff !== 0) return diff;
  const ua = a.metadata.uid ?? '';
  const ub = b.metadata.uid ?? '';
  return ua < ub ? -1 : ua > ub ? 1 : 0;
}

/**
 * Upstream's ActivePodsWithRanks order, the pods to delete first at the front:
 * 1. unscheduled before scheduled; 2. Pending before Unknown before Running; 3. not ready before
 * ready; 4. lower pod-deletion-cost first; 5. pods doubled up on a node with more related pods
 * first; 6. ready for less time first; 7. more container restarts first; 8. newest first.
 */
export function rankPodsForDeletion(pods: Pod[], relatedPods: Pod[], nowMs: number): Pod[] {
  const onNode = new Map<string, number>();
  for (const pod of relatedPods) {
    const node = pod.spec?.nodeName;
    if (node && isPodActive(pod)) onNode.set(node, (onNode.get(node) ?? 0) + 1);
  }
  const rank = (pod: Pod) => (pod.spec?.nodeName ? (onNode.get(pod.spec.nodeName) ?? 0) : 0);
  const compare = (a: Pod, b: Pod): number => {
    const scheduledA = Boolean(a.spec?.nodeName);
    const scheduledB = Boolean(b.spec?.nodeName);
    if (scheduledA !== scheduledB) return scheduledA ? 1 : -1;
    const phaseA = PHASE_ORDER[a.status?.phase ?? ''] ?? 0;
    const phaseB = PHASE_ORDER[b.status?.phase ?? ''] ?? 0;
    if (phaseA !== phaseB) return phaseA - phaseB;
    const readyA = isPodReady(a);
    const readyB = isPodReady(b);
    if (readyA !== readyB) return readyA ? 1 : -1;
    const costDiff = deletionCost(a) - deletionCost(b);
    if (costDiff !== 0) return costDiff;
    const rankDiff = rank(b) - rank(a);
    if (rankDiff !== 0) return rankDiff;
    if (readyA && readyB) {
      const ra = readySinceMs(a);
      const rb = readySinceMs(b);
      if (ra !== rb) {
        const order = youngerFirst(a, b, ra, rb, nowMs);
        if (order !== 0) return order;
      }
    }
    const restarts = maxRestarts(b) - maxRestarts(a);
    if (restarts !== 0) return restarts;
    const ca = creationMs(a);
    const cb = creationMs(b);
    if (ca !== cb) {
      const order = youngerFirst(a, b, ca, cb, nowMs);
      if (order !== 0) return order;
    }
    // Go's sort is not stable; a name order keeps ours deterministic.
    return (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
  };
  return [...pods].sort(compare);
}

// ---------------------------------------------------------------------------------------------
// Slow start: upstream's slowStartBatch.

/** The batch sizes slow start tries for `count` calls when every call succeeds: 1, 2, 4, ... */
export function slowStartBatchSizes(count: number, initial = SLOW_START_INITIAL_BATCH_SIZE): number[] {
  const sizes: number[] = [];
  let remaining = count;
  for (let size = Math.min(remaining, initial); size > 0; size = Math.min(2 * size, remaining)) {
    sizes.push(size);
    remaining -= size;
  }
  return sizes;
}

/**
 * Calls `fn` `count` times in batches that double while every call succeeds, so a template whose
 * pods are all rejected costs a few requests rather than hundreds. Stops after the first batch
 * with a failure; returns how many calls succeeded and the first error.
 */
export async function slowStartBatch(count: number, initial: number, fn: () => Promise<void>): Promise<{ successes: number; error?: unknown }> {
  let remaining = count;
  let successes = 0;
  for (let size = Math.min(remaining, initial); size > 0; size = Math.min(2 * size, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: size }, () => fn()));
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    successes += size - failures.length;
    if (failures.length > 0) return { successes, error: failures[0]!.reason };
    remaining -= size;
  }
  return { successes };
}

// ---------------------------------------------------------------------------------------------
// Expectations: upstream's UIDTrackingControllerExpectations.

interface Expectation {
  add: number;
  del: number;
  /** The pods whose deletion is awaited, by namespace/name. */
  deleting: Set<string>;
  setAt: number;
}

/**
 * What an owner's last sync asked for and has not yet seen in the informer. A sync whose
 * expectations are not met skips creating and deleting (it only reports status), so pods created
 * a moment ago but not yet cached are not created twice. Expectations lapse after five minutes in
 * case an event was lost.
 */
export class Expectations {
  private readonly byKey = new Map<string, Expectation>();

  constructor(
    private readonly now: () => number,
    private readonly timeoutMs = EXPECTATIONS_TIMEOUT_MS,
  ) {}

  satisfied(key: string): boolean {
    const e = this.byKey.get(key);
    if (!e) return true;
    return (e.add <= 0 && e.del <= 0) || this.now() - e.setAt > this.timeoutMs;
  }

  expectCreations(key: string, count: number): void {
    this.byKey.set(key, { add: count, del: 0, deleting: new Set(), setAt: this.now() });
  }

  expectDeletions(key: string, podKeys: string[]): void {
    this.byKey.set(key, { add: 0, del: podKeys.length, deleting: new Set(podKeys), setAt: this.now() });
  }

  creationObserved(key: string): void {
    const e = this.byKey.get(key);
    if (e) e.add--;
  }

  /** Counts only deletions this owner asked for, so a pod deleted twice is not counted twice. */
  deletionObserved(key: string, podKeyValue: string): void {
    const e = this.byKey.get(key);
    if (e?.deleting.delete(podKeyValue)) e.del--;
  }

  delete(key: string): void {
    this.byKey.delete(key);
  }

  pending(key: string): { add: number; del: number } | undefined {
    const e = this.byKey.get(key);
    return e && { add: e.add, del: e.del };
  }
}

// ---------------------------------------------------------------------------------------------
// Status (upstream's calculateStatus and updateReplicaSetStatus).

export function formatTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The status an owner reports for its active pods; `manageError` sets or clears ReplicaFailure. */
export function calculateReplicaStatus(owner: ReplicaOwner, activePods: Pod[], manageError: unknown, nowMs: number): ReplicaStatus {
  const templateLabels = owner.spec?.template?.metadata?.labels ?? {};
  const minReadySeconds = owner.spec?.minReadySeconds ?? 0;
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const pod of activePods) {
    const labels = pod.metadata.labels ?? {};
    if (Object.entries(templateLabels).every(([k, v]) => labels[k] === v)) fullyLabeled++;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, minReadySeconds, nowMs)) available++;
    }
  }
  const conditions = [...(owner.status?.conditions ?? [])];
  const failure = conditions.findIndex((c) => c.type === 'ReplicaFailure');
  if (manageError && failure < 0) {
    const diff = activePods.length - (owner.spec?.replicas ?? 1);
    const reason = diff < 0 ? 'FailedCreate' : diff > 0 ? 'FailedDelete' : '';
    conditions.push({ type: 'ReplicaFailure', status: 'True', lastTransitionTime: formatTime(nowMs), reason, message: errorMessage(manageError) });
  } else if (!manageError && failure >= 0) {
    conditions.splice(failure, 1);
  }
  // Zero counts are left out, as Go's omitempty does upstream (`replicas` alone is always written).
  const status: ReplicaStatus = { replicas: activePods.length };
  if (fullyLabeled) status.fullyLabeledReplicas = fullyLabeled;
  if (ready) status.readyReplicas = ready;
  if (available) status.availableReplicas = available;
  if (owner.metadata.generation) status.observedGeneration = owner.metadata.generation;
  if (conditions.length > 0) status.conditions = conditions;
  return status;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Whether the stored status differs from the computed one (upstream skips equal writes). */
export function statusChanged(owner: ReplicaOwner, status: ReplicaStatus): boolean {
  const current = owner.status ?? { replicas: 0 };
  return (
    (current.replicas ?? 0) !== status.replicas ||
    (current.fullyLabeledReplicas ?? 0) !== (status.fullyLabeledReplicas ?? 0) ||
    (current.readyReplicas ?? 0) !== (status.readyReplicas ?? 0) ||
    (current.availableReplicas ?? 0) !== (status.availableReplicas ?? 0) ||
    (current.observedGeneration ?? 0) !== (status.observedGeneration ?? 0) ||
    JSON.stringify(current.conditions ?? []) !== JSON.stringify(status.conditions ?? [])
  );
}

/**
 * After a successful sync of an owner with minReadySeconds whose pods are all ready but not all
 * available, sync again when they may have become available (upstream's AddAfter).
 */
export function availabilityRecheckMs(owner: ReplicaOwner, status: ReplicaStatus): number | undefined {
  const minReadySeconds = owner.spec?.minReadySeconds ?? 0;
  const desired = owner.spec?.replicas ?? 1;
  if (minReadySeconds > 0 && (status.readyReplicas ?? 0) === desired && (status.availableReplicas ?? 0) !== desired) return minReadySeconds * 1000;
  return undefined;
}
