/** The watch cache's own behaviour, over the embedded engine (the contract suites cover the rest). */
import {afterEach, beforeEach, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {CachedStore} from '../../src/daemons/apiserver/storage/cached-store.js';
import {SqliteStore} from '../../src/daemons/apiserver/storage/sqlite.js';
import {
  type ListOptions,
  type Store,
  type StoreEvent,
  StoreCompactedError,
  StoreUnavailableError,
  type WatchHandle,
} from '../../src/daemons/apiserver/storage/store.js';
import {record} from './storage-contract.js';

/** Delegates to a real store, counting reads, and can play dead or break its watches. */
class FlakyStore implements Store {
  readonly engine = 'flaky';
  reads = 0;
  down = false;
  private readonly active = new Set<{handle: WatchHandle; onError: (e: Error) => void}>();
  constructor(readonly inner: Store) {}
  private check(): void {
    if (this.down) throw new StoreUnavailableError('down');
  }
  async get(key: string) {
    this.check();
    this.reads++;
    return this.inner.get(key);
  }
  async list(prefix: string, options?: ListOptions) {
    this.check();
    this.reads++;
    return this.inner.list(prefix, options);
  }
  async create(key: string, value: string) {
    this.check();
    return this.inner.create(key, value);
  }
  async update(key: string, value: string, expected: number) {
    this.check();
    return this.inner.update(key, value, expected);
  }
  async delete(key: string, expected?: number) {
    this.check();
    return this.inner.delete(key, expected);
  }
  watch(prefix: string, after: number, onEvent: (e: StoreEvent) => void, onError: (e: Error) => void, onProgress?: (r: number) => void) {
    const entry = {handle: this.inner.watch(prefix, after, onEvent, onError, onProgress), onError};
    if (this.down) {
      entry.handle.close();
      queueMicrotask(() => onError(new StoreUnavailableError('down')));
      return {close: () => undefined};
    }
    this.active.add(entry);
    return {close: () => (entry.handle.close(), this.active.delete(entry))};
  }
  /** The store "goes down": every watch ends with StoreUnavailableError. */
  goDown(): void {
    this.down = true;
    for (const entry of this.active) {
      entry.handle.close();
      entry.onError(new StoreUnavailableError('connection lost'));
    }
    this.active.clear();
  }
  async currentRevision() {
    this.check();
    return this.inner.currentRevision();
  }
  compact(revision: number) {
    return this.inner.compact(revision);
  }
  async ping(timeoutMs: number) {
    this.check();
    return this.inner.ping(timeoutMs);
  }
  close() {
    return this.inner.close();
  }
}

let dir: string;
let engine: SqliteStore;
let flaky: FlakyStore;
let cached: CachedStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orch-cache-'));
  engine = new SqliteStore({path: join(dir, 'kv.sqlite')});
  await engine.create('/registry/pods/default/early', 'early');
  flaky = new FlakyStore(engine);
  cached = new CachedStore(flaky, {
    root: '/registry/',
    prefixes: [{prefix: '/registry/pods/'}, {prefix: '/registry/configmaps/', capacity: 2}],
    initialBackoffMs: 10,
    maxBackoffMs: 20,
    freshnessTimeoutMs: 200,
  });
  await cached.waitSynced(2000);
});
afterEach(async () => {
  await cached.close();
  rmSync(dir, {recursive: true, force: true});
});

describe('CachedStore', () => {
  it('serves reads of cached resources from memory once synced, and others from the store', async () => {
    const before = flaky.reads;
    await cached.create('/registry/pods/default/web', 'web');
    expect(await cached.get('/registry/pods/default/web')).toMatchObject({value: 'web'});
    expect((await cached.list('/registry/pods/')).items.map((i) => i.value)).toEqual(['early', 'web']);
    expect((await cached.list('/registry/pods/default/', {limit: 1})).more).toBe(true);
    expect(flaky.reads).toBe(before);
    await cached.get('/registry/secrets/default/s');
    expect(flaky.reads).toBe(before + 1);
  });

  it('finds the most specific cache for a key when cached prefixes nest', async () => {
    const nested = new CachedStore(engine, {root: '/registry/', prefixes: [{prefix: '/registry/pods/'}, {prefix: '/registry/pods/kube-system/'}]});
    try {
      await nested.waitSynced(2000);
      await nested.create('/registry/pods/kube-system/dns', 'dns');
      await nested.create('/registry/pods/default/db', 'db');
      expect(nested.objectCount('/registry/pods/kube-system/dns')).toBe(1);
      expect(nested.objectCount('/registry/pods/kube-system/')).toBe(1);
      // Each event goes to the most specific cache only: the outer one has 'early' and 'db'.
      expect(nested.objectCount('/registry/pods/default/db')).toBe(2);
      expect(nested.objectCount('/registry/pods/')).toBe(2);
      expect(nested.objectCount('/registry/secrets/default/s')).toBeUndefined();
      expect(nested.objectCount('/')).toBeUndefined();
      expect((await nested.get('/registry/pods/kube-system/dns'))?.value).toBe('dns');
    } finally {
      await nested.close();
    }
  });

  it('loads a resource of several pages whole, in key order, and serves it from memory', async () => {
    const names = Array.from({length: 2500}, (_, i) => `/registry/widgets/default/w-${String(i).padStart(5, '0')}`);
    for (const key of names) await engine.create(key, `{"k":"${key}","é":"ü"}`);
    const paged = new CachedStore(engine, {root: '/registry/', prefixes: [{prefix: '/registry/widgets/'}]});
    try {
      await paged.waitSynced(5000);
      const listed = await paged.list('/registry/widgets/');
      expect(listed.items.map((kv) => kv.key)).toEqual(names);
      expect(listed.items[1234]!.value).toBe(`{"k":"${names[1234]}","é":"ü"}`);
      expect(paged.objectCount('/registry/widgets/')).toBe(2500);
      expect(await paged.get(names[2499]!)).toEqual({key: names[2499], value: `{"k":"${names[2499]}","é":"ü"}`, createRevision: expect.any(Number), modRevision: expect.any(Number)});
    } finally {
      await paged.close();
    }
  });

  it('reports its revision through watch progress, also for writes to other resources', async () => {
    const watch = record(cached, '/registry/pods/', await cached.currentRevision());
    const revision = await cached.create('/registry/secrets/default/s', 'x');
    await watch.until(() => watch.progress.includes(revision), 'progress at the secret write');
    expect(watch.events).toEqual([]);
    expect(cached.revision()).toBe(revision);
    watch.close();
  });

  it('answers a "not older than" list at once, or with a lower revision when it is in the future', async () => {
    const revision = await cached.create('/registry/pods/default/a', 'a');
    expect((await cached.list('/registry/pods/', {minRevision: revision})).revision).toBe(revision);
    const future = await cached.list('/registry/pods/', {minRevision: revision + 10});
    expect(future.revision).toBeLessThan(revision + 10);
  });

  it('keeps a bounded history per resource: older watches get 410 with the oldest revision held', async () => {
    const revisions: number[] = [];
    for (const name of ['a', 'b', 'c']) revisions.push(await cached.create(`/registry/configmaps/default/${name}`, name));
    const tooOld = record(cached, '/registry/configmaps/', revisions[0]! - 1);
    const inWindow = record(cached, '/registry/configmaps/', revisions[0]!);
    await tooOld.until(() => tooOld.errors.length === 1, 'the error');
    expect(tooOld.errors[0]).toEqual(new StoreCompactedError(revisions[0]! - 1, revisions[0]!));
    await inWindow.until(() => inWindow.events.length === 2, 'the two held events');
    expect(inWindow.events.map((e) => e.value)).toEqual(['b', 'c']);
    tooOld.close();
    inWindow.close();
  });

  it('turns unsynced while the store is down, then resumes without losing events', async () => {
    const watch = record(cached, '/registry/pods/', await cached.currentRevision());
    flaky.goDown();
    expect(cached.synced()).toBe(false);
    await expect(cached.get('/registry/pods/default/early')).rejects.toBeInstanceOf(StoreUnavailableError);
    // Writes the cache could not see while it was cut off.
    const missed = await engine.create('/registry/pods/default/while-down', 'x');
    flaky.down = false;
    await cached.waitSynced(2000);
    expect(await cached.get('/registry/pods/default/while-down')).toMatchObject({modRevision: missed});
    await watch.until(() => watch.events.length === 1, 'the missed event');
    expect(watch.events[0]).toMatchObject({key: '/registry/pods/default/while-down', revision: missed});
    expect(watch.errors).toEqual([]);
    watch.close();
  });

  it('relists when the history it needs was compacted meanwhile; its watchers end with 410', async () => {
    const watch = record(cached, '/registry/pods/', await cached.currentRevision());
    flaky.goDown();
    await engine.delete('/registry/pods/default/early');
    const created = await engine.create('/registry/pods/default/new', 'new');
    await engine.compact(created);
    flaky.down = false;
    await cached.waitSynced(2000);
    await watch.until(() => watch.errors.length === 1, 'the end of the watch');
    expect(watch.errors[0]).toBeInstanceOf(StoreCompactedError);
    expect((await cached.list('/registry/pods/')).items.map((i) => i.value)).toEqual(['new']);
    expect((await cached.list('/registry/pods/')).revision).toBe(created);
    watch.close();
  });

  it('caches a prefix added at run time, from its current state on', async () => {
    await cached.create('/registry/example.com/widgets/default/w1', 'w1');
    const before = flaky.reads;
    await cached.addPrefix({prefix: '/registry/example.com/widgets/'});
    const reads = flaky.reads;
    expect(reads).toBe(before + 1); // the initial list
    await cached.create('/registry/example.com/widgets/default/w2', 'w2');
    expect((await cached.list('/registry/example.com/widgets/')).items.map((i) => i.value)).toEqual(['w1', 'w2']);
    expect(flaky.reads).toBe(reads);
    expect(cached.synced()).toBe(true);
  });
});
