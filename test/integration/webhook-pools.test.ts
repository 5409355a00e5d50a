/**
 * The pooled webhook POST (src/daemons/apiserver/webhook-pools.ts) against real TLS servers on
 * loopback: connections kept per endpoint and TLS identity, the caBundle and the service name
 * checked, the client certificate presented, the whole-call deadline, and failures raised as
 * postJson raises them (so dialError words them as Go does).
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from '@jest/globals';
import {createServer, type Server} from 'node:https';
import type {AddressInfo} from 'node:net';
import type {TLSSocket} from 'node:tls';
import {generateCa, generateClientCertificate, generateServingCertificate, type KeyPairPem} from '../../src/daemons/shared/pki/certificates.js';
import {WebhookPools} from '../../src/daemons/apiserver/webhook-pools.js';
import {dialError} from '../../src/daemons/apiserver/webhook-post.js';

interface Loopback {
  server: Server;
  port: number;
  connections: number;
  peers: string[];
  /** Answers nothing, or the headers and part of the body, then nothing. */
  hang: false | 'silent' | 'partial' | 'close';
}

let ca: KeyPairPem;
let otherCa: KeyPairPem;
let serving: KeyPairPem;
let client: KeyPairPem;
const started: Loopback[] = [];
let pools: WebhookPools;

beforeAll(async () => {
  ca = await generateCa({commonName: 'pools-test-ca'});
  otherCa = await generateCa({commonName: 'other-ca'});
  serving = await generateServingCertificate(ca, {hosts: ['hook.webhooks.svc'], ips: ['127.0.0.1']});
  client = await generateClientCertificate(ca, {user: 'apiserver-client'});
});

afterEach(() => pools?.close());

afterAll(async () => {
  for (const s of started) {
    s.server.closeAllConnections();
    await new Promise((resolve) => s.server.close(resolve));
  }
});

/** A webhook that echoes the body and the request's path and host, counting TLS connections and the client certificates presented. */
async function loopback(): Promise<Loopback> {
  const state = {connections: 0, peers: [] as string[], hang: false} as Loopback;
  const server = createServer({cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false, keepAliveTimeout: 5000}, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    if (peer?.subject) state.peers.push(String(peer.subject.CN));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (state.hang === 'silent') return;
      if (state.hang === 'close') {
        req.socket.destroy();
        return;
      }
      if (state.hang === 'partial') {
        res.writeHead(200, {'Content-Type': 'application/json', 'Content-Length': '100'});
        res.write('{"apiVersion":');
        return;
      }
      res.writeHead(200, {'Content-Type': 'application/json'});
      res.end(JSON.stringify({path: req.url, host: req.headers.host, auth: req.headers.authorization, body: Buffer.concat(chunks).toString('utf8')}));
    });
  });
  server.on('secureConnection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  Object.assign(state, {server, port: (server.address() as AddressInfo).port});
  started.push(state);
  return state;
}

describe('WebhookPools', () => {
  it('posts the body to the path with its query, and keeps its connections: no new handshake per call', async () => {
    const hook = await loopback();
    pools = new WebhookPools();
    const url = new URL(`https://127.0.0.1:${hook.port}/validate?timeout=5s`);
    const call = async (i: number) => {
      const answer = await pools.post(url, `{"n":${i}}`, {ca: ca.certPem, timeoutMs: 5000, headers: {Authorization: 'Bearer t'}});
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toEqual({path: '/validate?timeout=5s', host: `127.0.0.1:${hook.port}`, auth: 'Bearer t', body: `{"n":${i}}`});
    };
    // undici may open a second connection while the first one finishes its first answer.
    await call(0);
    await call(1);
    const warm = hook.connections;
    for (let i = 2; i < 20; i++) await call(i);
    expect(warm).toBeLessThanOrEqual(2);
    expect(hook.connections).toBe(warm);
  });

  it('presents the client certificate; another identity to the same server gets a connection of its own', async () => {
    const hook = await loopback();
    pools = new WebhookPools();
    const url = new URL(`https://127.0.0.1:${hook.port}/`);
    await pools.post(url, '{}', {ca: ca.certPem, cert: client.certPem, key: client.keyPem, timeoutMs: 5000});
    await pools.post(url, '{}', {ca: ca.certPem, timeoutMs: 5000});
    expect(hook.peers).toEqual(['apiserver-client']);
    expect(hook.connections).toBe(2);
  });

  it("dials a service's endpoint and checks the certificate against the service's name", async () => {
    const hook = await loopback();
    pools = new WebhookPools();
    const connectTo = {host: '127.0.0.1', port: hook.port};
    const good = await pools.post(new URL('https://hook.webhooks.svc:443/mutate'), '{}', {ca: ca.certPem, timeoutMs: 5000, connectTo});
    expect(JSON.parse(good.text).path).toBe('/mutate');
    await expect(pools.post(new URL('https://other.webhooks.svc:443/mutate'), '{}', {ca: ca.certPem, timeoutMs: 5000, connectTo})).rejects.toMatchObject({
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
  });

  it('refuses a server the caBundle does not trust', async () => {
    const hook = await loopback();
    pools = new WebhookPools();
    await expect(pools.post(new URL(`https://127.0.0.1:${hook.port}/`), '{}', {ca: otherCa.certPem, timeoutMs: 5000})).rejects.toThrow(/certificate/);
  });

  it("a refused connection reads as Go's dial error", async () => {
    const hook = await loopback();
    const port = hook.port;
    await new Promise((resolve) => hook.server.close(resolve));
    started.splice(started.indexOf(hook), 1);
    pools = new WebhookPools();
    const error = await pools.post(new URL(`https://127.0.0.1:${port}/`), '{}', {ca: ca.certPem, timeoutMs: 5000}).catch((e: NodeJS.ErrnoException) => e);
    expect(dialError(error as NodeJS.ErrnoException)).toBe(`dial tcp 127.0.0.1:${port}: connect: connection refused`);
  });

  it("a webhook that closes the connection without an answer reads as Go's EOF", async () => {
    const hook = await loopback();
    hook.hang = 'close';
    pools = new WebhookPools();
    const error = await pools.post(new URL(`https://127.0.0.1:${hook.port}/`), '{}', {ca: ca.certPem, timeoutMs: 5000}).catch((e: NodeJS.ErrnoException) => e);
    expect(dialError(error as NodeJS.ErrnoException)).toBe('EOF');
  });

  it.each([
    ['does not answer', 'silent'],
    ['sends its headers and part of the body', 'partial'],
  ] as const)('a webhook that %s fails with context deadline exceeded at the deadline; the next call goes through', async (_, hang) => {
    const hook = await loopback();
    hook.hang = hang;
    pools = new WebhookPools();
    const url = new URL(`https://127.0.0.1:${hook.port}/`);
    const begun = Date.now();
    const error = await pools.post(url, '{}', {ca: ca.certPem, timeoutMs: 300}).catch((e: NodeJS.ErrnoException) => e);
    expect(dialError(error as NodeJS.ErrnoException)).toBe('context deadline exceeded');
    expect(Date.now() - begun).toBeGreaterThanOrEqual(290);
    expect(Date.now() - begun).toBeLessThan(3000);
    hook.hang = false;
    expect((await pools.post(url, '{}', {ca: ca.certPem, timeoutMs: 5000})).status).toBe(200);
  });
});
