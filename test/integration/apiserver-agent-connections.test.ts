/**
 * The API server's connections to agents, against small real servers on loopback standing in for
 * an agent: --max-connection-bytes-per-sec (an exec connection relayed to an agent that answers the
 * upgrade and sends a payload keeps to the byte rate; without the option the payload passes at
 * once; the bound is on bytes, not on time: a slow machine only delivers fewer of them), and
 * --agent-timeout (an agent that accepts and never answers fails logs and exec after the timeout).
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {connect, createServer, type Server, type TLSSocket} from 'node:tls';
import {createServer as createTcpServer, type Socket} from 'node:net';
import {startApiServer, type InProcessServer} from '../helpers/apiserver.js';
import {generateCa, generateServingCertificate} from '../../src/daemons/shared/pki/certificates.js';

const RATE = 64 * 1024;
const PAYLOAD = 4 * RATE;

/** An "agent" that answers any upgrade with 101 and then PAYLOAD bytes. */
async function startAgent(): Promise<{server: Server; port: number}> {
  const ca = await generateCa();
  const serving = await generateServingCertificate(ca, {hosts: ['localhost'], ips: ['127.0.0.1']});
  const server = createServer({key: serving.keyPem, cert: serving.certPem}, (socket) => {
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      if (head.includes('\r\n\r\n')) return;
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n');
      socket.end(Buffer.alloc(PAYLOAD, 7));
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {server, port: (server.address() as {port: number}).port};
}

/** Opens an exec upgrade through the API server; resolves with the bytes after the 101 head at 1 s and at the end. */
function execThrough(s: InProcessServer): Promise<{atOneSecond: number; total: number}> {
  const url = new URL(s.client.credentials.server);
  const {caPem, certPem, keyPem} = s.client.credentials;
  return new Promise((resolve, reject) => {
    const socket: TLSSocket = connect({host: url.hostname, port: Number(url.port), ca: caPem, cert: certPem, key: keyPem, ALPNProtocols: ['http/1.1'], servername: 'localhost'}, () => {
      socket.write(
        'GET /api/v1/namespaces/default/pods/p/exec?command=sh&stdout=1 HTTP/1.1\r\n' +
          `Host: ${url.host}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n`,
      );
    });
    let buffered = Buffer.alloc(0);
    let body = -1;
    let atOneSecond = -1;
    socket.on('data', (chunk: Buffer) => {
      if (body >= 0) return void (body += chunk.length);
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (!buffered.subarray(0, end).toString().startsWith('HTTP/1.1 101')) return reject(new Error(buffered.toString()));
      body = buffered.length - end - 4;
      setTimeout(() => (atOneSecond = body), 1000);
    });
    socket.on('end', () => resolve({atOneSecond: atOneSecond < 0 ? body : atOneSecond, total: body}));
    socket.on('error', reject);
  });
}

/** A node n1 whose agent listens on `port`, and a pod p on it. */
async function nodeAndPod(s: InProcessServer, port: number): Promise<void> {
  const node = {apiVersion: 'v1', kind: 'Node', metadata: {name: 'n1'}};
  expect((await s.client.post('/api/v1/nodes', node)).status).toBe(201);
  const status = {...node, status: {addresses: [{type: 'InternalIP', address: '127.0.0.1'}], daemonEndpoints: {kubeletEndpoint: {Port: port}}}};
  expect((await s.client.put('/api/v1/nodes/n1/status', status)).status).toBe(200);
  const pod = {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'p'}, spec: {nodeName: 'n1', containers: [{name: 'c', image: 'busybox'}]}};
  expect((await s.client.post('/api/v1/namespaces/default/pods', pod)).status).toBe(201);
}

describe.each([
  ['with --max-connection-bytes-per-sec', RATE],
  ['without it', 0],
])('an exec connection %s', (_title, rate) => {
  let s: InProcessServer;
  let agent: {server: Server; port: number};
  beforeAll(async () => {
    agent = await startAgent();
    s = await startApiServer({engine: 'sqlite', config: {maxConnectionBytesPerSec: rate}});
    await nodeAndPod(s, agent.port);
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    agent?.server.close();
  });

  it('delivers the whole payload, within the rate when one is set', async () => {
    const {atOneSecond, total} = await execThrough(s);
    expect(total).toBe(PAYLOAD);
    if (rate > 0) {
      // One second of burst plus one second at the rate, and at most a TLS record that overdrew it.
      expect(atOneSecond).toBeLessThanOrEqual(2 * RATE + 16 * 1024);
    } else {
      expect(atOneSecond).toBe(PAYLOAD);
    }
  }, 20_000);
});

describe('--agent-timeout', () => {
  let s: InProcessServer;
  let silent: Server;
  const held = new Set<Socket>();
  beforeAll(async () => {
    // Accepts connections and never answers: not even the TLS handshake.
    silent = createTcpServer((socket) => {
      held.add(socket);
      socket.on('error', () => undefined);
    }) as unknown as Server;
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    s = await startApiServer({engine: 'sqlite', config: {agentTimeoutMs: 700}});
    await nodeAndPod(s, (silent.address() as {port: number}).port);
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    for (const socket of held) socket.destroy();
    silent?.close();
  });

  it('fails a log request to an agent that does not answer, naming the timeout', async () => {
    const started = Date.now();
    const logs = await s.client.get('/api/v1/namespaces/default/pods/p/log', {timeoutMs: 15_000});
    expect(logs.status).toBe(500);
    expect(logs.body.message).toContain('timeout awaiting response headers after 0.7s');
    // Long before the 30 s the server waited without the option.
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 20_000);

  it('fails an exec whose agent cannot be dialled within the timeout', async () => {
    const exec = await s.client.request('GET', '/api/v1/namespaces/default/pods/p/exec?command=sh&stdout=1', {
      headers: {connection: 'Upgrade', upgrade: 'SPDY/3.1'}, timeoutMs: 15_000,
    }).catch((error: Error) => ({status: 0, text: error.message, body: undefined}));
    expect(exec.text).toContain('error dialing backend');
    expect(exec.text).toContain('i/o timeout');
  }, 20_000);
});
