/**
 * Every message the decoder knows, and which top-level kinds a protobuf body may carry. Adding a
 * kind: add its messages to a schemas/*.ts table and a row to TOP_LEVEL_KINDS.
 */
import { compileSchemas, type CompiledMessage } from './schema.js';
import { META_SCHEMAS } from './schemas/meta.js';
import { CORE_SCHEMAS } from './schemas/core.js';
import { APPS_SCHEMAS } from './schemas/apps.js';
import { BATCH_SCHEMAS } from './schemas/batch.js';
import { RBAC_SCHEMAS } from './schemas/rbac.js';
import { CATALOG_SCHEMAS } from './schemas/catalog.js';
import { NAME_SET_IDS, nameSet, type NameSet } from '../names.js';

/** A group's versions under either name set (kubectl always sends upstream's; orch's are accepted too). */
const versionsOf = (group: (n: NameSet) => string, version = 'v1') => NAME_SET_IDS.map((id) => `${group(nameSet(id))}/${version}`);

/** Upstream groups keep their names on the wire; orch's renamed groups are accepted alongside. */
const RBAC_VERSIONS = NAME_SET_IDS.map((id) => `${nameSet(id).groups.rbac}/v1`);

/** [apiVersions, kinds]: each kind's message has the kind's name. */
const TOP_LEVEL_KINDS: [string[], string[]][] = [
  [['v1'], ['Namespace', 'ConfigMap', 'Secret', 'ServiceAccount', 'Pod', 'Binding', 'Service']],
  [['apps/v1'], ['Deployment']],
  [['batch/v1'], ['Job', 'CronJob']],
  [RBAC_VERSIONS, ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']],
  [['v1'], ['ResourceQuota']],
  [['policy/v1'], ['PodDisruptionBudget', 'Eviction']],
  [['autoscaling/v1'], ['HorizontalPodAutoscaler']],
  [versionsOf((n) => n.groups.networking), ['Ingress']],
  [versionsOf((n) => n.groups.scheduling), ['PriorityClass']],
  [versionsOf((n) => n.groups.certificates), ['CertificateSigningRequest']],
  [versionsOf((n) => n.groups.authentication), ['SelfSubjectReview', 'TokenReview', 'TokenRequest']],
  [versionsOf((n) => n.groups.authorization), ['SelfSubjectAccessReview', 'SubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview']],
];

let compiled: ReadonlyMap<string, CompiledMessage> | undefined;

/** The compiled registry (built on first use; a broken table throws here, and in the unit tests). */
export function messageRegistry(): ReadonlyMap<string, CompiledMessage> {
  compiled ??= compileSchemas({ ...META_SCHEMAS, ...CORE_SCHEMAS, ...APPS_SCHEMAS, ...BATCH_SCHEMAS, ...RBAC_SCHEMAS, ...CATALOG_SCHEMAS });
  return compiled;
}

/** The message of a top-level object, or undefined when that kind cannot be sent as protobuf. */
export function messageForKind(apiVersion: string, kind: string): string | undefined {
  for (const [versions, kinds] of TOP_LEVEL_KINDS) if (versions.includes(apiVersion) && kinds.includes(kind)) return kind;
  return undefined;
}

/** Every apiVersion/kind pair accepted, for error messages and tests. */
export function supportedKinds(): { apiVersion: string; kind: string }[] {
  return TOP_LEVEL_KINDS.flatMap(([versions, kinds]) => versions.flatMap((apiVersion) => kinds.map((kind) => ({ apiVersion, kind }))));
}
