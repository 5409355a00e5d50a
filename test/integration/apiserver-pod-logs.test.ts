/**
 * `kubectl logs` through the API server: the log subresource proxies to the agent port the pod's
 * node reports. A stand-in agent on 127.0.0.1 (a TLS server answering /containerLogs) plays the node,
 * so the test stays on loopback.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {createServer, type Server} from 'node:https';
import {startApiServer, kubectl} from '../helpers/apiserver.js';
import {generateCa, generateServingCertificate} from '../../src/daemons/shared/pki/certificates.js';

let s: Awaited<ReturnType<typeof startApiServer>>;
let agent: Server;
const seen: string[] = [];

beforeAll(async () => {
  const ca = await generateCa();
  const cert = await generateServingCertificate(ca, {hosts: ['localhost'], ips: ['127.0.0.1']});
  agent = createServer({cert: cert.certPem, key: cert.keyPem}, (req, res) => {
    seen.push(req.url ?? '');
    res.end(`log of ${req.url}\n`);
  });
  await new Promise<void>((r) => agent.listen(0, '127.0.0.1', r));
  const port = (agent.address() as {port: number}).port;
  s = await startApiServer({engine: 'sqlite'});
  await s.client.post('/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: 'n1'}});
  await s.client.request('PATCH', '/api/v1/nodes/n1/status', {
    body: {status: {addresses: [{type: 'InternalIP', address: '127.0.0.1'}], daemonEndpoints: {kubeletEndpoint: {Port: port}}}},
    contentType: 'application/merge-patch+json',
  });
  await s.client.post('/api/v1/namespaces/default/pods', {
    apiVersion: 'v1', kind: 'Pod', metadata: {name: 'web'},
    spec: {nodeName: 'n1', containers: [{name: 'app', image: 'x'}, {name: 'side', image: 'x'}]},
  });
}, 30_000);

afterAll(async () => {
  await s?.stop();
  agent?.close();
});

describe('kubectl logs', () => {
  it('proxies to the agent of the pod\'s node, with the container and options', async () => {
    const r = await kubectl(s.orchconfigPath, ['logs', 'web', '-c', 'side', '--tail=5']);
    expect(r).toMatchObject({code: 0, stdout: 'log of /containerLogs/default/web/side?tailLines=5\n'});
  });
  it('kubectl picks the first container itself; the server asks when nobody chose', async () => {
    const r = await kubectl(s.orchconfigPath, ['logs', 'web']);
    expect(r).toMatchObject({code: 0, stdout: 'log of /containerLogs/default/web/app\n'});
    const raw = await kubectl(s.orchconfigPath, ['get', '--raw', '/api/v1/namespaces/default/pods/web/log']);
    expect(raw.code).toBe(1);
    expect(raw.stderr).toContain('a container name must be specified for pod web, choose one of: [app side]');
  });
  it('answers 404 for a missing pod', async () => {
    const r = await kubectl(s.orchconfigPath, ['logs', 'nope']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('pods "nope" not found');
  });
});
