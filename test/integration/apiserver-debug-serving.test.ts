/**
 * Serving options of a real API server: CORS (--cors-allowed-origins), the profiling paths
 * (--profiling, --contention-profiling) behind authorization, the unprotected debug socket
 * (--debug-socket-path), /logs/ (--enable-logs-handler), --tls-curve-preferences and how the port is
 * bound (--permit-address-sharing, --permit-port-sharing).
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {existsSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {request as httpRequest} from 'node:http';
import {connect} from 'node:tls';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {freePort, startApiServer, startApiServerProcess, type InProcessServer} from '../helpers/apiserver.js';
import {names} from '../../src/api/names.js';
import {toEcdhCurve} from '../../src/options/value-tls.js';

/** A GET (or PUT) over a unix socket, as curl --unix-socket. */
function overSocket(socketPath: string, path: string, method = 'GET', body?: string): Promise<{status: number; text: string}> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({socketPath, path, method}, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8')}));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('serving and debugging options', () => {
  let s: InProcessServer;
  let socketDir: string;
  let socketPath: string;

  beforeAll(async () => {
    socketDir = mkdtempSync(join(tmpdir(), 'orch-debug-socket-'));
    socketPath = join(socketDir, 'debug.sock');
    // A stale socket file from a crashed run does not stop the start.
    writeFileSync(socketPath, '');
    s = await startApiServer({
      engine: 'sqlite',
      config: {
        corsAllowedOrigins: ['//allowed\\.example(:|$)'],
        debug: {profiling: true, contentionProfiling: true, socketPath, logsHandler: true},
        authorizationModes: ['RBAC'],
      },
    });
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    expect(existsSync(socketPath)).toBe(false);
    rmSync(socketDir, {recursive: true, force: true});
  });

  it('answers a matching origin with CORS headers and its preflight with 204; other origins get none', async () => {
    const pre = await s.client.request('OPTIONS', '/api/v1/namespaces', {headers: {origin: 'https://allowed.example:8443'}});
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('https://allowed.example:8443');
    expect(pre.headers['access-control-allow-methods']).toBe('POST, GET, OPTIONS, PUT, DELETE, PATCH');
    expect(pre.headers['access-control-allow-credentials']).toBe('true');
    const get = await s.client.get('/api/v1/namespaces', {headers: {origin: 'https://allowed.example'}});
    expect(get.status).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBe('https://allowed.example');
    expect(get.headers['access-control-expose-headers']).toBe('Date');
    // The pinned pattern refuses a look-alike host.
    const other = await s.client.get('/api/v1/namespaces', {headers: {origin: 'https://allowed.example.attacker.net'}});
    expect(other.status).toBe(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    // A preflight from an origin not allowed is not answered by CORS: it goes on like any request.
    const refused = await s.client.as({clientCert: false}).request('OPTIONS', '/api/v1/namespaces', {headers: {origin: 'https://evil.example'}});
    expect(refused.status).not.toBe(204);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('serves a CPU profile, a heap profile and the event loop delays to an authorized user only', async () => {
    const index = await s.client.get('/debug/pprof/');
    expect(index.status).toBe(200);
    expect(index.text).toContain('href="profile?seconds=30"');
    const cpu = await s.client.get('/debug/pprof/profile?seconds=1', {timeoutMs: 10_000});
    expect(cpu.status).toBe(200);
    expect(cpu.headers['content-disposition']).toContain('profile.cpuprofile');
    expect(Array.isArray(cpu.body.nodes) && cpu.body.nodes.length > 0).toBe(true);
    expect(cpu.body.endTime - cpu.body.startTime).toBeGreaterThanOrEqual(900_000); // microseconds
    const heap = await s.client.get('/debug/pprof/heap?gc=1', {timeoutMs: 10_000});
    expect(heap.status).toBe(200);
    expect(heap.body.head.callFrame).toBeDefined();
    expect(heap.body.samples.length).toBeGreaterThan(0);
    const block = await s.client.get('/debug/pprof/block');
    expect(block.status).toBe(200);
    expect(block.body).toMatchObject({kind: 'EventLoopDelay', unit: 'ms'});
    expect(block.body.percentiles['99']).toBeGreaterThan(0);
    // Anonymous requests hold no RBAC rule for /debug/pprof/: forbidden.
    const anonymous = await s.client.as({clientCert: false}).get('/debug/pprof/heap');
    expect(anonymous.status).toBe(403);
    expect(anonymous.body.message).toContain('cannot get path "/debug/pprof/heap"');
    // A user granted the non-resource URLs by RBAC may read them.
    const rbac = `/apis/${names().groups.rbac}/v1`;
    await s.client.post(`${rbac}/clusterroles`, {metadata: {name: 'profiler'}, rules: [{verbs: ['get'], nonResourceURLs: ['/debug/pprof/*']}]});
    await s.client.post(`${rbac}/clusterrolebindings`, {
      metadata: {name: 'profiler'}, roleRef: {apiGroup: names().groups.rbac, kind: 'ClusterRole', name: 'profiler'}, subjects: [{apiGroup: names().groups.rbac, kind: 'User', name: 'pat'}],
    });
    const asPat = {headers: {'impersonate-user': 'pat'}};
    await s.client.waitFor(async () => (await s.client.get('/debug/pprof/cmdline', asPat)).status === 200, 'RBAC to allow pat', 10_000);
    expect((await s.client.get('/logs/', asPat)).status).toBe(403);
  }, 20_000);

  it('serves the same profiles on the debug socket without authentication, and sets the verbosity', async () => {
    const index = await overSocket(socketPath, '/debug/pprof/');
    expect(index.status).toBe(200);
    const cmdline = await overSocket(socketPath, '/debug/pprof/cmdline');
    expect(cmdline.text.split('\0')).toEqual(process.argv);
    expect((await overSocket(socketPath, '/api/v1/namespaces')).status).toBe(404);
    expect(await overSocket(socketPath, '/debug/flags/v', 'PUT', '0')).toEqual({status: 200, text: 'successfully set klog.logging.verbosity to 0\n'});
    expect((await overSocket(socketPath, '/debug/flags/v', 'PUT', 'loud')).status).toBe(400);
    expect((await overSocket(socketPath, '/debug/flags/v')).status).toBe(405);
  });

  it('serves the log directory under /logs/, with no way out of it', async () => {
    writeFileSync(join(s.dataDir, 'logs', 'audit.log'), 'line one\n');
    const listing = await s.client.get('/logs/');
    expect(listing.status).toBe(200);
    expect(listing.text).toContain('<a href="audit.log">audit.log</a>');
    const file = await s.client.get('/logs/audit.log');
    expect(file).toMatchObject({status: 200, text: 'line one\n'});
    expect((await s.client.get('/logs/..%2fkvstore.sqlite')).status).toBe(400);
    expect((await s.client.get('/logs/missing.log')).status).toBe(404);
    expect((await s.client.as({clientCert: false}).get('/logs/audit.log')).status).toBe(403);
  });
});

describe('serving options switched off', () => {
  let s: InProcessServer;
  beforeAll(async () => {
    s = await startApiServer({engine: 'sqlite', config: {debug: {profiling: false, contentionProfiling: false, logsHandler: false}}});
  }, 30_000);
  afterAll(async () => s?.stop());

  it('serves no profiles, no logs and no CORS headers', async () => {
    expect((await s.client.get('/debug/pprof/')).status).toBe(404);
    expect((await s.client.get('/logs/')).status).toBe(404);
    const get = await s.client.get('/api/v1/namespaces', {headers: {origin: 'https://allowed.example'}});
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('--tls-curve-preferences', () => {
  let s: InProcessServer;
  beforeAll(async () => {
    s = await startApiServer({engine: 'sqlite', config: {ecdhCurve: toEcdhCurve([24])}});
  }, 30_000);
  afterAll(async () => s?.stop());

  const handshake = (curve: string) =>
    new Promise<string>((resolve) => {
      const url = new URL(s.client.credentials.server);
      const socket = connect({host: url.hostname, port: Number(url.port), ca: s.client.credentials.caPem, ecdhCurve: curve, servername: 'localhost'}, () => {
        resolve(`ok ${socket.getEphemeralKeyInfo() && (socket.getEphemeralKeyInfo() as {name?: string}).name}`);
        socket.end();
      });
      socket.on('error', (error) => resolve(`failed: ${error.message}`));
    });

  it('completes a handshake on an allowed curve and refuses a client that offers only another one', async () => {
    expect(await handshake('P-384')).toBe('ok secp384r1');
    expect(await handshake('X25519')).toMatch(/^failed: .*(handshake failure|no suitable|alert)/i);
  });
});

describe('binding the secure port (--permit-address-sharing, --permit-port-sharing)', () => {
  it('binds again at once after a stop that left connections in TIME_WAIT', async () => {
    const port = await freePort();
    const first = await startApiServer({engine: 'sqlite', config: {securePort: port}});
    // Requests on a few connections; the stop closes them from the server's side (TIME_WAIT there).
    await Promise.all([0, 1, 2].map(() => first.client.as({}).get('/readyz')));
    await first.stop();
    const second = await startApiServer({engine: 'sqlite', config: {securePort: port}});
    expect((await second.client.get('/readyz')).status).toBe(200);
    await second.stop();
  }, 60_000);

  /** The serving certificate's fingerprint on a new connection to the port: which server the kernel gave it to. */
  const servedBy = (port: number) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect({host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost'}, () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.end();
      });
      socket.on('error', reject);
    });

  it('with --permit-port-sharing two server processes serve one port, each taking connections; a server without it is refused the port', async () => {
    const port = await freePort();
    const a = await startApiServerProcess({engine: 'sqlite', port, args: ['--permit-port-sharing']});
    let b: Awaited<ReturnType<typeof startApiServerProcess>> | undefined;
    try {
      b = await startApiServerProcess({engine: 'sqlite', port, args: ['--permit-port-sharing']});
      // Each server has its own CA and serving certificate (its own data directory).
      const seen = new Set<string>();
      for (let i = 0; i < 40 && seen.size < 2; i++) seen.add(await servedBy(port));
      expect(seen.size).toBe(2);
      // Both answer as API servers through the shared port (each client trusts one CA: a handshake
      // that lands on the other server fails, so each tries until its own server answers).
      for (const server of [a, b]) {
        let status = 0;
        for (let i = 0; i < 40 && status !== 200; i++) status = await server.client.get('/readyz').then((r) => r.status, () => 0);
        expect(status).toBe(200);
      }
      // A server that does not ask to share cannot bind the port.
      await expect(startApiServer({engine: 'sqlite', config: {securePort: port}})).rejects.toThrow(/EADDRINUSE/);
      // One stops: the other takes every connection.
      await b.stop();
      b = undefined;
      const after = new Set<string>();
      for (let i = 0; i < 10; i++) after.add(await servedBy(port));
      expect(after.size).toBe(1);
      expect((await a.client.get('/readyz')).status).toBe(200);
    } finally {
      await b?.stop();
      await a.stop();
    }
  }, 90_000);
});
