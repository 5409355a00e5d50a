import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {CachedStore} from '../../src/daemons/apiserver/storage/cached-store.js';
import {SqliteStore} from '../../src/daemons/apiserver/storage/sqlite.js';
import {StoreCompactedError, StoreUnavailableError} from '../../src/daemons/apiserver/storage/store.js';
import {record, storeContract} from './storage-contract.js';

let dir: string;
let counter = 0;
const nextPrefix = (root: string) => () => `${root}t${++counter}/`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'orch-sqlite-'));
});
afterAll(() => rmSync(dir, {recursive: true, force: true}));

describe('SqliteStore', () => {
  let store: SqliteStore;
  beforeAll(() => {
    store = new SqliteStore({path: join(dir, 'contract', 'kv.sqlite')});
  });
  afterAll(() => store.close());

  storeContract({store: () => store, prefix: nextPrefix('/registry/pods/')});

  it('starts at revision 1 and applies concurrent conditional writes one by one', async () => {
    const fresh = new SqliteStore({path: join(dir, 'concurrent.sqlite')});
    try {
      expect(await fresh.currentRevision()).toBe(1);
      const key = '/registry/pods/default/web';
      const created = await fresh.create(key, '0');
      // 20 clients read-modify-write the same revision at once: exactly one wins.
      const results = await Promise.allSettled(Array.from({length: 20}, (_, i) => fresh.update(key, String(i), created)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(await fresh.currentRevision()).toBe(created + 1);
      // Writes on different keys in one batch each get their own revision.
      const revisions = await Promise.all(Array.from({length: 50}, (_, i) => fresh.create(`/registry/pods/default/p${i}`, '{}')));
      expect(new Set(revisions).size).toBe(50);
      expect(Math.max(...revisions)).toBe(await fresh.currentRevision());
    } finally {
      await fresh.close();
    }
  });

  it('keeps acknowledged writes, the revision and the compaction point across a reopen', async () => {
    const path = join(dir, 'durable', 'kv.sqlite');
    const first = new SqliteStore({path});
    const r1 = await first.create('/registry/configmaps/default/a', 'one');
    const r2 = await first.update('/registry/configmaps/default/a', 'two', r1);
    const r3 = await first.create('/registry/configmaps/default/b', 'bee');
    await first.compact(r2);
    await first.close();

    const second = new SqliteStore({path});
    try {
      expect(await second.currentRevision()).toBe(r3);
      expect(await second.get('/registry/configmaps/default/a')).toEqual({
        key: '/registry/configmaps/default/a',
        value: 'two',
        createRevision: r1,
        modRevision: r2,
      });
      expect((await second.list('/registry/configmaps/', {revision: r2})).items.map((i) => i.value)).toEqual(['two']);
      await expect(second.list('/registry/configmaps/', {revision: r1})).rejects.toBeInstanceOf(StoreCompactedError);
      // History after the compaction point is still there for watches.
      const watch = record(second, '/registry/configmaps/', r2);
      await watch.until(() => watch.events.length === 1, 'the replayed event');
      expect(watch.events[0]).toMatchObject({key: '/registry/configmaps/default/b', revision: r3});
      watch.close();
      expect(await second.create('/registry/configmaps/default/c', 'c')).toBe(r3 + 1);
    } finally {
      await second.close();
    }
  });

  it('fails reads, writes and pings once closed, and ends its watches', async () => {
    const closing = new SqliteStore({path: join(dir, 'closing.sqlite')});
    const watch = record(closing, '/registry/', 1);
    await closing.close();
    await watch.until(() => watch.errors.length === 1, 'the end of the watch');
    expect(watch.errors[0]).toBeInstanceOf(StoreUnavailableError);
    await expect(closing.ping(100)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(closing.create('/registry/a', '1')).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});

describe('CachedStore over SqliteStore', () => {
  let cached: CachedStore;
  beforeAll(async () => {
    const engine = new SqliteStore({path: join(dir, 'cached', 'kv.sqlite')});
    cached = new CachedStore(engine, {root: '/registry/', prefixes: [{prefix: '/registry/pods/', capacity: 5}]});
    await cached.waitSynced(5000);
  });
  afterAll(() => cached.close());

  storeContract({store: () => cached, prefix: nextPrefix('/registry/pods/'), historyCapacity: 5});
});
