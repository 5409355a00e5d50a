/**
 * Per-kind behaviour of the generic registry (upstream's RESTCreateStrategy/RESTUpdateStrategy/
 * RESTDeleteStrategy per type): defaults, status handling, generation tracking, validation,
 * field-selector fields and graceful deletion. Pure: objects in, objects or field errors out.
 */
import { names } from '../../../api/names.js';
import type { ResourceInfo } from '../../../api/resources.js';
import { field, type FieldError } from '../../../api/status.js';
import { validateObjectMeta, validateObjectMetaUpdate, type NameRule } from '../../../api/validation.js';
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../../../patch/types.js';
import { labelSelectorString, matchesLabels, parseLabelSelector, type LabelSelectorObject } from '../../../api/selectors.js';
import { stringAt, valueAt } from './objects.js';
import { withCatalogRules } from './catalog-strategies.js';

export interface Strategy {
  nameRule: NameRule;
  tracksGeneration: boolean;
  /** PUT on a missing object creates it. */
  allowCreateOnUpdate: boolean;
  /** PUT without metadata.resourceVersion is allowed (false for custom resources). */
  allowUnconditionalUpdate: boolean;
  /** DELETE answers the deleted object instead of a Success Status. */
  returnDeletedObject: boolean;
  /** Defaults and server-owned fields on create. */
  prepareForCreate(object: JsonObject): void;
  /** Carries over what the main resource may not change (status, when a status subresource exists). */
  prepareForUpdate(object: JsonObject, previous: JsonObject): void;
  validate(object: JsonObject): FieldError[];
  validateUpdate(object: JsonObject, previous: JsonObject): FieldError[];
  /** Whether a main-resource update bumps metadata.generation. */
  generationChanged(object: JsonObject, previous: JsonObject): boolean;
  /** Field-selector values of an object. */
  fields(object: JsonObject): Record<string, string>;
  /** The grace period of a DELETE, for kinds with graceful deletion (pods); undefined: delete at once. */
  gracePeriod?(object: JsonObject, requested: number | undefined): number;
}

const without = (object: JsonObject, ...keys: string[]): JsonObject => {
  const copy: JsonObject = { ...object };
  for (const k of keys) delete copy[k];
  return copy;
};

function metaFields(object: JsonObject, namespaced: boolean): Record<string, string> {
  const fields: Record<string, string> = { 'metadata.name': stringAt(object, 'metadata', 'name') ?? '' };
  if (namespaced) fields['metadata.namespace'] = stringAt(object, 'metadata', 'namespace') ?? '';
  return fields;
}

const str = (v: JsonValue | undefined) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));

/** Extra field-selector fields per kind (upstream's GetAttrs / AddFieldLabelConversionFunc). */
const KIND_FIELDS: Record<string, (o: JsonObject) => Record<string, string>> = {
  Pod: (o) => ({
    'spec.nodeName': str(valueAt(o, 'spec', 'nodeName')),
    'spec.restartPolicy': str(valueAt(o, 'spec', 'restartPolicy')),
    'spec.schedulerName': str(valueAt(o, 'spec', 'schedulerName')),
    'spec.serviceAccountName': str(valueAt(o, 'spec', 'serviceAccountName')),
    'spec.hostNetwork': String(valueAt(o, 'spec', 'hostNetwork') === true),
    'status.phase': str(valueAt(o, 'status', 'phase')),
    'status.podIP': str(valueAt(o, 'status', 'podIP')),
    'status.nominatedNodeName': str(valueAt(o, 'status', 'nominatedNodeName')),
  }),
  Event: (o) => ({
    'involvedObject.kind': str(valueAt(o, 'involvedObject', 'kind')),
    'involvedObject.namespace': str(valueAt(o, 'involvedObject', 'namespace')),
    'involvedObject.name': str(valueAt(o, 'involvedObject', 'name')),
    'involvedObject.uid': str(valueAt(o, 'involvedObject', 'uid')),
    'involvedObject.apiVersion': str(valueAt(o, 'involvedObject', 'apiVersion')),
    'involvedObject.resourceVersion': str(valueAt(o, 'involvedObject', 'resourceVersion')),
    'involvedObject.fieldPath': str(valueAt(o, 'involvedObject', 'fieldPath')),
    reason: str(o.reason),
    reportingComponent: str(o.reportingComponent),
    source: str(valueAt(o, 'source', 'component')),
    type: str(o.type),
  }),
  Secret: (o) => ({ type: str(o.type) }),
  Namespace: (o) => ({ 'status.phase': str(valueAt(o, 'status', 'phase')) }),
  Node: (o) => ({ 'spec.unschedulable': String(valueAt(o, 'spec', 'unschedulable') === true) }),
  ReplicationController: (o) => ({ 'status.replicas': str(valueAt(o, 'status', 'replicas') ?? 0) }),
  ReplicaSet: (o) => ({ 'status.replicas': str(valueAt(o, 'status', 'replicas') ?? 0) }),
  Job: (o) => ({ 'status.successful': str(valueAt(o, 'status', 'succeeded') ?? 0) }),
  Service: (o) => ({ 'spec.clusterIP': str(valueAt(o, 'spec', 'clusterIP')), 'spec.type': str(valueAt(o, 'spec', 'type')) }),
};

/** Field names a field selector may use on a resource. */
export function supportedFields(info: ResourceInfo): string[] {
  const sample: JsonObject = { metadata: {} };
  return Object.keys({ ...metaFields(sample, info.namespaced), ...(KIND_FIELDS[info.kind]?.(sample) ?? {}) });
}

// -------------------------------------------------------------------------------------------
// Defaults (a subset of upstream's SetDefaults_* that clients and controllers read back).

/**
 * A Secret's write-only `stringData` joins `data` (base64), its keys winning, and is never stored,
 * as upstream's conversion of Secrets does.
 */
function mergeStringData(secret: JsonObject): void {
  const stringData = secret.stringData;
  if (stringData === undefined) return;
  delete secret.stringData;
  if (!isJsonObject(stringData)) return;
  const data: JsonObject = isJsonObject(secret.data) ? secret.data : {};
  for (const [key, value] of Object.entries(stringData)) data[key] = Buffer.from(typeof value === 'string' ? value : String(value), 'utf8').toString('base64');
  secret.data = data;
}

function setDefault(object: JsonObject, key: string, value: JsonValue): void {
  if (object[key] === undefined) object[key] = value;
}

function defaultContainer(container: JsonValue): void {
  if (!isJsonObject(container)) return;
  const image = typeof container.image === 'string' ? container.image : '';
  const tag = image.includes('@') ? 'digest' : (image.split('/').pop() ?? '').split(':')[1];
  setDefault(container, 'imagePullPolicy', tag === undefined || tag === 'latest' ? 'Always' : 'IfNotPresent');
  setDefault(container, 'terminationMessagePath', '/dev/termination-log');
  setDefault(container, 'terminationMessagePolicy', 'File');
  setDefault(container, 'resources', {});
  for (const port of Array.isArray(container.ports) ? container.ports : []) if (isJsonObject(port)) setDefault(port, 'protocol', 'TCP');
}

function defaultPodSpec(spec: JsonValue | undefined): void {
  if (!isJsonObject(spec)) return;
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'securityContext', {});
  setDefault(spec, 'schedulerName', 'default-scheduler');
  for (const list of ['containers', 'initContainers']) for (const c of Array.isArray(spec[list]) ? (spec[list] as JsonValue[]) : []) defaultContainer(c);
}

function defaultTemplate(object: JsonObject): void {
  defaultPodSpec(valueAt(object, 'spec', 'template', 'spec'));
}

/**
 * Upstream's SetDefaults_Pod: a container (or init container) with a limit and no request for a
 * resource requests its limit. Pods only, not templates.
 */
export function defaultPodRequestsFromLimits(pod: JsonObject): void {
  const spec = pod.spec;
  if (!isJsonObject(spec)) return;
  for (const list of ['containers', 'initContainers']) {
    for (const c of Array.isArray(spec[list]) ? (spec[list] as JsonValue[]) : []) {
      if (!isJsonObject(c) || !isJsonObject(c.resources) || !isJsonObject(c.resources.limits)) continue;
      const requests = isJsonObject(c.resources.requests) ? c.resources.requests : (c.resources.requests = {});
      for (const [key, value] of Object.entries(c.resources.limits)) if (!(key in requests)) requests[key] = value;
    }
  }
}

/**
 * Upstream's SetDefaults_LimitRangeItem, for Container items: the default limit falls back to max,
 * the default request to the default limit, then to min.
 */
function defaultLimitRange(o: JsonObject): void {
  const limits = isJsonObject(o.spec) && Array.isArray(o.spec.limits) ? o.spec.limits : [];
  for (const item of limits) {
    if (!isJsonObject(item) || item.type !== 'Container') continue;
    const defaults = isJsonObject(item.default) ? item.default : (item.default = {});
    const requests = isJsonObject(item.defaultRequest) ? item.defaultRequest : (item.defaultRequest = {});
    for (const [k, v] of Object.entries(isJsonObject(item.max) ? item.max : {})) if (!(k in defaults)) defaults[k] = v;
    for (const [k, v] of Object.entries(defaults)) if (!(k in requests)) requests[k] = v;
    for (const [k, v] of Object.entries(isJsonObject(item.min) ? item.min : {})) if (!(k in requests)) requests[k] = v;
  }
}

const DEFAULTS: Record<string, (o: JsonObject) => void> = {
  LimitRange: defaultLimitRange,
  Pod: (o) => {
    defaultPodRequestsFromLimits(o);
    defaultPodSpec(o.spec);
    o.status = { phase: 'Pending', qosClass: 'BestEffort' };
  },
  Namespace: (o) => {
    o.spec = { finalizers: [names().namespaceFinalizer] };
    o.status = { phase: 'Active' };
  },
  Deployment: (o) => {
    const spec = isJsonObject(o.spec) ? o.spec : (o.spec = {});
    setDefault(spec, 'replicas', 1);
    setDefault(spec, 'strategy', { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    setDefault(spec, 'revisionHistoryLimit', 10);
    setDefault(spec, 'progressDeadlineSeconds', 600);
    defaultTemplate(o);
  },
  ReplicaSet: (o) => {
    setDefault(isJsonObject(o.spec) ? o.spec : (o.spec = {}), 'replicas', 1);
    defaultTemplate(o);
  },
  ReplicationController: (o) => {
    const spec = isJsonObject(o.spec) ? o.spec : (o.spec = {});
    setDefault(spec, 'replicas', 1);
    const templateLabels = valueAt(spec, 'template', 'metadata', 'labels');
    if (spec.selector === undefined && isJsonObject(templateLabels)) spec.selector = { ...templateLabels };
    defaultTemplate(o);
  },
  StatefulSet: (o) => {
    const spec = isJsonObject(o.spec) ? o.spec : (o.spec = {});
    setDefault(spec, 'replicas', 1);
    setDefault(spec, 'podManagementPolicy', 'OrderedReady');
    setDefault(spec, 'updateStrategy', { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
    setDefault(spec, 'revisionHistoryLimit', 10);
    defaultTemplate(o);
  },
  DaemonSet: (o) => {
    const spec = isJsonObject(o.spec) ? o.spec : (o.spec = {});
    setDefault(spec, 'updateStrategy', { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    setDefault(spec, 'revisionHistoryLimit', 10);
    defaultTemplate(o);
  },
  Job: (o) => {
    const spec = isJsonObject(o.spec) ? o.spec : (o.spec = {});
    // Upstream: completions default to 1 only when parallelism is unset too; a job with parallelism
    // and no completions is a work queue (done once a pod succeeded and none runs).
    if (spec.completions === undefined && spec.parallelism === undefined) spec.completions = 1;
    setDefault(spec, 'parallelism', 1);
    setDefault(spec, 'backoffLimit', 6);
    setDefault(spec, 'completionMode', 'NonIndexed');
    setDefault(spec, 'suspend', false);
    // The job controller finds its pods by a selector on the job's uid (upstream generates it too).
    const uid = stringAt(o, 'metadata', 'uid') ?? '';
    const name = stringAt(o, 'metadata', 'name') ?? '';
    if (spec.manualSelector !== true && uid) {
      const n = names();
      const generated = { [n.labels.jobControllerUid]: uid };
      spec.selector = { matchLabels: generated };
      const template = isJsonObject(spec.template) ? spec.template : (spec.template = {});
      const meta = isJsonObject(template.metadata) ? template.metadata : (template.metadata = {});
      meta.labels = {
        ...(isJsonObject(meta.labels) ? meta.labels : {}),
        [n.labels.jobControllerUid]: uid, [n.labels.jobName]: name, 'controller-uid': uid, 'job-name': name,
      };
    }
    const template = valueAt(spec, 'template', 'spec');
    defaultPodSpec(template);
    if (isJsonObject(template) && template.restartPolicy === 'Always') delete template.restartPolicy;
  },
  CronJob: (o) => {
    const spec = isJsonObject(o.spec) ? o.spec : (o.spec = {});
    setDefault(spec, 'concurrencyPolicy', 'Allow');
    setDefault(spec, 'suspend', false);
    setDefault(spec, 'successfulJobsHistoryLimit', 3);
    setDefault(spec, 'failedJobsHistoryLimit', 1);
  },
  Service: (o) => {
    const spec = isJsonObject(o.spec) ? o.spec : (o.spec = {});
    setDefault(spec, 'type', 'ClusterIP');
    setDefault(spec, 'sessionAffinity', 'None');
    for (const port of Array.isArray(spec.ports) ? spec.ports : []) {
      if (!isJsonObject(port)) continue;
      setDefault(port, 'protocol', 'TCP');
      if (port.port !== undefined) setDefault(port, 'targetPort', port.port);
    }
    o.status = { loadBalancer: {} };
  },
  Secret: (o) => setDefault(o, 'type', 'Opaque'),
};

// -------------------------------------------------------------------------------------------
// Validation beyond metadata: the required fields clients trip over most.

function validateContainers(spec: JsonValue | undefined, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const containers = isJsonObject(spec) ? spec.containers : undefined;
  if (!Array.isArray(containers) || containers.length === 0) return [field.required(`${path}.containers`)];
  const seen = new Set<string>();
  containers.forEach((c, i) => {
    const name = isJsonObject(c) ? c.name : undefined;
    if (typeof name !== 'string' || name === '') errors.push(field.required(`${path}.containers[${i}].name`));
    else if (seen.has(name)) errors.push(field.duplicate(`${path}.containers[${i}].name`, name));
    else seen.add(name);
    const image = isJsonObject(c) ? c.image : undefined;
    if (typeof image !== 'string' || image.trim() === '') errors.push(field.required(`${path}.containers[${i}].image`));
  });
  return errors;
}

function validateSelectorTemplate(object: JsonObject): FieldError[] {
  const selector = valueAt(object, 'spec', 'selector');
  if (!isJsonObject(selector)) return [field.required('spec.selector')];
  const errors: FieldError[] = [];
  const text = labelSelectorString(selector as LabelSelectorObject);
  if (text === '') errors.push(field.invalid('spec.selector', selector, 'empty selector is invalid for deployment'));
  const labels = valueAt(object, 'spec', 'template', 'metadata', 'labels');
  try {
    if (text !== '' && !matchesLabels(parseLabelSelector(text), isJsonObject(labels) ? (labels as Record<string, string>) : {})) {
      errors.push(field.invalid('spec.template.metadata.labels', labels ?? {}, '`selector` does not match template `labels`'));
    }
  } catch {
    errors.push(field.invalid('spec.selector', selector, 'invalid label selector'));
  }
  return [...errors, ...validateContainers(valueAt(object, 'spec', 'template', 'spec'), 'spec.template.spec')];
}

const VALIDATE: Record<string, (o: JsonObject) => FieldError[]> = {
  Pod: (o) => validateContainers(o.spec, 'spec'),
  Deployment: validateSelectorTemplate,
  ReplicaSet: validateSelectorTemplate,
  StatefulSet: validateSelectorTemplate,
  DaemonSet: validateSelectorTemplate,
  Job: (o) => validateContainers(valueAt(o, 'spec', 'template', 'spec'), 'spec.template.spec'),
  PriorityClass: (o) => (typeof o.value === 'number' ? [] : [field.required('value')]),
};

// -------------------------------------------------------------------------------------------

const NAME_RULES: Record<string, NameRule> = {
  Namespace: 'label',
  Service: 'dns1035',
  Role: 'pathSegment',
  ClusterRole: 'pathSegment',
  RoleBinding: 'pathSegment',
  ClusterRoleBinding: 'pathSegment',
  // `<version>.<group>`, and `v1.` for the core group (upstream validates it as a path segment).
  APIService: 'pathSegment',
  IPAddress: 'ipAddress',
  LeaseCandidate: 'configMapKey',
};

const TRACKS_GENERATION = new Set([
  'Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'ReplicationController', 'CustomResourceDefinition',
]);
const CREATE_ON_UPDATE = new Set(['Endpoints', 'Event', 'Lease', 'Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);
const RETURNS_DELETED = new Set(['Pod', 'Service']);

export function strategyFor(info: ResourceInfo): Strategy {
  const hasStatus = info.subresources.some((s) => s.name === 'status');
  const custom = info.custom === true;
  const kindFields = KIND_FIELDS[info.kind];
  const strategy: Strategy = {
    nameRule: NAME_RULES[info.kind] ?? 'subdomain',
    tracksGeneration: custom || TRACKS_GENERATION.has(info.kind),
    allowCreateOnUpdate: !custom && CREATE_ON_UPDATE.has(info.kind),
    allowUnconditionalUpdate: !custom,
    returnDeletedObject: RETURNS_DELETED.has(info.kind),
    prepareForCreate(object) {
      // Status is the controllers' to write; nodes alone may register with theirs (upstream).
      if (hasStatus && info.kind !== 'Node') delete object.status;
      if (!custom) DEFAULTS[info.kind]?.(object);
      if (info.kind === 'Secret' && !custom) mergeStringData(object);
    },
    prepareForUpdate(object, previous) {
      if (info.kind === 'Secret' && !custom) mergeStringData(object);
      if (info.kind === 'LimitRange' && !custom) defaultLimitRange(object);
      if (hasStatus) {
        if (previous.status === undefined) delete object.status;
        else object.status = previous.status;
      }
      if (info.kind === 'Namespace') object.spec = previous.spec ?? {};
    },
    validate(object) {
      const errors = validateObjectMeta(object, strategy.nameRule);
      return [...errors, ...(VALIDATE[info.kind]?.(object) ?? [])];
    },
    validateUpdate(object, previous) {
      const errors = validateObjectMetaUpdate(object, previous);
      return [...errors, ...validateObjectMeta(object, strategy.nameRule), ...(VALIDATE[info.kind]?.(object) ?? [])];
    },
    generationChanged(object, previous) {
      if (custom) return !jsonEqual(without(object, 'metadata', 'status'), without(previous, 'metadata', 'status'));
      if (!jsonEqual(object.spec, previous.spec)) return true;
      // Deployments also bump on annotation changes (rollback annotations, upstream).
      return info.kind === 'Deployment' && !jsonEqual(valueAt(object, 'metadata', 'annotations') ?? {}, valueAt(previous, 'metadata', 'annotations') ?? {});
    },
    fields(object) {
      return { ...metaFields(object, info.namespaced), ...(kindFields?.(object) ?? {}) };
    },
  };
  if (info.kind === 'Pod') strategy.gracePeriod = podGracePeriod;
  if (info.kind === 'CustomResourceDefinition') strategy.generationChanged = (o, p) => !jsonEqual(without(o, 'metadata', 'status'), without(p, 'metadata', 'status'));
  return withCatalogRules(info, strategy);
}

/**
 * Upstream's pod CheckGracefulDelete: the requested period, else the pod's
 * terminationGracePeriodSeconds (30); 0 for pods never scheduled or already finished.
 */
export function podGracePeriod(pod: JsonObject, requested: number | undefined): number {
  let grace = requested ?? (typeof valueAt(pod, 'spec', 'terminationGracePeriodSeconds') === 'number'
    ? (valueAt(pod, 'spec', 'terminationGracePeriodSeconds') as number)
    : 30);
  if (requested !== undefined && requested < 0) grace = 1;
  const phase = stringAt(pod, 'status', 'phase');
  if (!stringAt(pod, 'spec', 'nodeName') || phase === 'Failed' || phase === 'Succeeded') grace = 0;
  return grace;
}
