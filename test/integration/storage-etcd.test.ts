import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {CachedStore} from '../../src/daemons/apiserver/storage/cached-store.js';
import {EtcdStore} from '../../src/daemons/apiserver/storage/etcd.js';
import {createStore} from '../../src/daemons/apiserver/storage/index.js';
import {StoreUnavailableError} from '../../src/daemons/apiserver/storage/store.js';
import {type EtcdServer, startEtcd} from '../helpers/etcd.js';
import {eventually, record, storeContract} from './storage-contract.js';

let etcd: EtcdServer;
let counter = 0;
const nextPrefix = (root: string) => () => `${root}t${++counter}/`;

beforeAll(async () => {
  etcd = await startEtcd();
});
afterAll(async () => {
  await etcd?.stop();
});

describe('EtcdStore', () => {
  let store: EtcdStore;
  beforeAll(() => {
    store = new EtcdStore({endpoints: [etcd.endpoint]});
  });
  afterAll(() => store.close());

  storeContract({store: () => store, prefix: nextPrefix('/registry/pods/')});
});

describe('CachedStore over EtcdStore', () => {
  let cached: CachedStore;
  beforeAll(async () => {
    cached = new CachedStore(new EtcdStore({endpoints: [etcd.endpoint]}), {
      root: '/registry/',
      prefixes: [{prefix: '/registry/pods/', capacity: 5}],
    });
    await cached.waitSynced(5000);
  });
  afterAll(() => cached.close());

  storeContract({store: () => cached, prefix: nextPrefix('/registry/pods/'), historyCapacity: 5});
});

describe('createStore with --kvstore-servers-overrides', () => {
  it('keeps the overridden resource in etcd and the others in the embedded store', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'orch-routing-'));
    const storage = createStore({
      dataDir,
      serversOverrides: [`/events#${etcd.endpoint}`],
      cachedResources: [
        {group: '', resource: 'pods'},
        {group: '', resource: 'events'},
      ],
    });
    const direct = new EtcdStore({endpoints: [etcd.endpoint]});
    try {
      expect(storage.engines.map((e) => e.engine)).toEqual(['sqlite', 'etcd']);
      await storage.waitSynced(5000);
      await storage.store.create('/registry/events/default/e1', 'event');
      await storage.store.create('/registry/pods/default/p1', 'pod');
      expect((await direct.get('/registry/events/default/e1'))?.value).toBe('event');
      expect(await direct.get('/registry/pods/default/p1')).toBeUndefined();
      expect((await storage.engines[0]!.get('/registry/pods/default/p1'))?.value).toBe('pod');
      expect((await storage.store.list('/registry/events/default/')).items.map((i) => i.value)).toEqual(['event']);
      await expect(storage.store.ping(1000)).resolves.toBeUndefined();
    } finally {
      await direct.close();
      await storage.close();
      rmSync(dataDir, {recursive: true, force: true});
    }
  });
});

// Last: it stops the shared etcd.
describe('when etcd goes down and comes back', () => {
  it('pings fail and watches end, the cache turns unsynced, then everything recovers', async () => {
    const store = new EtcdStore({endpoints: [etcd.endpoint]});
    const cached = new CachedStore(new EtcdStore({endpoints: [etcd.endpoint]}), {
      root: '/registry/',
      prefixes: [{prefix: '/registry/services/'}],
      initialBackoffMs: 50,
      maxBackoffMs: 200,
    });
    try {
      await cached.waitSynced(5000);
      await cached.create('/registry/services/default/before', 'b');
      const watch = record(store, '/registry/services/', await store.currentRevision());

      await etcd.kill();
      await expect(store.ping(500)).rejects.toBeInstanceOf(StoreUnavailableError);
      await watch.until(() => watch.errors.length === 1, 'the watch to end');
      expect(watch.errors[0]).toBeInstanceOf(StoreUnavailableError);
      await eventually(() => !cached.synced(), 'the cache to turn unsynced');
      await expect(cached.get('/registry/services/default/before')).rejects.toBeInstanceOf(StoreUnavailableError);

      await etcd.restart();
      await eventually(() => cached.synced(), 'the cache to sync again', 8000);
      await expect(store.ping(2000)).resolves.toBeUndefined();
      await cached.create('/registry/services/default/after', 'a');
      expect((await cached.list('/registry/services/default/')).items.map((i) => i.value)).toEqual(['a', 'b']);
      expect(cached.status()).toEqual([{prefix: '/registry/services/', synced: true, objects: 2, events: 2, watchers: 0}]);
    } finally {
      await store.close();
      await cached.close();
    }
  }, 20_000);
});
