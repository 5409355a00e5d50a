/**
 * `kubectl auth reconcile -f` and `kubectl auth can-i` on a server with upstream's names (kubectl
 * hard-wires `rbac.authorization.k8s.io`): RBAC manifests are created, then reconciled (rules
 * added, never removed without --remove-extra-permissions), and the user they bind can do what
 * they grant and nothing more.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {type ServerProcess, kubectl, startApiServerProcess} from '../helpers/apiserver.js';

const manifest = (verbs: string[]) =>
  [
    {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'team'}},
    {apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: {name: 'deployer', namespace: 'team'}, rules: [{apiGroups: ['apps'], resources: ['deployments'], verbs}]},
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: {name: 'deployer', namespace: 'team'},
      roleRef: {apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer'}, subjects: [{apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'ci'}],
    },
  ].map((o) => JSON.stringify(o)).join('\n');

describe('kubectl auth reconcile and can-i (upstream names)', () => {
  let server: ServerProcess;
  const k = (args: string[], input?: string) => kubectl(server.orchconfigPath, args, {input});

  beforeAll(async () => {
    server = await startApiServerProcess({engine: 'sqlite', args: ['--names', 'kubernetes', '--authorization-mode', 'Node,RBAC']});
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function canI(args: string[]): Promise<string> {
    // The RBAC index follows the store's watch: wait until the answer settles on `yes` when expected.
    let out = '';
    for (let i = 0; i < 50; i++) {
      out = (await k(['auth', 'can-i', ...args, '--as', 'ci', '-n', 'team'])).stdout.trim();
      if (out === 'yes') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return out;
  }

  it('creates the objects of an RBAC manifest, then adds rules without removing any', async () => {
    const first = await k(['auth', 'reconcile', '-f', '-'], manifest(['get', 'list']));
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('role.rbac.authorization.k8s.io/deployer reconciled');
    expect(first.stdout).toContain('rolebinding.rbac.authorization.k8s.io/deployer reconciled');
    expect(await canI(['list', 'deployments.apps'])).toBe('yes');
    expect((await k(['auth', 'can-i', 'create', 'deployments.apps', '--as', 'ci', '-n', 'team'])).stdout.trim()).toBe('no');

    const second = await k(['auth', 'reconcile', '-f', '-'], manifest(['create']));
    expect(second.code).toBe(0);
    expect(await canI(['create', 'deployments.apps'])).toBe('yes');
    // Reconcile only adds: the earlier verbs stay.
    const role = JSON.parse((await k(['get', 'role', 'deployer', '-n', 'team', '-o', 'json'])).stdout);
    expect(role.rules.flatMap((r: {verbs: string[]}) => r.verbs).sort()).toEqual(['create', 'get', 'list']);

    const removed = await k(['auth', 'reconcile', '--remove-extra-permissions', '-f', '-'], manifest(['create']));
    expect(removed.code).toBe(0);
    const after = JSON.parse((await k(['get', 'role', 'deployer', '-n', 'team', '-o', 'json'])).stdout);
    expect(after.rules).toEqual([{apiGroups: ['apps'], resources: ['deployments'], verbs: ['create']}]);
  });

  it('answers can-i for a service account and for a node as RBAC and the Node authorizer decide', async () => {
    const sa = ['--as', 'system:serviceaccount:team:builder', '--as-group', 'system:serviceaccounts', '-n', 'team'];
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: {name: 'builder-edit', namespace: 'team'},
      roleRef: {apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit'}, subjects: [{kind: 'ServiceAccount', name: 'builder', namespace: 'team'}],
    };
    expect((await k(['create', '-f', '-'], JSON.stringify(binding))).code).toBe(0);
    let answer = '';
    for (let i = 0; i < 50 && answer !== 'yes'; i++) {
      answer = (await k(['auth', 'can-i', 'create', 'deployments.apps', ...sa])).stdout.trim();
      if (answer !== 'yes') await new Promise((r) => setTimeout(r, 100));
    }
    expect(answer).toBe('yes');
    expect((await k(['auth', 'can-i', 'create', 'roles.rbac.authorization.k8s.io', ...sa])).stdout.trim()).toBe('no');
    // A node may read a secret only once a pod bound to it names the secret (the Node authorizer's graph).
    const node = (name: string) => ['--as', `system:node:${name}`, '--as-group', 'system:nodes', '-n', 'team'];
    expect((await k(['auth', 'can-i', 'get', 'secret/db', ...node('n1')])).stdout.trim()).toBe("no - no relationship found between node 'n1' and this object");
    const pod = {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'web', namespace: 'team'}, spec: {nodeName: 'n1', containers: [{name: 'c', image: 'x'}], volumes: [{name: 's', secret: {secretName: 'db'}}]}};
    expect((await k(['create', '-f', '-'], JSON.stringify(pod))).code).toBe(0);
    answer = '';
    for (let i = 0; i < 50 && answer !== 'yes'; i++) {
      answer = (await k(['auth', 'can-i', 'get', 'secret/db', ...node('n1')])).stdout.trim();
      if (answer !== 'yes') await new Promise((r) => setTimeout(r, 100));
    }
    expect(answer).toBe('yes');
    expect((await k(['auth', 'can-i', 'get', 'secret/db', ...node('n2')])).stdout.trim()).toBe("no - no relationship found between node 'n2' and this object");
    expect((await k(['auth', 'can-i', 'list', 'secrets', ...node('n1')])).stdout.trim()).toBe('no - No Object name found');
  });

  it('answers can-i --list for the bound user', async () => {
    const list = await k(['auth', 'can-i', '--list', '--as', 'ci', '-n', 'team']);
    expect(list.stdout).toMatch(/deployments\.apps\s+\[\]\s+\[\]\s+\[create\]/);
    expect(list.stdout).toMatch(/selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/);
  });
});
