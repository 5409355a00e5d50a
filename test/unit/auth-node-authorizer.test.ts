import {describe, expect, it} from '@jest/globals';
import {NodeGraph, podReferences} from '../../src/daemons/apiserver/authorization/node-graph.js';
import {NodeAuthorizer, nodeIdentity} from '../../src/daemons/apiserver/authorization/node-authorizer.js';
import {nodePolicyRules} from '../../src/daemons/apiserver/authorization/bootstrap-policy.js';
import type {AuthorizationAttributes} from '../../src/daemons/shared/authorization/attributes.js';

const nodeA = {name: 'system:node:a', groups: ['system:nodes', 'system:authenticated']};
const nodeB = {name: 'system:node:b', groups: ['system:nodes', 'system:authenticated']};

function pod(name: string, node: string, spec: Record<string, unknown> = {}, phase = 'Running') {
  return {metadata: {name, namespace: 'team'}, spec: {nodeName: node, containers: [{name: 'c'}], ...spec}, status: {phase}};
}

const webPod = pod('web', 'a', {
  serviceAccountName: 'web-sa',
  imagePullSecrets: [{name: 'registry'}],
  containers: [{name: 'c', env: [{name: 'P', valueFrom: {secretKeyRef: {name: 'db-password', key: 'p'}}}], envFrom: [{configMapRef: {name: 'settings'}}]}],
  volumes: [
    {name: 'tls', secret: {secretName: 'web-tls'}},
    {name: 'proj', projected: {sources: [{configMap: {name: 'ca'}}, {secret: {name: 'projected-secret'}}]}},
    {name: 'data', persistentVolumeClaim: {claimName: 'web-data'}},
    {name: 'scratch', ephemeral: {volumeClaimTemplate: {}}},
  ],
});

describe('podReferences', () => {
  it('collects what a pod names: account, pull secrets, env, volumes, claims', () => {
    expect(podReferences(webPod).sort()).toEqual(
      [
        'configmap/team/ca', 'configmap/team/settings', 'pvc/team/web-data', 'pvc/team/web-scratch', 'secret/team/db-password',
        'secret/team/projected-secret', 'secret/team/registry', 'secret/team/web-tls', 'serviceaccount/team/web-sa',
      ].sort(),
    );
  });

  it('defaults the service account to `default`', () => {
    expect(podReferences(pod('p', 'a'))).toEqual(['serviceaccount/team/default']);
  });
});

describe('NodeGraph', () => {
  it('follows pods to their node, claims to volumes, volumes to their secrets, and forgets deleted or finished pods', () => {
    const g = new NodeGraph();
    g.applyPod(webPod);
    g.applyPod(pod('other', 'b', {volumes: [{name: 's', secret: {secretName: 'b-only'}}]}));
    expect(g.hasPath('a', 'secret', 'team', 'web-tls')).toBe(true);
    expect(g.hasPath('b', 'secret', 'team', 'web-tls')).toBe(false);
    expect(g.hasPath('a', 'secret', 'team', 'b-only')).toBe(false);
    expect(g.hasPath('a', 'secret', 'other-ns', 'web-tls')).toBe(false);

    g.applyPersistentVolumeClaim({metadata: {name: 'web-data', namespace: 'team'}, spec: {volumeName: 'pv-1'}});
    g.applyPersistentVolume({metadata: {name: 'pv-1'}, spec: {csi: {driver: 'x', nodePublishSecretRef: {name: 'csi-creds', namespace: 'storage'}}}});
    expect(g.hasPath('a', 'pv', '', 'pv-1')).toBe(true);
    expect(g.hasPath('b', 'pv', '', 'pv-1')).toBe(false);
    expect(g.hasPath('a', 'secret', 'storage', 'csi-creds')).toBe(true);

    g.applyVolumeAttachment({metadata: {name: 'va-1'}, spec: {nodeName: 'b', source: {persistentVolumeName: 'pv-2'}}});
    expect(g.hasPath('b', 'volumeattachment', '', 'va-1')).toBe(true);
    expect(g.hasPath('a', 'volumeattachment', '', 'va-1')).toBe(false);
    expect(g.hasPath('b', 'pv', '', 'pv-2')).toBe(true);

    // Moving the pod's references: an update replaces what it reached.
    g.applyPod(pod('web', 'a', {volumes: [{name: 'tls', secret: {secretName: 'web-tls-v2'}}]}));
    expect(g.hasPath('a', 'secret', 'team', 'web-tls')).toBe(false);
    expect(g.hasPath('a', 'secret', 'team', 'web-tls-v2')).toBe(true);
    g.applyPod(pod('web', 'a', {volumes: [{name: 'tls', secret: {secretName: 'web-tls-v2'}}]}, 'Succeeded'));
    expect(g.hasPath('a', 'secret', 'team', 'web-tls-v2')).toBe(false);
    g.applyPod(webPod);
    g.deletePod(webPod);
    expect(g.hasPath('a', 'secret', 'team', 'web-tls')).toBe(false);
  });

  it('keeps an object reachable while any pod of the node still names it', () => {
    const g = new NodeGraph();
    const p1 = pod('p1', 'a', {volumes: [{name: 's', secret: {secretName: 'shared'}}]});
    const p2 = pod('p2', 'a', {volumes: [{name: 's', secret: {secretName: 'shared'}}]});
    g.applyPod(p1);
    g.applyPod(p2);
    g.deletePod(p1);
    expect(g.hasPath('a', 'secret', 'team', 'shared')).toBe(true);
    g.deletePod(p2);
    expect(g.hasPath('a', 'secret', 'team', 'shared')).toBe(false);
  });
});

describe('NodeAuthorizer', () => {
  const g = new NodeGraph();
  g.applyPod(webPod);
  const authorizer = new NodeAuthorizer(g, nodePolicyRules);
  const r = (user: typeof nodeA, verb: string, resource: string, extra: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
    user, verb, resourceRequest: true, apiGroup: '', resource, namespace: 'team', ...extra,
  });

  it.each<[string, AuthorizationAttributes, string, string]>([
    ['its pod\'s secret', r(nodeA, 'get', 'secrets', {name: 'web-tls'}), 'Allow', ''],
    ['watch of its pod\'s config map', r(nodeA, 'watch', 'configmaps', {name: 'settings'}), 'Allow', ''],
    ['another node\'s view of the secret', r(nodeB, 'get', 'secrets', {name: 'web-tls'}), 'NoOpinion', "no relationship found between node 'b' and this object"],
    ['a secret no pod names', r(nodeA, 'get', 'secrets', {name: 'admin-token'}), 'NoOpinion', "no relationship found between node 'a' and this object"],
    ['a list of all secrets', r(nodeA, 'list', 'secrets'), 'NoOpinion', 'No Object name found'],
    ['writing a secret', r(nodeA, 'update', 'secrets', {name: 'web-tls'}), 'NoOpinion', 'can only read resources of this type'],
    ['a claim it uses', r(nodeA, 'get', 'persistentvolumeclaims', {name: 'web-data'}), 'Allow', ''],
    ['listing claims', r(nodeA, 'list', 'persistentvolumeclaims', {name: 'web-data'}), 'NoOpinion', 'can only get individual resources of this type'],
    ['its pod\'s service account token', r(nodeA, 'create', 'serviceaccounts', {name: 'web-sa', subresource: 'token'}), 'Allow', ''],
    ['another account\'s token', r(nodeA, 'create', 'serviceaccounts', {name: 'admin', subresource: 'token'}), 'NoOpinion', "no relationship found between node 'a' and this object"],
    ['its own lease', r(nodeA, 'update', 'leases', {apiGroup: 'coordination.orch.io', namespace: 'orch-node-lease', name: 'a'}), 'Allow', ''],
    ['another node\'s lease', r(nodeA, 'update', 'leases', {apiGroup: 'coordination.orch.io', namespace: 'orch-node-lease', name: 'b'}), 'NoOpinion', 'can only access node lease with the same name as the requesting node'],
    ['a lease elsewhere', r(nodeA, 'get', 'leases', {apiGroup: 'coordination.orch.io', namespace: 'orch-system', name: 'a'}), 'NoOpinion', 'can only access leases in the "orch-node-lease" system namespace'],
    ['pod status (node rules)', r(nodeA, 'patch', 'pods', {subresource: 'status', name: 'web'}), 'Allow', ''],
    ['deployments (not in node rules)', r(nodeA, 'list', 'deployments', {apiGroup: 'apps'}), 'NoOpinion', ''],
  ])('%s', (_case, attributes, decision, reason) => {
    expect(authorizer.authorize(attributes)).toEqual({decision, reason});
  });

  it('has no opinion on users that are not nodes', () => {
    expect(authorizer.authorize(r({name: 'system:node:a', groups: ['system:authenticated']}, 'get', 'secrets', {name: 'web-tls'}))).toEqual({decision: 'NoOpinion', reason: ''});
    expect(authorizer.authorize(r({name: 'alice', groups: ['system:nodes']}, 'get', 'secrets', {name: 'web-tls'}))).toEqual({decision: 'NoOpinion', reason: ''});
  });

  it('names the identity', () => {
    expect(nodeIdentity(nodeA)).toEqual({isNode: true, nodeName: 'a'});
    expect(nodeIdentity({name: 'system:node:', groups: ['system:nodes']})).toEqual({isNode: true, nodeName: ''});
    expect(authorizer.authorize(r({name: 'system:node:', groups: ['system:nodes']}, 'get', 'nodes'))).toEqual({decision: 'NoOpinion', reason: 'unknown node for user "system:node:"'});
  });
});
