/**
 * The default roles and bindings the `rbac/bootstrap-roles` post-start hook creates when missing,
 * from upstream's bootstrap policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy) with the names
 * of the active name set (src/api/names.ts): with orch's, `*.k8s.io` groups become `*.orch.io` and
 * `kube-*` component users become `orch-*`. Computed per name set, on first use.
 * admin, edit and view aggregate the `system:aggregate-to-*` roles (and any role labelled
 * `<rbac group>/aggregate-to-<role>: "true"`) through the controller manager's
 * clusterrole-aggregation controller; they are created with the rules of the default roles already,
 * so that they grant them on a server that runs without a controller manager.
 */
import {rbacApiVersion, type ClusterRole, type ClusterRoleBinding, type PolicyRule, type Subject} from './rbac-types.js';
import {AUTHENTICATED_GROUP, MASTERS_GROUP, SERVICE_ACCOUNTS_GROUP, UNAUTHENTICATED_GROUP} from '../../shared/authentication/user.js';
import {names, type NameSet, type NameSetId} from '../../../api/names.js';

const CORE = '';
const APPS = 'apps';
const BATCH = 'batch';
const AUTOSCALING = 'autoscaling';
const POLICY = 'policy';
const EXTENSIONS = 'extensions';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const READ_WRITE = [...READ, ...WRITE];

/** The labels of every default object (`<labelDomain>/bootstrapping`). */
export const bootstrapLabels = (n: NameSet = names()) => ({[n.labels.bootstrapping]: 'rbac-defaults'});

function rule(verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule {
  return resourceNames ? {verbs, apiGroups, resources, resourceNames} : {verbs, apiGroups, resources};
}

function urls(verbs: string[], nonResourceURLs: string[]): PolicyRule {
  return {verbs, nonResourceURLs};
}

/** The default roles and bindings of one name set. */
function policy(n: NameSet): {roles: ClusterRole[]; bindings: ClusterRoleBinding[]} {
  const RBAC = n.groups.rbac;
  const COORDINATION = n.groups.coordination;
  const AUTHENTICATION = n.groups.authentication;
  const AUTHORIZATION = n.groups.authorization;
  const DISCOVERY = n.groups.discovery;
  const NETWORKING = n.groups.networking;
  const EVENTS = n.groups.events;
  const STORAGE = n.groups.storage;
  const SCHEDULING = n.groups.scheduling;
  const CONTROLLER_MANAGER_USER = n.users.controllerManager;
  const SCHEDULER_USER = n.users.scheduler;
  const metadata = (name: string) => ({name, labels: bootstrapLabels(n), annotations: {[n.annotations.rbacAutoupdate]: 'true'}});

  function clusterRole(name: string, rules: PolicyRule[]): ClusterRole {
    return {apiVersion: rbacApiVersion(n), kind: 'ClusterRole', metadata: metadata(name), rules};
  }

  const aggregateLabel = (role: string) => `${RBAC}/aggregate-to-${role}`;
  /** A role that aggregates the roles labelled `<rbac group>/aggregate-to-<name>: "true"`. */
  function aggregatingRole(name: string, rules: PolicyRule[]): ClusterRole {
    return {...clusterRole(name, rules), aggregationRule: {clusterRoleSelectors: [{matchLabels: {[aggregateLabel(name)]: 'true'}}]}};
  }
  /** A role aggregated into the named aggregating roles. */
  function aggregatedRole(name: string, rules: PolicyRule[], into: string[]): ClusterRole {
    const role = clusterRole(name, rules);
    return {...role, metadata: {...role.metadata, labels: {...role.metadata.labels, ...Object.fromEntries(into.map((r) => [aggregateLabel(r), 'true']))}}};
  }

  function binding(roleName: string, subjects: Subject[], name = roleName): ClusterRoleBinding {
    return {
      apiVersion: rbacApiVersion(n),
      kind: 'ClusterRoleBinding',
      metadata: metadata(name),
      roleRef: {apiGroup: RBAC, kind: 'ClusterRole', name: roleName},
      subjects,
    };
  }

  const group = (name: string): Subject => ({kind: 'Group', apiGroup: RBAC, name});
  const user = (name: string): Subject => ({kind: 'User', apiGroup: RBAC, name});

  const viewRules: PolicyRule[] = [
    rule(READ, [CORE], ['pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'configmaps']),
    rule(READ, [CORE], ['bindings', 'events', 'limitranges', 'namespaces/status', 'pods/log', 'pods/status', 'replicationcontrollers/status', 'resourcequotas', 'resourcequotas/status']),
    rule(READ, [CORE], ['namespaces']),
    rule(READ, [DISCOVERY], ['endpointslices']),
    rule(READ, [APPS], ['controllerrevisions', 'statefulsets', 'statefulsets/scale', 'statefulsets/status', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status']),
    rule(READ, [AUTOSCALING], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
    rule(READ, [BATCH], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
    rule(READ, [EXTENSIONS], ['daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'ingresses', 'ingresses/status', 'networkpolicies', 'replicasets', 'replicasets/scale', 'replicasets/status', 'replicationcontrollers/scale']),
    rule(READ, [POLICY], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
    rule(READ, [NETWORKING], ['networkpolicies', 'ingresses', 'ingresses/status']),
  ];

  const editRules: PolicyRule[] = [
    rule(['impersonate'], [CORE], ['serviceaccounts']),
    rule(WRITE, [CORE], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
    rule(['create'], [CORE], ['pods/eviction']),
    rule(WRITE, [CORE], ['replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/proxy', 'persistentvolumeclaims', 'configmaps', 'secrets', 'events']),
    rule(['create'], [CORE], ['serviceaccounts/token']),
    rule(WRITE, [APPS], ['statefulsets', 'statefulsets/scale', 'daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'replicasets', 'replicasets/scale']),
    rule(WRITE, [AUTOSCALING], ['horizontalpodautoscalers']),
    rule(WRITE, [BATCH], ['cronjobs', 'jobs']),
    rule(WRITE, [EXTENSIONS], ['daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'ingresses', 'networkpolicies', 'replicasets', 'replicasets/scale', 'replicationcontrollers/scale']),
    rule(WRITE, [POLICY], ['poddisruptionbudgets']),
    rule(WRITE, [NETWORKING], ['networkpolicies', 'ingresses']),
    rule(READ_WRITE, [COORDINATION], ['leases']),
    // Reading secrets and the pod proxies is edit's, not view's (they can reveal credentials).
    rule(READ, [CORE], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy']),
    ...viewRules,
  ];

  const adminRules: PolicyRule[] = [
    rule(['create'], [AUTHORIZATION], ['localsubjectaccessreviews']),
    rule(READ_WRITE, [RBAC], ['rolebindings', 'roles']),
    ...editRules,
  ];

  const nodeRules: PolicyRule[] = [
    rule(['create', 'get', 'list', 'watch', 'patch', 'update', 'delete'], [CORE], ['nodes']),
    rule(['patch', 'update'], [CORE], ['nodes/status']),
    rule(READ, [CORE], ['services', 'endpoints', 'configmaps', 'secrets', 'persistentvolumeclaims', 'persistentvolumes']),
    rule(['get', 'list', 'watch', 'create', 'delete'], [CORE], ['pods']),
    rule(['patch', 'update'], [CORE], ['pods/status']),
    rule(['create'], [CORE], ['pods/eviction', 'serviceaccounts/token']),
    rule(['create', 'patch', 'update'], [CORE, EVENTS], ['events']),
    rule(['get', 'create', 'update', 'patch', 'delete'], [COORDINATION], ['leases']),
    rule(['create'], [AUTHENTICATION], ['tokenreviews']),
    rule(['create'], [AUTHORIZATION], ['subjectaccessreviews', 'localsubjectaccessreviews']),
    rule(READ, [STORAGE], ['csidrivers', 'csinodes', 'volumeattachments']),
    rule(READ, [SCHEDULING], ['priorityclasses']),
  ];

  /**
   * Upstream's controller manager role only covers what it does itself, because upstream runs each
   * controller with its own service account. orch's controller manager runs every controller as this
   * one user, so the role also grants what those controllers do: read everything, manage the
   * workloads, pods, nodes, endpoints and events, and clean up namespaces and dependents (delete and
   * update on any resource, for the namespace and garbage collectors).
   */
  const controllerManagerRules: PolicyRule[] = [
    rule(['create', 'patch', 'update'], [CORE, EVENTS], ['events']),
    rule(['create'], [COORDINATION], ['leases']),
    rule(['get', 'update'], [COORDINATION], ['leases'], [n.leases.controllerManager]),
    rule(['create'], [AUTHENTICATION], ['tokenreviews']),
    rule(['create'], [AUTHORIZATION], ['subjectaccessreviews']),
    rule(['get', 'list', 'watch', 'delete', 'deletecollection', 'patch', 'update'], ['*'], ['*']),
    // The clusterrole-aggregation controller writes rules it does not hold itself, as upstream's does.
    rule(['escalate'], [RBAC], ['clusterroles']),
    rule(['create'], [CORE], ['pods', 'pods/binding', 'pods/eviction', 'endpoints', 'namespaces', 'nodes', 'serviceaccounts', 'serviceaccounts/token', 'secrets', 'configmaps', 'services', 'replicationcontrollers']),
    rule(['create'], [APPS], ['replicasets', 'controllerrevisions', 'deployments', 'statefulsets', 'daemonsets']),
    rule(['create'], [BATCH], ['jobs']),
    rule(['create'], [DISCOVERY], ['endpointslices']),
    rule(['update', 'patch'], [CORE], ['namespaces/finalize', 'namespaces/status', 'nodes/status', 'pods/status', 'replicationcontrollers/status']),
  ];

  const schedulerRules: PolicyRule[] = [
    rule(['create', 'patch', 'update'], [CORE, EVENTS], ['events']),
    rule(['create'], [COORDINATION], ['leases']),
    rule(['get', 'update'], [COORDINATION], ['leases'], [n.leases.scheduler]),
    rule(READ, [CORE], ['nodes', 'namespaces', 'replicationcontrollers', 'services', 'persistentvolumeclaims', 'persistentvolumes']),
    rule([...READ, 'delete'], [CORE], ['pods']),
    rule(['create'], [CORE], ['bindings', 'pods/binding']),
    rule(['patch', 'update'], [CORE], ['pods/status']),
    rule(READ, [APPS, EXTENSIONS], ['replicasets']),
    rule(READ, [APPS], ['statefulsets']),
    rule(READ, [POLICY], ['poddisruptionbudgets']),
    rule(READ, [STORAGE], ['csidrivers', 'csinodes', 'csistoragecapacities', 'storageclasses']),
    rule(['create'], [AUTHENTICATION], ['tokenreviews']),
    rule(['create'], [AUTHORIZATION], ['subjectaccessreviews']),
  ];

  const roles = [
    clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
    aggregatingRole('admin', adminRules),
    aggregatingRole('edit', editRules),
    aggregatingRole('view', viewRules),
    clusterRole('system:discovery', [urls(['get'], ['/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*', '/version', '/version/'])]),
    clusterRole('system:basic-user', [
      rule(['create'], [AUTHORIZATION], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      rule(['create'], [AUTHENTICATION], ['selfsubjectreviews']),
    ]),
    clusterRole('system:public-info-viewer', [urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])]),
    clusterRole('system:monitoring', [urls(['get'], ['/metrics', '/metrics/slis', '/livez', '/readyz', '/healthz', '/livez/*', '/readyz/*', '/healthz/*'])]),
    clusterRole('system:node', nodeRules),
    clusterRole(CONTROLLER_MANAGER_USER, controllerManagerRules),
    clusterRole(SCHEDULER_USER, schedulerRules),
    aggregatedRole('system:aggregate-to-view', viewRules, ['admin', 'edit', 'view']),
    aggregatedRole('system:aggregate-to-edit', editRules, ['admin', 'edit']),
    aggregatedRole('system:aggregate-to-admin', adminRules, ['admin']),
    // The role metrics-server installs with its API: this API server serves the resource metrics API
    // itself, so whoever may view a namespace may also `kubectl top` it.
    aggregatedRole('system:aggregated-metrics-reader', [rule(READ, [n.groups.metrics], ['pods', 'nodes'])], ['admin', 'edit', 'view']),
    // Service account issuer discovery: upstream binds it to service accounts only; a cluster that
    // wants anyone to verify its tokens binds it to system:unauthenticated too.
    clusterRole('system:service-account-issuer-discovery', [
      urls(['get'], ['/.well-known/openid-configuration', '/.well-known/openid-configuration/', '/openid/v1/jwks', '/openid/v1/jwks/']),
    ]),
    clusterRole('system:auth-delegator', [rule(['create'], [AUTHENTICATION], ['tokenreviews']), rule(['create'], [AUTHORIZATION], ['subjectaccessreviews'])]),
  ];

  const bindings = [
    binding('cluster-admin', [group(MASTERS_GROUP)]),
    binding('system:discovery', [group(AUTHENTICATED_GROUP)]),
    binding('system:basic-user', [group(AUTHENTICATED_GROUP)]),
    binding('system:public-info-viewer', [group(AUTHENTICATED_GROUP), group(UNAUTHENTICATED_GROUP)]),
    binding('system:monitoring', [group('system:monitoring')]),
    // As upstream: no subjects; the Node authorizer (not yet in orch) grants nodes their rights.
    binding('system:node', []),
    binding('system:service-account-issuer-discovery', [group(SERVICE_ACCOUNTS_GROUP)]),
    binding(CONTROLLER_MANAGER_USER, [user(CONTROLLER_MANAGER_USER)]),
    binding(SCHEDULER_USER, [user(SCHEDULER_USER)]),
  ];
  return {roles, bindings};
}

const memo = new Map<NameSetId, ReturnType<typeof policy>>();

function policyOf(n: NameSet): ReturnType<typeof policy> {
  let entry = memo.get(n.id);
  if (!entry) memo.set(n.id, (entry = policy(n)));
  return entry;
}

/** The default cluster roles of the active name set (fresh copies: callers may change them). */
export function bootstrapClusterRoles(n: NameSet = names()): ClusterRole[] {
  return structuredClone(policyOf(n).roles);
}

export function bootstrapClusterRoleBindings(n: NameSet = names()): ClusterRoleBinding[] {
  return structuredClone(policyOf(n).bindings);
}

/** The rules of the `system:node` role of the active name set: what the Node authorizer grants beyond its graph. */
export function nodePolicyRules(n: NameSet = names()): readonly PolicyRule[] {
  return policyOf(n).roles.find((r) => r.metadata.name === 'system:node')?.rules ?? [];
}
