/**
 * What quota counts for each kind of object (upstream's pkg/quota/v1/evaluator/core and
 * k8s.io/apiserver/pkg/quota/v1/generic): pods (compute requests and limits, scopes), services
 * (node ports, load balancers), persistent volume claims (storage, per storage class), the legacy
 * object counts (configmaps, secrets, replicationcontrollers, resourcequotas) and `count/<resource>`
 * for everything else. Pure: objects in, resource lists out. Shared by admission and the controller.
 */
import {names} from '../../../api/names.js';
import {matchesLabels, type LabelOperator} from '../../../api/selectors.js';
import type {JsonObject, JsonValue} from '../../../patch/types.js';
import {add, count, parseResourceList, type ResourceList} from './resources.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** A quota's scope as a selector requirement (spec.scopes are `Exists` requirements). */
export interface ScopeRequirement {
  scopeName: string;
  operator: string;
  values?: string[];
}

export interface QuotaEvaluator {
  readonly group: string;
  readonly resource: string;
  /** Whether a write can change usage (upstream's Handles). */
  handles(operation: Operation, subresource: string, object?: JsonObject, oldObject?: JsonObject): boolean;
  /** The names among `input` this evaluator tracks. */
  matchingResources(input: readonly string[]): string[];
  /** Whether the object is in the scope; throws on a selector it cannot evaluate. Kinds without scopes answer false. */
  matchesScope(scope: ScopeRequirement, object: JsonObject): boolean;
  /** Whether the kind has scopes at all (pods, claims); the others never match a scoped quota's scope list. */
  readonly scoped: boolean;
  /** A problem with the object given the names a quota requires (the pod's "must specify ..."), or undefined. */
  constraints(required: readonly string[], object: JsonObject): string | undefined;
  /** What the object uses; `now` (ms) decides whether a pod stuck terminating still counts. */
  usage(object: JsonObject, now: number): ResourceList;
}

const obj = (v: JsonValue | undefined): JsonObject => (v && typeof v === 'object' && !Array.isArray(v) ? v : {});
const arr = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);
const str = (v: JsonValue | undefined): string => (typeof v === 'string' ? v : '');

/** `count/<resource>` for the core group, `count/<resource>.<group>` otherwise. */
export function objectCountName(group: string, resource: string): string {
  return group ? `count/${resource}.${group}` : `count/${resource}`;
}

/** Scope selectors of a quota: its spec.scopes as Exists, then spec.scopeSelector's expressions. */
export function scopeSelectorsOf(quota: JsonObject): ScopeRequirement[] {
  const spec = obj(quota.spec);
  const scopes: ScopeRequirement[] = arr(spec.scopes).filter((s): s is string => typeof s === 'string').map((scopeName) => ({scopeName, operator: 'Exists'}));
  for (const e of arr(obj(spec.scopeSelector).matchExpressions)) {
    const expression = obj(e);
    scopes.push({scopeName: str(expression.scopeName), operator: str(expression.operator), values: arr(expression.values).map(String)});
  }
  return scopes;
}

const OPERATORS: Record<string, LabelOperator> = {In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!'};

/** A scope requirement as a label requirement on {<scopeName>: value} (upstream's ScopedResourceSelectorRequirementsAsSelector). */
function selectorMatches(scope: ScopeRequirement, value: string | undefined): boolean {
  const operator = OPERATORS[scope.operator];
  if (!operator) throw new Error(`${JSON.stringify(scope.operator)} is not a valid scope selector operator`);
  return matchesLabels([{key: scope.scopeName, operator, values: scope.values ?? []}], value === undefined ? {} : {[scope.scopeName]: value});
}

// ---------------------------------------------------------------------------------------------
// Object counts.

export function objectCountEvaluator(group: string, resource: string, alias?: string): QuotaEvaluator {
  const tracked = [objectCountName(group, resource), ...(alias ? [alias] : [])];
  return {
    group,
    resource,
    scoped: false,
    handles: (operation) => operation === 'CREATE',
    matchingResources: (input) => input.filter((n) => tracked.includes(n)),
    matchesScope: () => false,
    constraints: () => undefined,
    usage: () => Object.fromEntries(tracked.map((n) => [n, count(1)])),
  };
}

// ---------------------------------------------------------------------------------------------
// Pods.

const POD_RESOURCES = [
  'count/pods', 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage',
  'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods',
];
const HUGEPAGES = 'hugepages-';
/** The names a quota on cpu or memory makes every container declare (upstream's validationSet; "a mistake" it keeps). */
const MUST_DECLARE = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);

/** Native resources have no domain or the product's own (upstream's IsNativeResource). */
function isNative(name: string): boolean {
  return !name.includes('/') || name.includes(`${names().labelDomain}/`);
}

/** An extended resource a pod requests, quota-able as requests.<name>. */
function isExtendedResource(name: string): boolean {
  return !isNative(name) && !name.startsWith('requests.');
}

/** A quota name for an extended resource (only the requests.<name> form is allowed). */
function isExtendedQuotaName(name: string): boolean {
  return !isNative(name) && name.startsWith('requests.');
}

/** What one container's (or the pod's) requests and limits count as (upstream's podComputeUsageHelper). */
function computeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const result: ResourceList = {pods: count(1)};
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    if (requests[r]) {
      result[r] = requests[r]!;
      result[`requests.${r}`] = requests[r]!;
    }
    if (limits[r]) result[`limits.${r}`] = limits[r]!;
  }
  for (const [name, amount] of Object.entries(requests)) {
    if (name.startsWith(HUGEPAGES)) {
      result[name] = amount;
      result[`requests.${name}`] = amount;
    }
    if (isExtendedResource(name)) result[`requests.${name}`] = amount;
  }
  return result;
}

/** A container's requests, with limits standing in for requests left out (upstream's defaulting does this before quota runs). */
function containerResources(container: JsonObject): {requests: ResourceList; limits: ResourceList} {
  const resources = obj(container.resources);
  const limits = parseResourceList(resources.limits);
  return {requests: {...limits, ...parseResourceList(resources.requests)}, limits};
}

function maxOf(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = {...a};
  for (const [name, amount] of Object.entries(b)) if (!out[name] || out[name]!.milli < amount.milli) out[name] = amount;
  return out;
}

/**
 * The pod's effective requests or limits (upstream's resourcehelper.PodRequests/PodLimits): the
 * containers' sum, or the largest init container if larger, where sidecars (init containers that
 * restart Always) run beside everything after them; plus the pod overhead.
 */
export function podAggregate(pod: JsonObject, which: 'requests' | 'limits'): ResourceList {
  const spec = obj(pod.spec);
  let total: ResourceList = {};
  for (const c of arr(spec.containers)) total = add(total, containerResources(obj(c))[which]);
  let sidecars: ResourceList = {};
  let initMax: ResourceList = {};
  for (const c of arr(spec.initContainers)) {
    const container = obj(c);
    const own = containerResources(container)[which];
    let peak: ResourceList;
    if (container.restartPolicy === 'Always') {
      total = add(total, own);
      sidecars = add(sidecars, own);
      peak = sidecars;
    } else {
      peak = add(own, sidecars);
    }
    initMax = maxOf(initMax, peak);
  }
  total = maxOf(total, initMax);
  const overhead = parseResourceList(spec.overhead);
  return Object.keys(overhead).length ? add(total, which === 'limits' ? Object.fromEntries(Object.entries(overhead).filter(([n]) => total[n])) : overhead) : total;
}

/** Terminal pods, and pods whose deletion grace period has passed, no longer count (upstream's QuotaV1Pod). */
export function podCountsForQuota(pod: JsonObject, now: number): boolean {
  const phase = str(obj(pod.status).phase);
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const meta = obj(pod.metadata);
  const deletedAt = Date.parse(str(meta.deletionTimestamp));
  const grace = meta.deletionGracePeriodSeconds;
  if (!Number.isNaN(deletedAt) && typeof grace === 'number' && now > deletedAt + grace * 1000) return false;
  return true;
}

/** No cpu or memory request or limit anywhere in the pod (upstream's GetPodQOS == BestEffort). */
export function isBestEffort(pod: JsonObject): boolean {
  const spec = obj(pod.spec);
  for (const c of [...arr(spec.containers), ...arr(spec.initContainers)]) {
    const {requests, limits} = containerResources(obj(c));
    for (const list of [requests, limits]) for (const r of ['cpu', 'memory']) if (list[r] && list[r]!.milli !== 0n) return false;
  }
  return true;
}

function isTerminating(pod: JsonObject): boolean {
  const deadline = obj(pod.spec).activeDeadlineSeconds;
  return typeof deadline === 'number' && deadline >= 0;
}

function usesCrossNamespaceAffinity(pod: JsonObject): boolean {
  const affinity = obj(obj(pod.spec).affinity);
  const crossNamespace = (term: JsonObject) => arr(term.namespaces).length > 0 || term.namespaceSelector !== undefined && term.namespaceSelector !== null;
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const a = obj(affinity[kind]);
    if (arr(a.requiredDuringSchedulingIgnoredDuringExecution).some((t) => crossNamespace(obj(t)))) return true;
    if (arr(a.preferredDuringSchedulingIgnoredDuringExecution).some((t) => crossNamespace(obj(obj(t).podAffinityTerm)))) return true;
  }
  return false;
}

export function podMatchesScope(scope: ScopeRequirement, pod: JsonObject): boolean {
  switch (scope.scopeName) {
    case 'Terminating':
      return isTerminating(pod);
    case 'NotTerminating':
      return !isTerminating(pod);
    case 'BestEffort':
      return isBestEffort(pod);
    case 'NotBestEffort':
      return !isBestEffort(pod);
    case 'PriorityClass': {
      const className = str(obj(pod.spec).priorityClassName);
      if (scope.operator === 'Exists') return className !== '';
      return selectorMatches(scope, className === '' ? undefined : className);
    }
    case 'CrossNamespacePodAffinity':
      return usesCrossNamespaceAffinity(pod);
    default:
      return false;
  }
}

export const podEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'pods',
  scoped: true,
  handles: (operation, subresource) => (subresource === '' && operation === 'CREATE') || (subresource === 'resize' && operation === 'UPDATE'),
  matchingResources: (input) => input.filter((n) => POD_RESOURCES.includes(n) || n.startsWith(HUGEPAGES) || n.startsWith(`requests.${HUGEPAGES}`) || isExtendedQuotaName(n)),
  matchesScope: podMatchesScope,
  constraints(required, pod) {
    const requiredSet = required.filter((n) => MUST_DECLARE.has(n));
    if (requiredSet.length === 0) return undefined;
    const missing = new Map<string, Set<string>>();
    const spec = obj(pod.spec);
    for (const c of [...arr(spec.containers), ...arr(spec.initContainers)]) {
      const container = obj(c);
      const resources = obj(container.resources);
      // What the container declares itself (no limits-for-requests stand-in: the rule is about declaring).
      const declared = computeUsage(parseResourceList(resources.requests), parseResourceList(resources.limits));
      for (const name of requiredSet) {
        if (declared[name]) continue;
        if (!missing.has(name)) missing.set(name, new Set());
        missing.get(name)!.add(str(container.name));
      }
    }
    if (missing.size === 0) return undefined;
    const parts = [...missing.keys()].sort().map((name) => `${name} for: ${[...missing.get(name)!].sort().join(',')}`);
    return `must specify ${parts.join('; ')}`;
  },
  usage(pod, now) {
    const result: ResourceList = {'count/pods': count(1)};
    if (!podCountsForQuota(pod, now)) return result;
    return add(result, computeUsage(podAggregate(pod, 'requests'), podAggregate(pod, 'limits')));
  },
};

// ---------------------------------------------------------------------------------------------
// Services.

const SERVICE_RESOURCES = ['count/services', 'services', 'services.nodeports', 'services.loadbalancers'];

export const serviceEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'services',
  scoped: false,
  // Update too: a service can change type.
  handles: (operation) => operation === 'CREATE' || operation === 'UPDATE',
  matchingResources: (input) => input.filter((n) => SERVICE_RESOURCES.includes(n)),
  matchesScope: () => false,
  constraints: () => undefined,
  usage(service) {
    const spec = obj(service.spec);
    const ports = arr(spec.ports);
    const result: ResourceList = {'count/services': count(1), services: count(1), 'services.loadbalancers': count(0), 'services.nodeports': count(0)};
    if (spec.type === 'NodePort') result['services.nodeports'] = count(ports.length);
    if (spec.type === 'LoadBalancer') {
      // With node port allocation turned off only the ports given a node port explicitly count.
      const nodePorts = spec.allocateLoadBalancerNodePorts === false ? ports.filter((p) => typeof obj(p).nodePort === 'number' && obj(p).nodePort !== 0).length : ports.length;
      result['services.nodeports'] = count(nodePorts);
      result['services.loadbalancers'] = count(1);
    }
    return result;
  },
};

// ---------------------------------------------------------------------------------------------
// Persistent volume claims.

const PVC_RESOURCES = ['persistentvolumeclaims', 'requests.storage'];

/** `.storageclass.storage.<domain>/`: quota names per storage class are `<class><suffix><resource>`. */
export const storageClassSuffix = (): string => `.storageclass.${names().groups.storage}/`;

function claimClass(claim: JsonObject): string {
  const annotation = obj(obj(claim.metadata).annotations)[`volume.beta.${names().labelDomain}/storage-class`];
  if (typeof annotation === 'string') return annotation;
  return str(obj(claim.spec).storageClassName);
}

/** Storage is counted in whole bytes, rounded up (upstream issue 94313). */
function wholeUnits(amount: ResourceList[string]): ResourceList[string] {
  const remainder = amount.milli % 1000n;
  return remainder === 0n ? amount : {milli: amount.milli - remainder + (amount.milli > 0n ? 1000n : 0n), format: amount.format};
}

function claimStorage(claim: JsonObject): ResourceList[string] | undefined {
  const requested = parseResourceList(obj(obj(claim.spec).resources).requests).storage;
  if (!requested) return undefined;
  const allocated = parseResourceList(obj(claim.status).allocatedResources).storage;
  // A resize in progress counts at the larger of the two.
  return wholeUnits(allocated && allocated.milli > requested.milli ? allocated : requested);
}

/** The volume attributes classes a claim refers to, asked for or current. */
function claimAttributesClasses(claim: JsonObject): Set<string> {
  const status = obj(claim.status);
  const found = [str(obj(claim.spec).volumeAttributesClassName), str(status.currentVolumeAttributesClassName), str(obj(status.modifyVolumeStatus).targetVolumeAttributesClassName)];
  return new Set(found.filter((n) => n !== ''));
}

function claimMatchesScope(scope: ScopeRequirement, claim: JsonObject): boolean {
  if (scope.scopeName !== 'VolumeAttributesClass') return false;
  const classes = claimAttributesClasses(claim);
  if (scope.operator === 'Exists') return classes.size > 0;
  if (classes.size === 0) return selectorMatches(scope, undefined);
  return [...classes].some((c) => selectorMatches(scope, c));
}

export const persistentVolumeClaimEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'persistentvolumeclaims',
  scoped: true,
  handles(operation, subresource, object, oldObject) {
    if (subresource === '') return operation === 'CREATE' || operation === 'UPDATE';
    if (subresource !== 'status' || !object || !oldObject) return false;
    // A status write that changes the allocated size changes usage.
    const allocated = (o: JsonObject) => JSON.stringify(obj(obj(o.status).allocatedResources).storage ?? null);
    const classes = (o: JsonObject) => [...claimAttributesClasses(o)].sort().join(',');
    return allocated(object) !== allocated(oldObject) || classes(object) !== classes(oldObject);
  },
  matchingResources: (input) =>
    input.filter((n) => n === 'count/persistentvolumeclaims' || PVC_RESOURCES.includes(n) || PVC_RESOURCES.some((r) => n.endsWith(`${storageClassSuffix()}${r}`))),
  matchesScope: claimMatchesScope,
  constraints: () => undefined,
  usage(claim) {
    const result: ResourceList = {persistentvolumeclaims: count(1), 'count/persistentvolumeclaims': count(1)};
    const storageClass = claimClass(claim);
    if (storageClass) result[`${storageClass}${storageClassSuffix()}persistentvolumeclaims`] = count(1);
    const storage = claimStorage(claim);
    if (storage) {
      result['requests.storage'] = storage;
      if (storageClass) result[`${storageClass}${storageClassSuffix()}requests.storage`] = storage;
    }
    return result;
  },
};

// ---------------------------------------------------------------------------------------------
// The registry.

/** Kinds counted under a legacy name besides count/<resource> (upstream's legacyObjectCountAliases). */
const LEGACY_ALIASES: Record<string, string> = {
  configmaps: 'configmaps',
  resourcequotas: 'resourcequotas',
  replicationcontrollers: 'replicationcontrollers',
  secrets: 'secrets',
};

const SPECIAL: readonly QuotaEvaluator[] = [podEvaluator, serviceEvaluator, persistentVolumeClaimEvaluator];

/** The evaluator of a resource: a specific one, a legacy count, or a generic object count. */
export function evaluatorFor(group: string, resource: string): QuotaEvaluator {
  const special = SPECIAL.find((e) => e.group === group && e.resource === resource);
  if (special) return special;
  const alias = group === '' ? LEGACY_ALIASES[resource] : undefined;
  return objectCountEvaluator(group, resource, alias);
}

/** The evaluators whose usage the controller can always compute (the others are count/<resource> of whatever a quota names). */
export function builtinEvaluators(): QuotaEvaluator[] {
  return [...SPECIAL, ...Object.keys(LEGACY_ALIASES).map((r) => evaluatorFor('', r))];
}

/**
 * Whether the quota applies to the object (upstream's generic.Matches): it limits at least one
 * resource the evaluator tracks, and the object is in every one of its scopes.
 */
export function quotaMatches(evaluator: QuotaEvaluator, quota: JsonObject, object: JsonObject): boolean {
  const hard = Object.keys(parseResourceList(obj(quota.status).hard));
  if (evaluator.matchingResources(hard).length === 0) return false;
  return scopeSelectorsOf(quota).every((scope) => evaluator.matchesScope(scope, object));
}

/** The scopes of `scopes` the object is in (kinds without scopes: none). */
export function matchingScopes(evaluator: QuotaEvaluator, object: JsonObject, scopes: readonly ScopeRequirement[]): ScopeRequirement[] {
  if (!evaluator.scoped) return [];
  return scopes.filter((scope) => evaluator.matchesScope(scope, object));
}

/** The limited scopes no matching quota scope covers (compared by scope name, as upstream). */
export function uncoveredScopes(evaluator: QuotaEvaluator, limited: readonly ScopeRequirement[], matched: readonly ScopeRequirement[]): ScopeRequirement[] {
  if (!evaluator.scoped) return [];
  return limited.filter((scope) => !matched.some((m) => m.scopeName === scope.scopeName));
}
