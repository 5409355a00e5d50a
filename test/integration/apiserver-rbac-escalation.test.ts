/**
 * RBAC escalation prevention on a real server, with real kubectl: a namespace admin may write roles
 * and bindings only within what it holds, unless it may `escalate` or `bind`; the refusal lists
 * the missing rules in upstream's words, and nothing is stored.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {type InProcessServer, kubectl, readAdminOrchconfig, startApiServer, writeClientOrchconfig} from '../helpers/apiserver.js';

const RBAC = 'rbac.orch.io';

const role = (name: string, rules: unknown[]) => JSON.stringify({apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: {name, namespace: 'team'}, rules});
const binding = (name: string, kind: string, roleName: string) =>
  JSON.stringify({
    apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: {name, namespace: 'team'},
    roleRef: {apiGroup: RBAC, kind, name: roleName}, subjects: [{apiGroup: RBAC, kind: 'User', name: 'someone'}],
  });

describe('RBAC escalation prevention', () => {
  let dir: string;
  let api: InProcessServer;
  let jane: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-escalation-'));
    const tokenFile = join(dir, 'tokens.csv');
    writeFileSync(tokenFile, 'jane-token,jane,1,"dev"\n');
    api = await startApiServer({engine: 'sqlite', config: {anonymousAuth: false, tokenAuthFile: tokenFile, authorizationModes: ['RBAC']}});
    const admin = readAdminOrchconfig(api.orchconfigPath);
    jane = writeClientOrchconfig(join(dir, 'jane.orchconfig'), {server: admin.server, caPem: admin.caPem, token: 'jane-token', namespace: 'team'});
    const setup = [
      JSON.stringify({apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'team'}}),
      JSON.stringify({
        apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: {name: 'jane-admin', namespace: 'team'},
        roleRef: {apiGroup: RBAC, kind: 'ClusterRole', name: 'admin'}, subjects: [{apiGroup: RBAC, kind: 'User', name: 'jane'}],
      }),
    ];
    const created = await kubectl(api.orchconfigPath, ['create', '-f', '-'], {input: setup.join('\n')});
    expect(created.code).toBe(0);
  }, 60_000);

  afterAll(async () => {
    await api?.stop();
    if (dir) rmSync(dir, {recursive: true, force: true});
  });

  /** The RBAC index follows the store's watch: retry a write until its outcome is as expected. */
  async function create(input: string, ok: boolean): Promise<{stdout: string; stderr: string}> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await kubectl(jane, ['create', '-f', '-'], {input});
      if ((r.code === 0) === ok || Date.now() > deadline) return r;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('a namespace admin writes a role with rules it holds', async () => {
    const r = await create(role('pod-reader', [{apiGroups: [''], resources: ['pods'], verbs: ['get', 'list']}]), true);
    expect(r.stdout).toContain(`role.${RBAC}/pod-reader created`);
  });

  it('refuses a role with rules it does not hold, listing them, and stores nothing', async () => {
    const r = await create(role('node-reader', [{apiGroups: [''], resources: ['nodes', 'pods'], verbs: ['get']}, {apiGroups: [''], resources: ['secrets'], verbs: ['escalate']}]), false);
    expect(r.stderr).toContain(
      `roles.${RBAC} "node-reader" is forbidden: user "jane" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n` +
        '{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["escalate"]}',
    );
    expect((await kubectl(api.orchconfigPath, ['get', 'role', 'node-reader', '-n', 'team'])).stderr).toContain('not found');
  });

  it('refuses a binding to a role it does not hold, allows one it holds', async () => {
    const denied = await create(binding('to-cluster-admin', 'ClusterRole', 'cluster-admin'), false);
    expect(denied.stderr).toContain(`rolebindings.${RBAC} "to-cluster-admin" is forbidden: user "jane" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:`);
    expect(denied.stderr).toContain('{APIGroups:["*"], Resources:["*"], Verbs:["*"]}');
    const allowed = await create(binding('to-view', 'ClusterRole', 'view'), true);
    expect(allowed.stdout).toContain(`rolebinding.${RBAC}/to-view created`);
    const missing = await create(binding('to-nothing', 'Role', 'does-not-exist'), false);
    expect(missing.stderr).toContain(`roles.${RBAC} "does-not-exist" not found`);
  });

  it('`bind` on a role and `escalate` on roles lift the checks', async () => {
    const grants = [
      JSON.stringify({apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: {name: 'delegate', namespace: 'team'}, rules: [
        {apiGroups: [RBAC], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['cluster-admin']},
        {apiGroups: [RBAC], resources: ['roles'], verbs: ['escalate']},
      ]}),
      JSON.stringify({apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: {name: 'jane-delegate', namespace: 'team'},
        roleRef: {apiGroup: RBAC, kind: 'Role', name: 'delegate'}, subjects: [{apiGroup: RBAC, kind: 'User', name: 'jane'}]}),
    ];
    expect((await kubectl(api.orchconfigPath, ['create', '-f', '-'], {input: grants.join('\n')})).code).toBe(0);
    expect((await create(binding('to-cluster-admin', 'ClusterRole', 'cluster-admin'), true)).stdout).toContain('created');
    expect((await create(role('node-reader', [{apiGroups: [''], resources: ['nodes'], verbs: ['get']}]), true)).stdout).toContain('created');
  });
});
