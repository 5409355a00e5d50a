/**
 * The resource metrics API through real `kubectl top`. kubectl's metrics client is hard-wired to
 * upstream's group (metrics.k8s.io), so this file runs the API server under upstream's name set
 * (`--names kubernetes`); test/e2e/up-kubectl.test.ts reads orch's group on a real `orch up`. A
 * stand-in agent on 127.0.0.1 serves a fixed /stats/summary, so the numbers are known.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {createServer, type Server} from 'node:https';
import {selectNames} from '../../src/api/names.js';
import {startApiServer, kubectl} from '../helpers/apiserver.js';
import {generateCa, generateServingCertificate} from '../../src/daemons/shared/pki/certificates.js';

selectNames('kubernetes');

const time = new Date().toISOString();
const container = (name: string, nanoCores: number, bytes: number) => ({
  name, startTime: time, cpu: {time, usageNanoCores: nanoCores, usageCoreNanoSeconds: 1e9}, memory: {time, workingSetBytes: bytes},
});
const summary = {
  node: {nodeName: 'n1', startTime: time, cpu: {time, usageNanoCores: 1_500_000_000, usageCoreNanoSeconds: 9e9}, memory: {time, workingSetBytes: 2 * 1024 ** 3}},
  pods: [
    {podRef: {name: 'busy', namespace: 'default', uid: 'u1'}, startTime: time, containers: [container('spin', 987_000_000, 3 * 1024 ** 2), container('side', 2_000_000, 1024 ** 2)]},
    {podRef: {name: 'calm', namespace: 'default', uid: 'u2'}, startTime: time, containers: [container('nap', 0, 512 * 1024)]},
    {podRef: {name: 'gone', namespace: 'default', uid: 'u3'}, startTime: time, containers: [{name: 'x', startTime: time}]},
  ],
};

let s: Awaited<ReturnType<typeof startApiServer>>;
let agent: Server;
const seen: string[] = [];

beforeAll(async () => {
  const ca = await generateCa();
  const cert = await generateServingCertificate(ca, {hosts: ['localhost'], ips: ['127.0.0.1']});
  agent = createServer({cert: cert.certPem, key: cert.keyPem}, (req, res) => {
    seen.push(req.url ?? '');
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(summary));
  });
  await new Promise<void>((r) => agent.listen(0, '127.0.0.1', r));
  const port = (agent.address() as {port: number}).port;
  s = await startApiServer({engine: 'sqlite'});
  await s.client.post('/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: 'n1', labels: {zone: 'a'}}});
  await s.client.post('/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: 'unreachable'}});
  await s.client.request('PATCH', '/api/v1/nodes/n1/status', {
    body: {status: {addresses: [{type: 'InternalIP', address: '127.0.0.1'}], daemonEndpoints: {kubeletEndpoint: {Port: port}}, allocatable: {cpu: '4', memory: '8Gi'}, capacity: {cpu: '4', memory: '8Gi'}}},
    contentType: 'application/merge-patch+json',
  });
  for (const [name, labels] of [['busy', {app: 'spin'}], ['calm', {app: 'nap'}], ['gone', {app: 'x'}]] as const) {
    await s.client.post('/api/v1/namespaces/default/pods', {apiVersion: 'v1', kind: 'Pod', metadata: {name, labels}, spec: {nodeName: 'n1', containers: [{name: 'c', image: 'x'}]}});
  }
  await s.client.post('/api/v1/namespaces/default/pods', {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'pending'}, spec: {containers: [{name: 'c', image: 'x'}]}});
}, 30_000);

afterAll(async () => {
  await s?.stop();
  agent?.close();
});

const rows = (text: string) => text.trim().split('\n').map((l) => l.trim().split(/\s+/));

describe('kubectl top', () => {
  it('lists the metrics group in discovery, with get and list of nodes and pods', async () => {
    const r = await kubectl(s.orchconfigPath, ['api-resources', '--api-group=metrics.k8s.io', '-o', 'wide']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^nodes\s+metrics\.k8s\.io\/v1beta1\s+false\s+NodeMetrics\s+get,list/m);
    expect(r.stdout).toMatch(/^pods\s+metrics\.k8s\.io\/v1beta1\s+true\s+PodMetrics\s+get,list/m);
  });

  it('top pods shows each running pod\'s CPU and memory, summed over its containers', async () => {
    const r = await kubectl(s.orchconfigPath, ['top', 'pods']);
    expect(r).toMatchObject({code: 0, stderr: ''});
    expect(rows(r.stdout)).toEqual([
      ['NAME', 'CPU(cores)', 'MEMORY(bytes)'],
      ['busy', '989m', '4Mi'],
      ['calm', '0m', '0Mi'],
    ]);
    // metrics-server's lighter request
    expect(seen).toContain('/stats/summary?only_cpu_and_memory=true');
  });

  it('top pod --containers and a label selector', async () => {
    const r = await kubectl(s.orchconfigPath, ['top', 'pod', '-l', 'app=spin', '--containers']);
    expect(r.code).toBe(0);
    expect(rows(r.stdout)).toEqual([
      ['POD', 'NAME', 'CPU(cores)', 'MEMORY(bytes)'],
      ['busy', 'side', '2m', '1Mi'],
      ['busy', 'spin', '987m', '3Mi'],
    ]);
  });

  it('top nodes shows usage against allocatable; a node whose agent cannot be read has no metrics', async () => {
    const r = await kubectl(s.orchconfigPath, ['top', 'nodes']);
    expect(r.code).toBe(0);
    const table = rows(r.stdout);
    expect(table[0]).toEqual(['NAME', 'CPU(cores)', 'CPU(%)', 'MEMORY(bytes)', 'MEMORY(%)']);
    expect(table[1]).toEqual(['n1', '1500m', '37%', '2048Mi', '25%']);
    // kubectl lists every node and marks those the metrics API has nothing for.
    expect(table[2]).toEqual(['unreachable', '<unknown>', '<unknown>', '<unknown>', '<unknown>']);
  });

  it('answers metrics-server\'s NotFound for a pod without metrics, and a bad selector with 400', async () => {
    const missing = await kubectl(s.orchconfigPath, ['top', 'pod', 'pending']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('podmetrics.metrics.k8s.io "default/pending" not found');
    const node = await kubectl(s.orchconfigPath, ['get', '--raw', '/apis/metrics.k8s.io/v1beta1/nodes/unreachable']);
    expect(node.stderr).toContain('nodemetrics.metrics.k8s.io "unreachable" not found');
    const bad = await kubectl(s.orchconfigPath, ['get', '--raw', '/apis/metrics.k8s.io/v1beta1/pods?labelSelector=a%20b']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('BadRequest');
  });

  it('serves metrics-server\'s object shapes', async () => {
    const r = await kubectl(s.orchconfigPath, ['get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/busy']);
    const obj = JSON.parse(r.stdout);
    expect(obj).toMatchObject({
      kind: 'PodMetrics', apiVersion: 'metrics.k8s.io/v1beta1',
      metadata: {name: 'busy', namespace: 'default', labels: {app: 'spin'}},
      window: '10s',
      containers: [{name: 'spin', usage: {cpu: '987m', memory: '3Mi'}}, {name: 'side', usage: {cpu: '2m', memory: '1Mi'}}],
    });
    expect(obj.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const write = await kubectl(s.orchconfigPath, ['delete', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/busy']);
    expect(write.code).toBe(1);
    expect(write.stderr).toContain('MethodNotAllowed');
  });
});
