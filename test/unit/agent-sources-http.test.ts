/**
 * The static pod URL source against a local node:http server: the configured headers arrive (a
 * repeated name as separate lines, in order), a Pod or a PodList body becomes the source's set,
 * failures keep the previous set, an empty body empties it, an unchanged body changes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../src/lib/klog.js';
import { configSourceAnnotation, HttpSource, PodConfig, type PodUpdate, type SourceProblem } from '../../src/daemons/agent/sources/index.js';

const quiet: Logger = { info() {}, warning() {}, error() {}, v: () => ({ enabled: false, info() {} }) };
const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'i', command: ['sleep', '1'] }] } });

let server: Server;
let url: string;
let reply: { status: number; body: string };
let requests: IncomingMessage[];
let updates: PodUpdate[];
let problems: SourceProblem[];
let config: PodConfig;
let source: HttpSource;

beforeEach(async () => {
  requests = [];
  updates = [];
  problems = [];
  reply = { status: 200, body: JSON.stringify(pod('one')) };
  server = createServer((req, res) => {
    requests.push(req);
    res.writeHead(reply.status);
    res.end(reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pods`;
  config = new PodConfig({ listener: (u) => updates.push(u), logger: quiet });
  source = new HttpSource({
    url,
    headers: { 'X-Token': ['a', 'b'], 'X-Other': ['c'] },
    nodeName: 'node-1',
    checkFrequencyMs: 60_000,
    push: (s, pods) => config.set(s, pods),
    onProblem: (p) => problems.push(p),
    logger: quiet,
  });
});
afterEach(async () => {
  await source.stop();
  await new Promise((resolve) => server.close(resolve));
});

const names = () => config.pods('http').map((p) => p.metadata.name).sort();

describe('HTTP source', () => {
  it('sends the configured headers, repeated names as separate lines in order', async () => {
    await source.checkNow();
    const raw = requests[0]!.rawHeaders;
    const pairs = Array.from({ length: raw.length / 2 }, (_, i) => [raw[2 * i]!.toLowerCase(), raw[2 * i + 1]]).filter(([name]) => name!.startsWith('x-'));
    expect(pairs).toEqual([['x-token', 'a'], ['x-token', 'b'], ['x-other', 'c']]);
    expect(requests[0]!.method).toBe('GET');
    expect(requests[0]!.url).toBe('/pods');
  });

  it('reads a single pod, then a PodList, with the http source recorded', async () => {
    await source.checkNow();
    expect(names()).toEqual(['one-node-1']);
    expect(updates[0]!.pods[0]!.metadata.annotations![configSourceAnnotation()]).toBe('http');
    // URL pods get no NoExecute toleration (file pods only).
    expect(updates[0]!.pods[0]!.spec.tolerations).toBeUndefined();
    reply.body = JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [pod('one'), pod('two')] });
    await source.checkNow();
    expect(names()).toEqual(['one-node-1', 'two-node-1']);
    expect(updates.map((u) => u.op)).toEqual(['ADD', 'ADD']);
  });

  it('keeps the previous set on an error status, a bad body or an unreachable server, and reports each', async () => {
    await source.checkNow();
    reply = { status: 500, body: 'boom' };
    await source.checkNow();
    reply = { status: 200, body: 'apiVersion: v1\nkind: Pod\nmetadata: {}\n' };
    await source.checkNow();
    expect(names()).toEqual(['one-node-1']);
    expect(problems.map((p) => p.message)).toEqual([`${url}: 500 Internal Server Error`, 'invalid pod: name is needed for the pod']);
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await closed;
    reply = { status: 200, body: JSON.stringify(pod('again')) };
    await source.checkNow();
    expect(problems[2]!.message).toMatch(/ECONNREFUSED|socket hang up/);
    expect(names()).toEqual(['one-node-1']);
    server = createServer(); // for afterEach
    server.listen(0);
  });

  it('empties the set on an empty body and ignores an unchanged body', async () => {
    await source.checkNow();
    await source.checkNow();
    expect(updates.map((u) => u.op)).toEqual(['ADD']);
    reply.body = '';
    await source.checkNow();
    expect(names()).toEqual([]);
    expect(updates.map((u) => u.op)).toEqual(['ADD', 'REMOVE']);
    expect(problems.map((p) => p.message)).toEqual([`zero-length data received from ${url}`]);
  });

  it('fetches every check period once started', async () => {
    const fast = new HttpSource({ url, nodeName: 'n', checkFrequencyMs: 30, push: () => {}, logger: quiet });
    fast.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await fast.stop();
    expect(requests.length).toBeGreaterThanOrEqual(3);
  });
});
