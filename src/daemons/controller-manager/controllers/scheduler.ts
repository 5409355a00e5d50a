/**
 * The `scheduler` controller: a small default-scheduler (upstream kube-scheduler with its default
 * profile, reduced to what orch needs). It binds each unscheduled pod, through the pods/binding
 * subresource, to a node that fits, preferring the least allocated one; when none fits it records a
 * FailedScheduling event with upstream's message, marks the pod PodScheduled=False, and retries
 * with back-off when the cluster changes (or after 5 minutes regardless, as upstream's
 * unschedulable pool does).
 *
 * Off by default (`--controllers=*,scheduler` turns it on); `orch up` turns it on.
 *
 * The filters, in upstream's order (the first that rejects a node gives its reasons):
 *   NodeUnschedulable  spec.unschedulable unless the pod tolerates node.orch.io/unschedulable
 *   TaintToleration    NoSchedule/NoExecute taints against the pod's tolerations; a node that is not
 *                      Ready carries the not-ready/unreachable NoSchedule taint the node lifecycle
 *                      controller would give it, so only pods tolerating that land there
 *   NodeAffinity       spec.nodeSelector and the required node affinity terms
 *   NodeResourcesFit   pod count, cpu and memory requests against allocatable
 * and one score: NodeResourcesLeastAllocated (ties broken by node name, where upstream picks at
 * random). No preemption: the message's `preemption:` part says what upstream's would when no pod
 * has a lower priority, which holds in orch (no PriorityClass admission).
 *
 * The first half of this file is pure (the decision), the second does the I/O.
 */
import { names } from '../../../api/names.js';
import { ApiStatusError } from '../../../client/errors.js';
import {
  deletedObject,
  ItemExponentialFailureRateLimiter,
  metaNamespaceKey,
  RateLimitingQueue,
  realClock,
  type ApiObject,
  type HandlerRegistration,
  type ObjectMeta,
  type ResourceRef,
  type TimerClock,
} from '../../../client/informers/index.js';
import { parseQuantity } from '../../../options/quantity.js';
import type { ControllerContext, ControllerDescriptor, RunningController } from './types.js';
import {toleratesTaint} from '../../../api/meta.js';
import type {Toleration} from '../../../api/toleration.js';
export type {Toleration} from '../../../api/toleration.js';

export const SCHEDULER_NAME = 'default-scheduler';
/** Bindings in flight at once while the next pods are placed. */
export const MAX_BINDINGS_IN_FLIGHT = 16;
export const taintUnschedulable = (): string => names().taints.unschedulable;
export const taintNotReady = (): string => names().taints.notReady;
export const taintUnreachable = (): string => names().taints.unreachable;

const PODS: ResourceRef = { group: '', version: 'v1', resource: 'pods' };
const NODES: ResourceRef = { group: '', version: 'v1', resource: 'nodes' };

// ---------------------------------------------------------------------------------------------
// Shapes (the fields the scheduler reads).

type ResourceList = Record<string, string | number>;

export interface Container {
  name?: string;
  restartPolicy?: string;
  resources?: { requests?: ResourceList; limits?: ResourceList };
}


export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

export interface Pod extends ApiObject {
  metadata?: ObjectMeta & { deletionTimestamp?: string };
  spec?: {
    nodeName?: string;
    schedulerName?: string;
    schedulingGates?: { name: string }[];
    nodeSelector?: Record<string, string>;
    affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] } } };
    tolerations?: Toleration[];
    containers?: Container[];
    initContainers?: Container[];
    overhead?: ResourceList;
    preemptionPolicy?: string;
  };
  status?: { phase?: string; conditions?: PodCondition[] };
}

export interface Node extends ApiObject {
  spec?: { unschedulable?: boolean; taints?: Taint[] };
  status?: { allocatable?: ResourceList; conditions?: { type: string; status: string }[] };
}

// ---------------------------------------------------------------------------------------------
// Pure: which pods are ours.

/** A pod this scheduler must place: unbound, not terminating, Pending, ours, not gated. */
export function needsScheduling(pod: Pod): boolean {
  const spec = pod.spec ?? {};
  const phase = pod.status?.phase;
  return (
    !spec.nodeName &&
    !pod.metadata?.deletionTimestamp &&
    (phase === undefined || phase === 'Pending') &&
    (!spec.schedulerName || spec.schedulerName === SCHEDULER_NAME) &&
    // Upstream's SchedulingGates plugin keeps gated pods out of the queue.
    !(spec.schedulingGates?.length)
  );
}

function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

// ---------------------------------------------------------------------------------------------
// Pure: resources. CPU in millicores, memory in bytes, rounded up as upstream's MilliValue/Value.

export interface Resources {
  milliCpu: number;
  memory: number;
}

/** Upstream's DefaultMilliCPURequest / DefaultMemoryRequest: what a request-less container counts as when scoring. */
export const NON_ZERO_DEFAULTS: Readonly<Resources> = { milliCpu: 100, memory: 200 * 1024 * 1024 };

/** Rounds up, but forgives binary floating point noise (0.1 * 1000 is 100.00000000000001). */
function ceilInteger(value: number): number {
  const rounded = Math.round(value);
  return Math.abs(value - rounded) < 1e-6 ? rounded : Math.ceil(value);
}

/** The amount of a quantity in base units times `scale`; undefined when absent or malformed. */
function amount(value: string | number | undefined, scale: number): number | undefined {
  if (value === undefined) return undefined;
  try {
    return ceilInteger(parseQuantity(String(value)).value * scale);
  } catch {
    return undefined;
  }
}

function resourcesOf(list: ResourceList | undefined): Partial<Resources> {
  return { milliCpu: amount(list?.cpu, 1000), memory: amount(list?.memory, 1) };
}

/**
 * A container's requests. A resource with a limit and no request counts the limit: upstream's API
 * server defaults requests to limits, orch's does not, so the scheduler applies it here.
 */
function containerRequests(container: Container, nonZero: boolean): Resources {
  const requests = resourcesOf(container.resources?.requests);
  const limits = resourcesOf(container.resources?.limits);
  const cpu = requests.milliCpu ?? limits.milliCpu;
  const memory = requests.memory ?? limits.memory;
  return {
    milliCpu: cpu ?? (nonZero ? NON_ZERO_DEFAULTS.milliCpu : 0),
    memory: memory ?? (nonZero ? NON_ZERO_DEFAULTS.memory : 0),
  };
}

const add = (a: Resources, b: Resources): Resources => ({ milliCpu: a.milliCpu + b.milliCpu, memory: a.memory + b.memory });
const max = (a: Resources, b: Resources): Resources => ({ milliCpu: Math.max(a.milliCpu, b.milliCpu), memory: Math.max(a.memory, b.memory) });
const ZERO: Resources = { milliCpu: 0, memory: 0 };

/**
 * Upstream's resourcehelper.PodRequests: the containers' requests summed; restartable init
 * containers (sidecars) run alongside and add to the sum; each other init container runs alone
 * (with the sidecars started before it), so the pod needs the larger of the two; plus overhead.
 * `nonZero` counts request-less containers as NON_ZERO_DEFAULTS (for scoring only).
 */
export function podRequests(pod: Pod, nonZero = false): Resources {
  let sum = (pod.spec?.containers ?? []).reduce((acc, c) => add(acc, containerRequests(c, nonZero)), ZERO);
  let sidecars = ZERO;
  let initPeak = ZERO;
  for (const container of pod.spec?.initContainers ?? []) {
    const requests = containerRequests(container, nonZero);
    if (container.restartPolicy === 'Always') {
      sum = add(sum, requests);
      sidecars = add(sidecars, requests);
      initPeak = max(initPeak, sidecars);
    } else {
      initPeak = max(initPeak, add(requests, sidecars));
    }
  }
  const overhead = resourcesOf(pod.spec?.overhead);
  return add(max(sum, initPeak), { milliCpu: overhead.milliCpu ?? 0, memory: overhead.memory ?? 0 });
}

/** What is already committed on a node: the pods bound to it that have not finished. */
export interface NodeUsage {
  requested: Resources;
  nonZeroRequested: Resources;
  pods: number;
}

export function nodeUsage(pods: readonly Pod[]): Map<string, NodeUsage> {
  const tracker = new NodeUsageTracker();
  pods.forEach((pod, i) => tracker.set(String(i), pod));
  return tracker.usage;
}

/**
 * Node usage kept up to date pod by pod (upstream's scheduler cache), instead of summed over every
 * pod for each pod placed: that sum made scheduling cost O(pods) per pod, 1.5 pods/s at 30,000 pods.
 * `set` takes a pod's latest state as the scheduler counts it (an assumed pod shown bound), or
 * undefined once it is gone.
 */
export class NodeUsageTracker {
  readonly usage = new Map<string, NodeUsage>();
  private readonly counted = new Map<string, { node: string; requested: Resources; nonZero: Resources }>();

  set(key: string, pod: Pod | undefined): void {
    const before = this.counted.get(key);
    const node = pod?.spec?.nodeName;
    const counts = pod !== undefined && node !== undefined && node !== '' && !isTerminal(pod);
    // Bound pods do not change their requests or node: an update of a counted pod changes nothing.
    if (before && counts && before.node === node) return;
    if (before) {
      this.counted.delete(key);
      this.change(before.node, before.requested, before.nonZero, -1);
    }
    if (!counts) return;
    const entry = { node: node!, requested: podRequests(pod!), nonZero: podRequests(pod!, true) };
    this.counted.set(key, entry);
    this.change(entry.node, entry.requested, entry.nonZero, 1);
  }

  private change(node: string, requested: Resources, nonZero: Resources, sign: 1 | -1): void {
    const current = this.usage.get(node) ?? { requested: ZERO, nonZeroRequested: ZERO, pods: 0 };
    const pods = current.pods + sign;
    if (pods === 0) {
      this.usage.delete(node);
      return;
    }
    this.usage.set(node, {
      requested: add(current.requested, scale(requested, sign)),
      nonZeroRequested: add(current.nonZeroRequested, scale(nonZero, sign)),
      pods,
    });
  }
}

const scale = (r: Resources, by: number): Resources => ({ milliCpu: r.milliCpu * by, memory: r.memory * by });

export interface Allocatable extends Resources {
  pods: number;
}

/** Parsed once per node object (the informer replaces the object on each change): every pod placed reads every node's. */
const allocatables = new WeakMap<Node, Allocatable>();

export function allocatableOf(node: Node): Allocatable {
  let allocatable = allocatables.get(node);
  if (!allocatable) {
    const list = node.status?.allocatable;
    allocatable = { milliCpu: amount(list?.cpu, 1000) ?? 0, memory: amount(list?.memory, 1) ?? 0, pods: amount(list?.pods, 1) ?? 0 };
    allocatables.set(node, allocatable);
  }
  return allocatable;
}

// ---------------------------------------------------------------------------------------------
// Pure: taints and tolerations (upstream's v1helper).

export {toleratesTaint} from '../../../api/meta.js';

export function toleratesAll(tolerations: readonly Toleration[] | undefined, taint: Taint): boolean {
  return (tolerations ?? []).some((t) => toleratesTaint(t, taint));
}

function readyStatus(node: Node): string | undefined {
  return node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
}

/**
 * The node's taints as the scheduler sees them: its own, plus the NoSchedule taint the node
 * lifecycle controller gives a node that is not Ready (not-ready for False or no status yet, as a
 * freshly registered node carries; unreachable for Unknown), when it is not there already. So a
 * node that is not Ready takes only pods that tolerate that.
 */
export function effectiveTaints(node: Node): Taint[] {
  const taints = [...(node.spec?.taints ?? [])];
  const ready = readyStatus(node);
  if (ready !== 'True') {
    const key = ready === 'Unknown' ? taintUnreachable() : taintNotReady();
    if (!taints.some((t) => t.key === key && t.effect === 'NoSchedule')) taints.push({ key, effect: 'NoSchedule' });
  }
  return taints;
}

/** Upstream's FindMatchingUntoleratedTaint over NoSchedule and NoExecute taints, in the node's order. */
export function untoleratedTaint(taints: readonly Taint[], tolerations: readonly Toleration[] | undefined): Taint | undefined {
  return taints.find((taint) => (taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') && !toleratesAll(tolerations, taint));
}

// ---------------------------------------------------------------------------------------------
// Pure: node selectors and affinity (upstream's component-helpers nodeaffinity).

const INTEGER = /^[+-]?\d+$/;

/**
 * One label requirement; undefined when it is malformed (upstream then fails the whole term).
 * Gt/Lt compare integers and need the label to parse as one.
 */
function labelRequirementMatches(requirement: NodeSelectorRequirement, labels: Readonly<Record<string, string>>): boolean | undefined {
  const values = requirement.values ?? [];
  const has = Object.prototype.hasOwnProperty.call(labels, requirement.key);
  const value = labels[requirement.key];
  switch (requirement.operator) {
    case 'In':
      return values.length === 0 ? undefined : has && values.includes(value);
    case 'NotIn':
      return values.length === 0 ? undefined : !has || !values.includes(value);
    case 'Exists':
      return values.length !== 0 ? undefined : has;
    case 'DoesNotExist':
      return values.length !== 0 ? undefined : !has;
    case 'Gt':
    case 'Lt': {
      if (values.length !== 1 || !INTEGER.test(values[0])) return undefined;
      if (!has || !INTEGER.test(value)) return false;
      const [label, bound] = [BigInt(value), BigInt(values[0])];
      return requirement.operator === 'Gt' ? label > bound : label < bound;
    }
    default:
      return undefined;
  }
}

/** A field requirement: In/NotIn with exactly one value, over the node's fields (metadata.name). */
function fieldRequirementMatches(requirement: NodeSelectorRequirement, fields: Readonly<Record<string, string>>): boolean | undefined {
  const values = requirement.values ?? [];
  if (values.length !== 1) return undefined;
  const value = fields[requirement.key] ?? '';
  if (requirement.operator === 'In') return value === values[0];
  if (requirement.operator === 'NotIn') return value !== values[0];
  return undefined;
}

/** Expressions and fields are ANDed; an empty or malformed term matches nothing. */
export function nodeSelectorTermMatches(term: NodeSelectorTerm, node: Node): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  const labels = node.metadata?.labels ?? {};
  const nodeFields = { 'metadata.name': node.metadata?.name ?? '' };
  const results = [
    ...expressions.map((r) => labelRequirementMatches(r, labels)),
    ...fields.map((r) => fieldRequirementMatches(r, nodeFields)),
  ];
  return results.every((r) => r === true);
}

/** Terms are ORed; no terms match nothing. */
export function nodeSelectorTermsMatch(terms: readonly NodeSelectorTerm[], node: Node): boolean {
  return terms.some((term) => nodeSelectorTermMatches(term, node));
}

/** Upstream's RequiredNodeAffinity.Match: spec.nodeSelector and the required affinity terms. */
export function matchesRequiredNodeAffinity(pod: Pod, node: Node): boolean {
  const labels = node.metadata?.labels ?? {};
  const selector = pod.spec?.nodeSelector ?? {};
  if (!Object.entries(selector).every(([key, value]) => labels[key] === value)) return false;
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return required === undefined || nodeSelectorTermsMatch(required.nodeSelectorTerms ?? [], node);
}

/**
 * Upstream's NodeAffinity PreFilter: when every term names nodes (matchFields metadata.name In),
 * only those nodes are considered; 'conflict' when the terms name no node at all.
 */
export function affinityNodeNames(pod: Pod): Set<string> | 'conflict' | undefined {
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return undefined;
  const names = new Set<string>();
  for (const term of terms) {
    let termNames: Set<string> | undefined;
    for (const field of term.matchFields ?? []) {
      if (field.key !== 'metadata.name' || field.operator !== 'In') continue;
      const values = new Set(field.values ?? []);
      termNames = termNames ? new Set([...termNames].filter((n) => values.has(n))) : values;
    }
    // A term that names no node admits every node, and the terms are ORed.
    if (!termNames) return undefined;
    for (const name of termNames) names.add(name);
  }
  return names.size === 0 ? 'conflict' : names;
}

// ---------------------------------------------------------------------------------------------
// Pure: the filters, in upstream's order.

/** Why a node was rejected: upstream's reasons, and whether evicting pods could ever help (preemption). */
export interface NodeStatus {
  reasons: string[];
  unresolvable: boolean;
}

export const REASON_UNSCHEDULABLE = 'node(s) were unschedulable';
export const REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector";
export const REASON_TOO_MANY_PODS = 'Too many pods';
export const REASON_INSUFFICIENT_CPU = 'Insufficient cpu';
export const REASON_INSUFFICIENT_MEMORY = 'Insufficient memory';
export const REASON_AFFINITY_CONFLICT = 'pod affinity terms conflict';
export const REASON_NOT_CONSIDERED = "node(s) didn't satisfy plugin(s) [NodeAffinity]";

interface FilterInput {
  pod: Pod;
  request: Resources;
  node: Node;
  usage: NodeUsage | undefined;
}

interface Filter {
  name: string;
  /** Upstream's UnschedulableAndUnresolvable: removing pods from the node would not help. */
  unresolvable: boolean;
  reasons(input: FilterInput): string[];
}

const FILTERS: readonly Filter[] = [
  {
    name: 'NodeUnschedulable',
    unresolvable: true,
    reasons: ({ pod, node }) =>
      node.spec?.unschedulable && !toleratesAll(pod.spec?.tolerations, { key: taintUnschedulable(), effect: 'NoSchedule' }) ? [REASON_UNSCHEDULABLE] : [],
  },
  {
    name: 'TaintToleration',
    unresolvable: true,
    reasons: ({ pod, node }) => {
      const taint = untoleratedTaint(effectiveTaints(node), pod.spec?.tolerations);
      return taint ? [`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`] : [];
    },
  },
  {
    name: 'NodeAffinity',
    unresolvable: true,
    reasons: ({ pod, node }) => (matchesRequiredNodeAffinity(pod, node) ? [] : [REASON_AFFINITY]),
  },
  {
    name: 'NodeResourcesFit',
    unresolvable: false,
    reasons: ({ request, node, usage }) => resourceFitReasons(request, allocatableOf(node), usage),
  },
];

/** Upstream's fitsRequest: every shortfall, pods first. */
export function resourceFitReasons(request: Resources, allocatable: Allocatable, usage: NodeUsage | undefined): string[] {
  const used = usage?.requested ?? ZERO;
  const reasons: string[] = [];
  if ((usage?.pods ?? 0) + 1 > allocatable.pods) reasons.push(REASON_TOO_MANY_PODS);
  if (request.milliCpu > 0 && request.milliCpu > allocatable.milliCpu - used.milliCpu) reasons.push(REASON_INSUFFICIENT_CPU);
  if (request.memory > 0 && request.memory > allocatable.memory - used.memory) reasons.push(REASON_INSUFFICIENT_MEMORY);
  return reasons;
}

/** The first filter that rejects the node, or undefined when the node fits. */
export function filterNode(pod: Pod, node: Node, usage: NodeUsage | undefined, request = podRequests(pod)): NodeStatus | undefined {
  for (const filter of FILTERS) {
    const reasons = filter.reasons({ pod, request, node, usage });
    if (reasons.length > 0) return { reasons, unresolvable: filter.unresolvable };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Pure: the score.

const MAX_NODE_SCORE = 100;

/** Upstream's leastRequestedScore, in integers as upstream computes it. */
function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.floor(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

/**
 * Upstream's NodeResourcesFit LeastAllocated score (cpu and memory, weight 1 each): the average of
 * (allocatable - requested) / allocatable over 0..100, counting request-less containers at the
 * non-zero defaults so that best-effort pods spread too. Resources a node has none of are skipped.
 */
export function leastAllocatedScore(podNonZero: Resources, usage: NodeUsage | undefined, allocatable: Allocatable): number {
  const used = usage?.nonZeroRequested ?? ZERO;
  const pairs: [number, number][] = [
    [used.milliCpu + podNonZero.milliCpu, allocatable.milliCpu],
    [used.memory + podNonZero.memory, allocatable.memory],
  ];
  const counted = pairs.filter(([, capacity]) => capacity !== 0);
  if (counted.length === 0) return 0;
  return Math.floor(counted.reduce((sum, [requested, capacity]) => sum + leastRequestedScore(requested, capacity), 0) / counted.length);
}

// ---------------------------------------------------------------------------------------------
// Pure: the decision and upstream's FitError message.

export type ScheduleResult = { node: string; score: number } | { node?: undefined; message: string };

export const NO_NODES_MESSAGE = 'no nodes available to schedule pods';

/** "1 Insufficient cpu, 2 node(s) were unschedulable": counts per reason, as sorted strings (upstream sorts the formatted strings). */
function histogram(statuses: Iterable<NodeStatus>): string {
  const counts = new Map<string, number>();
  for (const status of statuses) for (const reason of status.reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  return [...counts].map(([reason, count]) => `${count} ${reason}`).sort().join(', ');
}

/** Upstream's FitError.Error(): `0/N nodes are available: <reasons>. <post-filter message>.` */
export function fitErrorMessage(numAllNodes: number, statuses: readonly NodeStatus[], options: { preFilterMessage?: string; postFilterMessage?: string } = {}): string {
  let message = `0/${numAllNodes} nodes are available:`;
  if (options.preFilterMessage) message += ` ${options.preFilterMessage}.`;
  else {
    const reasons = histogram(statuses);
    if (reasons) message += ` ${reasons}.`;
  }
  if (options.postFilterMessage) message += ` ${options.postFilterMessage}.`;
  return message;
}

/**
 * What upstream's DefaultPreemption says when it finds nothing to evict: nodes rejected for good
 * are "not helpful", the others have no pod of a lower priority to evict.
 */
export function preemptionMessage(pod: Pod, numAllNodes: number, statuses: readonly NodeStatus[]): string {
  if (pod.spec?.preemptionPolicy === 'Never') return 'preemption: not eligible due to preemptionPolicy=Never.';
  const outcomes = statuses.map((s) => ({
    reasons: [s.unresolvable ? 'Preemption is not helpful for scheduling' : 'No preemption victims found for incoming pod'],
    unresolvable: true,
  }));
  return `preemption: ${fitErrorMessage(numAllNodes, outcomes)}`;
}

/** Places `pod` among `nodes`, given every pod the cluster has (bound ones count against their node). */
export function schedulePod(pod: Pod, nodes: readonly Node[], pods: readonly Pod[]): ScheduleResult {
  return schedulePodOn(pod, nodes, nodeUsage(pods));
}

/** schedulePod, with the usage of each node already summed (NodeUsageTracker). */
export function schedulePodOn(pod: Pod, nodes: readonly Node[], usage: ReadonlyMap<string, NodeUsage>): ScheduleResult {
  if (nodes.length === 0) return { message: NO_NODES_MESSAGE };
  const candidates = affinityNodeNames(pod);
  if (candidates === 'conflict') {
    const statuses = nodes.map(() => ({ reasons: [REASON_AFFINITY_CONFLICT], unresolvable: true }));
    return {
      message: fitErrorMessage(nodes.length, statuses, {
        preFilterMessage: REASON_AFFINITY_CONFLICT,
        postFilterMessage: preemptionMessage(pod, nodes.length, statuses),
      }),
    };
  }
  const request = podRequests(pod);
  const nonZero = podRequests(pod, true);
  const statuses: NodeStatus[] = [];
  let best: { node: string; score: number } | undefined;
  for (const node of nodes) {
    const name = node.metadata?.name ?? '';
    const status = candidates && !candidates.has(name)
      ? { reasons: [REASON_NOT_CONSIDERED], unresolvable: true }
      : filterNode(pod, node, usage.get(name), request);
    if (status) {
      statuses.push(status);
      continue;
    }
    const score = leastAllocatedScore(nonZero, usage.get(name), allocatableOf(node));
    if (!best || score > best.score || (score === best.score && name < best.node)) best = { node: name, score };
  }
  if (best) return best;
  return { message: fitErrorMessage(nodes.length, statuses, { postFilterMessage: preemptionMessage(pod, nodes.length, statuses) }) };
}

/**
 * Whether a node change can make an unschedulable pod fit (upstream's queueing hints, simplified):
 * a node status heartbeat alone cannot, a change of capacity, labels, taints, cordon or readiness can.
 */
export function nodeChangeMayHelp(oldNode: Node, newNode: Node): boolean {
  const relevant = (n: Node) =>
    JSON.stringify([n.status?.allocatable, n.metadata?.labels, n.spec?.taints, n.spec?.unschedulable ?? false, readyStatus(n)]);
  return relevant(oldNode) !== relevant(newNode);
}

/** Upstream's pod back-off: initial * 2^(attempts-1), capped. */
export function backoffMs(attempts: number, initialMs: number, maxMs: number): number {
  if (attempts <= 0) return 0;
  return Math.min(maxMs, initialMs * 2 ** Math.min(attempts - 1, 30));
}

// ---------------------------------------------------------------------------------------------
// The controller.

export interface SchedulerTiming {
  /** Upstream's podInitialBackoffSeconds (1s). */
  initialBackoffMs?: number;
  /** Upstream's podMaxBackoffSeconds (10s). */
  maxBackoffMs?: number;
  /** Upstream's podMaxInUnschedulablePodsDuration (5m): an unschedulable pod is retried after this even if nothing changed. */
  maxInUnschedulableMs?: number;
  clock?: TimerClock;
}

interface Unschedulable {
  failedAt: number;
  attempts: number;
}

const podPath = (namespace: string, name: string) => `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

function isGone(error: unknown): boolean {
  return error instanceof ApiStatusError && (error.code === 404 || error.code === 409);
}

class Scheduler {
  readonly pods;
  readonly nodes;
  readonly queue: RateLimitingQueue<string>;
  /** Pods bound by us that the informer has not shown bound yet: they count on their node meanwhile (upstream's assumed pods). */
  private readonly assumed = new Map<string, Pod>();
  /** Bindings sent and not answered yet (at most MAX_BINDINGS_IN_FLIGHT). */
  private readonly binding = new Set<Promise<void>>();
  /** What the bound pods (assumed ones included) take on each node. */
  private readonly usage = new NodeUsageTracker();
  /** Pods no node fits, retried on a cluster change after their back-off. */
  readonly unschedulable = new Map<string, Unschedulable>();
  scheduledTotal = 0;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly timing: Required<SchedulerTiming>,
  ) {
    this.pods = ctx.informers.informerFor<Pod>(PODS);
    this.nodes = ctx.informers.informerFor<Node>(NODES);
    this.queue = new RateLimitingQueue<string>({
      name: 'scheduler',
      metrics: ctx.metrics,
      clock: timing.clock,
      rateLimiter: new ItemExponentialFailureRateLimiter<string>(timing.initialBackoffMs, timing.maxBackoffMs),
    });
  }

  register(): HandlerRegistration[] {
    return [
      this.pods.addEventHandler({
        onAdd: (pod) => this.onPod(undefined, pod),
        onUpdate: (oldPod, newPod) => this.onPod(oldPod, newPod),
        onDelete: (object) => {
          const pod = deletedObject(object);
          const key = metaNamespaceKey(pod);
          this.assumed.delete(key);
          this.usage.set(key, undefined);
          this.unschedulable.delete(key);
          // A bound pod going away frees its node.
          if (pod.spec?.nodeName && !isTerminal(pod)) this.retryUnschedulable();
        },
      }),
      this.nodes.addEventHandler({
        onAdd: () => this.retryUnschedulable(),
        onUpdate: (oldNode, newNode) => {
          if (nodeChangeMayHelp(oldNode, newNode)) this.retryUnschedulable();
        },
      }),
    ];
  }

  private onPod(oldPod: Pod | undefined, pod: Pod): void {
    const key = metaNamespaceKey(pod);
    // A pod we bound counts on its node as assumed until the informer shows it bound.
    if (pod.spec?.nodeName || !this.assumed.has(key)) this.usage.set(key, pod);
    if (needsScheduling(pod)) {
      // A status-only update (our own PodScheduled condition) changes nothing the filters read.
      if (!oldPod || JSON.stringify(oldPod.spec) !== JSON.stringify(pod.spec) || JSON.stringify(oldPod.metadata?.labels) !== JSON.stringify(pod.metadata?.labels)) {
        this.queue.add(key);
      }
      return;
    }
    if (pod.spec?.nodeName) {
      this.assumed.delete(key);
      this.unschedulable.delete(key);
    }
    // A bound pod that finished frees its node.
    if (oldPod && pod.spec?.nodeName && isTerminal(pod) && !isTerminal(oldPod)) this.retryUnschedulable();
  }

  /** Upstream's MoveAllToActiveOrBackoffQueue: each unschedulable pod comes back once its back-off is over. */
  private retryUnschedulable(): void {
    const now = this.timing.clock.now();
    for (const [key, entry] of this.unschedulable) {
      const readyAt = entry.failedAt + backoffMs(entry.attempts, this.timing.initialBackoffMs, this.timing.maxBackoffMs);
      this.queue.addAfter(key, Math.max(0, readyAt - now));
    }
  }

  async sync(key: string): Promise<void> {
    const pod = this.pods.indexer.getByKey(key);
    if (!pod || !needsScheduling(pod)) {
      this.unschedulable.delete(key);
      return;
    }
    if (this.assumed.has(key)) return;
    const result = schedulePodOn(pod, this.nodes.indexer.list(), this.usage.usage);
    if (result.node === undefined) return this.markUnschedulable(key, pod, result.message);
    // Assumed on its node before the binding is sent, so that the next pod placed counts it; the
    // binding goes on while the next pods are placed (upstream's binding cycle runs apart from
    // its scheduling cycle): one binding at a time, each a durable write, placed 20 pods/s.
    const assumed = { ...pod, spec: { ...pod.spec, nodeName: result.node } };
    this.assumed.set(key, assumed);
    this.usage.set(key, assumed);
    const binding: Promise<void> = this.bind(key, pod, result.node)
      .catch((error) => {
        this.forgetAssumed(key);
        this.ctx.logger.error('Error scheduling pod; retrying', 'pod', key, 'err', String(error));
        this.queue.addRateLimited(key);
      })
      .finally(() => this.binding.delete(binding));
    this.binding.add(binding);
    if (this.binding.size >= MAX_BINDINGS_IN_FLIGHT) await Promise.race(this.binding);
  }

  /** A pod we assumed and could not bind counts as the informer shows it again. */
  private forgetAssumed(key: string): void {
    this.assumed.delete(key);
    this.usage.set(key, this.pods.indexer.getByKey(key));
  }

  private async bind(key: string, pod: Pod, nodeName: string): Promise<void> {
    const namespace = pod.metadata?.namespace ?? 'default';
    const name = pod.metadata?.name ?? '';
    const binding = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, namespace, ...(pod.metadata?.uid ? { uid: pod.metadata.uid } : {}) },
      target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
    };
    try {
      await this.ctx.client.request({ method: 'POST', path: `${podPath(namespace, name)}/binding`, body: binding });
    } catch (error) {
      // Bound by someone else, being deleted, or gone: nothing left to do for this pod.
      if (isGone(error)) {
        this.ctx.logger.v(2).info('Pod no longer needs scheduling', 'pod', key, 'err', String(error));
        this.forgetAssumed(key);
        this.unschedulable.delete(key);
        return;
      }
      throw error;
    }
    this.unschedulable.delete(key);
    this.scheduledTotal++;
    this.ctx.logger.v(2).info('Successfully bound pod to node', 'pod', key, 'node', nodeName);
    this.recordEvent(pod, 'Normal', 'Scheduled', `Successfully assigned ${namespace}/${name} to ${nodeName}`);
  }

  private async markUnschedulable(key: string, pod: Pod, message: string): Promise<void> {
    const attempts = (this.unschedulable.get(key)?.attempts ?? 0) + 1;
    this.unschedulable.set(key, { failedAt: this.timing.clock.now(), attempts });
    // Retried on a cluster change (retryUnschedulable) or, failing that, after a while regardless.
    this.queue.addAfter(key, this.timing.maxInUnschedulableMs);
    this.ctx.logger.info('Unable to schedule pod; no fit; waiting', 'pod', key, 'err', message);
    this.recordEvent(pod, 'Warning', 'FailedScheduling', message);
    await this.setPodScheduledFalse(pod, message);
  }

  /** PodScheduled=False/Unschedulable, as upstream shows it in `kubectl describe`; written only when it changes. */
  private async setPodScheduledFalse(pod: Pod, message: string): Promise<void> {
    const conditions = pod.status?.conditions ?? [];
    const current = conditions.find((c) => c.type === 'PodScheduled');
    if (current?.status === 'False' && current.reason === 'Unschedulable' && current.message === message) return;
    const condition: PodCondition = {
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message,
      lastProbeTime: null,
      lastTransitionTime: current?.status === 'False' && current.lastTransitionTime ? current.lastTransitionTime : rfc3339(this.ctx.now()),
    };
    const patch = { status: { conditions: [...conditions.filter((c) => c.type !== 'PodScheduled'), condition] } };
    try {
      await this.ctx.client.patch(`${podPath(pod.metadata?.namespace ?? 'default', pod.metadata?.name ?? '')}/status`, 'application/merge-patch+json', patch);
    } catch (error) {
      this.ctx.logger.v(2).info('Unable to update the PodScheduled condition', 'pod', metaNamespaceKey(pod), 'err', String(error));
    }
  }

  /** A core/v1 Event on the pod, through the shared recorder (a repeat counts up the first one). */
  private recordEvent(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const { name, namespace, uid } = pod.metadata ?? {};
    this.ctx.events?.(SCHEDULER_NAME).event({ apiVersion: 'v1', kind: 'Pod', name: name ?? '', namespace: namespace ?? 'default', uid }, type, reason, message);
  }

  /** One worker, as upstream's scheduling cycle places one pod at a time so that each sees the last one's node. */
  async work(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) {
        await Promise.all(this.binding);
        return;
      }
      // Shutting down: leave what is queued (the queue hands out its backlog even after shutDown).
      if (signal.aborted) {
        this.queue.done(key);
        await Promise.all(this.binding);
        return;
      }
      try {
        await this.sync(key);
        this.queue.forget(key);
      } catch (error) {
        this.ctx.logger.error('Error scheduling pod; retrying', 'pod', key, 'err', String(error));
        this.queue.addRateLimited(key);
      } finally {
        this.queue.done(key);
      }
    }
  }
}

/** The scheduler descriptor; tests shorten the back-off. */
export function createSchedulerController(timing: SchedulerTiming = {}): ControllerDescriptor {
  const resolved: Required<SchedulerTiming> = {
    initialBackoffMs: timing.initialBackoffMs ?? 1000,
    maxBackoffMs: timing.maxBackoffMs ?? 10_000,
    maxInUnschedulableMs: timing.maxInUnschedulableMs ?? 5 * 60_000,
    clock: timing.clock ?? realClock,
  };

  function start(ctx: ControllerContext, signal: AbortSignal): RunningController {
    const scheduler = new Scheduler(ctx, resolved);
    const registrations = scheduler.register();
    const done = (async () => {
      ctx.informers.start();
      const synced = await Promise.all([scheduler.pods.waitForSync({ signal }), scheduler.nodes.waitForSync({ signal })]);
      const stopped = new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
      const worker = synced.every(Boolean) && !signal.aborted ? scheduler.work(signal) : Promise.resolve();
      await stopped;
      scheduler.queue.shutDown();
      await worker;
      for (const registration of registrations) registration.remove();
    })();
    return {
      done,
      snapshot: () => ({
        name: 'scheduler',
        workers: 1,
        queueDepth: scheduler.queue.len() + scheduler.queue.waitingLen(),
        details: { scheduled: scheduler.scheduledTotal, unschedulable: scheduler.unschedulable.size },
      }),
    };
  }

  return { name: 'scheduler', enabledByDefault: false, start };
}

export const schedulerController = createSchedulerController();

export default schedulerController;
