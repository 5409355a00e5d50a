import {describe, expect, it} from '@jest/globals';
import type {AuthorizationAttributes} from '../../src/daemons/shared/authorization/attributes.js';
import {createAuthorizer, validateAuthorizationModes} from '../../src/daemons/apiserver/authorization/authorizer.js';
import {bootstrapClusterRoleBindings, bootstrapClusterRoles} from '../../src/daemons/apiserver/authorization/bootstrap-policy.js';
import {RbacAuthorizer, RbacPolicyIndex, ruleAllows, subjectMatches} from '../../src/daemons/apiserver/authorization/rbac.js';
import type {PolicyRule, RbacObject} from '../../src/daemons/apiserver/authorization/rbac-types.js';
import {forbiddenStatus, unauthorizedStatus} from '../../src/daemons/shared/authorization/status.js';
import type {UserInfo} from '../../src/daemons/shared/authentication/user.js';

const bob: UserInfo = {name: 'bob', groups: ['dev', 'system:authenticated']};
const anonymous: UserInfo = {name: 'system:anonymous', groups: ['system:unauthenticated']};
const admin: UserInfo = {name: 'orch-admin', groups: ['system:masters', 'system:authenticated']};

function resource(verb: string, res: string, extra: Partial<AuthorizationAttributes> = {}, user = bob): AuthorizationAttributes {
  return {user, verb, resourceRequest: true, apiGroup: '', resource: res, ...extra};
}
function path(verb: string, p: string, user = bob): AuthorizationAttributes {
  return {user, verb, resourceRequest: false, path: p};
}

describe('ruleAllows', () => {
  const cases: Array<[string, PolicyRule, AuthorizationAttributes, boolean]> = [
    ['exact match', {verbs: ['get'], apiGroups: [''], resources: ['pods']}, resource('get', 'pods'), true],
    ['other verb', {verbs: ['get'], apiGroups: [''], resources: ['pods']}, resource('list', 'pods'), false],
    ['other group', {verbs: ['get'], apiGroups: ['apps'], resources: ['pods']}, resource('get', 'pods'), false],
    ['wildcards', {verbs: ['*'], apiGroups: ['*'], resources: ['*']}, resource('delete', 'deployments', {apiGroup: 'apps'}), true],
    ['subresource needs its own entry', {verbs: ['update'], apiGroups: [''], resources: ['pods']}, resource('update', 'pods', {subresource: 'status'}), false],
    ['resource/subresource entry', {verbs: ['update'], apiGroups: [''], resources: ['pods/status']}, resource('update', 'pods', {subresource: 'status'}), true],
    ['*/subresource entry', {verbs: ['get'], apiGroups: ['*'], resources: ['*/scale']}, resource('get', 'deployments', {apiGroup: 'apps', subresource: 'scale'}), true],
    ['*/subresource does not match the main resource', {verbs: ['get'], apiGroups: ['*'], resources: ['*/scale']}, resource('get', 'deployments', {apiGroup: 'apps'}), false],
    ['resourceNames match', {verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a']}, resource('get', 'configmaps', {name: 'a'}), true],
    ['resourceNames exclude others', {verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a']}, resource('get', 'configmaps', {name: 'b'}), false],
    ['resourceNames exclude unnamed lists', {verbs: ['list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a']}, resource('list', 'configmaps'), false],
    ['non-resource exact', {verbs: ['get'], nonResourceURLs: ['/healthz']}, path('get', '/healthz'), true],
    ['non-resource prefix star', {verbs: ['get'], nonResourceURLs: ['/healthz/*']}, path('get', '/healthz/ping'), true],
    ['non-resource exact is not a prefix', {verbs: ['get'], nonResourceURLs: ['/healthz']}, path('get', '/healthz/ping'), false],
    ['non-resource rule never matches resources', {verbs: ['*'], nonResourceURLs: ['*']}, resource('get', 'pods'), false],
    ['resource rule never matches paths', {verbs: ['*'], apiGroups: ['*'], resources: ['*']}, path('get', '/healthz'), false],
  ];
  it.each(cases)('%s', (_case, rule, attributes, allowed) => {
    expect(ruleAllows(attributes, rule)).toBe(allowed);
  });
});

describe('subjectMatches', () => {
  const sa: UserInfo = {name: 'system:serviceaccount:team:builder', groups: []};
  it.each([
    ['user by name', {kind: 'User', name: 'bob'}, bob, '', true],
    ['group membership', {kind: 'Group', name: 'dev'}, bob, '', true],
    ['other group', {kind: 'Group', name: 'ops'}, bob, '', false],
    ['service account with namespace', {kind: 'ServiceAccount', name: 'builder', namespace: 'team'}, sa, '', true],
    ['service account defaulting to the binding namespace', {kind: 'ServiceAccount', name: 'builder'}, sa, 'team', true],
    ['service account in another namespace', {kind: 'ServiceAccount', name: 'builder'}, sa, 'other', false],
    ['service account without any namespace', {kind: 'ServiceAccount', name: 'builder'}, sa, '', false],
    ['unknown kind', {kind: 'Robot', name: 'bob'}, bob, '', false],
  ])('%s', (_case, subject, user, namespace, expected) => {
    expect(subjectMatches(user, subject, namespace)).toBe(expected);
  });
});

describe('RBAC authorizer with the bootstrap policy', () => {
  const objects: RbacObject[] = [
    ...bootstrapClusterRoles(),
    ...bootstrapClusterRoleBindings(),
    {apiVersion: 'rbac.orch.io/v1', kind: 'RoleBinding', metadata: {name: 'dev-edit', namespace: 'team'}, roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'edit'}, subjects: [{kind: 'Group', name: 'dev'}]},
    {apiVersion: 'rbac.orch.io/v1', kind: 'RoleBinding', metadata: {name: 'bob-view', namespace: 'prod'}, roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'view'}, subjects: [{kind: 'User', name: 'bob'}]},
    {apiVersion: 'rbac.orch.io/v1', kind: 'Role', metadata: {name: 'cm-reader', namespace: 'prod'}, rules: [{verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings']}]},
    {apiVersion: 'rbac.orch.io/v1', kind: 'RoleBinding', metadata: {name: 'bob-cm', namespace: 'prod'}, roleRef: {apiGroup: 'rbac.orch.io', kind: 'Role', name: 'cm-reader'}, subjects: [{kind: 'User', name: 'bob'}]},
  ];
  const rbac = new RbacAuthorizer(RbacPolicyIndex.from(objects));

  it.each([
    ['anonymous may read /healthz', path('get', '/healthz', anonymous), 'Allow'],
    ['anonymous may read /version', path('get', '/version', anonymous), 'Allow'],
    ['anonymous may not read /api', path('get', '/api', anonymous), 'NoOpinion'],
    ['anonymous may not list pods', resource('list', 'pods', {namespace: 'default'}, anonymous), 'NoOpinion'],
    ['an authenticated user may read discovery', path('get', '/apis/apps/v1', bob), 'Allow'],
    ['an authenticated user may create a self subject access review', resource('create', 'selfsubjectaccessreviews', {apiGroup: 'authorization.orch.io'}), 'Allow'],
    ['edit in its namespace: create deployments', resource('create', 'deployments', {apiGroup: 'apps', namespace: 'team'}), 'Allow'],
    ['edit in its namespace: read secrets', resource('get', 'secrets', {namespace: 'team', name: 's'}), 'Allow'],
    ['edit may not touch roles', resource('create', 'roles', {apiGroup: 'rbac.orch.io', namespace: 'team'}), 'NoOpinion'],
    ['edit is not granted elsewhere', resource('create', 'deployments', {apiGroup: 'apps', namespace: 'other'}), 'NoOpinion'],
    ['view: list pods', resource('list', 'pods', {namespace: 'prod'}), 'Allow'],
    ['view: no secrets', resource('get', 'secrets', {namespace: 'prod', name: 's'}), 'NoOpinion'],
    ['view: no writes', resource('delete', 'pods', {namespace: 'prod', name: 'p'}), 'NoOpinion'],
    ['a Role by resource name', resource('get', 'configmaps', {namespace: 'prod', name: 'settings'}), 'Allow'],
    ['the same Role, another name', resource('update', 'configmaps', {namespace: 'prod', name: 'other'}), 'NoOpinion'],
    ['cluster-admin binding for system:masters', resource('delete', 'nodes', {name: 'n1'}, admin), 'Allow'],
    ['the controller manager may update pod status', resource('update', 'pods', {subresource: 'status', namespace: 'x', name: 'p'}, {name: 'system:orch-controller-manager', groups: ['system:authenticated']}), 'Allow'],
    ['the scheduler may bind pods', resource('create', 'pods', {subresource: 'binding', namespace: 'x', name: 'p'}, {name: 'system:orch-scheduler', groups: ['system:authenticated']}), 'Allow'],
    ['the scheduler may not delete nodes', resource('delete', 'nodes', {name: 'n'}, {name: 'system:orch-scheduler', groups: ['system:authenticated']}), 'NoOpinion'],
  ])('%s', (_case, attributes, decision) => {
    expect(rbac.authorize(attributes).decision).toBe(decision);
  });

  it('names missing roles in the reason', () => {
    const index = RbacPolicyIndex.from([
      {apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRoleBinding', metadata: {name: 'b'}, roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'gone'}, subjects: [{kind: 'User', name: 'bob'}]},
      {apiVersion: 'rbac.orch.io/v1', kind: 'RoleBinding', metadata: {name: 'r', namespace: 'ns'}, roleRef: {apiGroup: 'rbac.orch.io', kind: 'Role', name: 'missing'}, subjects: [{kind: 'User', name: 'bob'}]},
    ]);
    const authorizer = new RbacAuthorizer(index);
    expect(authorizer.authorize(resource('get', 'pods'))).toEqual({decision: 'NoOpinion', reason: 'RBAC: clusterrole.rbac.orch.io "gone" not found'});
    expect(authorizer.authorize(resource('get', 'pods', {namespace: 'ns'})).reason).toBe('RBAC: [clusterrole.rbac.orch.io "gone" not found, role.rbac.orch.io "missing" not found]');
  });

  it('follows objects applied and removed later', () => {
    const index = new RbacPolicyIndex();
    const authorizer = new RbacAuthorizer(index);
    const attributes = resource('list', 'pods', {namespace: 'ns'});
    expect(authorizer.authorize(attributes).decision).toBe('NoOpinion');
    const binding: RbacObject = {apiVersion: 'rbac.orch.io/v1', kind: 'RoleBinding', metadata: {name: 'r', namespace: 'ns'}, roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'view'}, subjects: [{kind: 'User', name: 'bob'}]};
    index.apply(bootstrapClusterRoles().find((r) => r.metadata.name === 'view')!);
    index.apply(binding);
    expect(authorizer.authorize(attributes).decision).toBe('Allow');
    index.remove(binding);
    expect(authorizer.authorize(attributes).decision).toBe('NoOpinion');
  });
});

describe('authorization modes', () => {
  const rbac = RbacPolicyIndex.from([...bootstrapClusterRoles(), ...bootstrapClusterRoleBindings()]);
  const listPods = resource('list', 'pods', {namespace: 'default'});

  it.each([
    [[], 'list pods', listPods, 'Allow'],
    [['AlwaysAllow'], 'list pods', listPods, 'Allow'],
    [['AlwaysDeny'], 'list pods', listPods, 'NoOpinion'],
    // As upstream, AlwaysDeny has no opinion: a later mode may still allow.
    [['AlwaysDeny', 'AlwaysAllow'], 'list pods', listPods, 'Allow'],
    [['RBAC'], 'list pods', listPods, 'NoOpinion'],
    [['RBAC', 'AlwaysAllow'], 'list pods', listPods, 'Allow'],
    [['RBAC'], 'anonymous get /readyz', path('get', '/readyz', anonymous), 'Allow'],
    // The superuser group comes before every mode.
    [['AlwaysDeny'], 'system:masters deletes a namespace', resource('delete', 'namespaces', {name: 'x'}, admin), 'Allow'],
  ])('%j: %s', async (modes, _label, attributes, decision) => {
    const authorizer = createAuthorizer(modes, {rbac});
    expect((await authorizer.authorize(attributes)).decision).toBe(decision);
  });

  it('reports why AlwaysDeny forbids', async () => {
    expect(await createAuthorizer(['AlwaysDeny']).authorize(listPods)).toEqual({decision: 'NoOpinion', reason: 'Everything is forbidden.'});
  });

  it.each([
    [['RBAC', 'AlwaysAllow'], []],
    [['Node', 'RBAC', 'ABAC', 'Webhook', 'AlwaysAllow', 'AlwaysDeny'], []],
    [['rbac'], ['authorization-mode "rbac" is not a valid mode (valid: AlwaysAllow, AlwaysDeny, ABAC, Webhook, RBAC, Node)']],
    [['RBAC', 'RBAC'], ['authorization-mode "RBAC" has mode specified more than once']],
  ])('validates %j', (modes, problems) => {
    expect(validateAuthorizationModes(modes)).toEqual(problems);
  });

  it('needs the RBAC objects for RBAC mode', () => {
    expect(() => createAuthorizer(['RBAC'])).toThrow('authorization mode RBAC needs the RBAC objects');
  });
});

describe('Status bodies', () => {
  it.each([
    [
      'namespaced, named',
      resource('get', 'pods', {namespace: 'default', name: 'web'}),
      '',
      'pods "web" is forbidden: User "bob" cannot get resource "pods" in API group "" in the namespace "default"',
      {name: 'web', kind: 'pods'},
    ],
    [
      'namespaced list',
      resource('list', 'deployments', {apiGroup: 'apps', namespace: 'team'}, anonymous),
      '',
      'deployments.apps is forbidden: User "system:anonymous" cannot list resource "deployments" in API group "apps" in the namespace "team"',
      {group: 'apps', kind: 'deployments'},
    ],
    [
      'cluster scope with a subresource',
      resource('update', 'nodes', {subresource: 'status', name: 'n1'}),
      '',
      'nodes "n1" is forbidden: User "bob" cannot update resource "nodes/status" in API group "" at the cluster scope',
      {name: 'n1', kind: 'nodes'},
    ],
    [
      'impersonation',
      resource('impersonate', 'users', {name: 'jane'}),
      '',
      'users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
      {name: 'jane', kind: 'users'},
    ],
    ['non-resource path', path('get', '/metrics'), '', 'forbidden: User "bob" cannot get path "/metrics"', {}],
    [
      'with a reason',
      resource('list', 'pods', {namespace: 'default'}),
      'Everything is forbidden.',
      'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default": Everything is forbidden.',
      {kind: 'pods'},
    ],
  ])('403 %s', (_case, attributes, reason, message, details) => {
    const status = forbiddenStatus(attributes, reason);
    expect(status).toEqual({kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Forbidden', details, code: 403});
    expect(Object.keys(status)).toEqual(['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'details', 'code']);
  });

  it('401 Unauthorized', () => {
    expect(JSON.stringify(unauthorizedStatus())).toBe('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}');
  });
});

describe('bootstrap policy', () => {
  it('has the upstream roles and bindings with orch names', () => {
    const roles = bootstrapClusterRoles().map((r) => r.metadata.name);
    expect(roles).toEqual(expect.arrayContaining(['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user', 'system:public-info-viewer', 'system:node', 'system:orch-controller-manager', 'system:orch-scheduler']));
    const bindings = Object.fromEntries(bootstrapClusterRoleBindings().map((b) => [b.metadata.name, (b.subjects ?? []).map((s) => `${s.kind}:${s.name}`)]));
    expect(bindings).toMatchObject({
      'cluster-admin': ['Group:system:masters'],
      'system:discovery': ['Group:system:authenticated'],
      'system:basic-user': ['Group:system:authenticated'],
      'system:public-info-viewer': ['Group:system:authenticated', 'Group:system:unauthenticated'],
      'system:orch-controller-manager': ['User:system:orch-controller-manager'],
    });
    // metrics-server's reader role, aggregated into admin, edit and view, for the metrics API served here.
    expect(bootstrapClusterRoles().find((r) => r.metadata.name === 'system:aggregated-metrics-reader')).toMatchObject({
      metadata: {labels: {'rbac.orch.io/aggregate-to-admin': 'true', 'rbac.orch.io/aggregate-to-edit': 'true', 'rbac.orch.io/aggregate-to-view': 'true'}},
      rules: [{verbs: ['get', 'list', 'watch'], apiGroups: ['metrics.orch.io'], resources: ['pods', 'nodes']}],
    });
    for (const object of [...bootstrapClusterRoles(), ...bootstrapClusterRoleBindings()]) {
      expect(object.apiVersion).toBe('rbac.orch.io/v1');
      expect(JSON.stringify(object)).not.toMatch(/k8s\.io|kubernetes\.io|kube-/);
    }
  });
});
