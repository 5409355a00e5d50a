/**
 * Per-kind rules of the catalog's resources (src/api/resource-catalog), as upstream's registry
 * strategies and SetDefaults_* have them: defaults on create, what a main-resource update leaves
 * alone, generation tracking, the required fields clients trip over, and field-selector fields.
 * `withCatalogRules` wraps the generic strategy of strategies.ts. Pure.
 */
import type {ResourceInfo} from '../../../api/resources.js';
import {field, type FieldError} from '../../../api/status.js';
import {isJsonObject, jsonEqual, type JsonObject, type JsonValue} from '../../../patch/types.js';
import {DEFAULT_CPU_UTILIZATION} from './conversion.js';
import {stringAt, valueAt} from './objects.js';
import type {Strategy} from './strategies.js';
import {compilePolicy, validateBinding} from '../admission/plugins/policy/compile.js';
import {validateWebhookConfiguration} from '../admission/plugins/webhook/validation.js';
import {validateConfigMap, validateDataUpdate, validateSecret} from './validation/config-data.js';

function setDefault(object: JsonObject, key: string, value: JsonValue): void {
  if (object[key] === undefined) object[key] = value;
}
const specOf = (o: JsonObject): JsonObject => (isJsonObject(o.spec) ? o.spec : (o.spec = {}));
const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);
const objects = (v: JsonValue | undefined): JsonObject[] => list(v).filter(isJsonObject) as JsonObject[];

/** Upstream's HPA scaling rules defaults (GenerateHPAScaleUpRules / GenerateHPAScaleDownRules). */
function defaultBehavior(spec: JsonObject): void {
  const behavior = spec.behavior;
  if (!isJsonObject(behavior)) return;
  const up = isJsonObject(behavior.scaleUp) ? behavior.scaleUp : (behavior.scaleUp = {});
  setDefault(up, 'stabilizationWindowSeconds', 0);
  setDefault(up, 'selectPolicy', 'Max');
  setDefault(up, 'policies', [{type: 'Pods', value: 4, periodSeconds: 15}, {type: 'Percent', value: 100, periodSeconds: 15}]);
  const down = isJsonObject(behavior.scaleDown) ? behavior.scaleDown : (behavior.scaleDown = {});
  setDefault(down, 'selectPolicy', 'Max');
  setDefault(down, 'policies', [{type: 'Percent', value: 100, periodSeconds: 15}]);
}

function defaultWebhooks(o: JsonObject, mutating: boolean): void {
  for (const hook of objects(o.webhooks)) {
    setDefault(hook, 'failurePolicy', 'Fail');
    setDefault(hook, 'matchPolicy', 'Equivalent');
    setDefault(hook, 'namespaceSelector', {});
    setDefault(hook, 'objectSelector', {});
    setDefault(hook, 'timeoutSeconds', 10);
    if (mutating) setDefault(hook, 'reinvocationPolicy', 'Never');
    for (const rule of objects(hook.rules)) setDefault(rule, 'scope', '*');
  }
}

function defaultPolicy(o: JsonObject): void {
  const spec = specOf(o);
  setDefault(spec, 'failurePolicy', 'Fail');
  const constraints = spec.matchConstraints;
  if (isJsonObject(constraints)) {
    setDefault(constraints, 'matchPolicy', 'Equivalent');
    setDefault(constraints, 'namespaceSelector', {});
    setDefault(constraints, 'objectSelector', {});
    for (const rule of objects(constraints.resourceRules)) setDefault(rule, 'scope', '*');
  }
}

/** Keyed by `<version>/<kind>`, or `<kind>` for every version. */
const DEFAULTS: Record<string, (o: JsonObject) => void> = {
  PersistentVolume: (o) => {
    const spec = specOf(o);
    setDefault(spec, 'persistentVolumeReclaimPolicy', 'Retain');
    setDefault(spec, 'volumeMode', 'Filesystem');
    o.status = {phase: 'Pending'};
  },
  PersistentVolumeClaim: (o) => {
    setDefault(specOf(o), 'volumeMode', 'Filesystem');
    o.status = {phase: 'Pending'};
  },
  LimitRange: (o) => {
    // Upstream's SetDefaults_LimitRangeItem: a container's default limit is its max, its default request its default limit.
    for (const item of objects(specOf(o).limits)) {
      if (item.type !== 'Container') continue;
      const max = isJsonObject(item.max) ? item.max : {};
      const def = isJsonObject(item.default) ? item.default : {};
      for (const [name, value] of Object.entries(max)) if (def[name] === undefined) def[name] = value;
      if (Object.keys(def).length) item.default = def;
      const request = isJsonObject(item.defaultRequest) ? item.defaultRequest : {};
      for (const [name, value] of Object.entries(def)) if (request[name] === undefined) request[name] = value;
      const min = isJsonObject(item.min) ? item.min : {};
      for (const [name, value] of Object.entries(min)) if (request[name] === undefined) request[name] = value;
      if (Object.keys(request).length) item.defaultRequest = request;
    }
  },
  'v2/HorizontalPodAutoscaler': (o) => {
    const spec = specOf(o);
    setDefault(spec, 'minReplicas', 1);
    if (list(spec.metrics).length === 0) {
      spec.metrics = [{type: 'Resource', resource: {name: 'cpu', target: {type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION}}}];
    }
    defaultBehavior(spec);
  },
  'v1/HorizontalPodAutoscaler': (o) => setDefault(specOf(o), 'minReplicas', 1),
  PodDisruptionBudget: (o) => {
    o.status = {disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0};
  },
  NetworkPolicy: (o) => {
    const spec = specOf(o);
    setDefault(spec, 'podSelector', {});
    for (const rule of [...objects(spec.ingress), ...objects(spec.egress)]) for (const port of objects(rule.ports)) setDefault(port, 'protocol', 'TCP');
    if (spec.policyTypes === undefined) spec.policyTypes = list(spec.egress).length ? ['Ingress', 'Egress'] : ['Ingress'];
  },
  StorageClass: (o) => {
    setDefault(o, 'reclaimPolicy', 'Delete');
    setDefault(o, 'volumeBindingMode', 'Immediate');
  },
  CSIDriver: (o) => {
    const spec = specOf(o);
    setDefault(spec, 'attachRequired', true);
    setDefault(spec, 'podInfoOnMount', false);
    setDefault(spec, 'storageCapacity', false);
    setDefault(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
    setDefault(spec, 'requiresRepublish', false);
    setDefault(spec, 'seLinuxMount', false);
    setDefault(spec, 'volumeLifecycleModes', ['Persistent']);
  },
  MutatingWebhookConfiguration: (o) => defaultWebhooks(o, true),
  ValidatingWebhookConfiguration: (o) => defaultWebhooks(o, false),
  ValidatingAdmissionPolicy: defaultPolicy,
  MutatingAdmissionPolicy: (o) => {
    defaultPolicy(o);
    setDefault(specOf(o), 'reinvocationPolicy', 'Never');
  },
  FlowSchema: (o) => setDefault(specOf(o), 'matchingPrecedence', 1000),
  PriorityLevelConfiguration: (o) => {
    const limited = valueAt(o, 'spec', 'limited');
    if (!isJsonObject(limited)) return;
    setDefault(limited, 'nominalConcurrencyShares', 30);
    setDefault(limited, 'lendablePercent', 0);
    const response = isJsonObject(limited.limitResponse) ? limited.limitResponse : (limited.limitResponse = {type: 'Reject'});
    if (response.type === 'Queue' && isJsonObject(response.queuing)) {
      setDefault(response.queuing, 'queues', 64);
      setDefault(response.queuing, 'handSize', 8);
      setDefault(response.queuing, 'queueLengthLimit', 50);
    }
  },
  CertificateSigningRequest: (o) => {
    // Approval and issuance come through the approval and status subresources only.
    o.status = {};
  },
};

// -------------------------------------------------------------------------------------------------
// Validation: the required fields of upstream's validation that a client notices first.

function requireString(o: JsonObject, path: string[], errors: FieldError[]): void {
  const value = valueAt(o, ...path);
  if (typeof value !== 'string' || value === '') errors.push(field.required(path.join('.')));
}

function requireList(o: JsonObject, path: string[], errors: FieldError[]): void {
  if (list(valueAt(o, ...path)).length === 0) errors.push(field.required(path.join('.')));
}

/** The volume sources of a PersistentVolume (exactly one must be given). */
const PV_SOURCES = [
  'gcePersistentDisk', 'awsElasticBlockStore', 'hostPath', 'glusterfs', 'nfs', 'rbd', 'iscsi', 'cinder', 'cephfs', 'fc', 'flocker', 'flexVolume',
  'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'local', 'storageos', 'csi',
];

const METRIC_SOURCES: Record<string, string> = {
  ContainerResource: 'containerResource', External: 'external', Object: 'object', Pods: 'pods', Resource: 'resource',
};

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const isIp = (text: string) => IPV4.test(text) || (text.includes(':') && /^[0-9a-f:.]+$/i.test(text));

const VALIDATE: Record<string, (o: JsonObject) => FieldError[]> = {
  ConfigMap: validateConfigMap,
  Secret: validateSecret,
  PersistentVolume: (o) => {
    const errors: FieldError[] = [];
    const spec = isJsonObject(o.spec) ? o.spec : {};
    const sources = PV_SOURCES.filter((k) => spec[k] !== undefined);
    if (sources.length === 0) errors.push(field.required('spec', 'must specify a volume type'));
    else if (sources.length > 1) errors.push(field.forbidden(`spec.${sources[1]}`, 'may not specify more than 1 volume type'));
    requireList(o, ['spec', 'accessModes'], errors);
    if (!isJsonObject(valueAt(o, 'spec', 'capacity')) || valueAt(o, 'spec', 'capacity', 'storage') === undefined) errors.push(field.required('spec.capacity'));
    return errors;
  },
  PersistentVolumeClaim: (o) => {
    const errors: FieldError[] = [];
    requireList(o, ['spec', 'accessModes'], errors);
    if (valueAt(o, 'spec', 'resources', 'requests', 'storage') === undefined) errors.push(field.required("spec.resources[storage]"));
    return errors;
  },
  HorizontalPodAutoscaler: (o) => {
    const errors: FieldError[] = [];
    requireString(o, ['spec', 'scaleTargetRef', 'kind'], errors);
    requireString(o, ['spec', 'scaleTargetRef', 'name'], errors);
    const max = valueAt(o, 'spec', 'maxReplicas');
    const min = valueAt(o, 'spec', 'minReplicas');
    if (typeof max !== 'number' || max < 1) errors.push(field.invalid('spec.maxReplicas', max ?? 0, 'must be greater than or equal to 1'));
    else if (typeof min === 'number' && min > max) errors.push(field.invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
    // v2 metrics carry the source their type names (upstream's validateMetricSpec).
    objects(valueAt(o, 'spec', 'metrics')).forEach((m, i) => {
      const key = METRIC_SOURCES[String(m.type)];
      if (!key) errors.push(field.notSupported(`spec.metrics[${i}].type`, m.type ?? '', Object.keys(METRIC_SOURCES)));
      else if (!isJsonObject(m[key])) errors.push(field.required(`spec.metrics[${i}].${key}`, 'must populate information for the given metric source'));
    });
    return errors;
  },
  PodDisruptionBudget: (o) => {
    const spec = isJsonObject(o.spec) ? o.spec : {};
    if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
      return [field.invalid('spec', spec as JsonValue, 'minAvailable and maxUnavailable cannot be both set')];
    }
    return [];
  },
  Ingress: (o) => {
    if (valueAt(o, 'spec', 'defaultBackend') === undefined && list(valueAt(o, 'spec', 'rules')).length === 0) {
      return [field.invalid('spec', valueAt(o, 'spec') ?? {}, 'either `defaultBackend` or `rules` must be specified')];
    }
    return [];
  },
  IngressClass: (o) => {
    const errors: FieldError[] = [];
    requireString(o, ['spec', 'controller'], errors);
    return errors;
  },
  IPAddress: (o) => {
    const name = stringAt(o, 'metadata', 'name') ?? '';
    const errors: FieldError[] = [];
    if (name && !isIp(name)) errors.push(field.invalid('metadata.name', name, 'must be a valid IP address'));
    requireString(o, ['spec', 'parentRef', 'resource'], errors);
    requireString(o, ['spec', 'parentRef', 'name'], errors);
    return errors;
  },
  ServiceCIDR: (o) => {
    const errors: FieldError[] = [];
    requireList(o, ['spec', 'cidrs'], errors);
    return errors;
  },
  StorageClass: (o) => {
    const errors: FieldError[] = [];
    requireString(o, ['provisioner'], errors);
    return errors;
  },
  VolumeAttachment: (o) => {
    const errors: FieldError[] = [];
    requireString(o, ['spec', 'attacher'], errors);
    requireString(o, ['spec', 'nodeName'], errors);
    return errors;
  },
  VolumeAttributesClass: (o) => {
    const errors: FieldError[] = [];
    requireString(o, ['driverName'], errors);
    return errors;
  },
  CSIStorageCapacity: (o) => {
    const errors: FieldError[] = [];
    requireString(o, ['storageClassName'], errors);
    return errors;
  },
  CertificateSigningRequest: (o) => {
    const errors: FieldError[] = [];
    const request = stringAt(o, 'spec', 'request');
    if (!request) errors.push(field.required('spec.request'));
    else if (!Buffer.from(request, 'base64').toString('utf8').includes('-----BEGIN CERTIFICATE REQUEST-----')) {
      errors.push(field.invalid('spec.request', '', 'PEM block type must be CERTIFICATE REQUEST'));
    }
    requireString(o, ['spec', 'signerName'], errors);
    requireList(o, ['spec', 'usages'], errors);
    const types = objects(valueAt(o, 'status', 'conditions')).map((c) => c.type);
    if (types.includes('Approved') && types.includes('Denied')) errors.push(field.invalid('status.conditions', 'Approved', 'Approved and Denied conditions are mutually exclusive'));
    return errors;
  },
  ClusterTrustBundle: (o) => {
    const errors: FieldError[] = [];
    requireString(o, ['spec', 'trustBundle'], errors);
    return errors;
  },
  MutatingWebhookConfiguration: (o) => validateWebhookConfiguration(o, true),
  ValidatingWebhookConfiguration: (o) => validateWebhookConfiguration(o, false),
  // Policies' expressions are compiled as upstream's validation does: one that does not compile is refused.
  ValidatingAdmissionPolicy: (o) => compilePolicy(o, false).errors,
  MutatingAdmissionPolicy: (o) => compilePolicy(o, true).errors,
  ValidatingAdmissionPolicyBinding: (o) => validateBinding(o, true),
  MutatingAdmissionPolicyBinding: (o) => validateBinding(o, false),
  FlowSchema: (o) => {
    const errors: FieldError[] = [];
    requireString(o, ['spec', 'priorityLevelConfiguration', 'name'], errors);
    return errors;
  },
  PriorityLevelConfiguration: (o) => {
    const type = valueAt(o, 'spec', 'type');
    if (type !== 'Limited' && type !== 'Exempt') return [field.notSupported('spec.type', type ?? '', ['Exempt', 'Limited'])];
    return [];
  },
  RuntimeClass: (o) => {
    const errors: FieldError[] = [];
    requireString(o, ['handler'], errors);
    return errors;
  },
  APIService: (o) => {
    const errors: FieldError[] = [];
    requireString(o, ['spec', 'version'], errors);
    const name = stringAt(o, 'metadata', 'name') ?? '';
    const expected = `${stringAt(o, 'spec', 'version') ?? ''}.${stringAt(o, 'spec', 'group') ?? ''}`;
    if (name && name !== expected) errors.push(field.invalid('metadata.name', name, `must be ${JSON.stringify(expected)}`));
    return errors;
  },
  ResourceSlice: (o) => {
    const errors: FieldError[] = [];
    requireString(o, ['spec', 'driver'], errors);
    requireString(o, ['spec', 'pool', 'name'], errors);
    return errors;
  },
  LeaseCandidate: (o) => {
    const errors: FieldError[] = [];
    requireString(o, ['spec', 'leaseName'], errors);
    return errors;
  },
};

/**
 * Upstream's strict validation of an Event created through events/v1 (ValidateEventCreate): the
 * fields the new API requires, and the deprecated ones left unset. Core v1 creates keep the
 * legacy rules, and updates are not held to it (upstream's backwards compatibility).
 */
function validateEventsV1Create(o: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof o.eventTime !== 'string' || o.eventTime === '') errors.push(field.required('eventTime'));
  if (o.type !== 'Normal' && o.type !== 'Warning') errors.push(field.invalid('type', '', `has invalid value: ${typeof o.type === 'string' ? o.type : ''}`));
  for (const deprecated of ['deprecatedFirstTimestamp', 'deprecatedLastTimestamp']) {
    if (o[deprecated] !== undefined && o[deprecated] !== null) errors.push(field.invalid(deprecated, '', 'needs to be unset'));
  }
  if (typeof o.deprecatedCount === 'number' && o.deprecatedCount !== 0) errors.push(field.invalid('deprecatedCount', '', 'needs to be unset'));
  for (const required of ['reportingController', 'reportingInstance', 'action', 'reason']) requireString(o, [required], errors);
  if (typeof o.reportingInstance === 'string' && o.reportingInstance.length > 128) errors.push(field.invalid('reportingInstance', '', 'can have at most 128 characters'));
  if (typeof o.note === 'string' && Buffer.byteLength(o.note) > 1024) errors.push(field.invalid('note', '', 'can have at most 1024 characters'));
  return errors;
}

/**
 * Fields a main-resource update leaves as they were (beyond status): a CSR's spec (upstream's
 * csrStrategy keeps spec and status; approval and status have their subresources), a pod's
 * ephemeral containers (their own subresource).
 */
const KEPT_ON_UPDATE: Record<string, string[][]> = {
  CertificateSigningRequest: [['spec']],
  Pod: [['spec', 'ephemeralContainers']],
};

function keep(object: JsonObject, previous: JsonObject, path: string[]): void {
  let to: JsonObject = object;
  let from: JsonValue | undefined = previous;
  for (const key of path.slice(0, -1)) {
    from = isJsonObject(from) ? from[key] : undefined;
    if (!isJsonObject(to[key])) to[key] = {};
    to = to[key] as JsonObject;
  }
  const last = path.at(-1)!;
  const value = isJsonObject(from) ? from[last] : undefined;
  if (value === undefined) delete to[last];
  else to[last] = value;
}

type Immutable = [path: string[], error: (path: string, value: JsonValue) => FieldError];
const forbiddenUpdate = (path: string) => field.forbidden(path, `updates to ${path} are forbidden.`);
const immutable = (path: string, value: JsonValue) => field.invalid(path, value, 'field is immutable');

/** Fields upstream's ValidateXUpdate refuses to change, with its error. */
const IMMUTABLE: Record<string, Immutable[]> = {
  StorageClass: [[['parameters'], forbiddenUpdate], [['provisioner'], forbiddenUpdate], [['reclaimPolicy'], forbiddenUpdate], [['volumeBindingMode'], forbiddenUpdate]],
  RuntimeClass: [[['handler'], immutable]],
  VolumeAttachment: [[['spec'], immutable]],
  IPAddress: [[['spec', 'parentRef'], immutable]],
  ClusterTrustBundle: [[['spec', 'signerName'], immutable]],
  ResourceClaim: [[['spec'], immutable]],
  VolumeAttributesClass: [[['driverName'], immutable], [['parameters'], (path) => field.forbidden(path, 'field is immutable')]],
  PersistentVolumeClaim: [[['spec', 'accessModes'], immutable], [['spec', 'selector'], immutable], [['spec', 'storageClassName'], immutable], [['spec', 'volumeMode'], immutable]],
};

/** Update rules that compare with the stored object beyond IMMUTABLE's paths. */
const VALIDATE_UPDATE: Record<string, (o: JsonObject, previous: JsonObject) => FieldError[]> = {
  ConfigMap: (o, previous) => validateDataUpdate('ConfigMap', o, previous),
  Secret: (o, previous) => validateDataUpdate('Secret', o, previous),
};

function immutabilityErrors(info: ResourceInfo, object: JsonObject, previous: JsonObject): FieldError[] {
  const compared = rule(VALIDATE_UPDATE, info)?.(object, previous) ?? [];
  return [...compared, ...(IMMUTABLE[info.kind] ?? [])
    .filter(([path]) => !jsonEqual(valueAt(object, ...path) ?? null, valueAt(previous, ...path) ?? null))
    .map(([path, error]) => error(path.join('.'), valueAt(object, ...path) ?? null))];
}

/** Kinds whose spec changes bump metadata.generation (their status reports observedGeneration). */
const TRACKS_GENERATION = new Set([
  'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'NetworkPolicy', 'Ingress', 'ValidatingAdmissionPolicy', 'MutatingAdmissionPolicy', 'FlowSchema',
  'PriorityLevelConfiguration', 'ResourceClaim',
]);

/** Field-selector fields beyond metadata (upstream's GetAttrs/field label conversions). */
const FIELDS: Record<string, (o: JsonObject) => Record<string, string>> = {
  CertificateSigningRequest: (o) => ({'spec.signerName': stringAt(o, 'spec', 'signerName') ?? ''}),
  PersistentVolumeClaim: (o) => ({'spec.volumeName': stringAt(o, 'spec', 'volumeName') ?? ''}),
  ResourceSlice: (o) => ({'spec.nodeName': stringAt(o, 'spec', 'nodeName') ?? '', 'spec.driver': stringAt(o, 'spec', 'driver') ?? ''}),
  ClusterTrustBundle: (o) => ({'spec.signerName': stringAt(o, 'spec', 'signerName') ?? ''}),
};

function rule<T>(table: Record<string, T>, info: ResourceInfo): T | undefined {
  return table[`${info.version}/${info.kind}`] ?? table[info.kind];
}

/** The generic strategy with the catalog's rules for `info`'s kind added (unchanged for other kinds). */
export function withCatalogRules(info: ResourceInfo, strategy: Strategy): Strategy {
  if (info.custom) return strategy;
  const defaults = rule(DEFAULTS, info);
  const validate = rule(VALIDATE, info);
  const fields = rule(FIELDS, info);
  const tracks = TRACKS_GENERATION.has(info.kind);
  const kept = KEPT_ON_UPDATE[info.kind];
  const guarded = IMMUTABLE[info.kind] !== undefined || VALIDATE_UPDATE[info.kind] !== undefined;
  // (validate runs on create; validateUpdate below does not include these.)
  const createRules = info.kind === 'Event' && info.group !== '' ? validateEventsV1Create : undefined;
  if (!defaults && !validate && !fields && !tracks && !kept && !guarded && !createRules) return strategy;
  const base = {...strategy};
  return {
    ...strategy,
    tracksGeneration: strategy.tracksGeneration || tracks,
    prepareForCreate(object) {
      base.prepareForCreate(object);
      defaults?.(object);
    },
    prepareForUpdate(object, previous) {
      base.prepareForUpdate(object, previous);
      for (const path of kept ?? []) keep(object, previous, path);
    },
    validate: (object) => [...base.validate(object), ...(validate?.(object) ?? []), ...(createRules?.(object) ?? [])],
    validateUpdate: (object, previous) => [
      ...base.validateUpdate(object, previous), ...(validate?.(object) ?? []), ...immutabilityErrors(info, object, previous),
    ],
    generationChanged: (object, previous) => base.generationChanged(object, previous) || (tracks && !jsonEqual(object.spec, previous.spec)),
    fields: (object) => ({...base.fields(object), ...(fields?.(object) ?? {})}),
  };
}

/** Field names a field selector may use on a catalog resource, beyond strategies.ts's. */
export function catalogFields(info: ResourceInfo): string[] {
  return Object.keys(rule(FIELDS, info)?.({metadata: {}}) ?? {});
}
