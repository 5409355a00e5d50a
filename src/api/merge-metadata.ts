/**
 * Strategic-merge metadata of the built-in kinds, as data.
 *
 * Upstream derives this at run time from the Go struct tags `patchStrategy` / `patchMergeKey`
 * (core/v1, apps/v1, batch/v1, coordination/v1, meta/v1 types.go). We have no Go types, so the tags
 * are transcribed here as a schema tree: a named struct type lists the fields that matter for
 * strategic merge (tagged fields, and struct-valued fields leading to tagged ones). Nested types
 * (PodSpec, Container, ...) are declared once and referenced by name.
 *
 * Fields that are not declared behave like untagged fields: maps merge key by key, lists are
 * replaced atomically. (Upstream additionally rejects a field unknown to the Go struct when both
 * the live object and the patch carry it; we do not model the full field lists, see report.)
 */
import { nameSet } from './names.js';

/** The values a `patchStrategy` tag can take. */
export type PatchStrategy = 'merge' | 'replace' | 'retainKeys' | 'merge,retainKeys';

/** Strategic-merge metadata of one field. */
export interface FieldMeta {
  readonly strategy?: PatchStrategy;
  readonly mergeKey?: string;
  /** Struct type (name in SCHEMA_TYPES) of the field value, or of the list elements for a list. */
  readonly type?: string;
  /** Go kind of a list's elements, used in upstream's error texts ("... for type string"). */
  readonly elementKind?: 'string' | 'struct';
}

/** A struct type: its strategic-merge relevant fields. */
export interface StructSchema {
  readonly name: string;
  readonly fields: Readonly<Record<string, FieldMeta>>;
}

const struct = (type: string): FieldMeta => ({ type });
const mergeByKey = (type: string, mergeKey: string): FieldMeta => ({ strategy: 'merge', mergeKey, type, elementKind: 'struct' });
const mergeRetainByKey = (type: string, mergeKey: string): FieldMeta => ({
  strategy: 'merge,retainKeys', mergeKey, type, elementKind: 'struct',
});
const mergeScalars: FieldMeta = { strategy: 'merge', elementKind: 'string' };
const conditionsByType = mergeByKey('Condition', 'type');

/** Builds a top-level kind: TypeMeta fields plus metadata, and the given spec/status types. */
function kind(name: string, fields: Record<string, FieldMeta> = {}): StructSchema {
  return { name, fields: { metadata: struct('ObjectMeta'), ...fields } };
}

const types: StructSchema[] = [
  // meta/v1
  {
    name: 'ObjectMeta',
    fields: {
      ownerReferences: mergeByKey('OwnerReference', 'uid'),
      finalizers: mergeScalars,
      // managedFields carries no tag: atomic. labels/annotations: plain maps (merged).
    },
  },
  { name: 'Condition', fields: {} },
  { name: 'OwnerReference', fields: {} },

  // core/v1 pod building blocks
  { name: 'PodTemplateSpec', fields: { metadata: struct('ObjectMeta'), spec: struct('PodSpec') } },
  {
    name: 'PodSpec',
    fields: {
      volumes: mergeRetainByKey('Volume', 'name'),
      initContainers: mergeByKey('Container', 'name'),
      containers: mergeByKey('Container', 'name'),
      // EphemeralContainerCommon carries the same tags as Container.
      ephemeralContainers: mergeByKey('Container', 'name'),
      imagePullSecrets: mergeByKey('LocalObjectReference', 'name'),
      hostAliases: mergeByKey('HostAlias', 'ip'),
      topologySpreadConstraints: mergeByKey('TopologySpreadConstraint', 'topologyKey'),
      schedulingGates: mergeByKey('PodSchedulingGate', 'name'),
      resourceClaims: mergeRetainByKey('PodResourceClaim', 'name'),
      // tolerations, readinessGates, affinity.*, dnsConfig.*: untagged (atomic lists).
    },
  },
  {
    name: 'Container',
    fields: {
      ports: mergeByKey('ContainerPort', 'containerPort'),
      env: mergeByKey('EnvVar', 'name'),
      volumeMounts: mergeByKey('VolumeMount', 'mountPath'),
      volumeDevices: mergeByKey('VolumeDevice', 'devicePath'),
      // command, args, envFrom, resizePolicy: untagged (atomic).
    },
  },
  { name: 'Volume', fields: {} },
  { name: 'LocalObjectReference', fields: {} },
  { name: 'HostAlias', fields: {} },
  { name: 'TopologySpreadConstraint', fields: {} },
  { name: 'PodSchedulingGate', fields: {} },
  { name: 'PodResourceClaim', fields: {} },
  { name: 'ContainerPort', fields: {} },
  { name: 'EnvVar', fields: {} },
  { name: 'VolumeMount', fields: {} },
  { name: 'VolumeDevice', fields: {} },
  {
    name: 'PodStatus',
    fields: {
      conditions: mergeByKey('PodCondition', 'type'),
      podIPs: mergeByKey('PodIP', 'ip'),
      hostIPs: mergeByKey('HostIP', 'ip'),
      resourceClaimStatuses: mergeRetainByKey('PodResourceClaimStatus', 'name'),
    },
  },
  { name: 'PodCondition', fields: {} },
  { name: 'PodIP', fields: {} },
  { name: 'HostIP', fields: {} },
  { name: 'PodResourceClaimStatus', fields: {} },

  // core/v1 other kinds' parts
  { name: 'NodeSpec', fields: { podCIDRs: mergeScalars /* taints: untagged, atomic */ } },
  {
    name: 'NodeStatus',
    fields: { conditions: mergeByKey('NodeCondition', 'type'), addresses: mergeByKey('NodeAddress', 'type') },
  },
  { name: 'NodeCondition', fields: {} },
  { name: 'NodeAddress', fields: {} },
  { name: 'ServiceSpec', fields: { ports: mergeByKey('ServicePort', 'port') } },
  { name: 'ServicePort', fields: {} },
  { name: 'ServiceStatus', fields: { conditions: conditionsByType } },
  { name: 'NamespaceStatus', fields: { conditions: mergeByKey('NamespaceCondition', 'type') } },
  { name: 'NamespaceCondition', fields: {} },
  { name: 'ReplicationControllerSpec', fields: { template: struct('PodTemplateSpec') } },
  { name: 'ReplicationControllerStatus', fields: { conditions: mergeByKey('ReplicationControllerCondition', 'type') } },
  { name: 'ReplicationControllerCondition', fields: {} },
  { name: 'PersistentVolumeClaimStatus', fields: { conditions: mergeByKey('PersistentVolumeClaimCondition', 'type') } },
  { name: 'PersistentVolumeClaimCondition', fields: {} },

  // apps/v1
  {
    name: 'DeploymentSpec',
    fields: { template: struct('PodTemplateSpec'), strategy: { strategy: 'retainKeys', type: 'DeploymentStrategy' } },
  },
  { name: 'DeploymentStrategy', fields: {} },
  { name: 'DeploymentStatus', fields: { conditions: mergeByKey('DeploymentCondition', 'type') } },
  { name: 'DeploymentCondition', fields: {} },
  { name: 'ReplicaSetSpec', fields: { template: struct('PodTemplateSpec') } },
  { name: 'ReplicaSetStatus', fields: { conditions: mergeByKey('ReplicaSetCondition', 'type') } },
  { name: 'ReplicaSetCondition', fields: {} },
  // volumeClaimTemplates: untagged (atomic).
  { name: 'StatefulSetSpec', fields: { template: struct('PodTemplateSpec') } },
  { name: 'StatefulSetStatus', fields: { conditions: mergeByKey('StatefulSetCondition', 'type') } },
  { name: 'StatefulSetCondition', fields: {} },
  { name: 'DaemonSetSpec', fields: { template: struct('PodTemplateSpec') } },
  { name: 'DaemonSetStatus', fields: { conditions: mergeByKey('DaemonSetCondition', 'type') } },
  { name: 'DaemonSetCondition', fields: {} },

  // batch/v1
  { name: 'JobSpec', fields: { template: struct('PodTemplateSpec') } },
  { name: 'JobStatus', fields: { conditions: mergeByKey('JobCondition', 'type') } },
  { name: 'JobCondition', fields: {} },
  { name: 'JobTemplateSpec', fields: { metadata: struct('ObjectMeta'), spec: struct('JobSpec') } },
  { name: 'CronJobSpec', fields: { jobTemplate: struct('JobTemplateSpec') } },

  // top-level kinds
  kind('Pod', { spec: struct('PodSpec'), status: struct('PodStatus') }),
  kind('PodTemplate', { template: struct('PodTemplateSpec') }),
  kind('Node', { spec: struct('NodeSpec'), status: struct('NodeStatus') }),
  kind('Service', { spec: struct('ServiceSpec'), status: struct('ServiceStatus') }),
  kind('Endpoints'),
  kind('ConfigMap'),
  kind('Secret'),
  kind('ServiceAccount', { secrets: mergeByKey('ObjectReference', 'name') }),
  { name: 'ObjectReference', fields: {} },
  kind('Namespace', { status: struct('NamespaceStatus') }),
  kind('ReplicationController', { spec: struct('ReplicationControllerSpec'), status: struct('ReplicationControllerStatus') }),
  kind('PersistentVolume'),
  kind('PersistentVolumeClaim', { status: struct('PersistentVolumeClaimStatus') }),
  kind('Event'),
  kind('Deployment', { spec: struct('DeploymentSpec'), status: struct('DeploymentStatus') }),
  kind('ReplicaSet', { spec: struct('ReplicaSetSpec'), status: struct('ReplicaSetStatus') }),
  kind('StatefulSet', { spec: struct('StatefulSetSpec'), status: struct('StatefulSetStatus') }),
  kind('DaemonSet', { spec: struct('DaemonSetSpec'), status: struct('DaemonSetStatus') }),
  kind('Job', { spec: struct('JobSpec'), status: struct('JobStatus') }),
  kind('CronJob', { spec: struct('CronJobSpec') }),
  kind('Lease'),
];

/** All struct types by name. */
export const SCHEMA_TYPES: ReadonlyMap<string, StructSchema> = new Map(types.map((t) => [t.name, t]));

/** Kinds served per group/version; upstream and orch group names denote the same kinds. */
const KINDS_BY_GROUP_VERSION: Readonly<Record<string, readonly string[]>> = {
  v1: [
    'Pod', 'PodTemplate', 'Node', 'Service', 'Endpoints', 'ConfigMap', 'Secret', 'ServiceAccount', 'Namespace',
    'ReplicationController', 'PersistentVolume', 'PersistentVolumeClaim', 'Event',
  ],
  'apps/v1': ['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet'],
  'batch/v1': ['Job', 'CronJob'],
  // Lease under either name set's coordination group.
  [`${nameSet('kubernetes').groups.coordination}/v1`]: ['Lease'],
  [`${nameSet('orch').groups.coordination}/v1`]: ['Lease'],
};

/** The schema of a built-in kind, or undefined for anything else (custom resources). */
export function lookupSchema(apiVersion: string, kindName: string): StructSchema | undefined {
  const kinds = KINDS_BY_GROUP_VERSION[apiVersion];
  if (!kinds || !kinds.includes(kindName)) return undefined;
  return SCHEMA_TYPES.get(kindName);
}

/** Metadata of `field` in `type`; an unknown type or field has none. */
export function fieldMeta(type: StructSchema | undefined, field: string): FieldMeta {
  return type?.fields[field] ?? {};
}

/** The struct type a field's value (or list elements) has, if declared. */
export function fieldType(meta: FieldMeta): StructSchema | undefined {
  return meta.type === undefined ? undefined : SCHEMA_TYPES.get(meta.type);
}
