/**
 * The decisions of the `statefulset` controller (apps/v1 StatefulSet), pure: given a set, the pods
 * it owns and `now`, which pods to create (by ordinal, with their stable names), which to delete
 * (finished pods to replace, ordinals beyond the scale, pods of an old revision during a rolling
 * update) and what the set's status is. Upstream's defaultStatefulSetControl.updateStatefulSet
 * (Kubernetes 1.32), step for step, without ControllerRevision objects: a revision is named
 * `<set>-<hash of spec.template>` and carried by the pod's `controller-revision-hash` label, as
 * upstream does, but no history of old templates is kept (see statefulset.ts).
 */
import { names } from '../../../api/names.js';
import { computeTemplateHash } from './deployment.js';
import { isPodAvailable, isPodReady, podFromTemplate, type ObjectMeta, type OwnerReference, type Pod, type PodTemplate } from './replica-set-core.js';

/** `statefulset.kubernetes.io/pod-name` under orch's domain: lets a Service select one pod. */
export const podNameLabel = (): string => names().labels.statefulSetPodName;
/** `apps.kubernetes.io/pod-index` under orch's domain. */
export const podIndexLabel = (): string => names().labels.podIndex;
/** Upstream's ControllerRevisionHashLabelKey: the revision a pod was created from. */
export const REVISION_LABEL = 'controller-revision-hash';

export interface StatefulSetSpec {
  replicas?: number;
  serviceName?: string;
  podManagementPolicy?: 'OrderedReady' | 'Parallel' | string;
  updateStrategy?: { type?: 'RollingUpdate' | 'OnDelete' | string; rollingUpdate?: { partition?: number; maxUnavailable?: unknown } };
  minReadySeconds?: number;
  ordinals?: { start?: number };
  selector?: unknown;
  template?: PodTemplate;
  volumeClaimTemplates?: unknown[];
  [field: string]: unknown;
}

export interface StatefulSetStatus {
  observedGeneration?: number;
  replicas: number;
  readyReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  availableReplicas: number;
  currentRevision?: string;
  updateRevision?: string;
  collisionCount?: number;
  [field: string]: unknown;
}

export interface StatefulSet {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: StatefulSetSpec;
  status?: StatefulSetStatus;
}

/** Why a pod is deleted (for the log line; the event is the same). */
export type RemoveReason = 'finished' | 'scale-down' | 'update';

export interface StatefulSetPlan {
  status: StatefulSetStatus;
  /** Pods to create, complete objects with their stable names, lowest ordinal first. */
  create: Pod[];
  remove: { pod: Pod; reason: RemoveReason }[];
  /** Look again after this long (a ready pod becoming available after minReadySeconds). */
  requeueAfterMs?: number;
}

// ---------------------------------------------------------------------------------------------
// Identity: names and ordinals.

export function podName(set: StatefulSet, ordinal: number): string {
  return `${set.metadata.name ?? ''}-${ordinal}`;
}

/** Upstream's statefulPodRegex: the parent's name, a dash, the ordinal. */
const STATEFUL_POD_NAME = /^(.*)-([0-9]+)$/;

/** The pod's ordinal when its name says it belongs to `set` (upstream's isMemberOf), else -1. */
export function ordinalOf(set: StatefulSet, pod: Pod): number {
  const match = STATEFUL_POD_NAME.exec(pod.metadata.name ?? '');
  if (!match || match[1] !== set.metadata.name) return -1;
  const ordinal = Number(match[2]);
  return Number.isSafeInteger(ordinal) ? ordinal : -1;
}

export function isMemberOf(set: StatefulSet, pod: Pod): boolean {
  return ordinalOf(set, pod) >= 0;
}

/** The revision of the set's current template: upstream's ControllerRevision name `<set>-<hash>`. */
export function updateRevisionOf(set: StatefulSet): string {
  return `${set.metadata.name ?? ''}-${computeTemplateHash(set.spec?.template)}`;
}

export function podRevision(pod: Pod): string {
  return pod.metadata.labels?.[REVISION_LABEL] ?? '';
}

/**
 * Upstream's newVersionedStatefulSetPod: the template's pod under its stable name, with the
 * identity labels, hostname and subdomain (the DNS name `<pod>.<service>`), and its revision.
 */
export function newStatefulSetPod(set: StatefulSet, ordinal: number, ref: OwnerReference, revision: string): Pod {
  const pod = podFromTemplate(set, ref);
  const name = podName(set, ordinal);
  pod.metadata.name = name;
  pod.metadata.labels = { ...pod.metadata.labels, [podNameLabel()]: name, [podIndexLabel()]: String(ordinal), [REVISION_LABEL]: revision };
  pod.spec = { ...pod.spec, hostname: name };
  if (set.spec?.serviceName) pod.spec.subdomain = set.spec.serviceName;
  return pod;
}

// ---------------------------------------------------------------------------------------------
// Pod state, as upstream's stateful_set_utils.go reads it.

const isTerminating = (pod: Pod) => Boolean(pod.metadata.deletionTimestamp);
const isFinished = (pod: Pod) => pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';
export const isRunningAndReady = (pod: Pod) => pod.status?.phase === 'Running' && isPodReady(pod);
const isRunningAndAvailable = (pod: Pod, minReadySeconds: number, nowMs: number) =>
  pod.status?.phase === 'Running' && isPodAvailable(pod, minReadySeconds, nowMs);
/** Upstream's isUnavailable: not yet available, or going away. */
const isUnavailable = (pod: Pod, minReadySeconds: number, nowMs: number) => !isRunningAndAvailable(pod, minReadySeconds, nowMs) || isTerminating(pod);

/** When a ready pod that is not yet available becomes available, if it is one. */
function availableAtMs(pod: Pod, minReadySeconds: number): number | undefined {
  if (minReadySeconds <= 0 || pod.status?.phase !== 'Running' || !isPodReady(pod)) return undefined;
  const since = Date.parse(pod.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime ?? '');
  return Number.isNaN(since) ? undefined : since + minReadySeconds * 1000;
}

// ---------------------------------------------------------------------------------------------
// Status.

/**
 * Upstream's computeReplicaStatus over the pods the set owns whose name gives an ordinal:
 * `replicas` counts the pods that exist, current/updated those of the current/update revision that
 * are not terminating.
 */
export function computeStatus(set: StatefulSet, pods: Pod[], currentRevision: string, updateRevision: string, nowMs: number): StatefulSetStatus {
  const minReadySeconds = set.spec?.minReadySeconds ?? 0;
  let ready = 0;
  let available = 0;
  let current = 0;
  let updated = 0;
  for (const pod of pods) {
    if (isRunningAndReady(pod)) {
      ready++;
      if (isRunningAndAvailable(pod, minReadySeconds, nowMs)) available++;
    }
    if (!isTerminating(pod)) {
      if (podRevision(pod) === currentRevision) current++;
      if (podRevision(pod) === updateRevision) updated++;
    }
  }
  // Zero counts are left out as Go's omitempty does; replicas and availableReplicas have none upstream.
  const status: StatefulSetStatus = { replicas: pods.length, availableReplicas: available };
  if (set.metadata.generation) status.observedGeneration = set.metadata.generation;
  if (ready) status.readyReplicas = ready;
  if (current) status.currentReplicas = current;
  if (updated) status.updatedReplicas = updated;
  status.currentRevision = currentRevision;
  status.updateRevision = updateRevision;
  status.collisionCount = set.status?.collisionCount ?? 0;
  return status;
}

/** Upstream's completeRollingUpdate: once every pod is updated and ready, the update is the current revision. */
function completeRollingUpdate(set: StatefulSet, status: StatefulSetStatus): StatefulSetStatus {
  if (set.spec?.updateStrategy?.type === 'OnDelete') return status;
  if ((status.updatedReplicas ?? 0) !== status.replicas || (status.readyReplicas ?? 0) !== status.replicas) return status;
  const done: StatefulSetStatus = { ...status, currentRevision: status.updateRevision };
  if (status.updatedReplicas) done.currentReplicas = status.updatedReplicas;
  else delete done.currentReplicas;
  return done;
}

/** Whether the computed status differs from the stored one (upstream's inconsistentStatus), i.e. is worth a write. */
export function statusChanged(set: StatefulSet, status: StatefulSetStatus): boolean {
  const stored = set.status;
  if (!stored) return true;
  const fields = ['observedGeneration', 'replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas', 'currentRevision', 'updateRevision', 'collisionCount'] as const;
  return fields.some((f) => (stored[f] ?? 0) !== (status[f] ?? 0));
}

// ---------------------------------------------------------------------------------------------
// The plan.

/**
 * Upstream's updateStatefulSet. OrderedReady (monotonic) walks ordinals upward and stops at the
 * first pod it created, replaced, or that is not yet Running, Ready and available; only when all
 * of 0..N-1 are, it deletes the highest surplus ordinal, one per sync. Parallel creates and deletes
 * everything at once. Then RollingUpdate deletes the highest pod of an old revision at or above the
 * partition, one at a time, waiting for each replacement to be available (in both policies).
 */
export function planStatefulSet(set: StatefulSet, pods: Pod[], ref: OwnerReference, nowMs: number): StatefulSetPlan {
  const spec = set.spec ?? {};
  const replicaCount = Math.max(0, spec.replicas ?? 1);
  const start = Math.max(0, spec.ordinals?.start ?? 0);
  const minReadySeconds = spec.minReadySeconds ?? 0;
  const monotonic = spec.podManagementPolicy !== 'Parallel';
  const updateRevision = updateRevisionOf(set);
  const currentRevision = set.status?.currentRevision || updateRevision;

  // Each pod to its slot: ordinals in [start, start+replicas) are replicas, others are condemned.
  const replicas: (Pod | undefined)[] = new Array<Pod | undefined>(replicaCount).fill(undefined);
  const condemned: Pod[] = [];
  for (const pod of pods) {
    const ordinal = ordinalOf(set, pod);
    if (ordinal < 0) continue;
    if (ordinal >= start && ordinal < start + replicaCount) replicas[ordinal - start] = pod;
    else condemned.push(pod);
  }
  condemned.sort((a, b) => ordinalOf(set, b) - ordinalOf(set, a));

  const members = pods.filter((p) => isMemberOf(set, p));
  const plan: StatefulSetPlan = { status: computeStatus(set, members, currentRevision, updateRevision, nowMs), create: [], remove: [] };
  const availableTimes = members.map((p) => availableAtMs(p, minReadySeconds)).filter((t): t is number => t !== undefined && t > nowMs);
  if (availableTimes.length > 0) plan.requeueAfterMs = Math.min(...availableTimes) - nowMs;
  const finish = () => ({ ...plan, status: completeRollingUpdate(set, plan.status) });
  if (set.metadata.deletionTimestamp) return finish();

  // The first unhealthy pod, replicas by ordinal then condemned by ordinal: the one scale-down may delete even unhealthy.
  const firstUnhealthy = [...replicas, ...[...condemned].reverse()].find((p) => p && isUnavailable(p, minReadySeconds, nowMs));

  // Replicas, lowest ordinal first (upstream's processReplica).
  for (let i = 0; i < replicaCount; i++) {
    const pod = replicas[i];
    if (!pod) {
      // Pods below the partition would be recreated at the current revision upstream; with no
      // history of old templates, every pod is created from the set's template.
      plan.create.push(newStatefulSetPod(set, start + i, ref, updateRevision));
      if (monotonic) return finish();
      continue;
    }
    if (isFinished(pod)) {
      // Deleted now, recreated under the same name by a later sync once it is gone.
      if (!isTerminating(pod)) plan.remove.push({ pod, reason: 'finished' });
      if (monotonic) return finish();
      continue;
    }
    if (monotonic && (isTerminating(pod) || !isRunningAndAvailable(pod, minReadySeconds, nowMs))) return finish();
  }
  // Upstream's Parallel mode goes on after a replacement; a pod it deletes is not touched again below.
  const deleting = new Set(plan.remove.map((r) => r.pod));

  // Surplus ordinals, highest first (upstream's processCondemned).
  for (const pod of condemned) {
    if (isTerminating(pod)) {
      if (monotonic) return finish();
      continue;
    }
    if (monotonic && pod !== firstUnhealthy && !isRunningAndAvailable(pod, minReadySeconds, nowMs)) return finish();
    plan.remove.push({ pod, reason: 'scale-down' });
    if (monotonic) return finish();
  }

  if (spec.updateStrategy?.type === 'OnDelete') return finish();

  // Rolling update: the highest pod of another revision at or above the partition goes first.
  const partition = Math.max(0, spec.updateStrategy?.rollingUpdate?.partition ?? 0);
  for (let i = replicaCount - 1; i >= partition; i--) {
    const pod = replicas[i];
    // Created or deleted by this very sync (Parallel): not available yet.
    if (!pod || deleting.has(pod)) return finish();
    if (podRevision(pod) !== updateRevision && !isTerminating(pod)) {
      plan.remove.push({ pod, reason: 'update' });
      // It no longer counts as current once its deletion is asked for (upstream's CurrentReplicas--).
      if (podRevision(pod) === currentRevision && plan.status.currentReplicas) {
        plan.status = { ...plan.status, currentReplicas: plan.status.currentReplicas - 1 };
        if (!plan.status.currentReplicas) delete plan.status.currentReplicas;
      }
      return finish();
    }
    if (isUnavailable(pod, minReadySeconds, nowMs)) return finish();
  }
  return finish();
}
