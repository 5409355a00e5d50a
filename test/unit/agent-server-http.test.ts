/**
 * The agent's three listeners over real sockets on 127.0.0.1: every path, authentication by client
 * certificate, the read-only and health ports, the debugging switch and TLS settings.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from '@jest/globals';
import {appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {request as httpRequest, type IncomingHttpHeaders} from 'node:http';
import {request as httpsRequest} from 'node:https';
import {createServer} from 'node:net';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {Registry} from 'prom-client';
import {generateCa, generateClientCertificate, generateServingCertificate, type KeyPairPem} from '../../src/daemons/shared/pki/certificates.js';
import {
  AgentMetrics,
  AgentServers,
  serverConfigFromOptions,
  type AgentServerConfig,
  type AgentServerProviders,
  type ServedPod,
  type Summary,
} from '../../src/daemons/agent/server/index.js';

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

interface TlsClient {
  ca?: string;
  cert?: string;
  key?: string;
  maxVersion?: 'TLSv1.2' | 'TLSv1.3';
}

function fetchHttps(port: number, path: string, tls: TlsClient = {}, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {host: '127.0.0.1', port, path, method, ca: tls.ca, cert: tls.cert, key: tls.key, maxVersion: tls.maxVersion, rejectUnauthorized: tls.ca !== undefined, agent: false},
      (res) => collect(res, resolve, reject),
    );
    req.on('error', reject);
    req.end();
  });
}

function fetchHttp(port: number, path: string, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({host: '127.0.0.1', port, path, method, agent: false}, (res) => collect(res, resolve, reject));
    req.on('error', reject);
    req.end();
  });
}

function collect(res: import('node:http').IncomingMessage, resolve: (r: Reply) => void, reject: (e: Error) => void) {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => resolve({status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString()}));
  res.on('error', reject);
}

const T = '2024-05-01T10:00:00Z';
const dir = mkdtempSync(join(tmpdir(), 'agent-server-'));
const logFile = join(dir, 'app.log');
const LOG_LINES = ['first', 'second', 'third'];
const writeLog = () => writeFileSync(logFile, LOG_LINES.map((l, i) => `2024-05-01T09:59:0${i}.000000000Z stdout F ${l}\n`).join(''));

let containerState: Record<string, unknown> = {running: {startedAt: T}};
let unhealthy: string | undefined;

const pod: ServedPod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {name: 'web', namespace: 'default', uid: 'uid-1'},
  spec: {containers: [{name: 'app'}], initContainers: [{name: 'setup'}]},
  get status() {
    return {phase: 'Running', containerStatuses: [{name: 'app', state: containerState}], initContainerStatuses: [{name: 'setup', state: {waiting: {reason: 'PodInitializing'}}}]};
  },
};

const summary: Summary = {
  node: {nodeName: 'node-1', startTime: T, memory: {time: T, availableBytes: 1000, workingSetBytes: 24}, fs: {time: T, availableBytes: 50, capacityBytes: 100, inodesFree: 7}},
  pods: [{podRef: {name: 'web', namespace: 'default', uid: 'uid-1'}, startTime: T, containers: [{name: 'app', startTime: T, memory: {time: T, workingSetBytes: 24}}]}],
};

const providers: AgentServerProviders = {
  pods: () => [pod],
  runningPods: async () => [{uid: 'uid-1', name: 'web', namespace: 'default', containers: [{name: 'app', image: 'sh', state: 'running'}]}],
  logPath: (namespace, name, container, previous) => (namespace === 'default' && name === 'web' && container === 'app' && !previous ? logFile : undefined),
  stats: () => summary,
  health: () => {
    if (unhealthy) throw new Error(unhealthy);
  },
};

function config(overrides: Partial<AgentServerConfig> = {}): AgentServerConfig {
  return {...serverConfigFromOptions({'cert-dir': join(dir, 'pki'), address: '127.0.0.1', port: 1}), hostname: 'node-1', ...overrides};
}

/** Every enabled listener on a free port. */
const FREE_PORTS = {main: 0, readOnly: 0, healthz: 0};

const running: AgentServers[] = [];
async function start(overrides: Partial<AgentServerConfig> = {}, metricsRegistry?: Registry): Promise<AgentServers> {
  const servers = new AgentServers({config: config(overrides), providers, metricsRegistry, portOverrides: FREE_PORTS, followPollIntervalMs: 20});
  running.push(servers);
  await servers.start();
  return servers;
}

let clientCa: KeyPairPem;
let alice: KeyPairPem;
let mallory: KeyPairPem;
const clientCaFile = join(dir, 'client-ca.crt');

beforeAll(async () => {
  clientCa = await generateCa({commonName: 'client-ca'});
  alice = await generateClientCertificate(clientCa, {user: 'alice'});
  mallory = await generateClientCertificate(await generateCa({commonName: 'other-ca'}), {user: 'mallory'});
  writeFileSync(clientCaFile, clientCa.certPem);
});

afterEach(async () => {
  writeLog();
  containerState = {running: {startedAt: T}};
  unhealthy = undefined;
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

afterAll(() => rmSync(dir, {recursive: true, force: true}));

describe('the main HTTPS server (anonymous, debugging handlers on)', () => {
  let servers: AgentServers;
  let port: number;
  let ca: string;
  const registry = new Registry();
  const metrics = new AgentMetrics(registry, {runningPods: providers.runningPods});

  beforeAll(async () => {
    writeLog();
    servers = new AgentServers({config: config(), providers, metricsRegistry: registry, portOverrides: FREE_PORTS});
    await servers.start();
    port = servers.ports.main!;
    ca = readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
    metrics.recordEviction('memory.available');
    metrics.recordNodeStatusPost(true);
  });
  afterAll(() => servers.stop());

  it('is verified by the CA generated into the cert dir', async () => {
    expect((await fetchHttps(port, '/healthz', {ca})).body).toBe('ok');
  });

  it('reports a failing sync loop on /healthz, withholding the reason', async () => {
    unhealthy = 'sync Loop took longer than expected';
    const reply = await fetchHttps(port, '/healthz');
    expect(reply.status).toBe(500);
    expect(reply.body).toContain('[-]syncloop failed: reason withheld');
    expect((await fetchHttps(port, '/healthz/syncloop')).body).toContain('sync Loop took longer than expected');
  });

  it('lists its pods as a v1 PodList', async () => {
    const reply = await fetchHttps(port, '/pods');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    const list = JSON.parse(reply.body);
    expect(list).toMatchObject({kind: 'PodList', apiVersion: 'v1', items: [{metadata: {name: 'web', namespace: 'default'}, status: {phase: 'Running'}}]});
    expect(list.items[0].kind).toBeUndefined();
  });

  it('refuses other methods on /pods', async () => {
    const reply = await fetchHttps(port, '/pods', {}, 'DELETE');
    expect([reply.status, reply.headers.allow, reply.body]).toEqual([405, 'GET', 'Method Not Allowed']);
  });

  it('lists the running pods', async () => {
    const list = JSON.parse((await fetchHttps(port, '/runningpods/')).body);
    expect(list.items).toEqual([{metadata: {name: 'web', namespace: 'default', uid: 'uid-1', creationTimestamp: null}, spec: {containers: [{name: 'app', image: 'sh', resources: {}}]}, status: {}}]);
  });

  it.each([
    ['', 'first\nsecond\nthird\n'],
    ['?tailLines=2', 'second\nthird\n'],
    ['?limitBytes=8', 'first\nse'],
    ['?tailLines=1&limitBytes=3', 'thi'],
    ['?tail=all', 'first\nsecond\nthird\n'],
    ['?timestamps=true&tailLines=1', '2024-05-01T09:59:02Z third\n'],
  ])('serves the container log%s', async (query, body) => {
    const reply = await fetchHttps(port, `/containerLogs/default/web/app${query}`);
    expect([reply.status, reply.body]).toEqual([200, body]);
  });

  it.each([
    ['/containerLogs/default/web/app?previous=true', 400, 'previous terminated container "app" in pod "web" not found'],
    ['/containerLogs/default/web/setup', 400, 'container "setup" in pod "web" is waiting to start: PodInitializing'],
    ['/containerLogs/default/gone/app', 404, 'pod "gone" does not exist'],
    ['/containerLogs/other/web/app', 404, 'pod "web" does not exist'],
    ['/containerLogs/default/web/nope', 404, 'container "nope" not found in pod "web"'],
    ['/containerLogs/default/web/app?tailLines=-2', 422, '{"message": "Invalid request."}'],
    ['/containerLogs/default/web/app?limitBytes=x', 400, '{"message": "Unable to decode query."}'],
  ])('answers %s with %d', async (path, status, body) => {
    const reply = await fetchHttps(port, path);
    expect([reply.status, reply.body]).toEqual([status, body]);
  });

  it('serves the agent metrics in the Prometheus text format', async () => {
    const reply = await fetchHttps(port, '/metrics');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toContain('text/plain');
    expect(reply.body).toContain('agent_running_pods 1');
    expect(reply.body).toContain('agent_running_containers{container_state="running"} 1');
    expect(reply.body).toContain('agent_evictions{eviction_signal="memory.available"} 1');
    expect(reply.body).toContain('agent_node_status_posts_total{result="success"} 1');
  });

  it('serves the stats summary, and only cpu and memory when asked', async () => {
    const full = JSON.parse((await fetchHttps(port, '/stats/summary')).body);
    expect(full).toEqual(summary);
    const light = JSON.parse((await fetchHttps(port, '/stats/summary?only_cpu_and_memory=true', {}, 'POST')).body);
    expect(light.node).toEqual({nodeName: 'node-1', startTime: T, memory: summary.node.memory});
  });

  it('answers unknown paths with 404', async () => {
    const reply = await fetchHttps(port, '/nothing/here');
    expect([reply.status, reply.body]).toEqual([404, '404 page not found\n']);
  });
});

describe('the read-only and health ports', () => {
  it('serve read-only paths without TLS or authentication, and no logs', async () => {
    unhealthy = 'broken';
    const servers = await start({anonymousAuth: false, readOnlyPort: 10255, healthzPort: 10248});
    const {readOnly, healthz} = servers.ports;
    expect((await fetchHttp(readOnly!, '/pods')).status).toBe(200);
    expect((await fetchHttp(readOnly!, '/stats/summary')).status).toBe(200);
    expect((await fetchHttp(readOnly!, '/metrics')).status).toBe(200);
    expect((await fetchHttp(readOnly!, '/healthz')).status).toBe(500); // the same checks as the main server
    for (const path of ['/containerLogs/default/web/app', '/runningpods/']) {
      const reply = await fetchHttp(readOnly!, path);
      expect([reply.status, reply.body]).toEqual([405, 'Debug endpoints are disabled.\n']);
    }
    // The health port answers ping only: `ok` whatever the agent's state.
    expect(await fetchHttp(healthz!, '/healthz').then((r) => [r.status, r.body])).toEqual([200, 'ok']);
    expect((await fetchHttp(healthz!, '/pods')).status).toBe(404);
  });

  it('are off at port 0', async () => {
    const servers = await start({readOnlyPort: 0, healthzPort: 0});
    expect(Object.keys(servers.ports)).toEqual(['main']);
  });

  it('keeps the health port when the server is disabled', async () => {
    const servers = await start({enableServer: false, readOnlyPort: 10255, healthzPort: 10248});
    expect(Object.keys(servers.ports)).toEqual(['healthz']);
  });
});

describe('authentication on the main server', () => {
  it.each([
    ['no certificate', undefined, 401, 'Unauthorized'],
    ['a certificate of the client CA', 'alice', 200, 'ok'],
    ['a certificate of another CA', 'mallory', 401, 'Unauthorized'],
  ])('without anonymous access: %s (%s) -> %d', async (_name, who, status, body) => {
    const servers = await start({anonymousAuth: false, clientCaFile});
    const pair = who === 'alice' ? alice : who === 'mallory' ? mallory : undefined;
    const reply = await fetchHttps(servers.ports.main!, '/healthz', {cert: pair?.certPem, key: pair?.keyPem});
    expect([reply.status, reply.body]).toEqual([status, body]);
  });

  it('rejects a bad certificate even with anonymous access', async () => {
    const servers = await start({anonymousAuth: true, clientCaFile});
    expect((await fetchHttps(servers.ports.main!, '/pods', {cert: mallory.certPem, key: mallory.keyPem})).status).toBe(401);
    expect((await fetchHttps(servers.ports.main!, '/pods')).status).toBe(200);
  });

  it('refuses everyone without anonymous access and without a client CA', async () => {
    const servers = await start({anonymousAuth: false});
    expect((await fetchHttps(servers.ports.main!, '/pods', {cert: alice.certPem, key: alice.keyPem})).status).toBe(401);
  });

  it('refuses Webhook authorization at start without an API server to ask', async () => {
    await expect(start({authorizationMode: 'Webhook'})).rejects.toThrow('--authorization-mode=Webhook asks the API server with SubjectAccessReviews');
  });
});

describe('switches and TLS settings', () => {
  it('without debugging handlers, logs and running pods are disabled but pods are served', async () => {
    const servers = await start({enableDebuggingHandlers: false});
    const port = servers.ports.main!;
    expect((await fetchHttps(port, '/containerLogs/default/web/app')).status).toBe(405);
    expect((await fetchHttps(port, '/runningpods/')).body).toBe('Debug endpoints are disabled.\n');
    expect((await fetchHttps(port, '/pods')).status).toBe(200);
  });

  it('honors --tls-min-version', async () => {
    const servers = await start({tlsMinVersion: 'VersionTLS13'});
    await expect(fetchHttps(servers.ports.main!, '/healthz', {maxVersion: 'TLSv1.2'})).rejects.toThrow();
    expect((await fetchHttps(servers.ports.main!, '/healthz', {maxVersion: 'TLSv1.3'})).status).toBe(200);
  });

  const negotiated = (port: number, maxVersion: 'TLSv1.2' | 'TLSv1.3') =>
    new Promise<string>((resolve, reject) => {
      const req = httpsRequest({host: '127.0.0.1', port, path: '/healthz', rejectUnauthorized: false, maxVersion, agent: false}, (res) => {
        resolve((res.socket as import('node:tls').TLSSocket).getCipher().name);
        res.resume();
      });
      req.on('error', reject);
      req.end();
    });

  it('offers only --tls-cipher-suites to a TLS 1.2 client', async () => {
    const servers = await start({tlsCipherSuites: ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384']});
    expect(await negotiated(servers.ports.main!, 'TLSv1.2')).toBe('ECDHE-ECDSA-AES256-GCM-SHA384');
  });

  it('settles TLS 1.3 on AES-128-GCM by default, as Go does (a Node client prefers AES-256-GCM)', async () => {
    const servers = await start({});
    expect(await negotiated(servers.ports.main!, 'TLSv1.3')).toBe('TLS_AES_128_GCM_SHA256');
  });

  it('serves --tls-cert-file and --tls-private-key-file', async () => {
    const ca = await generateCa({commonName: 'serving-ca'});
    const serving = await generateServingCertificate(ca, {hosts: ['localhost'], ips: ['127.0.0.1']});
    writeFileSync(join(dir, 'tls.crt'), serving.certPem);
    writeFileSync(join(dir, 'tls.key'), serving.keyPem);
    const servers = await start({tlsCertFile: join(dir, 'tls.crt'), tlsPrivateKeyFile: join(dir, 'tls.key')});
    expect((await fetchHttps(servers.ports.main!, '/healthz', {ca: ca.certPem})).body).toBe('ok');
  });

  it('names the listener and address when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const taken = (blocker.address() as {port: number}).port;
    const servers = new AgentServers({config: config({port: taken}), providers});
    await expect(servers.start()).rejects.toThrow(`agent server: listen tcp 127.0.0.1:${taken}`);
    blocker.close();
  });
});

describe('following a log', () => {
  it('streams appended records until the container stops', async () => {
    const servers = await start();
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(
        {host: '127.0.0.1', port: servers.ports.main!, path: '/containerLogs/default/web/app?follow=true&tailLines=1', rejectUnauthorized: false, agent: false},
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => {
            text += chunk.toString();
            if (text === 'third\n') {
              appendFileSync(logFile, '2024-05-01T09:59:09.000000000Z stderr F fourth\n');
            } else if (text.endsWith('fourth\n')) {
              containerState = {terminated: {exitCode: 0}};
            }
          });
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(body).toBe('third\nfourth\n');
  });
});
