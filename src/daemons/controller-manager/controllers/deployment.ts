/**
 * The `deployment` controller (apps/v1 Deployment, upstream's pkg/controller/deployment): rolls a
 * pod template out through ReplicaSets. The template's hash names the new ReplicaSet
 * (`<deployment>-<hash>`, label `pod-template-hash`); RollingUpdate scales it up within maxSurge
 * and the old ones down within maxUnavailable as the new pods become available, Recreate scales
 * the old ones to zero first. Revisions are annotated, old ReplicaSets beyond
 * revisionHistoryLimit deleted, and status with the Available and Progressing conditions written.
 *
 * The first half of the module is pure (upstream's deployment/util and the planning parts of
 * rolling.go, recreate.go, sync.go, progress.go); the second half is the I/O.
 */
import { names, nameSet, perNameSet } from '../../../api/names.js';
import { ApiStatusError } from '../../../client/errors.js';
import {
  deletedObject,
  NAMESPACE_INDEX,
  RateLimitingQueue,
  type DeletedFinalStateUnknown,
  type HandlerRegistration,
  type ResourceRef,
} from '../../../client/informers/index.js';
import type { ControllerContext, ControllerDescriptor, RunningController } from './types.js';
import { runQueueWorkers } from './queue-workers.js';
import {
  adoptionPatch,
  claimPods,
  controllerRefOf,
  controllerRefTo,
  formatTime,
  releasePatch,
  selectorMatches,
  type Condition,
  type ObjectMeta,
  type OwnerReference,
  type Pod,
  type PodTemplate,
  type ReplicaOwner,
} from './replica-set-core.js';
import { labelSelectorRequirements, PODS } from './replicaset.js';

// ---------------------------------------------------------------------------------------------
// Names (upstream's deployment/util constants, in the active name set).

export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
export const revisionAnnotation = (): string => names().annotations.deploymentRevision;
/**
 * kubectl reads the revision under upstream's name only (`kubectl rollout history` and `rollout undo`
 * list and pick replica sets by it), so the revision is mirrored there too; orch's own name stays
 * the one the controller reads.
 */
export const KUBECTL_REVISION_ANNOTATION = nameSet('kubernetes').annotations.deploymentRevision;
export const revisionHistoryAnnotation = (): string => names().annotations.deploymentRevisionHistory;
export const desiredReplicasKey = (): string => names().annotations.deploymentDesiredReplicas;
export const maxReplicasKey = (): string => names().annotations.deploymentMaxReplicas;
/** Annotations a deployment does not hand down to its replica sets. */
const annotationsNotCopied = perNameSet(() => new Set([
  // kubectl's own, whatever the server's names, and the name set's client's.
  nameSet('kubernetes').annotations.lastAppliedConfiguration,
  names().annotations.lastAppliedConfiguration,
  revisionAnnotation(),
  KUBECTL_REVISION_ANNOTATION,
  revisionHistoryAnnotation(),
  desiredReplicasKey(),
  maxReplicasKey(),
  'deprecated.deployment.rollback.to',
]));

export const Reasons = {
  minimumReplicasAvailable: 'MinimumReplicasAvailable',
  minimumReplicasUnavailable: 'MinimumReplicasUnavailable',
  newRSAvailable: 'NewReplicaSetAvailable',
  replicaSetUpdated: 'ReplicaSetUpdated',
  newReplicaSetCreated: 'NewReplicaSetCreated',
  foundNewReplicaSet: 'FoundNewReplicaSet',
  failedRSCreate: 'ReplicaSetCreateError',
  timedOut: 'ProgressDeadlineExceeded',
  paused: 'DeploymentPaused',
  resumed: 'DeploymentResumed',
} as const;

const MAX_INT32 = 2147483647;
const MAX_REVISION_HISTORY_CHARS = 2000;

// ---------------------------------------------------------------------------------------------
// Shapes.

export type ReplicaSet = ReplicaOwner;

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  conditions?: Condition[];
  collisionCount?: number;
}

export interface Deployment {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    replicas?: number;
    selector?: unknown;
    template?: PodTemplate;
    strategy?: { type?: string; rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } };
    minReadySeconds?: number;
    revisionHistoryLimit?: number;
    progressDeadlineSeconds?: number;
    paused?: boolean;
  };
  status?: DeploymentStatus;
}

const replicasOf = (d: Deployment) => d.spec.replicas ?? 1;
const rsReplicas = (rs: ReplicaSet | undefined) => rs?.spec?.replicas ?? 0;

// ---------------------------------------------------------------------------------------------
// maxSurge / maxUnavailable (upstream's intstr.GetScaledValueFromIntOrPercent and ResolveFenceposts).

/** An int, or a percentage of `total` rounded up or down. */
export function scaledValue(value: number | string | undefined, total: number, roundUp: boolean): number {
  if (value === undefined) return 0;
  if (typeof value === 'number') return value;
  const match = /^(-?\d+)%$/.exec(value);
  if (!match) throw new Error(`invalid value for IntOrString: invalid value "${value}": must be an int or a percentage`);
  const scaled = (Number(match[1]) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

export function isRollingUpdate(d: Deployment): boolean {
  return (d.spec.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
}

/** [maxSurge, maxUnavailable] for `desired` pods; both zero becomes maxUnavailable 1, as upstream. */
export function resolveFenceposts(maxSurge: number | string | undefined, maxUnavailable: number | string | undefined, desired: number): [number, number] {
  const surge = scaledValue(maxSurge ?? '25%', desired, true);
  let unavailable = scaledValue(maxUnavailable ?? '25%', desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return [surge, unavailable];
}

export function maxSurge(d: Deployment): number {
  if (!isRollingUpdate(d)) return 0;
  const ru = d.spec.strategy?.rollingUpdate;
  return resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicasOf(d))[0];
}

export function maxUnavailable(d: Deployment): number {
  if (!isRollingUpdate(d) || replicasOf(d) === 0) return 0;
  const ru = d.spec.strategy?.rollingUpdate;
  const unavailable = resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicasOf(d))[1];
  return Math.min(unavailable, replicasOf(d));
}

// ---------------------------------------------------------------------------------------------
// The pod-template-hash.

/** JSON with object keys sorted, so equal templates hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

function fnv32a(bytes: Uint8Array, hash = 0x811c9dc5): number {
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash >>> 0;
}

/** Upstream's rand.SafeEncodeString: each character to one of 27 without vowels or look-alikes. */
export function safeEncodeString(text: string): string {
  const alphanums = 'bcdfghjklmnpqrstvwxz2456789';
  return [...text].map((c) => alphanums[c.charCodeAt(0) % alphanums.length]).join('');
}

/**
 * Upstream's controller.ComputeHash: FNV-32a of the template, then of the collision count (little
 * endian uint32) when set, encoded safely. Upstream hashes Go's %#v dump of the struct, which a
 * JSON object cannot reproduce; hashing canonical JSON is the stable equivalent.
 */
export function computeTemplateHash(template: PodTemplate | undefined, collisionCount?: number): string {
  let hash = fnv32a(new TextEncoder().encode(canonicalJson(template ?? {})));
  if (collisionCount !== undefined) {
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setUint32(0, collisionCount >>> 0, true);
    hash = fnv32a(bytes, hash);
  }
  return safeEncodeString(String(hash));
}

function withoutHashLabel(template: PodTemplate | undefined): PodTemplate {
  const copy: PodTemplate = structuredClone(template ?? {});
  const labels = copy.metadata?.labels;
  if (labels) {
    delete labels[POD_TEMPLATE_HASH_LABEL];
    if (Object.keys(labels).length === 0) delete copy.metadata!.labels;
  }
  // Upstream compares typed templates, where `creationTimestamp: null` (what kubectl sends, e.g. in
  // `rollout undo`) and no creationTimestamp are the same zero time.
  if (copy.metadata && copy.metadata.creationTimestamp === null) delete copy.metadata.creationTimestamp;
  if (copy.metadata && Object.keys(copy.metadata).length === 0) delete copy.metadata;
  return copy;
}

/** Templates equal once the pod-template-hash label is ignored (upstream's EqualIgnoreHash). */
export function equalIgnoreHash(a: PodTemplate | undefined, b: PodTemplate | undefined): boolean {
  return canonicalJson(withoutHashLabel(a)) === canonicalJson(withoutHashLabel(b));
}

// ---------------------------------------------------------------------------------------------
// Finding the new and old replica sets, revisions.

function creationOrder(a: ReplicaSet, b: ReplicaSet): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/** The oldest replica set whose template is the deployment's (upstream's FindNewReplicaSet). */
export function findNewReplicaSet(d: Deployment, rsList: ReplicaSet[]): ReplicaSet | undefined {
  return [...rsList].sort(creationOrder).find((rs) => equalIgnoreHash(rs.spec?.template, d.spec.template));
}

export function revisionOf(object: { metadata: ObjectMeta }): number {
  const value = Number(object.metadata.annotations?.[revisionAnnotation()] ?? 0);
  return Number.isInteger(value) ? value : 0;
}

export function maxRevision(rsList: ReplicaSet[]): number {
  return Math.max(0, ...rsList.map(revisionOf));
}

function desiredReplicasAnnotation(rs: ReplicaSet): number | undefined {
  const value = rs.metadata.annotations?.[desiredReplicasKey()];
  return value === undefined || !/^\d+$/.test(value) ? undefined : Number(value);
}

const sumOf = (rsList: (ReplicaSet | undefined)[], value: (rs: ReplicaSet) => number) => rsList.reduce((n, rs) => n + (rs ? value(rs) : 0), 0);
const specReplicasSum = (rsList: (ReplicaSet | undefined)[]) => sumOf(rsList, rsReplicas);
const availableSum = (rsList: (ReplicaSet | undefined)[]) => sumOf(rsList, (rs) => rs.status?.availableReplicas ?? 0);
export const activeReplicaSets = (rsList: (ReplicaSet | undefined)[]) => rsList.filter((rs): rs is ReplicaSet => rs !== undefined && rsReplicas(rs) > 0);

/**
 * Sets the annotations a deployment hands to its replica set (upstream's
 * SetNewReplicaSetAnnotations): the deployment's own, the revision when it grows (remembering the
 * reused one in the revision history), and for a new replica set the desired/max replicas.
 * Mutates `rs`; returns whether anything changed.
 */
export function setNewReplicaSetAnnotations(d: Deployment, rs: ReplicaSet, newRevision: number, exists: boolean): boolean {
  const annotations = (rs.metadata.annotations ??= {});
  let changed = false;
  for (const [key, value] of Object.entries(d.metadata.annotations ?? {})) {
    if (annotationsNotCopied().has(key) || annotations[key] === value) continue;
    annotations[key] = value;
    changed = true;
  }
  const oldText = annotations[revisionAnnotation()];
  const oldRevision = oldText === undefined || oldText === '' ? 0 : Number(oldText);
  if (!Number.isInteger(oldRevision)) return changed;
  if (oldRevision < newRevision) {
    annotations[revisionAnnotation()] = String(newRevision);
    changed = true;
    if (oldText) {
      const history = annotations[revisionHistoryAnnotation()];
      const next = history ? `${history},${oldText}` : oldText;
      annotations[revisionHistoryAnnotation()] = next.length > MAX_REVISION_HISTORY_CHARS ? next.slice(next.indexOf(',', next.length - MAX_REVISION_HISTORY_CHARS) + 1) : next;
    }
  }
  if (annotations[revisionAnnotation()] !== undefined && annotations[KUBECTL_REVISION_ANNOTATION] !== annotations[revisionAnnotation()]) {
    annotations[KUBECTL_REVISION_ANNOTATION] = annotations[revisionAnnotation()];
    changed = true;
  }
  if (!exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d) + maxSurge(d))) changed = true;
  return changed;
}

/** Sets desired/max replicas annotations; returns whether they changed. */
export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number): boolean {
  const annotations = (rs.metadata.annotations ??= {});
  if (annotations[desiredReplicasKey()] === String(desired) && annotations[maxReplicasKey()] === String(max)) return false;
  annotations[desiredReplicasKey()] = String(desired);
  annotations[maxReplicasKey()] = String(max);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Planning the replica counts (rolling.go, recreate.go, sync.go).

/** The new replica set's next size (upstream's NewRSNewReplicas). */
export function newRSNewReplicas(d: Deployment, allRSs: (ReplicaSet | undefined)[], newRS: ReplicaSet): number {
  if (!isRollingUpdate(d)) return replicasOf(d);
  const maxTotal = replicasOf(d) + maxSurge(d);
  const current = specReplicasSum(allRSs);
  if (current >= maxTotal) return rsReplicas(newRS);
  const scaleUp = Math.min(maxTotal - current, replicasOf(d) - rsReplicas(newRS));
  return rsReplicas(newRS) + scaleUp;
}

/** A replica set's new size, decided by a plan. */
export interface ScaleStep {
  rs: ReplicaSet;
  replicas: number;
}

/**
 * Upstream's reconcileOldReplicaSets as a plan: first scale down old replica sets' unavailable
 * pods (they cost no availability), then old available pods as far as maxUnavailable allows,
 * oldest replica set first. Returns the steps in order.
 */
export function planOldReplicaSetsScaleDown(d: Deployment, newRS: ReplicaSet, oldRSs: ReplicaSet[]): ScaleStep[] {
  const old = oldRSs.map((rs) => ({ rs, replicas: rsReplicas(rs) })).sort((a, b) => creationOrder(a.rs, b.rs));
  const oldCount = old.reduce((n, o) => n + o.replicas, 0);
  if (oldCount === 0) return [];
  const minAvailable = replicasOf(d) - maxUnavailable(d);
  const newUnavailable = rsReplicas(newRS) - (newRS.status?.availableReplicas ?? 0);
  const maxScaledDown = oldCount + rsReplicas(newRS) - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return [];
  const steps: ScaleStep[] = [];
  // cleanupUnhealthyReplicas
  let cleaned = 0;
  for (const o of old) {
    if (cleaned >= maxScaledDown) break;
    const available = o.rs.status?.availableReplicas ?? 0;
    if (o.replicas === 0 || o.replicas === available) continue;
    const count = Math.min(maxScaledDown - cleaned, o.replicas - available);
    o.replicas -= count;
    cleaned += count;
    steps.push({ rs: o.rs, replicas: o.replicas });
  }
  // scaleDownOldReplicaSetsForRollingUpdate
  const availableCount = availableSum([newRS, ...oldRSs]);
  if (availableCount > minAvailable) {
    const toScaleDown = availableCount - minAvailable;
    let scaled = 0;
    for (const o of old) {
      if (scaled >= toScaleDown) break;
      if (o.replicas === 0) continue;
      const count = Math.min(o.replicas, toScaleDown - scaled);
      o.replicas -= count;
      scaled += count;
      steps.push({ rs: o.rs, replicas: o.replicas });
    }
  }
  return steps;
}

/** The one replica set that is active, or the latest when none is (upstream's FindActiveOrLatest). */
export function findActiveOrLatest(newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[]): ReplicaSet | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const newestFirst = [...oldRSs].sort((a, b) => creationOrder(b, a));
  const active = activeReplicaSets([...newestFirst, newRS]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  if (active.length === 1) return active[0];
  return undefined;
}

/** The new replica set runs the whole deployment (upstream's IsSaturated). */
export function isSaturated(d: Deployment, newRS: ReplicaSet | undefined): boolean {
  if (!newRS) return false;
  return (
    rsReplicas(newRS) === replicasOf(d) &&
    desiredReplicasAnnotation(newRS) === replicasOf(d) &&
    (newRS.status?.availableReplicas ?? 0) === replicasOf(d)
  );
}

function maxReplicasAnnotation(rs: ReplicaSet): number | undefined {
  const value = rs.metadata.annotations?.[maxReplicasKey()];
  return value === undefined || !/^\d+$/.test(value) ? undefined : Number(value);
}

/** Go's integer.RoundToInt32: half away from zero. */
function roundHalfAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/**
 * Upstream's scale() for a deployment resized mid-rollout: one active (or the latest) replica set
 * takes the size; a saturated new one lets old ones go to zero; otherwise rolling updates share
 * the change among active replica sets in proportion to their size (leftover to the biggest).
 */
export function planProportionalScale(d: Deployment, newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[]): ScaleStep[] {
  const only = findActiveOrLatest(newRS, oldRSs);
  if (only) return rsReplicas(only) === replicasOf(d) ? [] : [{ rs: only, replicas: replicasOf(d) }];
  if (isSaturated(d, newRS)) return activeReplicaSets(oldRSs).map((rs) => ({ rs, replicas: 0 }));
  if (!isRollingUpdate(d)) return [];
  const all = activeReplicaSets([...oldRSs, newRS]);
  const allowed = replicasOf(d) > 0 ? replicasOf(d) + maxSurge(d) : 0;
  const toAdd = allowed - specReplicasSum(all);
  // ReplicaSetsBySizeNewer (scaling up) / BySizeOlder (down): biggest first, then by age.
  all.sort((a, b) => rsReplicas(b) - rsReplicas(a) || (toAdd > 0 ? creationOrder(b, a) : creationOrder(a, b)));
  const sizes = new Map<ReplicaSet, number>();
  let added = 0;
  for (const rs of all) {
    let proportion = 0;
    if (toAdd !== 0 && rsReplicas(rs) !== 0 && toAdd !== added) {
      const fraction =
        replicasOf(d) === 0
          ? -rsReplicas(rs)
          : roundHalfAway((rsReplicas(rs) * (replicasOf(d) + maxSurge(d))) / (maxReplicasAnnotation(rs) ?? d.status?.replicas ?? 0)) - rsReplicas(rs);
      const allowedLeft = toAdd - added;
      proportion = toAdd > 0 ? Math.min(fraction, allowedLeft) : Math.max(fraction, allowedLeft);
    }
    sizes.set(rs, rsReplicas(rs) + proportion);
    added += proportion;
  }
  return all.map((rs, i) => {
    let size = sizes.get(rs)!;
    if (i === 0 && toAdd !== 0) size = Math.max(0, size + toAdd - added);
    return { rs, replicas: size };
  });
}

/** A pod of an old replica set still runs (upstream's oldPodsRunning, for Recreate). */
export function oldPodsRunning(newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[], podsByRS: Map<string, Pod[]>): boolean {
  if (oldRSs.some((rs) => (rs.status?.replicas ?? 0) > 0)) return true;
  for (const [uid, pods] of podsByRS) {
    if (newRS && newRS.metadata.uid === uid) continue;
    if (pods.some((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded')) return true;
  }
  return false;
}

/** Old replica sets beyond revisionHistoryLimit that may go: scaled to zero and settled, lowest revision first. */
export function replicaSetsToCleanUp(d: Deployment, oldRSs: ReplicaSet[]): ReplicaSet[] {
  const limit = d.spec.revisionHistoryLimit;
  if (limit === undefined) return [];
  const alive = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp);
  const diff = alive.length - limit;
  if (diff <= 0) return [];
  const byRevision = [...alive].sort((a, b) => revisionOf(a) - revisionOf(b) || creationOrder(a, b));
  return byRevision
    .slice(0, diff)
    .filter((rs) => (rs.status?.replicas ?? 0) === 0 && rsReplicas(rs) === 0 && (rs.metadata.generation ?? 0) <= (rs.status?.observedGeneration ?? 0));
}

// ---------------------------------------------------------------------------------------------
// Status and conditions (sync.go calculateStatus, progress.go).

export function newCondition(type: string, status: string, reason: string, message: string, nowMs: number): Condition {
  const time = formatTime(nowMs);
  return { type, status, lastUpdateTime: time, lastTransitionTime: time, reason, message };
}

export function getCondition(status: DeploymentStatus | undefined, type: string): Condition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/** Upstream's SetDeploymentCondition: unchanged status and reason keep the old condition; same status keeps its transition time. */
export function setCondition(status: DeploymentStatus, condition: Condition): void {
  const current = getCondition(status, condition.type);
  if (current && current.status === condition.status && current.reason === condition.reason) return;
  const next = { ...condition };
  if (current && current.status === condition.status) next.lastTransitionTime = current.lastTransitionTime;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), next];
}

export function removeCondition(status: DeploymentStatus, type: string): void {
  if (!status.conditions) return;
  status.conditions = status.conditions.filter((c) => c.type !== type);
  if (status.conditions.length === 0) delete status.conditions;
}

export function calculateStatus(d: Deployment, allRSs: (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined, nowMs: number): DeploymentStatus {
  const available = availableSum(allRSs);
  const total = specReplicasSum(allRSs);
  const status: DeploymentStatus = {
    observedGeneration: d.metadata.generation ?? 0,
    replicas: sumOf(allRSs, (rs) => rs.status?.replicas ?? 0),
    updatedReplicas: newRS?.status?.replicas ?? 0,
    readyReplicas: sumOf(allRSs, (rs) => rs.status?.readyReplicas ?? 0),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available),
  };
  // Zero counts are left out, as Go's omitempty does upstream.
  for (const field of ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas'] as const) {
    if (status[field] === 0) delete status[field];
  }
  if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;
  if (d.status?.conditions) status.conditions = d.status.conditions.map((c) => ({ ...c }));
  if (available >= replicasOf(d) - maxUnavailable(d)) {
    setCondition(status, newCondition('Available', 'True', Reasons.minimumReplicasAvailable, 'Deployment has minimum availability.', nowMs));
  } else {
    setCondition(status, newCondition('Available', 'False', Reasons.minimumReplicasUnavailable, 'Deployment does not have minimum availability.', nowMs));
  }
  return status;
}

export function hasProgressDeadline(d: Deployment): boolean {
  return d.spec.progressDeadlineSeconds !== undefined && d.spec.progressDeadlineSeconds !== MAX_INT32;
}

export function deploymentComplete(d: Deployment, status: DeploymentStatus): boolean {
  const want = replicasOf(d);
  return (
    (status.updatedReplicas ?? 0) === want &&
    (status.replicas ?? 0) === want &&
    (status.availableReplicas ?? 0) === want &&
    (status.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)
  );
}

export function deploymentProgressing(d: Deployment, status: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (status.replicas ?? 0) - (status.updatedReplicas ?? 0);
  return (
    (status.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    (status.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (status.availableReplicas ?? 0) > (old.availableReplicas ?? 0) ||
    oldOld > newOld
  );
}

export function deploymentTimedOut(d: Deployment, status: DeploymentStatus, nowMs: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const condition = getCondition(status, 'Progressing');
  if (!condition || condition.reason === Reasons.newRSAvailable) return false;
  if (condition.reason === Reasons.timedOut) return true;
  const from = Date.parse(condition.lastUpdateTime ?? '');
  return !Number.isNaN(from) && from + d.spec.progressDeadlineSeconds! * 1000 < nowMs;
}

/** Upstream's syncRolloutStatus condition logic: the status to write after a rollout step. */
export function rolloutStatus(d: Deployment, allRSs: (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined, nowMs: number): DeploymentStatus {
  const status = calculateStatus(d, allRSs, newRS, nowMs);
  if (!hasProgressDeadline(d)) removeCondition(status, 'Progressing');
  const current = getCondition(d.status, 'Progressing');
  const complete = (status.replicas ?? 0) === (status.updatedReplicas ?? 0) && current?.reason === Reasons.newRSAvailable;
  if (hasProgressDeadline(d) && !complete) {
    const subject = newRS ? `ReplicaSet "${newRS.metadata.name}"` : `Deployment "${d.metadata.name}"`;
    if (deploymentComplete(d, status)) {
      setCondition(status, newCondition('Progressing', 'True', Reasons.newRSAvailable, `${subject} has successfully progressed.`, nowMs));
    } else if (deploymentProgressing(d, status)) {
      const condition = newCondition('Progressing', 'True', Reasons.replicaSetUpdated, `${subject} is progressing.`, nowMs);
      // A progressing rollout refreshes lastUpdateTime (the deadline counts from it).
      if (current?.status === 'True') condition.lastTransitionTime = current.lastTransitionTime;
      removeCondition(status, 'Progressing');
      setCondition(status, condition);
    } else if (deploymentTimedOut(d, status, nowMs)) {
      setCondition(status, newCondition('Progressing', 'False', Reasons.timedOut, `${subject} has timed out progressing.`, nowMs));
    }
  }
  const failure = allRSs.map((rs) => rs?.status?.conditions?.find((c) => c.type === 'ReplicaFailure' && c.status === 'True')).find(Boolean);
  if (failure) setCondition(status, newCondition('ReplicaFailure', failure.status, failure.reason ?? '', failure.message ?? '', nowMs));
  else removeCondition(status, 'ReplicaFailure');
  return status;
}

/** When to look at a rollout again for its progress deadline (upstream's requeueStuckDeployment); undefined: no need. */
export function stuckRecheckMs(d: Deployment, status: DeploymentStatus, nowMs: number): number | undefined {
  const condition = getCondition(status, 'Progressing');
  if (!hasProgressDeadline(d) || !condition) return undefined;
  if (deploymentComplete(d, status) || condition.reason === Reasons.timedOut) return undefined;
  const from = Date.parse(condition.lastUpdateTime ?? '');
  if (Number.isNaN(from)) return undefined;
  return Math.max(0, from + d.spec.progressDeadlineSeconds! * 1000 - nowMs);
}

function statusEqual(a: DeploymentStatus | undefined, b: DeploymentStatus): boolean {
  return canonicalJson(a ?? {}) === canonicalJson(b);
}

// ---------------------------------------------------------------------------------------------
// The controller (I/O).

const DEPLOYMENTS: ResourceRef = { group: 'apps', version: 'v1', resource: 'deployments' };
const REPLICA_SETS: ResourceRef = { group: 'apps', version: 'v1', resource: 'replicasets' };
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';

const isStatusError = (error: unknown, code: number) => error instanceof ApiStatusError && error.code === code;
const ns = (o: { metadata: ObjectMeta }) => encodeURIComponent(o.metadata.namespace ?? '');
const deploymentPath = (d: Deployment) => `/apis/apps/v1/namespaces/${ns(d)}/deployments/${encodeURIComponent(d.metadata.name!)}`;
const rsCollection = (namespace: string) => `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/replicasets`;
const rsPath = (rs: ReplicaSet) => `${rsCollection(rs.metadata.namespace ?? '')}/${encodeURIComponent(rs.metadata.name!)}`;
const keyOf = (o: { metadata: ObjectMeta }) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

export function startDeploymentController(ctx: ControllerContext, signal: AbortSignal): RunningController {
  const workers = Math.max(1, Number(ctx.options['concurrent-deployment-syncs'] ?? 5));
  const log = ctx.logger;
  const events = ctx.events?.('deployment-controller');
  /** Upstream's ScalingReplicaSet event on the deployment, for each size change of one of its replica sets. */
  const recordScaling = (d: Deployment, rs: ReplicaSet, from: number, to: number) =>
    events?.event(
      { apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name ?? '', namespace: d.metadata.namespace, uid: d.metadata.uid },
      'Normal',
      'ScalingReplicaSet',
      `Scaled ${to > from ? 'up' : 'down'} replica set ${rs.metadata.name ?? ''} to ${to} from ${from}`,
    );
  const deployments = ctx.informers.informerFor<Deployment>(DEPLOYMENTS);
  const replicaSets = ctx.informers.informerFor<ReplicaSet>(REPLICA_SETS);
  const pods = ctx.informers.informerFor<Pod>(PODS);
  const queue = new RateLimitingQueue<string>({ name: 'deployment', metrics: ctx.metrics });
  const stats = { syncs: 0, replicaSetsCreated: 0 };

  const resolveDeployment = (namespace: string, ref: OwnerReference | undefined): Deployment | undefined => {
    if (!ref || ref.kind !== 'Deployment' || !ref.apiVersion.startsWith('apps/')) return undefined;
    const d = deployments.indexer.getByKey(`${namespace}/${ref.name}`);
    return d?.metadata.uid === ref.uid ? d : undefined;
  };
  const deploymentsMatching = (rs: ReplicaSet): Deployment[] =>
    deployments.indexer
      .byIndex(NAMESPACE_INDEX, rs.metadata.namespace ?? '')
      .filter((d) => selectorMatches(labelSelectorRequirements(d.spec.selector), rs.metadata.labels));
  const enqueue = (d: Deployment | undefined) => d && queue.add(keyOf(d));

  // --- event handlers (upstream's addReplicaSet/updateReplicaSet/deleteReplicaSet/deletePod).
  const onRSDeleted = (rs: ReplicaSet) => enqueue(resolveDeployment(rs.metadata.namespace ?? '', controllerRefOf(rs)));
  const registrations: HandlerRegistration[] = [
    deployments.addEventHandler({
      onAdd: (d) => enqueue(d),
      onUpdate: (_old, d) => enqueue(d),
      onDelete: (object) => enqueue(deletedObject(object as Deployment | DeletedFinalStateUnknown<Deployment>)),
    }),
    replicaSets.addEventHandler({
      onAdd: (rs) => {
        if (rs.metadata.deletionTimestamp) return onRSDeleted(rs);
        const ref = controllerRefOf(rs);
        if (ref) return enqueue(resolveDeployment(rs.metadata.namespace ?? '', ref));
        deploymentsMatching(rs).forEach(enqueue);
      },
      onUpdate: (old, rs) => {
        if (old.metadata.resourceVersion === rs.metadata.resourceVersion) return;
        const oldRef = controllerRefOf(old);
        const ref = controllerRefOf(rs);
        const refChanged = JSON.stringify(oldRef) !== JSON.stringify(ref);
        if (refChanged && oldRef) enqueue(resolveDeployment(old.metadata.namespace ?? '', oldRef));
        if (ref) return enqueue(resolveDeployment(rs.metadata.namespace ?? '', ref));
        const labelsChanged = JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(rs.metadata.labels ?? {});
        if (labelsChanged || refChanged) deploymentsMatching(rs).forEach(enqueue);
      },
      onDelete: (object) => onRSDeleted(deletedObject(object as ReplicaSet | DeletedFinalStateUnknown<ReplicaSet>)),
    }),
    // Recreate waits for old pods to be gone: their deletion moves it on.
    pods.addEventHandler({
      onDelete: (object) => {
        const pod = deletedObject(object as Pod | DeletedFinalStateUnknown<Pod>);
        const ref = controllerRefOf(pod);
        if (ref?.kind !== 'ReplicaSet') return;
        const rs = replicaSets.indexer.getByKey(`${pod.metadata.namespace}/${ref.name}`);
        const d = rs && resolveDeployment(rs.metadata.namespace ?? '', controllerRefOf(rs));
        if (d && !isRollingUpdate(d)) enqueue(d);
      },
    }),
  ];

  /** One sync of one deployment: a working copy of it and its replica sets, updated as writes land. */
  const syncDeployment = async (key: string): Promise<void> => {
    if (signal.aborted) return;
    stats.syncs++;
    const cached = deployments.indexer.getByKey(key);
    if (!cached) return;
    let d: Deployment = structuredClone(cached);
    const now = () => ctx.now();

    // Only this controller writes a deployment's status, and it computes the whole of it from the
    // replica sets each time: the write is unconditional so a deployment edited meanwhile is no conflict.
    const writeStatus = async (status: DeploymentStatus): Promise<void> => {
      const body = { ...d, metadata: { ...d.metadata, resourceVersion: undefined }, status };
      d = (await ctx.client.request<Deployment>({ method: 'PUT', path: `${deploymentPath(d)}/status`, body })).body;
    };
    /**
     * Upstream writes the revision annotation through the status subresource; orch's status
     * subresource keeps metadata, so the annotation goes through a patch of the deployment.
     */
    const setRevision = async (revision: number): Promise<void> => {
      const annotations = d.metadata.annotations ?? {};
      if (annotations[revisionAnnotation()] === String(revision) && annotations[KUBECTL_REVISION_ANNOTATION] === String(revision)) return;
      const status = d.status;
      d = await ctx.client.patch<Deployment>(deploymentPath(d), MERGE, {
        metadata: { annotations: { [revisionAnnotation()]: String(revision), [KUBECTL_REVISION_ANNOTATION]: String(revision) } },
      });
      d.status = status;
    };

    const selector = labelSelectorRequirements(d.spec.selector);
    if (selector.length === 0) {
      // An empty selector would select every pod: upstream refuses to act and only observes.
      if ((d.status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0)) await writeStatus({ ...d.status, observedGeneration: d.metadata.generation ?? 0 });
      return;
    }

    // Claim replica sets (upstream's getReplicaSetsForDeployment).
    let rsList: ReplicaSet[] = [];
    {
      const candidates = replicaSets.indexer.byIndex(NAMESPACE_INDEX, d.metadata.namespace ?? '');
      const decision = claimPods(d, selector, candidates);
      rsList = [...decision.owned];
      if (decision.adopt.length > 0) {
        const fresh = await ctx.client.get<Deployment>(deploymentPath(d));
        if (fresh.metadata.uid !== d.metadata.uid || fresh.metadata.deletionTimestamp) throw new Error(`deployment ${key} is gone or being deleted`);
        const ref = controllerRefTo(d, 'apps/v1', 'Deployment');
        for (const rs of decision.adopt) {
          try {
            rsList.push(await ctx.client.patch<ReplicaSet>(rsPath(rs), STRATEGIC, adoptionPatch(rs, ref)));
          } catch (error) {
            if (!isStatusError(error, 404)) throw error;
          }
        }
      }
      for (const rs of decision.release) {
        try {
          await ctx.client.patch(rsPath(rs), STRATEGIC, releasePatch(rs, d.metadata.uid!));
        } catch (error) {
          if (!isStatusError(error, 404) && !isStatusError(error, 422)) throw error;
        }
      }
    }
    const replace = (updated: ReplicaSet) => {
      rsList = rsList.map((rs) => (rs.metadata.uid === updated.metadata.uid ? updated : rs));
      return updated;
    };

    /** Resizes a replica set (and its desired/max annotations); resourceVersion guards against a stale cache. */
    const scaleReplicaSet = async (rs: ReplicaSet, replicas: number): Promise<{ scaled: boolean; rs: ReplicaSet }> => {
      const sizeChanged = rsReplicas(rs) !== replicas;
      const probe: ReplicaSet = { ...rs, metadata: { ...rs.metadata, annotations: { ...rs.metadata.annotations } } };
      const annotationsChanged = setReplicasAnnotations(probe, replicasOf(d), replicasOf(d) + maxSurge(d));
      if (!sizeChanged && !annotationsChanged) return { scaled: false, rs };
      const updated = await ctx.client.patch<ReplicaSet>(rsPath(rs), MERGE, {
        metadata: { resourceVersion: rs.metadata.resourceVersion, annotations: probe.metadata.annotations },
        spec: { replicas },
      });
      if (sizeChanged) {
        log.info('Scaled replica set', 'deployment', key, 'replicaSet', rs.metadata.name, 'from', rsReplicas(rs), 'to', replicas);
        recordScaling(d, rs, rsReplicas(rs), replicas);
      }
      return { scaled: sizeChanged, rs: replace(updated) };
    };

    /** Upstream's getAllReplicaSetsAndSyncRevision (with getNewReplicaSet). */
    const allReplicaSetsAndSyncRevision = async (create: boolean): Promise<{ newRS?: ReplicaSet; oldRSs: ReplicaSet[] }> => {
      const existing = findNewReplicaSet(d, rsList);
      const oldRSs = rsList.filter((rs) => rs !== existing);
      const newRevision = maxRevision(oldRSs) + 1;
      if (existing) {
        const copy: ReplicaSet = structuredClone(existing);
        const annotationsChanged = setNewReplicaSetAnnotations(d, copy, newRevision, true);
        const minReadyChanged = (copy.spec?.minReadySeconds ?? 0) !== (d.spec.minReadySeconds ?? 0);
        if (annotationsChanged || minReadyChanged) {
          const updated = await ctx.client.patch<ReplicaSet>(rsPath(copy), MERGE, {
            metadata: { resourceVersion: copy.metadata.resourceVersion, annotations: copy.metadata.annotations },
            spec: { minReadySeconds: d.spec.minReadySeconds ?? 0 },
          });
          return { newRS: replace(updated), oldRSs };
        }
        await setRevision(revisionOf(copy));
        if (hasProgressDeadline(d) && !getCondition(d.status, 'Progressing')) {
          const status = structuredClone(d.status ?? {});
          setCondition(status, newCondition('Progressing', 'True', Reasons.foundNewReplicaSet, `Found new replica set "${copy.metadata.name}"`, now()));
          await writeStatus(status);
        }
        return { newRS: copy, oldRSs };
      }
      if (!create) return { oldRSs };

      const hash = computeTemplateHash(d.spec.template, d.status?.collisionCount);
      const template: PodTemplate = structuredClone(d.spec.template ?? {});
      template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, [POD_TEMPLATE_HASH_LABEL]: hash } };
      const baseSelector = (d.spec.selector ?? {}) as { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
      const fresh: ReplicaSet = {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: `${d.metadata.name}-${hash}`,
          namespace: d.metadata.namespace,
          labels: template.metadata.labels,
          ownerReferences: [controllerRefTo(d, 'apps/v1', 'Deployment')],
        },
        spec: {
          replicas: 0,
          minReadySeconds: d.spec.minReadySeconds ?? 0,
          selector: { ...structuredClone(baseSelector), matchLabels: { ...baseSelector.matchLabels, [POD_TEMPLATE_HASH_LABEL]: hash } },
          template,
        },
      };
      fresh.spec!.replicas = newRSNewReplicas(d, [...oldRSs, fresh], fresh);
      setNewReplicaSetAnnotations(d, fresh, newRevision, false);
      let created: ReplicaSet;
      let alreadyExisted = false;
      try {
        created = (await ctx.client.request<ReplicaSet>({ method: 'POST', path: rsCollection(d.metadata.namespace ?? ''), body: fresh })).body;
        stats.replicaSetsCreated++;
        log.info('Created new replica set', 'deployment', key, 'replicaSet', created.metadata.name, 'replicas', rsReplicas(created));
        if (rsReplicas(created) > 0) recordScaling(d, created, 0, rsReplicas(created));
      } catch (error) {
        if (isStatusError(error, 409)) {
          const found = await ctx.client.get<ReplicaSet>(rsPath(fresh));
          if (controllerRefOf(found)?.uid === d.metadata.uid && equalIgnoreHash(d.spec.template, found.spec?.template)) {
            created = found;
            alreadyExisted = true;
          } else {
            // A hash collision with a replica set of another template: hash again with a new count.
            await writeStatus({ ...structuredClone(d.status ?? {}), collisionCount: (d.status?.collisionCount ?? 0) + 1 });
            throw new Error(`hash collision for replica set ${fresh.metadata.name}: collisionCount is now ${d.status?.collisionCount}`);
          }
        } else {
          if (hasProgressDeadline(d)) {
            const status = structuredClone(d.status ?? {});
            const message = `Failed to create new replica set "${fresh.metadata.name}": ${error instanceof Error ? error.message : String(error)}`;
            setCondition(status, newCondition('Progressing', 'False', Reasons.failedRSCreate, message, now()));
            await writeStatus(status);
          }
          throw error;
        }
      }
      rsList = [...rsList, created];
      await setRevision(newRevision);
      if (!alreadyExisted && hasProgressDeadline(d)) {
        const status = structuredClone(d.status ?? {});
        setCondition(status, newCondition('Progressing', 'True', Reasons.newReplicaSetCreated, `Created new replica set "${created.metadata.name}"`, now()));
        await writeStatus(status);
      }
      return { newRS: created, oldRSs };
    };

    const syncStatus = async (allRSs: (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined) => {
      const status = calculateStatus(d, allRSs, newRS, now());
      if (!statusEqual(d.status, status)) await writeStatus(status);
    };

    const syncRolloutStatus = async (allRSs: (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined) => {
      const status = rolloutStatus(d, allRSs, newRS, now());
      if (!statusEqual(d.status, status)) await writeStatus(status);
      const recheck = stuckRecheckMs(d, status, now());
      if (recheck !== undefined) queue.addAfter(key, Math.max(recheck, 1000));
    };

    const cleanup = async (oldRSs: ReplicaSet[]) => {
      for (const rs of replicaSetsToCleanUp(d, oldRSs)) {
        try {
          await ctx.client.request({ method: 'DELETE', path: rsPath(rs) });
          log.info('Deleted old replica set', 'deployment', key, 'replicaSet', rs.metadata.name, 'revision', revisionOf(rs));
        } catch (error) {
          if (!isStatusError(error, 404)) throw error;
        }
      }
    };

    /** Scaling only (paused deployments and resizes): upstream's sync(). */
    const syncScaling = async () => {
      const { newRS, oldRSs } = await allReplicaSetsAndSyncRevision(false);
      for (const step of planProportionalScale(d, newRS, oldRSs)) await scaleReplicaSet(step.rs, step.replicas);
      const current = (rs: ReplicaSet | undefined) => rs && (rsList.find((r) => r.metadata.uid === rs.metadata.uid) ?? rs);
      const olds = oldRSs.map((rs) => current(rs)!);
      if (d.spec.paused) await cleanup(olds);
      await syncStatus([...olds, current(newRS)], current(newRS));
    };

    const rolloutRolling = async () => {
      let { newRS, oldRSs } = await allReplicaSetsAndSyncRevision(true);
      const all = () => [...oldRSs, newRS];
      // reconcileNewReplicaSet
      if (newRS && rsReplicas(newRS) !== replicasOf(d)) {
        const target = rsReplicas(newRS) > replicasOf(d) ? replicasOf(d) : newRSNewReplicas(d, all(), newRS);
        const result = await scaleReplicaSet(newRS, target);
        newRS = result.rs;
        if (result.scaled) return syncRolloutStatus(all(), newRS);
      }
      // reconcileOldReplicaSets
      if (newRS) {
        let scaledDown = false;
        for (const step of planOldReplicaSetsScaleDown(d, newRS, oldRSs)) {
          const current = rsList.find((rs) => rs.metadata.uid === step.rs.metadata.uid) ?? step.rs;
          const result = await scaleReplicaSet(current, step.replicas);
          scaledDown ||= result.scaled;
        }
        oldRSs = oldRSs.map((rs) => rsList.find((r) => r.metadata.uid === rs.metadata.uid) ?? rs);
        if (scaledDown) return syncRolloutStatus(all(), newRS);
      }
      if (deploymentComplete(d, d.status ?? {})) await cleanup(oldRSs);
      return syncRolloutStatus(all(), newRS);
    };

    const rolloutRecreate = async () => {
      let { newRS, oldRSs } = await allReplicaSetsAndSyncRevision(false);
      let scaledDown = false;
      for (const rs of activeReplicaSets(oldRSs)) scaledDown = (await scaleReplicaSet(rs, 0)).scaled || scaledDown;
      oldRSs = oldRSs.map((rs) => rsList.find((r) => r.metadata.uid === rs.metadata.uid) ?? rs);
      if (scaledDown) return syncRolloutStatus([...oldRSs, newRS], newRS);
      const podsByRS = new Map<string, Pod[]>();
      const uids = new Set(rsList.map((rs) => rs.metadata.uid));
      for (const pod of pods.indexer.byIndex(NAMESPACE_INDEX, d.metadata.namespace ?? '')) {
        const uid = controllerRefOf(pod)?.uid;
        if (uid && uids.has(uid) && selectorMatches(selector, pod.metadata.labels)) podsByRS.set(uid, [...(podsByRS.get(uid) ?? []), pod]);
      }
      if (oldPodsRunning(newRS, oldRSs, podsByRS)) return syncRolloutStatus([...oldRSs, newRS], newRS);
      if (!newRS) ({ newRS, oldRSs } = await allReplicaSetsAndSyncRevision(true));
      if (newRS) newRS = (await scaleReplicaSet(newRS, replicasOf(d))).rs;
      if (deploymentComplete(d, d.status ?? {})) await cleanup(oldRSs);
      return syncRolloutStatus([...oldRSs, newRS], newRS);
    };

    if (d.metadata.deletionTimestamp) {
      const { newRS, oldRSs } = await allReplicaSetsAndSyncRevision(false);
      return syncStatus([...oldRSs, newRS], newRS);
    }

    // checkPausedConditions
    if (hasProgressDeadline(d)) {
      const condition = getCondition(d.status, 'Progressing');
      const pausedShown = condition?.reason === Reasons.paused;
      if (condition?.reason !== Reasons.timedOut && Boolean(d.spec.paused) !== pausedShown) {
        const status = structuredClone(d.status ?? {});
        setCondition(
          status,
          d.spec.paused
            ? newCondition('Progressing', 'Unknown', Reasons.paused, 'Deployment is paused', now())
            : newCondition('Progressing', 'Unknown', Reasons.resumed, 'Deployment is resumed', now()),
        );
        await writeStatus(status);
      }
    }
    if (d.spec.paused) return syncScaling();

    // isScalingEvent: an active replica set was sized for another replica count.
    {
      const { newRS, oldRSs } = await allReplicaSetsAndSyncRevision(false);
      const scaling = activeReplicaSets([...oldRSs, newRS]).some((rs) => {
        const desired = desiredReplicasAnnotation(rs);
        return desired !== undefined && desired !== replicasOf(d);
      });
      if (scaling) return syncScaling();
    }
    return isRollingUpdate(d) ? rolloutRolling() : rolloutRecreate();
  };

  const done = runQueueWorkers({ ctx, signal, queue, workers, sync: syncDeployment, name: 'deployment', registrations });

  return {
    done,
    snapshot: () => ({
      name: 'deployment',
      workers,
      queueDepth: queue.len(),
      details: { deployments: deployments.indexer.size, replicaSetsCreated: stats.replicaSetsCreated, syncs: stats.syncs },
    }),
  };
}

export const deploymentController: ControllerDescriptor = {
  name: 'deployment',
  enabledByDefault: true,
  start: startDeploymentController,
};

export default deploymentController;
