/**
 * The agent's secure port with `--authorization-mode=Webhook` against a real API server (RBAC): each
 * path becomes upstream's `nodes/<subresource>` attributes, asked with a SubjectAccessReview; a
 * user RBAC allows to get nodes/stats reads /stats/summary, and is refused /pods (nodes/pods) and
 * the exec paths (nodes/proxy) with the kubelet's 403 text.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, readFileSync, rmSync} from 'node:fs';
import {request} from 'node:https';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {type InProcessServer, startApiServer} from '../helpers/apiserver.js';
import {AgentServers, serverConfigFromOptions} from '../../src/daemons/agent/server/index.js';
import {generateClientCertificate, type KeyPairPem} from '../../src/daemons/shared/pki/certificates.js';
import {resolveClientConfig} from '../../src/client/orchconfig.js';
import {RestClient} from '../../src/client/rest-client.js';

function get(port: number, path: string, cert: KeyPairPem): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const req = request({host: '127.0.0.1', port, path, rejectUnauthorized: false, cert: cert.certPem, key: cert.keyPem, agent: false}, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({status: res.statusCode ?? 0, body}));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('agent delegated authorization (--authorization-mode=Webhook)', () => {
  let dir: string;
  let api: InProcessServer;
  let servers: AgentServers;
  let client: RestClient;
  let port: number;
  let monitor: KeyPairPem;
  let stranger: KeyPairPem;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-agent-delegated-'));
    api = await startApiServer({engine: 'sqlite', config: {authorizationModes: ['RBAC']}});
    const pki = join(api.dataDir, 'pki');
    const ca = {certPem: readFileSync(join(pki, 'ca.crt'), 'utf8'), keyPem: readFileSync(join(pki, 'ca.key'), 'utf8')};
    monitor = await generateClientCertificate(ca, {user: 'monitor'});
    stranger = await generateClientCertificate(ca, {user: 'stranger'});
    const rbac = 'rbac.orch.io';
    await api.client.post(`/apis/${rbac}/v1/clusterroles`, {apiVersion: `${rbac}/v1`, kind: 'ClusterRole', metadata: {name: 'node-stats'}, rules: [{verbs: ['get'], apiGroups: [''], resources: ['nodes/stats']}]});
    await api.client.post(`/apis/${rbac}/v1/clusterrolebindings`, {
      apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', metadata: {name: 'monitor-stats'},
      roleRef: {apiGroup: rbac, kind: 'ClusterRole', name: 'node-stats'}, subjects: [{apiGroup: rbac, kind: 'User', name: 'monitor'}],
    });
    client = new RestClient({config: await resolveClientConfig({orchconfig: api.orchconfigPath})});
    servers = new AgentServers({
      config: serverConfigFromOptions({
        address: '127.0.0.1', 'read-only-port': 0, 'healthz-port': 0, 'cert-dir': join(dir, 'pki'), 'anonymous-auth': false,
        'client-ca-file': join(pki, 'ca.crt'), 'authorization-mode': 'Webhook', 'authorization-webhook-cache-unauthorized-ttl': {ms: 0},
      }),
      providers: {
        pods: () => [],
        runningPods: () => [],
        logPath: () => undefined,
        stats: async () => ({node: {nodeName: 'n1', startTime: new Date(0).toISOString()}, pods: []}) as never,
        health: () => undefined,
      } as never,
      portOverrides: {main: 0},
      apiClient: client,
      nodeName: 'n1',
    });
    await servers.start();
    port = servers.ports.main!;
  }, 60_000);

  afterAll(async () => {
    await servers?.stop();
    client?.close();
    await api?.stop();
    if (dir) rmSync(dir, {recursive: true, force: true});
  });

  it('serves nodes/stats to a user RBAC allows', async () => {
    const reply = await get(port, '/stats/summary', monitor);
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body).node.nodeName).toBe('n1');
  });

  it('refuses what RBAC does not allow with the kubelet\'s text, naming the subresource', async () => {
    expect(await get(port, '/pods', monitor)).toEqual({status: 403, body: 'Forbidden (user=monitor, verb=get, resource=nodes, subresource=pods)'});
    expect(await get(port, '/stats/summary', stranger)).toEqual({status: 403, body: 'Forbidden (user=stranger, verb=get, resource=nodes, subresource=stats)'});
    expect((await get(port, '/run/ns/pod/c?cmd=true', monitor)).body).toBe('Forbidden (user=monitor, verb=get, resource=nodes, subresource=proxy)');
  });
});
