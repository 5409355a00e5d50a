/**
 * The shared serving fix of issue 18 on both kinds of TLS server the daemons run: node:https (the
 * agent's port, and --disable-http2-serving) and HTTP/2 with HTTP/1.1 fallback (the API server and
 * the controller manager). A plain echo handler that answers on the next turn of the event loop is
 * what makes Node's HTTP/1 parser pause between keep-alive requests; a keep-alive client in its own
 * process then sends bodies over one TLS record (16 KiB). With parseHttp1FromStream none is reset.
 */
import {spawn} from 'node:child_process';
import {mkdtempSync, rmSync} from 'node:fs';
import {createServer as createHttpsServer} from 'node:https';
import {createSecureServer} from 'node:http2';
import type {IncomingMessage, ServerResponse} from 'node:http';
import type {Server} from 'node:net';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {ensureServingCertificates} from '../../src/daemons/shared/pki/cert-dir.js';
import {parseHttp1FromStream} from '../../src/daemons/shared/serving/secure-serving.js';

const CLIENT = `
import {Agent, request} from 'node:https';
const [url, ca, sizes, count] = JSON.parse(process.argv[1]);
const agent = new Agent({keepAlive: true, maxSockets: 4, ca});
const errors = {};
let next = 0;
for (const size of sizes) {
  next = 0;
  const body = Buffer.alloc(size, 120);
  await Promise.all(Array.from({length: 4}, async () => {
    while (next++ < count) {
      await new Promise((resolve) => {
        const req = request(url, {method: 'POST', agent, headers: {'content-length': body.length}}, (res) => {
          let n = 0;
          res.on('data', (c) => (n += c.length));
          res.on('end', () => {
            if (res.statusCode !== 200 || n !== size) errors['bad answer'] = (errors['bad answer'] ?? 0) + 1;
            resolve();
          });
        });
        req.on('error', (e) => ((errors[e.code ?? e.message] = (errors[e.code ?? e.message] ?? 0) + 1), resolve()));
        req.end(body);
      });
    }
  }));
}
agent.destroy();
process.stdout.write(JSON.stringify(errors));
`;

function echo(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () =>
    setImmediate(() => {
      const body = Buffer.concat(chunks);
      res.writeHead(200, {'content-length': body.length});
      res.end(body);
    }),
  );
}

function runClient(url: string, ca: string): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CLIENT, JSON.stringify([url, ca, [20_000, 200_000], 300])], {stdio: ['ignore', 'pipe', 'pipe']});
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out) as Record<string, number>);
      } catch {
        reject(new Error(`client: ${out}\n${err}`));
      }
    });
  });
}

describe('HTTP/1.1 keep-alive bodies over 16 KiB on the shared TLS serving', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-serving-'));
  let tls: {key: string; cert: string; ca: string};
  const servers: Server[] = [];

  beforeAll(async () => {
    const pki = await ensureServingCertificates(dir, {hosts: ['localhost'], ips: ['127.0.0.1']});
    tls = {key: pki.serving.keyPem, cert: pki.serving.certPem, ca: pki.ca.certPem};
  });
  afterAll(async () => {
    for (const server of servers) await new Promise((resolve) => server.close(resolve));
    rmSync(dir, {recursive: true, force: true});
  });

  const listen = async (server: Server): Promise<string> => {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `https://127.0.0.1:${(server.address() as {port: number}).port}/`;
  };

  it.each([
    ['node:https (the agent)', () => createHttpsServer({key: tls.key, cert: tls.cert}, echo)],
    ['HTTP/2 with HTTP/1.1 fallback (API server, controller manager)', () => createSecureServer({key: tls.key, cert: tls.cert, allowHTTP1: true}, echo as never)],
  ])('%s: no write is reset', async (_kind, make) => {
    const url = await listen(parseHttp1FromStream(make() as unknown as Server));
    expect(await runClient(url, tls.ca)).toEqual({});
  }, 90_000);
});
