/**
 * The REST client against the real REST handler (startTestApi) and against a recording server for
 * what the handler does not do (warnings, throttling, slow answers, identity headers).
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse} from 'node:http';
import type {AddressInfo} from 'node:net';
import {call, startTestApi, type TestApi} from '../helpers/memory-store.js';
import {RestClient, authHeaders, escapeExtraKey, type ConnectionConfig} from '../../src/client/rest-client.js';
import {ApiConnectionError, ApiStatusError} from '../../src/client/errors.js';
import {WarningWriter} from '../../src/client/warnings.js';
import {parseRequestTimeout} from '../../src/client/request-timeout.js';

const plain = (server: string, extra: Partial<ConnectionConfig> = {}): ConnectionConfig => ({server, insecure: false, ...extra});

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  await call(api, 'POST', '/api/v1/namespaces/default/configmaps', {body: {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'settings'}, data: {a: '1'}}});
});
afterAll(() => api.close());

describe('RestClient against the API handler', () => {
  it('gets objects and maps a Status failure to ApiStatusError', async () => {
    const client = new RestClient({config: plain(api.url)});
    const cm = await client.get<{data: Record<string, string>}>('/api/v1/namespaces/default/configmaps/settings');
    expect(cm.data).toEqual({a: '1'});
    const missing = await client.get('/api/v1/namespaces/default/configmaps/nope').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiStatusError);
    expect(missing).toMatchObject({code: 404, reason: 'NotFound', message: 'configmaps "nope" not found'});
    client.close();
  });

  it('patches with each content type; dryRun=All stores nothing', async () => {
    const client = new RestClient({config: plain(api.url)});
    const path = '/api/v1/namespaces/default/configmaps/settings';
    const merged = await client.patch<{data: Record<string, string>}>(path, 'application/merge-patch+json', {data: {b: '2'}}, {fieldManager: 'test'});
    expect(merged.data).toEqual({a: '1', b: '2'});
    const json = await client.patch<{data: Record<string, string>}>(path, 'application/json-patch+json', [{op: 'remove', path: '/data/b'}]);
    expect(json.data).toEqual({a: '1'});
    const dry = await client.patch<{data: Record<string, string>}>(path, 'application/strategic-merge-patch+json', {data: {c: '3'}}, {dryRun: 'All'});
    expect(dry.data).toEqual({a: '1', c: '3'});
    expect((await client.get<{data: Record<string, string>}>(path)).data).toEqual({a: '1'});
    client.close();
  });

  it('discovers resources once per client and maps TYPE arguments', async () => {
    const client = new RestClient({config: plain(api.url)});
    const mapper = await client.discover();
    expect(mapper.resourceFor('deploy')).toEqual({group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true});
    expect(mapper.resourceFor('cm')).toMatchObject({group: '', resource: 'configmaps'});
    expect(await client.discover()).toBe(mapper);
    client.close();
  });

  it('streams watch events as they happen', async () => {
    const client = new RestClient({config: plain(api.url)});
    const controller = new AbortController();
    const list = await client.get<{metadata: {resourceVersion: string}}>('/api/v1/namespaces/default/configmaps');
    const events = client.watch('/api/v1/namespaces/default/configmaps', {resourceVersion: list.metadata.resourceVersion}, controller.signal);
    const first = events.next();
    await call(api, 'POST', '/api/v1/namespaces/default/configmaps', {body: {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'watched'}}});
    const {value} = await first;
    expect(value).toMatchObject({type: 'ADDED', object: {kind: 'ConfigMap', metadata: {name: 'watched'}}});
    controller.abort();
    expect(await events.next()).toEqual({done: true, value: undefined});
    client.close();
  });

  it('reports a refused connection with the URL it tried', async () => {
    const client = new RestClient({config: plain('http://127.0.0.1:1')});
    const error = await client.get('/api').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiConnectionError);
    expect((error as ApiConnectionError).refused).toBe(true);
    expect((error as ApiConnectionError).url).toBe('http://127.0.0.1:1/api');
  });
});

/** A server that records requests and answers with what the test scripted. */
class Recorder {
  requests: {method: string; url: string; headers: IncomingHttpHeaders; body: string}[] = [];
  reply: (req: IncomingMessage, res: ServerResponse, index: number) => void = (_req, res) => res.end('{}');
  server!: Server;
  url = '';
  async start(): Promise<this> {
    this.server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      this.requests.push({method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString()});
      this.reply(req, res, this.requests.length - 1);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }
  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('RestClient on the wire', () => {
  let rec: Recorder;
  beforeAll(async () => (rec = await new Recorder().start()));
  afterAll(() => rec.stop());

  it('sends the user agent, JSON, the timeout and the identity headers; keeps the server path prefix', async () => {
    rec.requests = [];
    rec.reply = (_req, res) => res.end('{}');
    const client = new RestClient({
      config: plain(`${rec.url}/prefix/`, {token: 'abc', impersonate: {user: 'jane', uid: '42', groups: ['g1', 'g2'], extra: {'scopes.orch.io/x': ['a', 'b']}}}),
      timeoutMs: 5000,
      timeoutText: '5s',
    });
    await client.patch('/api/v1/namespaces/default/pods/web', 'application/merge-patch+json', {metadata: {labels: {a: 'b'}}}, {fieldManager: 'orch-patch'});
    client.close();
    const [request] = rec.requests;
    expect(request.method).toBe('PATCH');
    expect(request.url).toBe('/prefix/api/v1/namespaces/default/pods/web?fieldManager=orch-patch&timeout=5s');
    expect(request.body).toBe('{"metadata":{"labels":{"a":"b"}}}');
    expect(request.headers).toMatchObject({
      'content-type': 'application/merge-patch+json',
      accept: 'application/json',
      authorization: 'Bearer abc',
      'impersonate-user': 'jane',
      'impersonate-uid': '42',
      'impersonate-group': 'g1, g2',
      // Node lower-cases incoming header names, escapes included.
      'impersonate-extra-scopes.orch.io%2fx': 'a, b',
    });
    expect(request.headers['user-agent']).toMatch(/^orch\/v\d+\.\d+\.\d+\S* \(linux\/(amd64|arm64)\)$/);
  });

  it('passes every Warning header to the warning handler', async () => {
    rec.reply = (_req, res) => {
      res.setHeader('Warning', ['299 - "first"', '299 - "second", 299 - "first"']);
      res.end('{}');
    };
    let out = '';
    const client = new RestClient({config: plain(rec.url), warnings: new WarningWriter((t) => (out += t))});
    const response = await client.request({method: 'GET', path: '/api'});
    client.close();
    expect(response.warnings.map((w) => w.text)).toEqual(['first', 'second', 'first']);
    expect(out).toBe('Warning: first\nWarning: second\n');
  });

  it('retries a 429 with Retry-After, then gives the error when retries run out', async () => {
    rec.requests = [];
    rec.reply = (_req, res, i) => {
      if (i < 2) {
        res.writeHead(429, {'Retry-After': '1', 'Content-Type': 'text/plain'});
        res.end('Too many requests, please try again later.\n');
      } else res.end('{"ok":true}');
    };
    const waits: number[] = [];
    const client = new RestClient({config: plain(rec.url), sleep: async (ms) => void waits.push(ms)});
    expect(await client.get('/api')).toEqual({ok: true});
    expect(waits).toEqual([1000, 1000]);
    rec.requests = [];
    const stingy = new RestClient({config: plain(rec.url), maxRetries: 1, sleep: async () => undefined});
    const error = await stingy.get('/api/v1/pods', undefined, {resource: 'pods'}).catch((e: unknown) => e);
    expect(error).toMatchObject({code: 429, reason: 'TooManyRequests', message: 'the server has received too many requests and has asked us to try again later (get pods)'});
    client.close();
    stingy.close();
  });

  it('gives up on a slow answer after the request timeout', async () => {
    rec.reply = (_req, res) => void setTimeout(() => res.end('{}'), 2000).unref();
    const client = new RestClient({config: plain(rec.url), timeoutMs: 100, timeoutText: '100ms'});
    const started = Date.now();
    const error = await client.get('/api').catch((e: unknown) => e);
    client.close();
    expect(Date.now() - started).toBeLessThan(1500);
    expect(error).toBeInstanceOf(ApiConnectionError);
    expect((error as Error).message).toContain('Client.Timeout exceeded');
  });

  it('rate-limits every request', async () => {
    rec.reply = (_req, res) => res.end('{}');
    let now = 0;
    const slept: number[] = [];
    const client = new RestClient({config: plain(rec.url), qps: 10, burst: 2, limiterClock: {now: () => now, sleep: async (ms) => void slept.push(ms)}});
    for (let i = 0; i < 4; i++) await client.get('/api');
    client.close();
    expect(slept.map(Math.round)).toEqual([100, 200]);
  });
});

describe('identity headers', () => {
  it.each<[string, Partial<ConnectionConfig>, Record<string, unknown>]>([
    ['token', {token: 't'}, {authorization: 'Bearer t'}],
    ['basic auth', {username: 'u', password: 'p'}, {authorization: `Basic ${Buffer.from('u:p').toString('base64')}`}],
    ['nothing', {}, {}],
    ['impersonation without extras', {impersonate: {user: 'system:serviceaccount:ns:sa', groups: [], extra: {}}}, {'Impersonate-User': 'system:serviceaccount:ns:sa'}],
  ])('%s', (_name, config, headers) => expect(authHeaders(plain('https://h', config))).toEqual(headers));

  it.each([
    ['scopes', 'scopes'],
    ['example.org/key', 'example.org%2Fkey'],
    ['a b%', 'a%20b%25'],
    ['ünï', '%C3%BCn%C3%AF'],
  ])('extra key %s is sent as %s', (key, escaped) => expect(escapeExtraKey(key)).toBe(escaped));
});

describe('parseRequestTimeout (kubectl rule)', () => {
  it.each([
    ['0', 0, '0s'],
    ['5', 5000, '5s'],
    ['90', 90000, '1m30s'],
    ['1m', 60000, '1m0s'],
    ['500ms', 500, '500ms'],
    ['1h2m3s', 3723000, '1h2m3s'],
  ])('%s', (value, ms, text) => expect(parseRequestTimeout(value)).toEqual({ms, text}));

  it.each(['abc', '-1', '5x', ''])('%s is refused', (value) => {
    expect(() => parseRequestTimeout(value)).toThrow('Invalid timeout value. Timeout must be a single integer in seconds');
  });
});
