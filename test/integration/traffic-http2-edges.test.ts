/**
 * HTTP/2 with large bodies, many at once on one connection (what kubectl does applying large objects
 * in parallel): bodies over the 3 MiB limit are refused with a 413 Status before they are read (the
 * stream is then reset, so the client stops sending), bodies near the limit are read whole, and the
 * connection serves on. The bench's HTTP/2 client once failed here with ENHANCE_YOUR_CALM: that was
 * Node's client refusing response headers once the bodies it had queued passed its own
 * maxSessionMemory (10 MB), not the server; a client (as Go's) without that limit gets every answer.
 */
import {connect as http2Connect, constants as h2, type ClientHttp2Session} from 'node:http2';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {type InProcessServer, readAdminOrchconfig, startApiServer} from '../helpers/apiserver.js';

const NS = 'default';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const LIMIT = 3 * 1024 * 1024;
const configMap = (name: string, size: number) => Buffer.from(JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name}, data: {k: 'x'.repeat(size)}}));

interface Answer {
  status?: number;
  body?: any;
  error?: string;
}

function exchange(session: ClientHttp2Session, method: string, path: string, body?: Buffer): Promise<Answer> {
  return new Promise((resolve) => {
    const stream = session.request({[h2.HTTP2_HEADER_METHOD]: method, [h2.HTTP2_HEADER_PATH]: path, 'content-type': 'application/json', accept: 'application/json', ...(body ? {'content-length': body.length} : {})});
    let status: number | undefined;
    const chunks: Buffer[] = [];
    stream.on('response', (headers) => (status = Number(headers[h2.HTTP2_HEADER_STATUS])));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', (error: NodeJS.ErrnoException) => resolve({status, error: error.message}));
    stream.on('close', () => {
      const text = Buffer.concat(chunks).toString();
      let parsed: any;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text.slice(0, 200);
      }
      resolve(status === undefined ? {error: `closed without a response (code ${stream.rstCode})`} : {status, body: parsed});
    });
    stream.end(body);
  });
}

describe('HTTP/2 large bodies at once on one connection', () => {
  let api: InProcessServer;
  let session: ClientHttp2Session;
  let sessionError: string | undefined;

  beforeAll(async () => {
    api = await startApiServer({engine: 'sqlite'});
    const creds = readAdminOrchconfig(api.orchconfigPath);
    // Node's client counts the bodies it has queued against its own maxSessionMemory (10 MB by
    // default) and refuses response headers past it; Go's client (kubectl) has no such limit.
    session = http2Connect(creds.server, {ca: creds.caPem, cert: creds.certPem, key: creds.keyPem, maxSessionMemory: 64});
    session.on('error', (error: NodeJS.ErrnoException) => (sessionError = error.code ?? error.message));
    session.on('goaway', (code) => (sessionError ??= `GOAWAY ${code}`));
  });
  afterAll(async () => {
    session?.destroy();
    await api?.stop();
  });

  it('refuses eight bodies over the limit sent at once with 413 Statuses, and the connection serves on', async () => {
    const over = await Promise.all(Array.from({length: 8}, (_, i) => exchange(session, 'POST', CM, configMap(`h2-over-${i}`, LIMIT + 50_000))));
    expect(over.map((a) => [a.status, a.body?.kind, a.body?.reason, a.error])).toEqual(Array.from({length: 8}, () => [413, 'Status', 'RequestEntityTooLarge', undefined]));
    // Bodies just under the limit, read whole: each answered (created, or refused with a Status).
    const near = await Promise.all(Array.from({length: 8}, (_, i) => exchange(session, 'POST', CM, configMap(`h2-near-${i}`, LIMIT - 1000))));
    const answered = (a: Answer) => a.error === undefined && ((a.status === 201 && a.body?.kind === 'ConfigMap') || (a.status === 422 && a.body?.kind === 'Status'));
    expect(near.filter((a) => !answered(a))).toEqual([]);
    // A large body and small writes, at once, on the same connection.
    const [big, ...small] = await Promise.all([
      exchange(session, 'POST', CM, configMap('h2-near-limit', 900_000)),
      ...Array.from({length: 8}, (_, i) => exchange(session, 'POST', CM, configMap(`h2-small-${i}`, 100))),
    ]);
    expect(big!.status).toBe(201);
    expect(small.map((a) => a.status)).toEqual(Array.from({length: 8}, () => 201));
    expect(sessionError).toBeUndefined();
    expect((await api.client.get(`${CM}/h2-over-0`)).status).toBe(404);
  }, 60_000);
});
