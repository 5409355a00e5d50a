/**
 * Printer columns of the catalog's kinds (src/api/resource-catalog), as upstream's
 * pkg/printers/internalversion/printers.go prints them (and kube-aggregator's APIService table);
 * kinds upstream has no printer for get NAME and CREATED AT. Built on first use: table.ts asks
 * for them when its own table has no entry for a kind.
 */
import {names} from './names.js';
import {labelSelectorString, type LabelSelectorObject} from './selectors.js';
import {ageColumn, createdAtColumn, get, humanDuration, list, nameColumn, num, since, str, type Column} from './table.js';
import {isJsonObject, type JsonObject, type JsonValue} from '../patch/types.js';

const ACCESS_MODES: [string, string][] = [['ReadWriteOnce', 'RWO'], ['ReadOnlyMany', 'ROX'], ['ReadWriteMany', 'RWX'], ['ReadWriteOncePod', 'RWOP']];

/** Upstream's GetAccessModesAsString. */
function accessModes(modes: JsonValue | undefined): string {
  const set = new Set(list(modes).map(String));
  return ACCESS_MODES.filter(([mode]) => set.has(mode)).map(([, short]) => short).join(',');
}

/** Go's labels.FormatLabels: sorted `k=v` pairs, `<none>` for none. */
function formatLabels(labels: JsonValue | undefined): string {
  const entries = Object.entries(isJsonObject(labels) ? labels : {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length ? entries.map(([k, v]) => `${k}=${String(v)}`).join(',') : '<none>';
}

/** metav1.FormatLabelSelector: `<none>` for an empty selector. */
function formatSelector(selector: JsonValue | undefined): string {
  return (isJsonObject(selector) ? labelSelectorString(selector as LabelSelectorObject) : '') || '<none>';
}

/** An IntOrString as Go's String() prints it. */
const intOrString = (v: JsonValue | undefined, fallback: string) => (v === undefined || v === null ? fallback : String(v));
const bool = (v: JsonValue | undefined, fallback: boolean) => (typeof v === 'boolean' ? v : fallback);

const col = (name: string, description: string, cell: Column['cell'], extra: Partial<Column> = {}): Column => ({name, description, cell, ...extra});

function storageClassOfVolume(o: JsonObject, claim: boolean): string {
  const annotation = str(get(o, 'metadata', 'annotations', `volume.beta.${names().labelDomain}/storage-class`), '');
  const field = str(get(o, 'spec', 'storageClassName'), '');
  return claim ? annotation || field : field || annotation;
}

function isDefaultClass(o: JsonObject): boolean {
  const domain = names().labelDomain;
  return ['storageclass', 'storageclass.beta'].some((prefix) => get(o, 'metadata', 'annotations', `${prefix}.${domain}/is-default-class`) === 'true');
}

/** formatHPAMetrics, over the autoscaling/v2 shape (v1 objects give their CPU target). */
function hpaTargets(o: JsonObject): string {
  const cpu = get(o, 'spec', 'targetCPUUtilizationPercentage');
  if (typeof cpu === 'number' || (get(o, 'spec', 'metrics') === undefined && String(o.apiVersion ?? '').endsWith('/v1'))) {
    const current = get(o, 'status', 'currentCPUUtilizationPercentage');
    return `cpu: ${typeof current === 'number' ? `${current}%` : '<unknown>'}/${typeof cpu === 'number' ? cpu : 80}%`;
  }
  const specs = list(get(o, 'spec', 'metrics'));
  if (specs.length === 0) return '<none>';
  const statuses = list(get(o, 'status', 'currentMetrics'));
  const cells = specs.map((spec, i) => {
    const status = statuses[i];
    const value = (v: JsonValue | undefined) => (v === undefined || v === null ? '<unknown>' : String(v));
    switch (get(spec, 'type')) {
      case 'External':
      case 'Object': {
        const key = get(spec, 'type') === 'External' ? 'external' : 'object';
        const average = get(spec, key, 'target', 'averageValue');
        if (average !== undefined) return `${value(get(status, key, 'current', 'averageValue'))}/${String(average)} (avg)`;
        return `${value(get(status, key, 'current', 'value'))}/${value(get(spec, key, 'target', 'value'))}`;
      }
      case 'Pods':
        return `${value(get(status, 'pods', 'current', 'averageValue'))}/${value(get(spec, 'pods', 'target', 'averageValue'))}`;
      case 'Resource':
      case 'ContainerResource': {
        const key = get(spec, 'type') === 'Resource' ? 'resource' : 'containerResource';
        const name = str(get(spec, key, 'name'), '');
        const average = get(spec, key, 'target', 'averageValue');
        if (average !== undefined) return `${name}: ${value(get(status, key, 'current', 'averageValue'))}/${String(average)}`;
        const currentUtilization = get(status, key, 'current', 'averageUtilization');
        const target = get(spec, key, 'target', 'averageUtilization');
        return `${name}: ${typeof currentUtilization === 'number' ? `${currentUtilization}%` : '<unknown>'}/${typeof target === 'number' ? `${target}%` : '<auto>'}`;
      }
      default:
        return '<unknown type>';
    }
  });
  return cells.length > 2 ? `${cells.slice(0, 2).join(', ')} + ${cells.length - 2} more...` : cells.join(', ');
}

/** Upstream's formatHosts for ingress rules: the first three hosts, `*` for none. */
function ingressHosts(o: JsonObject): string {
  const rules = list(get(o, 'spec', 'rules'));
  const hosts = rules.map((r) => str(get(r, 'host'), '')).filter((h) => h !== '');
  if (hosts.length === 0) return '*';
  return rules.length > 3 ? `${hosts.slice(0, 3).join(',')} + ${rules.length - 3} more...` : hosts.slice(0, 3).join(',');
}

function loadBalancer(o: JsonObject, wide: boolean): string {
  const seen = [...new Set(list(get(o, 'status', 'loadBalancer', 'ingress')).map((i) => str(get(i, 'ip'), '') || str(get(i, 'hostname'), '')).filter(Boolean))].sort();
  const text = seen.join(',');
  return !wide && text.length > 16 ? `${text.slice(0, 13)}...` : text;
}

function csrCondition(o: JsonObject): string {
  const types = new Set(list(get(o, 'status', 'conditions')).map((c) => get(c, 'type')));
  let status = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) status += ',Failed';
  if (str(get(o, 'status', 'certificate'), '')) status += ',Issued';
  return status;
}

function controllerOf(o: JsonObject): string {
  const owner = list(get(o, 'metadata', 'ownerReferences')).find((r) => get(r, 'controller') === true);
  if (!owner) return '<none>';
  const apiVersion = str(get(owner, 'apiVersion'), '');
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  const kind = str(get(owner, 'kind'), '');
  return `${(group ? `${kind}.${group}` : kind).toLowerCase()}/${str(get(owner, 'name'), '')}`;
}

function paramRef(o: JsonObject): string {
  const ref = get(o, 'spec', 'paramRef');
  if (!isJsonObject(ref)) return '<unset>';
  const name = str(get(ref, 'name'), '');
  if (name) return `${str(get(ref, 'namespace'), '') || '*'}/${name}`;
  return isJsonObject(ref.selector) ? labelSelectorString(ref.selector as LabelSelectorObject) : '<unset>';
}

const paramKind = (o: JsonObject) => {
  const kind = get(o, 'spec', 'paramKind');
  return isJsonObject(kind) ? `${str(get(kind, 'apiVersion'), '')}/${str(get(kind, 'kind'), '')}` : '<unset>';
};

function quotaColumn(o: JsonObject, limits: boolean): string {
  const hard = get(o, 'status', 'hard');
  const used = get(o, 'status', 'used');
  return Object.keys(isJsonObject(hard) ? hard : {})
    .sort()
    .filter((r) => (r.split('.').length > 1 && r.split('.')[0] === 'limits') === limits)
    .map((r) => `${r}: ${String(get(used, r) ?? '0')}/${String(get(hard, r))}`)
    .join(', ');
}

function apiServiceAvailable(o: JsonObject): string {
  const condition = list(get(o, 'status', 'conditions')).find((c) => get(c, 'type') === 'Available');
  if (!condition) return 'Unknown';
  if (get(condition, 'status') === 'True') return 'True';
  return `${str(get(condition, 'status'), '')} (${str(get(condition, 'reason'), '')})`;
}

function claimState(o: JsonObject): string {
  const states: string[] = [];
  const deleted = get(o, 'metadata', 'deletionTimestamp') !== undefined;
  if (deleted) states.push('deleted');
  if (get(o, 'status', 'allocation') === undefined) {
    if (!deleted) states.push('pending');
  } else {
    states.push('allocated');
    if (list(get(o, 'status', 'reservedFor')).length) states.push('reserved');
  }
  return states.join(',');
}

const webhookColumns = (): Column[] => [
  nameColumn,
  col('Webhooks', 'Webhooks indicates the number of webhooks registered in this configuration', (o) => list(get(o, 'webhooks')).length, {type: 'integer'}),
  ageColumn,
];
const bindingColumns = (): Column[] => [
  nameColumn,
  col('PolicyName', 'PolicyName indicates the policy definition which the policy binding binded to', (o) => str(get(o, 'spec', 'policyName'), '')),
  col('ParamRef', 'ParamRef indicates the param resource which sets the configration param', paramRef),
  ageColumn,
];

function build(): Record<string, Column[]> {
  return {
    LimitRange: [nameColumn, createdAtColumn],
    PodTemplate: [
      nameColumn,
      col('Containers', 'Names of each container in the template.', (o) => list(get(o, 'template', 'spec', 'containers')).map((c) => str(get(c, 'name'), '')).join(',')),
      col('Images', 'Images referenced by each container in the template.', (o) => list(get(o, 'template', 'spec', 'containers')).map((c) => str(get(c, 'image'), '')).join(',')),
      col('Pod Labels', 'The labels for the pod template.', (o) => formatLabels(get(o, 'template', 'metadata', 'labels'))),
    ],
    PodDisruptionBudget: [
      nameColumn,
      col('Min Available', 'The minimum number of pods that must be available.', (o) => intOrString(get(o, 'spec', 'minAvailable'), 'N/A')),
      col('Max Unavailable', 'The maximum number of pods that may be unavailable.', (o) => intOrString(get(o, 'spec', 'maxUnavailable'), 'N/A')),
      col('Allowed Disruptions', 'Calculated number of pods that may be disrupted at this time.', (o) => num(get(o, 'status', 'disruptionsAllowed')), {type: 'integer'}),
      ageColumn,
    ],
    ResourceQuota: [
      nameColumn,
      col('Request', 'Request represents a minimum amount of cpu/memory that a container may consume.', (o) => quotaColumn(o, false)),
      col('Limit', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.', (o) => quotaColumn(o, true)),
      ageColumn,
    ],
    PersistentVolume: [
      nameColumn,
      col('Capacity', 'capacity is the description of the persistent volume\'s resources and capacity.', (o) => str(get(o, 'spec', 'capacity', 'storage'), '')),
      col('Access Modes', 'accessModes contains all ways the volume can be mounted.', (o) => accessModes(get(o, 'spec', 'accessModes'))),
      col('Reclaim Policy', 'persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.', (o) => str(get(o, 'spec', 'persistentVolumeReclaimPolicy'), '')),
      col('Status', 'phase indicates if a volume is available, bound to a claim, or released by a claim.', (o) => (get(o, 'metadata', 'deletionTimestamp') ? 'Terminating' : str(get(o, 'status', 'phase'), ''))),
      col('Claim', 'claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.', (o) => (isJsonObject(get(o, 'spec', 'claimRef')) ? `${str(get(o, 'spec', 'claimRef', 'namespace'), '')}/${str(get(o, 'spec', 'claimRef', 'name'), '')}` : '')),
      col('StorageClass', 'StorageClass of the pv', (o) => storageClassOfVolume(o, false)),
      col('VolumeAttributesClass', 'VolumeAttributesClass of the pv', (o) => str(get(o, 'spec', 'volumeAttributesClassName'), '<unset>')),
      col('Reason', 'reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.', (o) => str(get(o, 'status', 'reason'), '')),
      ageColumn,
      col('VolumeMode', 'volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.', (o) => str(get(o, 'spec', 'volumeMode'), '<unset>'), {priority: 1}),
    ],
    PersistentVolumeClaim: [
      nameColumn,
      col('Status', 'phase represents the current phase of PersistentVolumeClaim.', (o) => (get(o, 'metadata', 'deletionTimestamp') ? 'Terminating' : str(get(o, 'status', 'phase'), ''))),
      col('Volume', 'volumeName is the binding reference to the PersistentVolume backing this claim.', (o) => str(get(o, 'spec', 'volumeName'), '')),
      col('Capacity', 'capacity represents the actual resources of the underlying volume.', (o) => (str(get(o, 'spec', 'volumeName'), '') ? str(get(o, 'status', 'capacity', 'storage'), '0') : '')),
      col('Access Modes', 'accessModes contains the actual access modes the volume backing the PVC has.', (o) => (str(get(o, 'spec', 'volumeName'), '') ? accessModes(get(o, 'status', 'accessModes')) : '')),
      col('StorageClass', 'StorageClass of the pvc', (o) => storageClassOfVolume(o, true)),
      col('VolumeAttributesClass', 'VolumeAttributesClass of the pvc', (o) => str(get(o, 'spec', 'volumeAttributesClassName'), '<unset>')),
      ageColumn,
      col('VolumeMode', 'volumeMode defines what type of volume is required by the claim.', (o) => str(get(o, 'spec', 'volumeMode'), '<unset>'), {priority: 1}),
    ],
    ComponentStatus: [
      nameColumn,
      col('Status', 'Status of the component conditions', (o) => {
        const healthy = list(get(o, 'conditions')).find((c) => get(c, 'type') === 'Healthy');
        return healthy ? (get(healthy, 'status') === 'True' ? 'Healthy' : 'Unhealthy') : 'Unknown';
      }),
      col('Message', 'Message of the component conditions', (o) => str(get(list(get(o, 'conditions')).find((c) => get(c, 'type') === 'Healthy'), 'message'), '')),
      col('Error', 'Error of the component conditions', (o) => str(get(list(get(o, 'conditions')).find((c) => get(c, 'type') === 'Healthy'), 'error'), '')),
    ],
    ControllerRevision: [
      nameColumn,
      col('Controller', 'Controller of the object', controllerOf),
      col('Revision', 'Revision indicates the revision of the state represented by Data.', (o) => num(get(o, 'revision'))),
      ageColumn,
    ],
    HorizontalPodAutoscaler: [
      nameColumn,
      col('Reference', 'scaleTargetRef points to the target resource to scale.', (o) => `${str(get(o, 'spec', 'scaleTargetRef', 'kind'), '')}/${str(get(o, 'spec', 'scaleTargetRef', 'name'), '')}`),
      col('Targets', 'metrics contains the specifications for which to use to calculate the desired replica count.', hpaTargets),
      col('MinPods', 'minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.', (o) => (typeof get(o, 'spec', 'minReplicas') === 'number' ? String(get(o, 'spec', 'minReplicas')) : '<unset>')),
      col('MaxPods', 'maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up.', (o) => num(get(o, 'spec', 'maxReplicas'))),
      col('Replicas', 'currentReplicas is current number of replicas of pods managed by this autoscaler.', (o) => num(get(o, 'status', 'currentReplicas'))),
      ageColumn,
    ],
    Ingress: [
      nameColumn,
      col('Class', 'The name of the IngressClass resource that should be used for additional configuration', (o) => str(get(o, 'spec', 'ingressClassName'))),
      col('Hosts', 'Hosts that incoming requests are matched against before the ingress rule', ingressHosts),
      col('Address', 'Address is a list containing ingress points for the load-balancer', (o) => loadBalancer(o, false)),
      col('Ports', 'Ports of TLS configurations that open', (o) => (list(get(o, 'spec', 'tls')).length ? '80, 443' : '80')),
      ageColumn,
    ],
    IngressClass: [
      nameColumn,
      col('Controller', 'Controller that is responsible for handling this class', (o) => str(get(o, 'spec', 'controller'), '')),
      col('Parameters', 'A reference to a resource with additional parameters', (o) => {
        const p = get(o, 'spec', 'parameters');
        if (!isJsonObject(p)) return '<none>';
        const group = str(get(p, 'apiGroup'), '');
        return `${str(get(p, 'kind'), '')}${group ? `.${group}` : ''}/${str(get(p, 'name'), '')}`;
      }),
      ageColumn,
    ],
    NetworkPolicy: [nameColumn, col('Pod-Selector', 'podSelector selects the pods to which this NetworkPolicy object applies.', (o) => formatSelector(get(o, 'spec', 'podSelector'))), ageColumn],
    IPAddress: [
      nameColumn,
      col('ParentRef', 'ParentRef references the resource that an IPAddress is attached to.', (o) => {
        const ref = get(o, 'spec', 'parentRef');
        if (!isJsonObject(ref)) return '<none>';
        const group = str(get(ref, 'group'), '');
        const resource = str(get(ref, 'resource'), '');
        const namespace = str(get(ref, 'namespace'), '');
        return `${(group ? `${resource}.${group}` : resource).toLowerCase()}${namespace ? `/${namespace}` : ''}/${str(get(ref, 'name'), '')}`;
      }),
    ],
    ServiceCIDR: [nameColumn, col('CIDRs', 'CIDRs defines the IP blocks in CIDR notation.', (o) => list(get(o, 'spec', 'cidrs')).map(String).join(',')), ageColumn],
    StorageClass: [
      {...nameColumn, cell: (o) => `${str(get(o, 'metadata', 'name'), '')}${isDefaultClass(o) ? ' (default)' : ''}`},
      col('Provisioner', 'provisioner indicates the type of the provisioner.', (o) => str(get(o, 'provisioner'), '')),
      col('ReclaimPolicy', 'reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class.', (o) => str(get(o, 'reclaimPolicy'), 'Delete')),
      col('VolumeBindingMode', 'volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.', (o) => str(get(o, 'volumeBindingMode'), 'Immediate')),
      col('AllowVolumeExpansion', 'allowVolumeExpansion shows whether the storage class allow volume expand.', (o) => bool(get(o, 'allowVolumeExpansion'), false)),
      ageColumn,
    ],
    VolumeAttributesClass: [nameColumn, col('DriverName', 'Name of the CSI driver', (o) => str(get(o, 'driverName'), '')), ageColumn],
    CSIDriver: [
      nameColumn,
      col('AttachRequired', 'attachRequired indicates this CSI volume driver requires an attach operation.', (o) => bool(get(o, 'spec', 'attachRequired'), true), {type: 'boolean'}),
      col('PodInfoOnMount', 'podInfoOnMount indicates this CSI volume driver requires additional pod information.', (o) => bool(get(o, 'spec', 'podInfoOnMount'), false), {type: 'boolean'}),
      col('StorageCapacity', 'storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity.', (o) => bool(get(o, 'spec', 'storageCapacity'), false), {type: 'boolean'}),
      col('TokenRequests', 'tokenRequests indicates the CSI driver needs pods\' service account tokens.', (o) => (Array.isArray(get(o, 'spec', 'tokenRequests')) ? list(get(o, 'spec', 'tokenRequests')).map((t) => str(get(t, 'audience'), '')).join(',') : '<unset>')),
      col('RequiresRepublish', 'requiresRepublish indicates the CSI driver wants NodePublishVolume being periodically called.', (o) => bool(get(o, 'spec', 'requiresRepublish'), false), {type: 'boolean'}),
      col('Modes', 'volumeLifecycleModes defines what kind of volumes this CSI volume driver supports.', (o) => list(get(o, 'spec', 'volumeLifecycleModes')).map(String).join(',') || '<none>'),
      ageColumn,
    ],
    CSINode: [nameColumn, col('Drivers', 'Drivers indicates the number of CSI drivers registered on the node', (o) => list(get(o, 'spec', 'drivers')).length, {type: 'integer'}), ageColumn],
    CSIStorageCapacity: [
      nameColumn,
      col('StorageClassName', 'storageClassName represents the name of the StorageClass that the reported capacity applies to.', (o) => str(get(o, 'storageClassName'), '')),
      col('Capacity', 'capacity is the value reported by the CSI driver in its GetCapacityResponse.', (o) => str(get(o, 'capacity'), '<unset>')),
    ],
    VolumeAttachment: [
      nameColumn,
      col('Attacher', 'attacher indicates the name of the volume driver that MUST handle this request.', (o) => str(get(o, 'spec', 'attacher'), ''), {format: 'name'}),
      col('PV', 'persistentVolumeName represents the name of the persistent volume to attach.', (o) => str(get(o, 'spec', 'source', 'persistentVolumeName'), '')),
      col('Node', 'nodeName represents the node that the volume should be attached to.', (o) => str(get(o, 'spec', 'nodeName'), '')),
      col('Attached', 'attached indicates the volume is successfully attached.', (o) => bool(get(o, 'status', 'attached'), false), {type: 'boolean'}),
      ageColumn,
    ],
    CertificateSigningRequest: [
      nameColumn,
      ageColumn,
      col('SignerName', 'signerName indicates the requested signer, and is a qualified name.', (o) => str(get(o, 'spec', 'signerName'))),
      col('Requestor', 'username contains the name of the user that created the CertificateSigningRequest.', (o) => str(get(o, 'spec', 'username'), '')),
      col('RequestedDuration', 'expirationSeconds is the requested duration of validity of the issued certificate.', (o) => (typeof get(o, 'spec', 'expirationSeconds') === 'number' ? humanDuration(num(get(o, 'spec', 'expirationSeconds')) * 1000) : '<none>')),
      col('Condition', 'conditions applied to the request.', csrCondition),
    ],
    ClusterTrustBundle: [nameColumn, col('SignerName', 'signerName indicates the associated signer, if any.', (o) => str(get(o, 'spec', 'signerName')))],
    MutatingWebhookConfiguration: webhookColumns(),
    ValidatingWebhookConfiguration: webhookColumns(),
    ValidatingAdmissionPolicy: [
      nameColumn,
      col('Validations', 'Validations indicates the number of validation rules defined in this configuration', (o) => list(get(o, 'spec', 'validations')).length, {type: 'integer'}),
      col('ParamKind', 'ParamKind specifies the kind of resources used to parameterize this policy', paramKind),
      ageColumn,
    ],
    ValidatingAdmissionPolicyBinding: bindingColumns(),
    MutatingAdmissionPolicy: [
      nameColumn,
      col('Mutations', 'Mutation indicates the number of mutations rules defined in this configuration', (o) => list(get(o, 'spec', 'mutations')).length, {type: 'integer'}),
      col('ParamKind', 'ParamKind specifies the kind of resources used to parameterize this policy', paramKind),
      ageColumn,
    ],
    MutatingAdmissionPolicyBinding: bindingColumns(),
    FlowSchema: [
      nameColumn,
      col('PriorityLevel', '`name` is the name of the priority level configuration being referenced', (o) => str(get(o, 'spec', 'priorityLevelConfiguration', 'name'), '')),
      col('MatchingPrecedence', '`matchingPrecedence` is used to choose among the FlowSchemas that match a given request.', (o) => num(get(o, 'spec', 'matchingPrecedence'))),
      col('DistinguisherMethod', '`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema.', (o) => str(get(o, 'spec', 'distinguisherMethod', 'type'))),
      ageColumn,
      col('MissingPL', 'references a broken or non-existent PriorityLevelConfiguration', (o) => str(get(list(get(o, 'status', 'conditions')).find((c) => get(c, 'type') === 'Dangling'), 'status'), '?')),
    ],
    PriorityLevelConfiguration: [
      nameColumn,
      col('Type', '`type` indicates whether this priority level is subject to limitation on request execution.', (o) => str(get(o, 'spec', 'type'), '')),
      col('NominalConcurrencyShares', '`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level.', (o) => get(o, 'spec', 'limited', 'nominalConcurrencyShares') ?? '<none>'),
      col('Queues', '`queues` is the number of queues for this priority level.', (o) => get(o, 'spec', 'limited', 'limitResponse', 'queuing', 'queues') ?? '<none>'),
      col('HandSize', '`handSize` is a small positive number that configures the shuffle sharding of requests into queues.', (o) => get(o, 'spec', 'limited', 'limitResponse', 'queuing', 'handSize') ?? '<none>'),
      col('QueueLengthLimit', '`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time.', (o) => get(o, 'spec', 'limited', 'limitResponse', 'queuing', 'queueLengthLimit') ?? '<none>'),
      ageColumn,
    ],
    RuntimeClass: [nameColumn, col('Handler', 'handler specifies the underlying runtime and configuration that the CRI implementation will use.', (o) => str(get(o, 'handler'), '')), ageColumn],
    LeaseCandidate: [
      nameColumn,
      col('LeaseName', 'LeaseName is the name of the lease for which this candidate is contending.', (o) => str(get(o, 'spec', 'leaseName'), '')),
      col('BinaryVersion', 'BinaryVersion is the binary version.', (o) => str(get(o, 'spec', 'binaryVersion'), '')),
      col('EmulationVersion', 'EmulationVersion is the emulation version.', (o) => str(get(o, 'spec', 'emulationVersion'), '')),
      ageColumn,
    ],
    DeviceClass: [nameColumn, ageColumn],
    ResourceClaim: [nameColumn, col('State', 'A summary of the current state (allocated, pending, reserved, etc.).', claimState), ageColumn],
    ResourceClaimTemplate: [nameColumn, ageColumn],
    ResourceSlice: [
      nameColumn,
      col('Node', 'NodeName identifies the node which provides the resources in this pool.', (o) => str(get(o, 'spec', 'nodeName'), '')),
      col('Driver', 'Driver identifies the DRA driver providing the capacity information.', (o) => str(get(o, 'spec', 'driver'), '')),
      col('Pool', 'Name is used to identify the pool.', (o) => str(get(o, 'spec', 'pool', 'name'), '')),
      ageColumn,
    ],
    APIService: [
      nameColumn,
      col('Service', 'The reference to the service that hosts this API endpoint.', (o) => (isJsonObject(get(o, 'spec', 'service')) ? `${str(get(o, 'spec', 'service', 'namespace'), '')}/${str(get(o, 'spec', 'service', 'name'), '')}` : 'Local')),
      col('Available', 'Whether this service is available.', apiServiceAvailable),
      {...ageColumn, cell: (o, now) => since(get(o, 'metadata', 'creationTimestamp'), now)},
    ],
  };
}

/**
 * An events/v1 Event in the core shape the Event columns read (upstream prints both from its
 * internal type); core Events are returned as they are.
 */
export function asCoreEvent(event: JsonObject): JsonObject {
  if (event.regarding === undefined && event.note === undefined && event.reportingController === undefined) return event;
  const renamed: JsonObject = {...event};
  const renames: [string, string][] = [
    ['regarding', 'involvedObject'], ['note', 'message'], ['deprecatedSource', 'source'], ['deprecatedFirstTimestamp', 'firstTimestamp'],
    ['deprecatedLastTimestamp', 'lastTimestamp'], ['deprecatedCount', 'count'], ['reportingController', 'reportingComponent'],
  ];
  for (const [from, to] of renames) if (event[from] !== undefined) renamed[to] = event[from]!;
  return renamed;
}

let cache: Record<string, Column[]> | undefined;

export function catalogColumns(): Record<string, Column[]> {
  cache ??= build();
  return cache;
}
