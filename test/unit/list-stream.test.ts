/** The streaming list encoder: same bytes as JSON.stringify, other requests served while a big list is sent. */
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listJsonChunks, writeJsonListStreaming, type JsonList } from '../../src/daemons/apiserver/rest/list-stream.js';
import { call, startTestApi, type TestApi } from '../helpers/memory-store.js';

const list = (count: number): JsonList => ({
  kind: 'ConfigMapList',
  apiVersion: 'v1',
  metadata: { resourceVersion: '42', continue: 'tok"en\u2028' },
  items: Array.from({ length: count }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `cm-${i}`, labels: { 'a/b': 'é"\\\n' }, annotations: i % 2 ? undefined : { x: '\u{1F600}' } },
    data: { n: String(i), empty: '' },
    nums: [i, -0.5, 1e21, null],
  })),
});

describe('listJsonChunks', () => {
  it.each([0, 1, 501, 3000])('joins to JSON.stringify of the list (%i items)', (count) => {
    const value = list(count);
    const chunks = [...listJsonChunks(value, 4096)];
    expect(chunks.join('')).toBe(JSON.stringify(value));
    if (count >= 3000) expect(chunks.length).toBeGreaterThan(10);
  });
});

describe('writeJsonListStreaming over HTTP', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('stops writing when the client goes away', async () => {
    let finished: Promise<void> | undefined;
    let writes = 0;
    server = createServer((_req, res) => {
      const write = res.write.bind(res);
      res.write = ((chunk: string) => (writes++, write(chunk))) as typeof res.write;
      finished = writeJsonListStreaming(res, 200, list(20000), { 'Content-Type': 'application/json' }, 16 * 1024);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => {
      const req = get({ host: '127.0.0.1', port, path: '/' }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => {});
    });
    await finished;
    const total = [...listJsonChunks(list(20000), 16 * 1024)].length;
    expect(writes).toBeLessThan(total);
  });
});

describe('LIST through the API handler', () => {
  let api: TestApi;
  afterEach(async () => api.close());

  const seed = async (count: number, size: number) => {
    const payload = 'x'.repeat(size);
    for (let i = 0; i < count; i++) {
      const name = `cm-${String(i).padStart(5, '0')}`;
      const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', uid: `u-${i}`, creationTimestamp: '2024-01-01T00:00:00Z' }, data: { payload, 'ü"': 'é\n' } };
      await api.store.create(`/registry/configmaps/default/${name}`, JSON.stringify(object));
    }
  };

  it('streams a big list with the bytes of JSON.stringify and no Content-Length', async () => {
    api = await startTestApi();
    await seed(1200, 200);
    const reply = await call(api, 'GET', '/api/v1/namespaces/default/configmaps');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-length')).toBeNull();
    expect(reply.headers.get('content-type')).toBe('application/json');
    expect(reply.body.items).toHaveLength(1200);
    expect(reply.text).toBe(JSON.stringify(reply.body));
    // Paged reads of the same collection (not streamed: 100 items) show the same objects.
    const page = await call(api, 'GET', '/api/v1/namespaces/default/configmaps?limit=100');
    expect(page.headers.get('content-length')).not.toBeNull();
    expect(page.body.items).toEqual(reply.body.items.slice(0, 100));
  });

  it('answers a GET issued during a big LIST long before the LIST ends', async () => {
    api = await startTestApi();
    await seed(5000, 10 * 1024);
    const { port } = new URL(api.url);
    const started = performance.now();
    // The LIST is read raw (no JSON.parse here: client and server share this process's event loop).
    const listing = new Promise<{ bytes: number; at: number }>((resolve, reject) => {
      get({ host: '127.0.0.1', port: Number(port), path: '/api/v1/namespaces/default/configmaps' }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => resolve({ bytes, at: performance.now() - started }));
      }).on('error', reject);
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const getSent = performance.now();
    const got = await call(api, 'GET', '/api/v1/namespaces/default/configmaps/cm-04999');
    const getLatency = performance.now() - getSent;
    const listed = await listing;
    expect(got.status).toBe(200);
    expect(listed.bytes).toBeGreaterThan(5000 * 10 * 1024);
    // Before streaming, the GET waited for the whole list to be decoded and encoded (most of its time).
    expect(getLatency).toBeLessThan(listed.at / 3);
  }, 60_000);
});
