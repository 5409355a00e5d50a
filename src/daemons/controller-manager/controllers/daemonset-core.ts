/**
 * The decisions of the `daemonset` controller (apps/v1 DaemonSet), pure: which nodes should run a
 * daemon pod (upstream's NodeShouldRunDaemonPod), the pod a node gets (the template, upstream's
 * daemon tolerations, and a required node affinity naming the node), which nodes still need one
 * and which pods go (upstream's manage and podsShouldBeOnNode), which out-of-date pods a rolling
 * update deletes next (rollingUpdate without surge), and the status the daemon set reports
 * (updateDaemonSetStatus). The I/O lives in daemonset.ts.
 *
 * The template's hash stands in for upstream's ControllerRevision hash: it is stored on each pod
 * in the `orch.io/daemonset-template-hash` annotation, and a pod whose annotation differs from the
 * current template's hash is out of date.
 */
import { names } from '../../../api/names.js';
import { toleratesTaint } from '../../../api/meta.js';
import { computeTemplateHash, scaledValue } from './deployment.js';
import { isPodAvailable, isPodReady, podFromTemplate, type ObjectMeta, type OwnerReference, type Pod, type PodTemplate } from './replica-set-core.js';
import {
  matchesRequiredNodeAffinity,
  untoleratedTaint,
  type Node,
  type NodeSelectorRequirement,
  type NodeSelectorTerm,
  type Pod as SchedulingPod,
  type Toleration,
} from './scheduler.js';

export interface RollingUpdateDaemonSet {
  maxUnavailable?: number | string;
  maxSurge?: number | string;
}

export interface DaemonSetSpec {
  selector?: unknown;
  template?: PodTemplate;
  updateStrategy?: { type?: string; rollingUpdate?: RollingUpdateDaemonSet };
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  [field: string]: unknown;
}

/** Upstream's DaemonSetStatus: the first four are always written, the rest omitted when zero. */
export interface DaemonSetStatus {
  currentNumberScheduled: number;
  numberMisscheduled: number;
  desiredNumberScheduled: number;
  numberReady: number;
  observedGeneration?: number;
  updatedNumberScheduled?: number;
  numberAvailable?: number;
  numberUnavailable?: number;
  [field: string]: unknown;
}

export interface DaemonSet {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: DaemonSetSpec;
  status?: DaemonSetStatus;
}

export const templateHashAnnotation = (): string => names().annotations.daemonSetTemplateHash;

/**
 * What upstream's AddOrUpdateDaemonPodTolerations gives every daemon pod, under orch's names: a
 * daemon keeps running on a node that goes not-ready or unreachable (no eviction after 300 s), and
 * lands on nodes under resource pressure or cordoned.
 */
export function daemonTolerations(): readonly Toleration[] {
  const t = names().taints;
  return [
    { key: t.notReady, operator: 'Exists', effect: 'NoExecute' },
    { key: t.unreachable, operator: 'Exists', effect: 'NoExecute' },
    { key: t.diskPressure, operator: 'Exists', effect: 'NoSchedule' },
    { key: t.memoryPressure, operator: 'Exists', effect: 'NoSchedule' },
    { key: t.pidPressure, operator: 'Exists', effect: 'NoSchedule' },
    { key: t.unschedulable, operator: 'Exists', effect: 'NoSchedule' },
  ];
}
/** Added too when the pod uses the host's network, which works before the node's network does. */
export const hostNetworkToleration = (): Toleration => ({ key: names().taints.networkUnavailable, operator: 'Exists', effect: 'NoSchedule' });

/** The hash that marks a pod as made from the daemon set's current template. */
export function templateHash(ds: DaemonSet): string {
  return computeTemplateHash(ds.spec?.template);
}

export function isPodUpdated(pod: Pod, hash: string): boolean {
  return hash !== '' && pod.metadata.annotations?.[templateHashAnnotation()] === hash;
}

// ---------------------------------------------------------------------------------------------
// The daemon pod.

/** Upstream's Toleration.MatchToleration: the same toleration, tolerationSeconds aside. */
function sameToleration(a: Toleration, b: Toleration): boolean {
  return (a.key ?? '') === (b.key ?? '') && (a.operator ?? '') === (b.operator ?? '') && (a.value ?? '') === (b.value ?? '') && (a.effect ?? '') === (b.effect ?? '');
}

/**
 * The template's tolerations with the daemon ones added (upstream's AddOrUpdateTolerationInPodSpec:
 * a template toleration equal but for tolerationSeconds is replaced, so a daemon is never evicted).
 */
export function daemonPodTolerations(podSpec: Record<string, unknown> | undefined): Toleration[] {
  const tolerations = [...((podSpec?.tolerations as Toleration[] | undefined) ?? [])];
  const extra = podSpec?.hostNetwork === true ? [...daemonTolerations(), hostNetworkToleration()] : daemonTolerations();
  for (const toleration of extra) {
    const index = tolerations.findIndex((t) => sameToleration(t, toleration));
    if (index < 0) tolerations.push({ ...toleration });
    else tolerations[index] = { ...toleration };
  }
  return tolerations;
}

type Affinity = { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] }; [field: string]: unknown }; [field: string]: unknown };

/**
 * Upstream's ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes the one
 * term `metadata.name In [node]`, so the scheduler binds the pod there (the controller has checked
 * the node against the template's own terms already). Preferred terms and pod (anti-)affinity stay.
 */
export function nodeNameAffinity(affinity: Affinity | undefined, nodeName: string): Affinity {
  const term: NodeSelectorTerm = { matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] };
  const copy: Affinity = structuredClone(affinity ?? {});
  copy.nodeAffinity = { ...(copy.nodeAffinity ?? {}), requiredDuringSchedulingIgnoredDuringExecution: { ...(copy.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? {}), nodeSelectorTerms: [term] } };
  return copy;
}

/** The pod a node gets: the template, the daemon tolerations, the node affinity, the template hash. */
export function daemonPodFor(ds: DaemonSet, nodeName: string, ref: OwnerReference, hash: string): Pod {
  const pod = podFromTemplate(ds, ref);
  const spec = pod.spec as Record<string, unknown>;
  spec.tolerations = daemonPodTolerations(spec);
  spec.affinity = nodeNameAffinity(spec.affinity as Affinity | undefined, nodeName);
  pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [templateHashAnnotation()]: hash };
  return pod;
}

/**
 * The node a daemon pod is for (upstream's GetTargetNodeName): its spec.nodeName once bound, before
 * that the node its required affinity names.
 */
export function targetNodeName(pod: Pod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms = (pod.spec?.affinity as Affinity | undefined)?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms) {
    const field = (term.matchFields ?? []).find((f: NodeSelectorRequirement) => f.key === 'metadata.name' && f.operator === 'In');
    if (field) return field.values?.length === 1 ? field.values[0] : undefined;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Which nodes run a daemon pod.

export interface NodeFit {
  /** A daemon pod should be created on the node. */
  shouldRun: boolean;
  /** A daemon pod already there may stay (a NoSchedule taint it does not tolerate keeps it). */
  shouldContinueRunning: boolean;
}

const NEITHER: NodeFit = { shouldRun: false, shouldContinueRunning: false };

/**
 * Upstream's NodeShouldRunDaemonPod: the template's nodeName (if any), nodeSelector and required
 * node affinity must match the node, and its NoSchedule/NoExecute taints be tolerated by the
 * template's tolerations plus the daemon ones. A cordoned node still qualifies (the unschedulable
 * toleration), and node conditions do not count: only the taints on the node.
 */
export function nodeShouldRunDaemonPod(node: Node, ds: DaemonSet): NodeFit {
  const templateSpec = ds.spec?.template?.spec ?? {};
  const nodeName = node.metadata?.name ?? '';
  if (templateSpec.nodeName && templateSpec.nodeName !== nodeName) return NEITHER;
  const pod = { spec: templateSpec } as SchedulingPod;
  if (!matchesRequiredNodeAffinity(pod, node)) return NEITHER;
  const taints = node.spec?.taints ?? [];
  const tolerations = daemonPodTolerations(templateSpec);
  if (!untoleratedTaint(taints, tolerations)) return { shouldRun: true, shouldContinueRunning: true };
  const untoleratedNoExecute = taints.some((taint) => taint.effect === 'NoExecute' && !tolerations.some((t) => toleratesTaint(t, taint)));
  return { shouldRun: false, shouldContinueRunning: !untoleratedNoExecute };
}

function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';
}

/**
 * The daemon set's pods by the node they are for (upstream's getNodesToDaemonPods). Pods naming no
 * node are left out (upstream logs them), and so are finished pods being deleted: one held by a
 * finalizer must not keep its node from getting a new daemon pod.
 */
export function podsByNode(pods: readonly Pod[]): Map<string, Pod[]> {
  const byNode = new Map<string, Pod[]>();
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp && isTerminal(pod)) continue;
    const node = targetNodeName(pod);
    if (node === undefined) continue;
    byNode.set(node, [...(byNode.get(node) ?? []), pod]);
  }
  return byNode;
}

/** Upstream's podByCreationTimestampAndPhase: bound pods first, then the oldest, then by name. */
export function compareDaemonPods(a: Pod, b: Pod): number {
  const boundA = Boolean(a.spec?.nodeName);
  const boundB = Boolean(b.spec?.nodeName);
  if (boundA !== boundB) return boundA ? -1 : 1;
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  if (ta !== tb) return ta - tb;
  const na = a.metadata.name ?? '';
  const nb = b.metadata.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// manage: the pods to create and delete.

export interface PodOnNode {
  pod: Pod;
  node: string;
}

export interface ManagePlan {
  /** Nodes that should run a daemon pod and have none: one pod each. */
  create: string[];
  /**
   * Pods that go: on nodes that must not run them, the surplus where a node has more than one
   * (the oldest stays), and unbound pods for nodes that no longer exist.
   */
  remove: Pod[];
  /** Failed pods on nodes that keep their daemon: deleted (and so replaced), subject to back-off. */
  failed: PodOnNode[];
  /** Pods that ran to completion: deleted, and so replaced, as upstream does. */
  succeeded: PodOnNode[];
}

const nodeNameOf = (node: Node) => node.metadata?.name ?? '';

/** Upstream's manage over every node (podsShouldBeOnNode) and getUnscheduledPodsWithoutNode. */
export function planDaemonPods(ds: DaemonSet, nodes: readonly Node[], pods: readonly Pod[]): ManagePlan {
  const plan: ManagePlan = { create: [], remove: [], failed: [], succeeded: [] };
  const byNode = podsByNode(pods);
  for (const node of [...nodes].sort((a, b) => (nodeNameOf(a) < nodeNameOf(b) ? -1 : 1))) {
    const name = nodeNameOf(node);
    const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(node, ds);
    const onNode = byNode.get(name);
    if (shouldRun && !onNode) {
      plan.create.push(name);
    } else if (shouldContinueRunning && onNode) {
      const running: Pod[] = [];
      for (const pod of onNode) {
        if (pod.metadata.deletionTimestamp) continue;
        if (pod.status?.phase === 'Failed') plan.failed.push({ pod, node: name });
        else if (pod.status?.phase === 'Succeeded') plan.succeeded.push({ pod, node: name });
        else running.push(pod);
      }
      plan.remove.push(...running.sort(compareDaemonPods).slice(1));
    } else if (!shouldContinueRunning && onNode) {
      plan.remove.push(...onNode.filter((pod) => !pod.metadata.deletionTimestamp));
    }
  }
  // A pod bound to a node that is gone is pod GC's; one never bound would wait forever.
  const known = new Set(nodes.map(nodeNameOf));
  for (const [node, onNode] of byNode) {
    if (known.has(node)) continue;
    plan.remove.push(...onNode.filter((pod) => !pod.spec?.nodeName && !pod.metadata.deletionTimestamp));
  }
  return plan;
}

// ---------------------------------------------------------------------------------------------
// The rolling update (upstream's rollingUpdate with maxSurge 0).

export function desiredNumberScheduled(ds: DaemonSet, nodes: readonly Node[]): number {
  return nodes.filter((node) => nodeShouldRunDaemonPod(node, ds).shouldRun).length;
}

/**
 * maxUnavailable as a number of pods: an int, or a percentage of the desired count rounded up;
 * at least 1 when anything is desired, so an update always makes progress (upstream's
 * updatedDesiredNodeCounts). Throws on a value that is neither.
 */
export function maxUnavailableOf(ds: DaemonSet, desired: number): number {
  const value = ds.spec?.updateStrategy?.rollingUpdate?.maxUnavailable ?? 1;
  const scaled = scaledValue(value, desired, true);
  return desired > 0 && scaled === 0 ? 1 : scaled;
}

/** The current and the out-of-date live pod on a node; undefined when a node has two of either. */
function updatedAndOld(pods: readonly Pod[], hash: string): { updated?: Pod; old?: Pod } | undefined {
  const found: { updated?: Pod; old?: Pod } = {};
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const slot = isPodUpdated(pod, hash) ? 'updated' : 'old';
    if (found[slot]) return undefined;
    found[slot] = pod;
  }
  return found;
}

/**
 * The out-of-date pods to delete now (manage then creates their replacements from the current
 * template). Old pods that are unavailable anyway go at once; available ones only while fewer than
 * maxUnavailable of the daemon set's nodes are without an available pod. Nodes in transition (no
 * pod, both an old and a new one, or several) count as unavailable; terminating pods do not, so an
 * update moves on past a node that is down.
 */
export function planRollingUpdate(ds: DaemonSet, nodes: readonly Node[], pods: readonly Pod[], hash: string, nowMs: number): Pod[] {
  const maxUnavailable = maxUnavailableOf(ds, desiredNumberScheduled(ds, nodes));
  const minReadySeconds = ds.spec?.minReadySeconds ?? 0;
  const byNode = [...podsByNode(pods)].sort(([a], [b]) => (a < b ? -1 : 1));
  let unavailable = 0;
  const replaceNow: Pod[] = [];
  const candidates: Pod[] = [];
  for (const [, onNode] of byNode) {
    const found = updatedAndOld(onNode, hash);
    if (!found || Boolean(found.updated) === Boolean(found.old)) {
      unavailable++;
    } else if (found.updated) {
      if (!isPodAvailable(found.updated, minReadySeconds, nowMs)) unavailable++;
    } else if (!isPodAvailable(found.old!, minReadySeconds, nowMs)) {
      replaceNow.push(found.old!);
      unavailable++;
    } else if (unavailable < maxUnavailable) {
      candidates.push(found.old!);
    }
  }
  const room = Math.min(Math.max(0, maxUnavailable - unavailable), candidates.length);
  return [...replaceNow, ...candidates.slice(0, room)];
}

// ---------------------------------------------------------------------------------------------
// Status (upstream's updateDaemonSetStatus).

/**
 * Per node that should run the daemon: desired, scheduled when it has a pod, ready/available/updated
 * by its oldest pod; a pod on a node that should not run one is misscheduled. observedGeneration
 * moves only when this sync acted on the spec (not while waiting for earlier creations).
 */
export function daemonSetStatus(ds: DaemonSet, nodes: readonly Node[], pods: readonly Pod[], hash: string, nowMs: number, observeGeneration: boolean): DaemonSetStatus {
  const byNode = podsByNode(pods);
  const minReadySeconds = ds.spec?.minReadySeconds ?? 0;
  let desired = 0;
  let current = 0;
  let misscheduled = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  for (const node of nodes) {
    const onNode = byNode.get(nodeNameOf(node)) ?? [];
    if (!nodeShouldRunDaemonPod(node, ds).shouldRun) {
      if (onNode.length > 0) misscheduled++;
      continue;
    }
    desired++;
    if (onNode.length === 0) continue;
    current++;
    const pod = [...onNode].sort(compareDaemonPods)[0]!;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, minReadySeconds, nowMs)) available++;
    }
    if (isPodUpdated(pod, hash)) updated++;
  }
  const status: DaemonSetStatus = { currentNumberScheduled: current, numberMisscheduled: misscheduled, desiredNumberScheduled: desired, numberReady: ready };
  const generation = observeGeneration ? ds.metadata.generation : ds.status?.observedGeneration;
  if (generation) status.observedGeneration = generation;
  if (updated) status.updatedNumberScheduled = updated;
  if (available) status.numberAvailable = available;
  if (desired - available) status.numberUnavailable = desired - available;
  return status;
}

const STATUS_FIELDS = [
  'currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady',
  'observedGeneration', 'updatedNumberScheduled', 'numberAvailable', 'numberUnavailable',
] as const;

/** Whether the stored status differs from the computed one (upstream skips equal writes). */
export function daemonSetStatusChanged(ds: DaemonSet, status: DaemonSetStatus): boolean {
  const stored = ds.status ?? ({} as Partial<DaemonSetStatus>);
  return STATUS_FIELDS.some((field) => (stored[field] ?? 0) !== (status[field] ?? 0));
}

/** With minReadySeconds, ready pods become available later: when to look again (upstream's AddAfter). */
export function availabilityRecheckMs(ds: DaemonSet, status: DaemonSetStatus): number | undefined {
  const minReadySeconds = ds.spec?.minReadySeconds ?? 0;
  return minReadySeconds > 0 && status.numberReady !== (status.numberAvailable ?? 0) ? minReadySeconds * 1000 : undefined;
}

// ---------------------------------------------------------------------------------------------
// The back-off on deleting failed pods (upstream's failedPodsBackoff: 1 s doubling to 15 min).

export const FAILED_POD_BACKOFF_INITIAL_MS = 1000;
export const FAILED_POD_BACKOFF_MAX_MS = 15 * 60_000;

interface BackoffEntry {
  delayMs: number;
  lastUpdateMs: number;
}

/**
 * client-go's flowcontrol.Backoff as the daemon set controller uses it, per daemon set and node: a
 * pod the agent keeps rejecting is deleted and recreated at most once per delay, not in a hot loop.
 * An entry unused for twice the maximum starts over.
 */
export class FailedPodBackoff {
  private readonly entries = new Map<string, BackoffEntry>();

  constructor(
    private readonly initialMs = FAILED_POD_BACKOFF_INITIAL_MS,
    private readonly maxMs = FAILED_POD_BACKOFF_MAX_MS,
  ) {}

  private live(key: string, nowMs: number): BackoffEntry | undefined {
    const entry = this.entries.get(key);
    if (entry && nowMs - entry.lastUpdateMs > 2 * this.maxMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /** The time left before the next deletion is allowed; 0 when allowed now. */
  remainingMs(key: string, nowMs: number): number {
    const entry = this.live(key, nowMs);
    return entry ? Math.max(0, entry.lastUpdateMs + entry.delayMs - nowMs) : 0;
  }

  /** Records a deletion: the next one waits the initial delay, then twice as long each time. */
  next(key: string, nowMs: number): void {
    const entry = this.live(key, nowMs);
    const delayMs = entry ? Math.min(entry.delayMs * 2, this.maxMs) : this.initialMs;
    this.entries.set(key, { delayMs, lastUpdateMs: nowMs });
  }

  /** Drops the entries of one daemon set (keys start with its uid). */
  forget(prefix: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}

export function failedPodBackoffKey(ds: DaemonSet, node: string): string {
  return `${ds.metadata.uid ?? ''}/${node}`;
}
