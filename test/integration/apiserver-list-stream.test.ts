/**
 * Big LISTs from the real API server (TLS, filters, audit, SQLite) are streamed (rest/list-stream.ts):
 * kubectl (HTTP/2) and an HTTP/1.1 client get the whole list, byte for byte JSON.stringify's output.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {configMap, kubectl, startApiServer, type InProcessServer} from '../helpers/apiserver.js';

const COUNT = 700; // above STREAM_LIST_MIN_ITEMS (500)
const CMS = '/api/v1/namespaces/default/configmaps';

describe('streamed LIST on the real API server', () => {
  let api: InProcessServer;
  beforeAll(async () => {
    api = await startApiServer({engine: 'sqlite'});
    for (let i = 0; i < COUNT; i += 25) {
      await Promise.all(
        Array.from({length: Math.min(25, COUNT - i)}, (_, j) =>
          api.client.request('POST', CMS, {body: configMap(`cm-${i + j}`, {v: 'é"\n'.repeat(20)}, (i + j) % 7 === 0 ? {tier: 'seventh'} : undefined)}),
        ),
      );
    }
  }, 60_000);
  afterAll(async () => api?.stop());

  it('serves the whole list over HTTP/1.1 with the bytes of JSON.stringify', async () => {
    const reply = await api.client.request('GET', CMS);
    expect(reply.status).toBe(200);
    expect(reply.headers['transfer-encoding']).toBe('chunked');
    expect(reply.body.items).toHaveLength(COUNT);
    expect(reply.text).toBe(JSON.stringify(reply.body));
  });

  it('decodes items as it writes them: each as a GET of it answers, selectors and pages as an unstreamed list', async () => {
    const all = (await api.client.request('GET', CMS)).body.items as Array<{metadata: {name: string; resourceVersion: string}}>;
    const one = (await api.client.request('GET', `${CMS}/${all[123]!.metadata.name}`)).body;
    expect(all[123]).toEqual(one);
    // A label selector picks one in seven (100 of 700, below the streaming threshold) and the other 600 (streamed).
    const seventh = await api.client.request('GET', `${CMS}?labelSelector=tier%3Dseventh`);
    expect(seventh.body.items.map((o: {metadata: {name: string}}) => o.metadata.name).sort()).toEqual(
      all.filter((o) => Number(o.metadata.name.slice(3)) % 7 === 0).map((o) => o.metadata.name).sort(),
    );
    const rest = await api.client.request('GET', `${CMS}?labelSelector=tier!%3Dseventh`);
    expect(rest.text).toBe(JSON.stringify(rest.body));
    expect(rest.body.items).toHaveLength(all.length - seventh.body.items.length);
    // Pages of 600: the first streamed with a continue token, the second the remainder; nothing twice.
    const first = await api.client.request('GET', `${CMS}?limit=600`);
    expect(first.body.items).toHaveLength(600);
    const second = await api.client.request('GET', `${CMS}?limit=600&continue=${encodeURIComponent(first.body.metadata.continue)}`);
    const paged = [...first.body.items, ...second.body.items].map((o: {metadata: {name: string}}) => o.metadata.name);
    expect(paged).toEqual(all.map((o) => o.metadata.name));
    expect(second.body.metadata.continue).toBeUndefined();
  });

  it('serves kubectl the whole list', async () => {
    const raw = await kubectl(api.orchconfigPath, ['get', '--raw', CMS]);
    expect(raw.code).toBe(0);
    expect(raw.stdout).toBe(JSON.stringify(JSON.parse(raw.stdout)));
    expect(JSON.parse(raw.stdout).items).toHaveLength(COUNT);
    const names = await kubectl(api.orchconfigPath, ['get', 'configmaps', '-n', 'default', '-o', 'name']);
    expect(names.code).toBe(0);
    expect(names.stdout.trim().split('\n').filter((l) => l.startsWith('configmap/cm-'))).toHaveLength(COUNT);
  });
});
