/**
 * PodSecurity's decision for one request, as upstream's pod-security-admission/admission
 * (admission.go, response.go):
 * - a pod is checked against its namespace's enforce level (refused with the violations), audit
 *   level (an audit annotation) and warn level (a warning, unless refused);
 * - a workload (deployment, job, ...) only gets the audit annotation and the warning for its pod
 *   template: it is never refused, its pods will be;
 * - a namespace's PodSecurity labels must parse; when an update makes its enforce level stricter, the
 *   existing pods are checked against it and the violations come back as warnings;
 * - exempt users, namespaces and runtime classes skip the checks (with an `exempt` audit annotation).
 * The namespace and its pods come through injected functions; everything else is pure.
 */
import {ApiError, fieldErrorText, forbidden, internalError, invalid} from '../../../../../api/status.js';
import {names} from '../../../../../api/names.js';
import {isJsonObject, type JsonObject, type JsonValue} from '../../../../../patch/types.js';
import {labelsOf, nameOf, stringAt, valueAt} from '../../../rest/objects.js';
import type {Clock} from '../../../../shared/clock.js';
import type {ContainerView, PodMetadata, PodSpecView} from './pod-view.js';
import type {PodSecurityConfiguration} from './configuration.js';
import {Evaluator, forbiddenDetail, forbiddenReason, type AggregateResult} from './evaluator.js';
import {
  compareLevels,
  equivalentPolicies,
  fullyPrivileged,
  LATEST,
  levelVersionString,
  podSecurityLabels,
  policyToEvaluate,
  sameLevelVersion,
  sameVersion,
  type AuditAnnotationKey,
  type LevelVersion,
  type Policy,
} from './levels.js';

export interface PodSecurityRequest {
  operation: 'CREATE' | 'UPDATE';
  /** The API group and plural of the resource (`apps`, `deployments`). */
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  object?: JsonObject;
  oldObject?: JsonObject;
  username: string;
}

export interface PodSecurityDecision {
  /** Set when the request is refused. */
  error?: ApiError;
  readonly warnings: readonly string[];
  /** Keys without their `pod-security.<domain>/` prefix. */
  readonly auditAnnotations: Readonly<Partial<Record<AuditAnnotationKey, string>>>;
}

export interface PodSecurityDeps {
  /** The namespace's labels; throws (or gives undefined) when it cannot be read. */
  namespaceLabels(name: string): Promise<Record<string, string> | undefined>;
  /** The pods of a namespace, checked when its enforce level gets stricter. */
  listPods(namespace: string): Promise<JsonObject[]>;
  clock: Clock;
}

/** Upstream's bounds on checking a namespace's pods (a label change must stay a quick request). */
export const NAMESPACE_MAX_PODS_TO_CHECK = 3000;
export const NAMESPACE_POD_CHECK_TIMEOUT_MS = 1000;

/** Pod subresources that cannot change what the checks look at. */
const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);

/** The resources that embed a pod template, and where (upstream's DefaultPodSpecExtractor). */
const POD_TEMPLATE_PATHS: Record<string, readonly string[]> = {
  '/replicationcontrollers': ['spec', 'template'],
  '/podtemplates': ['template'],
  'apps/replicasets': ['spec', 'template'],
  'apps/deployments': ['spec', 'template'],
  'apps/statefulsets': ['spec', 'template'],
  'apps/daemonsets': ['spec', 'template'],
  'batch/jobs': ['spec', 'template'],
  'batch/cronjobs': ['spec', 'jobTemplate', 'spec', 'template'],
};

/** Whether PodSecurity looks at a resource at all: pods, namespaces and the pod template holders. */
export function appliesTo(group: string, resource: string): boolean {
  return (group === '' && (resource === 'pods' || resource === 'namespaces')) || `${group}/${resource}` in POD_TEMPLATE_PATHS;
}

/** Shared by every request it answers, so frozen. */
const ALLOWED: PodSecurityDecision = Object.freeze({warnings: Object.freeze([]), auditAnnotations: Object.freeze({})});
const exempt = (reason: 'user' | 'namespace' | 'runtimeClass'): PodSecurityDecision => ({warnings: [], auditAnnotations: {exempt: reason}});

export class PodSecurityAdmission {
  private readonly exemptNamespaces: ReadonlySet<string>;
  private readonly exemptUsers: ReadonlySet<string>;
  private readonly exemptRuntimeClasses: ReadonlySet<string>;

  constructor(
    readonly configuration: PodSecurityConfiguration,
    private readonly deps: PodSecurityDeps,
    readonly evaluator: Evaluator = new Evaluator(),
  ) {
    this.exemptNamespaces = new Set(configuration.exemptions.namespaces);
    this.exemptUsers = new Set(configuration.exemptions.usernames);
    this.exemptRuntimeClasses = new Set(configuration.exemptions.runtimeClasses);
  }

  async validate(request: PodSecurityRequest): Promise<PodSecurityDecision> {
    if (request.group === '' && request.resource === 'namespaces') return this.validateNamespace(request);
    if (request.group === '' && request.resource === 'pods') return this.validatePod(request);
    if (appliesTo(request.group, request.resource)) return this.validatePodController(request);
    return ALLOWED;
  }

  private policyOf(labels: Record<string, string> | undefined) {
    return policyToEvaluate(labels, this.configuration.defaults);
  }

  private async validateNamespace(request: PodSecurityRequest): Promise<PodSecurityDecision> {
    if (request.subresource !== '' || !request.object) return ALLOWED;
    const name = request.name || nameOf(request.object);
    const labels = labelsOf(request.object);
    const next = this.policyOf(labels);
    const refuse = (): PodSecurityDecision => ({warnings: [], auditAnnotations: {}, error: invalid({group: '', kind: 'Namespace'}, name, next.errors)});
    if (request.operation === 'CREATE') {
      if (next.errors.length) return refuse();
      return this.exemptNamespaceDecision(name, next.policy, labels);
    }
    const previous = this.policyOf(request.oldObject ? labelsOf(request.oldObject) : undefined);
    // Labels that were already wrong may stay wrong, as long as they stay the same.
    const sameErrors = previous.errors.length > 0 && JSON.stringify(previous.errors) === JSON.stringify(next.errors);
    if (next.errors.length && !sameErrors) return refuse();
    // No need to look at the pods when enforce did not change, became privileged, or got laxer at the same version.
    const {enforce} = next.policy;
    if (sameLevelVersion(enforce, previous.policy.enforce) || enforce.level === 'privileged') return ALLOWED;
    if (sameVersion(enforce.version, previous.policy.enforce.version) && compareLevels(enforce.level, previous.policy.enforce.level) < 1) return ALLOWED;
    if (this.exemptNamespaces.has(name)) return this.exemptNamespaceDecision(name, next.policy, labels);
    return {warnings: await this.evaluatePodsInNamespace(name, enforce), auditAnnotations: {}};
  }

  /** An exempt namespace given a stricter policy is told that its labels have no effect. */
  private exemptNamespaceDecision(name: string, policy: Policy, labels: Record<string, string>): PodSecurityDecision {
    if (!this.exemptNamespaces.has(name) || fullyPrivileged(policy) || equivalentPolicies(policy, this.configuration.defaults)) return ALLOWED;
    const keys = podSecurityLabels();
    const modes: string[] = [];
    const describe = (mode: string, lv: LevelVersion, levelKey: string, versionKey: string) => {
      if (lv.level !== 'privileged' && (levelKey in labels || versionKey in labels)) modes.push(`${mode}=${levelVersionString(lv)}`);
    };
    describe('enforce', policy.enforce, keys.enforce, keys.enforceVersion);
    describe('audit', policy.audit, keys.audit, keys.auditVersion);
    describe('warn', policy.warn, keys.warn, keys.warnVersion);
    return {warnings: [`namespace ${JSON.stringify(name)} is exempt from Pod Security, and the policy (${modes.join(', ')}) will be ignored`], auditAnnotations: {}};
  }

  private async validatePod(request: PodSecurityRequest): Promise<PodSecurityDecision> {
    if (IGNORED_POD_SUBRESOURCES.has(request.subresource)) return ALLOWED;
    if (this.exemptNamespaces.has(request.namespace)) return exempt('namespace');
    if (this.exemptUsers.has(request.username)) return exempt('user');
    const labels = await this.namespaceLabelsOrError(request.namespace);
    if (labels instanceof ApiError) return {error: labels, warnings: [], auditAnnotations: {error: `${labels.status.message}`}};
    const {policy, errors} = this.policyOf(labels);
    if (!errors.length && fullyPrivileged(policy)) {
      return {warnings: [], auditAnnotations: {'enforce-policy': levelVersionString({level: 'privileged', version: LATEST})}};
    }
    const pod = request.object;
    if (!pod) return ALLOWED;
    if (request.operation === 'UPDATE' && request.oldObject && !isSignificantPodUpdate(pod, request.oldObject)) return ALLOWED;
    return this.evaluatePod(policy, errors.map(fieldErrorText), podParts(pod), true);
  }

  private async validatePodController(request: PodSecurityRequest): Promise<PodSecurityDecision> {
    if (request.subresource !== '') return ALLOWED;
    if (this.exemptNamespaces.has(request.namespace)) return exempt('namespace');
    if (this.exemptUsers.has(request.username)) return exempt('user');
    // A workload is never refused: a namespace that cannot be read only leaves an audit annotation.
    const labels = await this.namespaceLabelsOrError(request.namespace);
    if (labels instanceof ApiError) return {warnings: [], auditAnnotations: {error: `failed to lookup namespace ${JSON.stringify(request.namespace)}`}};
    const {policy, errors} = this.policyOf(labels);
    if (!errors.length && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return ALLOWED;
    const template = valueAt(request.object, ...POD_TEMPLATE_PATHS[`${request.group}/${request.resource}`]!);
    // A controller whose template is optional and absent (a ReplicationController) has nothing to check.
    if (!isJsonObject(template)) return ALLOWED;
    return this.evaluatePod(policy, errors.map(fieldErrorText), podParts(template), false);
  }

  private async namespaceLabelsOrError(namespace: string): Promise<Record<string, string> | ApiError> {
    try {
      const labels = await this.deps.namespaceLabels(namespace);
      if (labels) return labels;
    } catch {
      // Reported below, as upstream: an internal error naming the namespace.
    }
    return internalError(new Error(`failed to lookup namespace ${JSON.stringify(namespace)}`));
  }

  /**
   * The three modes on one pod (or pod template); enforce only for pods. A level:version evaluated
   * for one mode is reused by the next.
   */
  evaluatePod(policy: Policy, policyErrors: string[], pod: PodParts, enforce: boolean): PodSecurityDecision {
    if (typeof pod.spec.runtimeClassName === 'string' && this.exemptRuntimeClasses.has(pod.spec.runtimeClassName)) return exempt('runtimeClass');
    const auditAnnotations: Partial<Record<AuditAnnotationKey, string>> = {};
    if (policyErrors.length) {
      auditAnnotations.error = `Failed to parse policy: ${policyErrors.length === 1 ? policyErrors[0] : `[${policyErrors.join(', ')}]`}`;
    }
    const cache = new Map<string, AggregateResult>();
    const evaluate = (lv: LevelVersion): AggregateResult => {
      const key = levelVersionString(lv);
      let result = cache.get(key);
      if (!result) cache.set(key, (result = this.evaluator.evaluateAggregate(lv, pod.metadata, pod.spec)));
      return result;
    };
    let error: ApiError | undefined;
    const warnings: string[] = [];
    if (enforce) {
      auditAnnotations['enforce-policy'] = levelVersionString(policy.enforce);
      const result = evaluate(policy.enforce);
      if (!result.allowed) {
        error = forbidden({group: '', resource: 'pods'}, pod.name, `violates PodSecurity ${JSON.stringify(levelVersionString(policy.enforce))}: ${forbiddenDetail(result)}`);
      }
    }
    const audit = evaluate(policy.audit);
    if (!audit.allowed) {
      auditAnnotations['audit-violations'] = `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.audit))}: ${forbiddenDetail(audit)}`;
    }
    // No warning on a request refused anyway.
    if (!error) {
      const warn = evaluate(policy.warn);
      if (!warn.allowed) warnings.push(`would violate PodSecurity ${JSON.stringify(levelVersionString(policy.warn))}: ${forbiddenDetail(warn)}`);
    }
    return {error, warnings, auditAnnotations};
  }

  /**
   * The existing pods of a namespace against a new enforce level: one warning a kind of violation
   * (naming the first pod by name and how many others), at most 3000 pods and 1 second, one pod a
   * controller first so that a big deployment does not hide the rest.
   */
  async evaluatePodsInNamespace(namespace: string, enforce: LevelVersion): Promise<string[]> {
    const deadline = this.deps.clock.now() + NAMESPACE_POD_CHECK_TIMEOUT_MS;
    let pods: JsonObject[];
    try {
      pods = await this.deps.listPods(namespace);
    } catch {
      return ['failed to list pods while checking new PodSecurity enforce level'];
    }
    const prioritized = this.prioritizePods(pods);
    const total = prioritized.length;
    const toCheck = prioritized.slice(0, NAMESPACE_MAX_PODS_TO_CHECK);
    let checked = toCheck.length;
    const byWarning = new Map<string, {podName: string; count: number}>();
    for (let i = 0; i < toCheck.length; i++) {
      const parts = podParts(toCheck[i]!);
      const result = this.evaluator.evaluateAggregate(enforce, parts.metadata, parts.spec);
      if (!result.allowed) {
        const warning = forbiddenReason(result);
        const seen = byWarning.get(warning);
        if (!seen) byWarning.set(warning, {podName: parts.name, count: 1});
        else {
          seen.count++;
          if (parts.name < seen.podName) seen.podName = parts.name;
        }
      }
      if (this.deps.clock.now() >= deadline) {
        checked = i + 1;
        break;
      }
    }
    const warnings: string[] = [];
    if (checked < total) warnings.push(`new PodSecurity enforce level only checked against the first ${checked} of ${total} existing pods`);
    if (byWarning.size) {
      warnings.push(`existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(enforce))}`);
    }
    const podWarnings = [...byWarning].map(([warning, {podName, count}]) =>
      count === 1 ? `${podName}: ${warning}` : count === 2 ? `${podName} (and 1 other pod): ${warning}` : `${podName} (and ${count - 1} other pods): ${warning}`,
    );
    return [...warnings, ...podWarnings.sort()];
  }

  /** Pods of exempt runtime classes left out; the first pod of each controller before the other replicas. */
  private prioritizePods(pods: readonly JsonObject[]): JsonObject[] {
    const first: JsonObject[] = [];
    const replicas: JsonObject[] = [];
    const seenControllers = new Set<string>();
    for (const pod of pods) {
      const runtimeClass = stringAt(pod, 'spec', 'runtimeClassName');
      if (runtimeClass !== undefined && this.exemptRuntimeClasses.has(runtimeClass)) continue;
      const owners = valueAt(pod, 'metadata', 'ownerReferences');
      const controller = (Array.isArray(owners) ? owners : []).find((o) => isJsonObject(o) && o.controller === true);
      const uid = stringAt(controller, 'uid');
      if (controller === undefined) first.push(pod);
      else if (seenControllers.has(uid ?? '')) replicas.push(pod);
      else {
        seenControllers.add(uid ?? '');
        first.push(pod);
      }
    }
    return [...first, ...replicas];
  }
}

interface PodParts {
  name: string;
  metadata: PodMetadata;
  spec: PodSpecView;
}

/** A pod's (or a template's) name, annotations and spec, as the checks read them. */
function podParts(object: JsonObject): PodParts {
  const annotations = valueAt(object, 'metadata', 'annotations');
  const spec = valueAt(object, 'spec');
  return {
    name: nameOf(object),
    metadata: {annotations: isJsonObject(annotations) ? (annotations as Record<string, string>) : undefined},
    spec: isJsonObject(spec) ? (spec as PodSpecView) : {},
  };
}

/**
 * Whether a pod update can change the verdict: the fields the API lets change on a running pod and
 * the checks read (images are compared as upstream does, containers added or removed, the seccomp
 * container annotations, ephemeral containers added or changed).
 */
export function isSignificantPodUpdate(pod: JsonObject, oldPod: JsonObject): boolean {
  const list = (o: JsonObject, key: 'containers' | 'initContainers' | 'ephemeralContainers'): ContainerView[] => {
    const value: JsonValue | undefined = valueAt(o, 'spec', key);
    return Array.isArray(value) ? value.map((c) => (isJsonObject(c) ? (c as ContainerView) : {})) : [];
  };
  const newParts = podParts(pod);
  const oldParts = podParts(oldPod);
  const prefix = names().annotations.seccompContainerPrefix;
  const significant = (c: ContainerView, old: ContainerView) =>
    c.image !== old.image || newParts.metadata.annotations?.[prefix + c.name] !== oldParts.metadata.annotations?.[prefix + c.name];
  for (const key of ['containers', 'initContainers'] as const) {
    const now = list(pod, key);
    const before = list(oldPod, key);
    if (now.length !== before.length) return true;
    if (now.some((c, i) => significant(c, before[i]!))) return true;
  }
  const oldEphemeral = list(oldPod, 'ephemeralContainers');
  return list(pod, 'ephemeralContainers').some((c) => {
    const old = oldEphemeral.find((o) => o.name === c.name);
    return !old || significant(c, old);
  });
}
