/**
 * The Node authorizer on a real server (`--authorization-mode=Node,RBAC`): two nodes, each with its
 * client certificate (`system:node:<name>` in `system:nodes`), read only the secrets and config maps
 * of the pods bound to them, and write only their own lease; the graph follows pods as they are
 * bound and deleted.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {type InProcessServer, kubectl, readAdminOrchconfig, startApiServer, writeClientOrchconfig} from '../helpers/apiserver.js';
import {generateCa, generateClientCertificate} from '../../src/daemons/shared/pki/certificates.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('Node authorizer', () => {
  let dir: string;
  let api: InProcessServer;
  const kubeconfig: Record<string, string> = {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-node-authz-'));
    const ca = await generateCa({commonName: 'node-client-ca'});
    const caFile = join(dir, 'client-ca.pem');
    writeFileSync(caFile, ca.certPem);
    api = await startApiServer({engine: 'sqlite', config: {anonymousAuth: false, clientCaFile: caFile, authorizationModes: ['Node', 'RBAC']}});
    const admin = readAdminOrchconfig(api.orchconfigPath);
    for (const node of ['a', 'b']) {
      const cert = await generateClientCertificate(ca, {user: `system:node:${node}`, groups: ['system:nodes']});
      const file = writeClientOrchconfig(join(dir, `${node}.orchconfig`), {server: admin.server, caPem: admin.caPem, cert});
      kubeconfig[node] = file;
    }
    const objects = [
      {apiVersion: 'v1', kind: 'Secret', metadata: {name: 'a-secret', namespace: 'default'}, data: {k: b64('for a')}},
      {apiVersion: 'v1', kind: 'Secret', metadata: {name: 'b-secret', namespace: 'default'}, data: {k: b64('for b')}},
      {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'a-config', namespace: 'default'}, data: {k: 'v'}},
      {
        apiVersion: 'v1', kind: 'Pod', metadata: {name: 'on-a', namespace: 'default'},
        spec: {nodeName: 'a', containers: [{name: 'c', image: 'x', envFrom: [{configMapRef: {name: 'a-config'}}]}], volumes: [{name: 's', secret: {secretName: 'a-secret'}}]},
      },
      {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'on-b', namespace: 'default'}, spec: {nodeName: 'b', containers: [{name: 'c', image: 'x', env: [{name: 'K', valueFrom: {secretKeyRef: {name: 'b-secret', key: 'k'}}}]}]}},
    ];
    const created = await kubectl(api.orchconfigPath, ['create', '-f', '-'], {input: objects.map((o) => JSON.stringify(o)).join('\n')});
    expect(created.stderr).toBe('');
  }, 60_000);

  afterAll(async () => {
    await api?.stop();
    if (dir) rmSync(dir, {recursive: true, force: true});
  });

  /** The graph follows the store's watch: wait until a node's read gives the expected exit code. */
  async function eventually(node: string, args: string[], ok: boolean): Promise<{stdout: string; stderr: string}> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await kubectl(kubeconfig[node]!, args);
      if ((r.code === 0) === ok || Date.now() > deadline) return r;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('each node reads the secrets and config maps of its own pods only', async () => {
    expect((await eventually('a', ['get', 'secret', 'a-secret', '-o', 'jsonpath={.data.k}'], true)).stdout).toBe(b64('for a'));
    expect((await eventually('a', ['get', 'configmap', 'a-config', '-o', 'name'], true)).stdout.trim()).toBe('configmap/a-config');
    expect((await eventually('b', ['get', 'secret', 'b-secret', '-o', 'name'], true)).stdout.trim()).toBe('secret/b-secret');
    const denied = await kubectl(kubeconfig.a!, ['get', 'secret', 'b-secret']);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain(
      `Error from server (Forbidden): secrets "b-secret" is forbidden: User "system:node:a" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'a' and this object`,
    );
    const list = await kubectl(kubeconfig.b!, ['get', 'secrets']);
    expect(list.code).not.toBe(0);
    expect(list.stderr).toContain('No Object name found');
  });

  it('follows the graph: deleting the pod takes the secret away', async () => {
    await kubectl(api.orchconfigPath, ['delete', 'pod', 'on-b', '--grace-period=0', '--force']);
    const gone = await eventually('b', ['get', 'secret', 'b-secret'], false);
    expect(gone.stderr).toContain("no relationship found between node 'b' and this object");
  });

  it('a node writes its own lease but not another node\'s', async () => {
    const lease = (name: string) =>
      JSON.stringify({apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: {name, namespace: 'orch-node-lease'}, spec: {holderIdentity: name, leaseDurationSeconds: 40}});
    expect((await kubectl(kubeconfig.a!, ['create', '-f', '-'], {input: lease('a')})).stdout).toContain('lease.coordination.orch.io/a created');
    expect((await kubectl(api.orchconfigPath, ['create', '-f', '-'], {input: lease('b')})).code).toBe(0);
    const other = await kubectl(kubeconfig.a!, ['delete', 'lease', 'b', '-n', 'orch-node-lease']);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('can only access node lease with the same name as the requesting node');
    expect((await kubectl(kubeconfig.a!, ['label', 'lease', 'a', '-n', 'orch-node-lease', 'x=y'])).code).toBe(0);
  });

  it('everything else follows the node role: pods readable, deployments not', async () => {
    expect((await kubectl(kubeconfig.a!, ['get', 'pods', '-o', 'name'])).stdout).toContain('pod/on-a');
    const deployments = await kubectl(kubeconfig.a!, ['get', 'deployments']);
    expect(deployments.code).not.toBe(0);
    expect(deployments.stderr).toContain('User "system:node:a" cannot list resource "deployments"');
  });
});
