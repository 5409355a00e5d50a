/** Lists (selectors, paging, resourceVersion semantics) and watch streams over real HTTP. */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { call, startTestApi, WatchReader, type TestApi } from '../helpers/memory-store.js';

let api: TestApi;
beforeEach(async () => {
  api = await startTestApi();
});
afterEach(async () => {
  await api.close();
});

const PODS = '/api/v1/namespaces/default/pods';
const pod = (name: string, labels: Record<string, string> = {}, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...extra },
});
const names = (list: { items: { metadata: { name: string } }[] }) => list.items.map((i) => i.metadata.name);

async function seedPods(): Promise<void> {
  await call(api, 'POST', PODS, { body: pod('a', { app: 'web', env: 'prod' }, { nodeName: 'n1' }) });
  await call(api, 'POST', PODS, { body: pod('b', { app: 'web', env: 'dev' }) });
  await call(api, 'POST', PODS, { body: pod('c', { app: 'db' }, { nodeName: 'n2' }) });
  await call(api, 'POST', PODS, { body: pod('d', { legacy: 'true' }) });
}

describe('list', () => {
  it('returns a typed list with the read revision', async () => {
    await seedPods();
    const reply = await call(api, 'GET', PODS);
    expect(reply.body.kind).toBe('PodList');
    expect(reply.body.apiVersion).toBe('v1');
    expect(names(reply.body)).toEqual(['a', 'b', 'c', 'd']);
    expect(reply.body.metadata.resourceVersion).toBe(String(await api.store.currentRevision()));
  });

  it.each([
    ['app=web', ['a', 'b']],
    ['app==web,env!=prod', ['b']],
    ['env in (prod,dev)', ['a', 'b']],
    ['app notin (web)', ['c', 'd']],
    ['!app', ['d']],
    ['env', ['a', 'b']],
    ['app=web,!env', []],
  ])('label selector %s', async (selector, expected) => {
    await seedPods();
    const reply = await call(api, 'GET', `${PODS}?labelSelector=${encodeURIComponent(selector)}`);
    expect(names(reply.body)).toEqual(expected);
  });

  it.each([
    ['metadata.name=b', ['b']],
    ['spec.nodeName=n1', ['a']],
    ['spec.nodeName=', ['b', 'd']],
    ['status.phase=Pending,metadata.name!=a', ['b', 'c', 'd']],
    ['metadata.namespace=default,spec.nodeName!=n1', ['b', 'c', 'd']],
  ])('field selector %s', async (selector, expected) => {
    await seedPods();
    const reply = await call(api, 'GET', `${PODS}?fieldSelector=${encodeURIComponent(selector)}`);
    expect(names(reply.body)).toEqual(expected);
  });

  it.each([
    ['labelSelector=app%20in%20(a', 400, 'BadRequest'],
    ['fieldSelector=spec.unknown%3Dx', 400, 'BadRequest'],
    ['resourceVersionMatch=Exact', 422, 'Invalid'],
    ['resourceVersion=0&resourceVersionMatch=Exact', 422, 'Invalid'],
    ['sendInitialEvents=true', 422, 'Invalid'],
    ['continue=garbage', 400, 'BadRequest'],
  ])('%s -> %d', async (query, code, reason) => {
    const reply = await call(api, 'GET', `${PODS}?${query}`);
    expect(reply.status).toBe(code);
    expect(reply.body.reason).toBe(reason);
  });

  it('names the unsupported field', async () => {
    const reply = await call(api, 'GET', `/api/v1/configmaps?fieldSelector=spec.nodeName%3Dx`);
    expect(reply.body.message).toBe('field label not supported: spec.nodeName');
    const rvMatch = await call(api, 'GET', `${PODS}?resourceVersionMatch=NotOlderThan`);
    expect(rvMatch.body.message).toBe('ListOptions.meta.orch.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
  });

  it('pages with limit and continue over one consistent snapshot', async () => {
    for (let i = 0; i < 7; i++) await call(api, 'POST', PODS, { body: pod(`p${i}`, { n: String(i % 2) }) });
    const first = await call(api, 'GET', `${PODS}?limit=3`);
    expect(names(first.body)).toEqual(['p0', 'p1', 'p2']);
    const token = first.body.metadata.continue;
    expect(typeof token).toBe('string');
    // A write between pages is not seen by the next page (same revision).
    await call(api, 'DELETE', `${PODS}/p3`);
    const second = await call(api, 'GET', `${PODS}?limit=3&continue=${token}`);
    expect(names(second.body)).toEqual(['p3', 'p4', 'p5']);
    expect(second.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
    const third = await call(api, 'GET', `${PODS}?limit=3&continue=${second.body.metadata.continue}`);
    expect(names(third.body)).toEqual(['p6']);
    expect(third.body.metadata.continue).toBeUndefined();

    // With a selector, a page holds `limit` matching objects (p3 is gone by now).
    const filtered = await call(api, 'GET', `${PODS}?limit=1&labelSelector=n%3D1`);
    expect(names(filtered.body)).toEqual(['p1']);
    const rest = await call(api, 'GET', `${PODS}?limit=1&labelSelector=n%3D1&continue=${filtered.body.metadata.continue}`);
    expect(names(rest.body)).toEqual(['p5']);
  });

  it('lists across namespaces on the cluster path', async () => {
    await call(api, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } } });
    await call(api, 'POST', PODS, { body: pod('x') });
    await call(api, 'POST', '/api/v1/namespaces/other/pods', { body: pod('y') });
    const reply = await call(api, 'GET', '/api/v1/pods');
    expect(reply.body.items.map((i: { metadata: { namespace: string; name: string } }) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual(['default/x', 'other/y']);
  });

  it('expired continue tokens and compacted exact lists answer 410 Expired', async () => {
    for (let i = 0; i < 4; i++) await call(api, 'POST', PODS, { body: pod(`p${i}`) });
    const first = await call(api, 'GET', `${PODS}?limit=2`);
    const rv = Number(first.body.metadata.resourceVersion);
    await call(api, 'POST', PODS, { body: pod('later') });
    await api.store.compact(rv + 1);
    const next = await call(api, 'GET', `${PODS}?limit=2&continue=${first.body.metadata.continue}`);
    expect(next.status).toBe(410);
    expect(next.body).toMatchObject({
      reason: 'Expired', code: 410,
      message: 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
    });
    const exact = await call(api, 'GET', `${PODS}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(exact.status).toBe(410);
    expect(exact.body.message).toBe('The resourceVersion for the provided list is too old.');
  });

  it('an exact resourceVersion lists the past; one from the future answers 504', async () => {
    await call(api, 'POST', PODS, { body: pod('old') });
    const rv = await api.store.currentRevision();
    await call(api, 'POST', PODS, { body: pod('new') });
    const exact = await call(api, 'GET', `${PODS}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(names(exact.body)).toEqual(['old']);
    expect(exact.body.metadata.resourceVersion).toBe(String(rv));
    const notOlder = await call(api, 'GET', `${PODS}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`);
    expect(names(notOlder.body)).toEqual(['new', 'old']);
    const future = await call(api, 'GET', `${PODS}?resourceVersion=${rv + 100}`);
    expect(future.status).toBe(504);
    expect(future.body.details.causes[0].reason).toBe('ResourceVersionTooLarge');
  });
});

describe('watch', () => {
  it('without resourceVersion: synthetic ADDED for the state, then changes', async () => {
    await call(api, 'POST', PODS, { body: pod('before') });
    const { status, reader, controller } = await WatchReader.open(api, `${PODS}?watch=1`);
    expect(status).toBe(200);
    expect((await reader.take(1)).map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'before']]);
    await call(api, 'POST', PODS, { body: pod('after') });
    await call(api, 'PATCH', `${PODS}/after`, { body: { metadata: { labels: { x: 'y' } } }, contentType: 'application/merge-patch+json' });
    await call(api, 'DELETE', `${PODS}/after`);
    const events = await reader.take(4);
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'before'], ['ADDED', 'after'], ['MODIFIED', 'after'], ['DELETED', 'after']]);
    expect(events[1].object.kind).toBe('Pod');
    expect(events[1].object.apiVersion).toBe('v1');
    // The DELETED object carries the revision of the deletion.
    expect(Number(events[3].object.metadata.resourceVersion)).toBe(await api.store.currentRevision());
    controller.abort();
  });

  it('from a resourceVersion: only the events after it, replayed from history', async () => {
    await call(api, 'POST', PODS, { body: pod('one') });
    const rv = await api.store.currentRevision();
    await call(api, 'POST', PODS, { body: pod('two') });
    const { reader, controller } = await WatchReader.open(api, `${PODS}?watch=true&resourceVersion=${rv}`);
    const events = await reader.take(1);
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'two']]);
    controller.abort();
  });

  it('a compacted resourceVersion ends the stream with an ERROR 410 Expired event', async () => {
    await call(api, 'POST', PODS, { body: pod('one') });
    await call(api, 'POST', PODS, { body: pod('two') });
    const current = await api.store.currentRevision();
    await api.store.compact(current);
    const { status, reader } = await WatchReader.open(api, `${PODS}?watch=1&resourceVersion=1`);
    expect(status).toBe(200);
    const events = await reader.take(1);
    expect(events).toEqual([{
      type: 'ERROR',
      object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: 1 (${current + 1})`, reason: 'Expired', code: 410 },
    }]);
    expect(await reader.end()).toBe(true);
  });

  it('objects moving out of the selector are DELETED, moving in ADDED', async () => {
    await call(api, 'POST', PODS, { body: pod('m', { app: 'web' }) });
    const rv = await api.store.currentRevision();
    const { reader, controller } = await WatchReader.open(api, `${PODS}?watch=1&resourceVersion=${rv}&labelSelector=app%3Dweb`);
    await call(api, 'PATCH', `${PODS}/m`, { body: { metadata: { labels: { app: 'db' } } }, contentType: 'application/merge-patch+json' });
    await call(api, 'POST', PODS, { body: pod('other', { app: 'db' }) });
    await call(api, 'PATCH', `${PODS}/m`, { body: { metadata: { labels: { app: 'web' } } }, contentType: 'application/merge-patch+json' });
    const events = await reader.take(2);
    expect(events.map((e) => [e.type, e.object.metadata.name, e.object.metadata.labels.app])).toEqual([
      ['DELETED', 'm', 'web'],
      ['ADDED', 'm', 'web'],
    ]);
    controller.abort();
  });

  it('field selectors apply to watches; the legacy /watch/ path watches one object', async () => {
    await call(api, 'POST', PODS, { body: pod('x') });
    await call(api, 'POST', PODS, { body: pod('y') });
    const { reader, controller } = await WatchReader.open(api, '/api/v1/watch/namespaces/default/pods/y');
    expect((await reader.take(1)).map((e) => e.object.metadata.name)).toEqual(['y']);
    controller.abort();
    const bound = await WatchReader.open(api, `${PODS}?watch=1&fieldSelector=spec.nodeName%3Dn9`);
    await call(api, 'POST', `${PODS}/x/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'x' }, target: { name: 'n9' } } });
    expect((await bound.reader.take(1)).map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'x']]);
    bound.controller.abort();
  });

  it('timeoutSeconds ends the stream cleanly', async () => {
    const { reader } = await WatchReader.open(api, `${PODS}?watch=1&timeoutSeconds=1`);
    expect(await reader.end(3000)).toBe(true);
    expect(api.handler.activeWatches()).toBe(0);
  });

  it('sendInitialEvents ends the initial state with an annotated BOOKMARK', async () => {
    await call(api, 'POST', PODS, { body: pod('s') });
    const rv = await api.store.currentRevision();
    const { reader, controller } = await WatchReader.open(api, `${PODS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=&allowWatchBookmarks=true`);
    const events = await reader.take(2);
    expect(events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 's' } } });
    expect(events[1]).toEqual({
      type: 'BOOKMARK',
      object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: String(rv), annotations: { 'k8s.io/initial-events-end': 'true' } } },
    });
    controller.abort();
  });

  it('sends periodic bookmarks when allowed', async () => {
    await api.close();
    api = await startTestApi({ bookmarkIntervalMs: 50 });
    const rv = await api.store.currentRevision();
    const { reader, controller } = await WatchReader.open(api, `${PODS}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`);
    const events = await reader.take(1);
    expect(events[0]).toEqual({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: String(rv) } } });
    controller.abort();
  });

  it('closeWatches ends every open stream (shutdown)', async () => {
    const one = await WatchReader.open(api, `${PODS}?watch=1`);
    const two = await WatchReader.open(api, `/api/v1/configmaps?watch=1`);
    await one.reader.take(0, 50);
    expect(api.handler.activeWatches()).toBe(2);
    api.handler.closeWatches();
    expect(await one.reader.end()).toBe(true);
    expect(await two.reader.end()).toBe(true);
  });

  it('streams Tables when kubectl asks for them, column definitions only first', async () => {
    await call(api, 'POST', PODS, { body: pod('t1') });
    await call(api, 'POST', PODS, { body: pod('t2') });
    const { reader, controller } = await WatchReader.open(api, `${PODS}?watch=1`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' });
    const events = await reader.take(2);
    expect(events[0].object.kind).toBe('Table');
    expect(events[0].object.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates']);
    expect(events[0].object.rows[0].cells.slice(0, 4)).toEqual(['t1', '0/1', 'Pending', '0']);
    expect(events[1].object.columnDefinitions).toBeUndefined();
    controller.abort();
  });
});
