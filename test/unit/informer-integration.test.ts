/**
 * An informer against the real REST handler over HTTP on loopback (fetchListWatcher): it lists
 * pods, sees adds, updates and deletes, resumes after the server closes its watch, and relists
 * after a 410 forced by compacting the store's history.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { Logger } from '../../src/lib/klog.js';
import { isExpired, StatusError } from '../../src/client/informers/errors.js';
import { RestClient } from '../../src/client/rest-client.js';
import { clientListWatcher } from '../../src/client/informers/client-list-watcher.js';
import { fetchListWatcher, listQuery, watchQuery } from '../../src/client/informers/fetch-list-watcher.js';
import { SharedIndexInformer } from '../../src/client/informers/informer.js';
import { LineSplitter } from '../../src/client/informers/ndjson.js';
import { DeletedFinalStateUnknown } from '../../src/client/informers/store.js';
import type { Unstructured, WatchEvent } from '../../src/client/informers/types.js';
import { call, startTestApi, type TestApi } from '../helpers/memory-store.js';

const PODS = '/api/v1/namespaces/default/pods';
const quiet: Logger = { info() {}, warning() {}, error() {}, v: () => ({ enabled: false, info() {} }) };
const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });

async function eventually(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs}ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let api: TestApi;
beforeEach(async () => {
  api = await startTestApi();
});
afterEach(async () => {
  await api.close();
});

describe('LineSplitter and the query strings', () => {
  it('splits NDJSON across chunks, including a character split between chunks', () => {
    const splitter = new LineSplitter();
    const bytes = new TextEncoder().encode('{"a":"é"}\n\n{"b":');
    expect(splitter.push(bytes.slice(0, 7))).toEqual([]);
    expect(splitter.push(bytes.slice(7))).toEqual(['{"a":"é"}']);
    expect(splitter.push('2}\n{"c":3}')).toEqual(['{"b":2}']);
    expect(splitter.flush()).toEqual(['{"c":3}']);
  });

  it.each([
    [listQuery({ resourceVersion: '0', limit: 500 }), 'resourceVersion=0&limit=500'],
    [listQuery({ resourceVersion: '', limit: 0 }), ''],
    [listQuery({ continue: 'tok', limit: 500, labelSelector: 'app=web' }), 'limit=500&continue=tok&labelSelector=app%3Dweb'],
    [watchQuery({ resourceVersion: '7', allowWatchBookmarks: true, timeoutSeconds: 321, fieldSelector: 'spec.nodeName=n1' }),
      'watch=true&resourceVersion=7&allowWatchBookmarks=true&timeoutSeconds=321&fieldSelector=spec.nodeName%3Dn1'],
  ])('%s', (query, expected) => {
    expect(String(query)).toBe(expected);
  });
});

describe('fetchListWatcher error responses', () => {
  it('an HTTP 410 on the watch request ends the watch with an expired StatusError', async () => {
    const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 1 (5)', reason: 'Expired', code: 410 };
    const fake: typeof fetch = async () => new Response(JSON.stringify(status), { status: 410, headers: { 'content-type': 'application/json' } });
    const lw = fetchListWatcher('http://127.0.0.1:1', PODS, { fetch: fake });
    const ended = await new Promise<unknown>((resolve) => lw.watch({ resourceVersion: '1', allowWatchBookmarks: true, timeoutSeconds: 5 }, () => undefined, resolve));
    expect(ended).toBeInstanceOf(StatusError);
    expect(isExpired(ended)).toBe(true);
    expect((ended as StatusError).message).toBe('too old resource version: 1 (5)');
  });

  it('a plain-text error body still carries its code', async () => {
    const fake: typeof fetch = async () => new Response('Too many requests, please try again later.\n', { status: 429 });
    const error = await fetchListWatcher('http://x', PODS, { fetch: fake }).list({}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 429, message: 'Too many requests, please try again later.' });
  });
});

describe('fetchListWatcher against the REST API', () => {
  it('pages lists, streams watch events, and turns error responses into StatusError', async () => {
    for (const name of ['a', 'b', 'c']) await call(api, 'POST', PODS, { body: pod(name) });
    const lw = fetchListWatcher<Unstructured>(api.url, PODS);
    const first = await lw.list({ limit: 2 });
    expect(first.items.map((p) => p.metadata?.name)).toEqual(['a', 'b']);
    const second = await lw.list({ limit: 2, continue: first.continue });
    expect(second.items.map((p) => p.metadata?.name)).toEqual(['c']);
    expect(second.continue).toBeUndefined();

    const events: WatchEvent<Unstructured>[] = [];
    let ended: unknown = 'open';
    const handle = lw.watch({ resourceVersion: first.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 30 }, (e) => events.push(e), (e) => (ended = e));
    await call(api, 'DELETE', `${PODS}/a`);
    await eventually(() => events.length === 1);
    expect([events[0].type, (events[0].object as Unstructured).metadata?.name]).toEqual(['DELETED', 'a']);
    api.handler.closeWatches();
    await eventually(() => ended !== 'open');
    expect(ended).toBeUndefined();
    handle.close();

    const bad = await lw.list({ resourceVersion: '1', limit: 1, continue: undefined, labelSelector: 'app in (a' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(StatusError);
    expect(bad).toMatchObject({ code: 400, reason: 'BadRequest' });
  });
});

describe('an informer on pods', () => {
  it('lists, follows changes, resumes after a closed watch, relists after 410 Gone', async () => {
    await call(api, 'POST', PODS, { body: pod('a') });
    const requests: string[] = [];
    let gate: Promise<void> | undefined;
    let waitingAtGate = 0;
    const recordingFetch: typeof fetch = async (input, init) => {
      const url = new URL(String(input));
      const q = url.searchParams;
      if (q.get('watch')) {
        requests.push(`watch ${q.get('resourceVersion')}`);
        if (gate) {
          waitingAtGate++;
          await gate;
        }
      } else requests.push(`list ${q.get('resourceVersion') ?? '-'}`);
      return fetch(input, init);
    };
    const informer = new SharedIndexInformer<Unstructured>({
      listWatcher: fetchListWatcher(api.url, PODS, { fetch: recordingFetch }),
      name: 'pods',
      backoff: { initialMs: 20, maxMs: 100 },
      logger: quiet,
    });
    const log: string[] = [];
    informer.addEventHandler({
      onAdd: (o) => log.push(`add ${o.metadata?.name}`),
      onUpdate: (a, b) => log.push(`update ${b.metadata?.name}${a.metadata?.resourceVersion === b.metadata?.resourceVersion ? ' (same)' : ''}`),
      onDelete: (o) => log.push(o instanceof DeletedFinalStateUnknown ? `delete? ${o.key}` : `delete ${o.metadata?.name}`),
    });
    informer.run();
    try {
      expect(await informer.waitForSync({ timeoutMs: 5000 })).toBe(true);
      expect(log).toEqual(['add a']);
      const listed = informer.lastSyncResourceVersion();

      // Adds, updates, deletes.
      await call(api, 'POST', PODS, { body: pod('b') });
      await call(api, 'PATCH', `${PODS}/a`, { body: { metadata: { labels: { tier: 'web' } } }, contentType: 'application/merge-patch+json' });
      await call(api, 'DELETE', `${PODS}/b`);
      await eventually(() => log.length === 4);
      expect(log).toEqual(['add a', 'add b', 'update a', 'delete b']);
      expect(informer.indexer.getByKey('default/a')?.metadata?.labels).toEqual({ tier: 'web' });
      const seen = informer.lastSyncResourceVersion();
      expect(seen).toBe(String(await api.store.currentRevision()));

      // The server closes the watch: the informer watches again from the last version, no relist.
      api.handler.closeWatches();
      await eventually(() => requests.length === 3);
      await call(api, 'POST', PODS, { body: pod('c') });
      await eventually(() => log.length === 5);
      expect(log[4]).toBe('add c');
      expect(requests).toEqual(['list 0', `watch ${listed}`, `watch ${seen}`]);
      const afterC = informer.lastSyncResourceVersion();

      // Force a 410: hold the next watch request, change things, compact the history it needs.
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      api.handler.closeWatches();
      await eventually(() => waitingAtGate === 1);
      await call(api, 'POST', PODS, { body: pod('d') });
      await call(api, 'DELETE', `${PODS}/c`);
      const latest = String(await api.store.currentRevision());
      await api.store.compact(Number(latest));
      gate = undefined;
      release();
      await eventually(() => informer.stats().lists === 2);
      await eventually(() => log.length === 8);
      expect(log.slice(5).sort()).toEqual(['add d', 'delete? default/c', 'update a (same)']);
      expect(informer.stats().expired).toBe(1);
      expect(informer.indexer.listKeys().sort()).toEqual(['default/a', 'default/d']);

      // And it keeps watching after the relist.
      await call(api, 'POST', PODS, { body: pod('e') });
      await eventually(() => log.at(-1) === 'add e');
      // The watch from the compacted version got 410; the relist first asked for that version
      // (410 again), then for the latest state, and the new watch starts from the relist.
      expect(requests.slice(3)).toEqual([`watch ${afterC}`, `list ${afterC}`, 'list -', `watch ${latest}`]);
    } finally {
      await informer.stop();
    }
    await eventually(() => api.handler.activeWatches() === 0);
  });
});

describe('clientListWatcher over the REST client', () => {
  it('feeds an informer: list, watch, resume after the server closes the watch', async () => {
    await call(api, 'POST', PODS, { body: pod('a') });
    const client = new RestClient({ config: { server: api.url, insecure: false } });
    const informer = new SharedIndexInformer<Unstructured>({ listWatcher: clientListWatcher(client, PODS), logger: quiet });
    const added: string[] = [];
    informer.addEventHandler({ onAdd: (o) => added.push(o.metadata!.name!) });
    informer.run();
    try {
      expect(await informer.waitForSync({ timeoutMs: 5000 })).toBe(true);
      await call(api, 'POST', PODS, { body: pod('b') });
      await eventually(() => added.length === 2);
      api.handler.closeWatches();
      await eventually(() => informer.stats().watches === 2);
      await call(api, 'POST', PODS, { body: pod('c') });
      await eventually(() => added.length === 3);
      expect(added).toEqual(['a', 'b', 'c']);
      expect(informer.stats().lists).toBe(1);
    } finally {
      await informer.stop();
      client.close();
    }
  });
});
