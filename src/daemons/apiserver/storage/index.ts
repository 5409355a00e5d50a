import {join} from 'node:path';
import {CachedStore, type CachedPrefix} from './cached-store.js';
import {Compactor, type Timer} from './compactor.js';
import {checkStorageBackend, defaultKeyPrefix, parseServersOverrides, parseWatchCacheSizes, qualifiedResource} from './config.js';
import {CodecStore, storageEncoding} from './codec-store.js';
import {EtcdStore, type EtcdStoreOptions} from './etcd.js';
import {type Route, RoutingStore} from './routing-store.js';
import {SqliteStore} from './sqlite.js';
import type {Store} from './store.js';

export * from './store.js';
export {CachedStore, type CachedPrefix, type CachedPrefixStatus} from './cached-store.js';
export {Compactor, type Timer} from './compactor.js';
export {checkStorageBackend, defaultKeyPrefix, parseServersOverrides, parseWatchCacheSizes, qualifiedResource, STORAGE_BACKENDS} from './config.js';
export {CodecStore, decodeStored, encodeStored, storageEncoding, STORAGE_MEDIA_TYPES, type StorageEncoding} from './codec-store.js';
export {EtcdStore} from './etcd.js';
export {RoutingStore} from './routing-store.js';
export {SqliteStore} from './sqlite.js';

/** The SQLite file inside `--data-dir`. */
export const SQLITE_FILE = 'kvstore.sqlite';

export interface CachedResource {
  group: string;
  resource: string;
  /** Its key prefix; default `defaultKeyPrefix`. */
  prefix?: string;
}

export interface StorageOptions {
  /** `--data-dir`: the embedded store lives there when no servers are given. */
  dataDir: string;
  /** `--kvstore-servers`; empty: the embedded SQLite store. */
  servers?: string[];
  /** `--kvstore-servers-overrides` entries, `group/resource#server;server`. */
  serversOverrides?: string[];
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  /** `--kvstore-prefix` (default `/registry`). */
  prefix?: string;
  /** `--watch-cache` (default true). */
  watchCache?: boolean;
  /** `--watch-cache-sizes` entries; size 0 leaves a resource uncached. */
  watchCacheSizes?: string[];
  /** The resources to cache (those compiled in; custom resources are added later with addPrefix). */
  cachedResources?: CachedResource[];
  /** Events kept per cached resource (default 1000). */
  watchCacheCapacity?: number;
  /** Where a resource's keys live; default `defaultKeyPrefix`. */
  keyPrefixOf?: (group: string, resource: string) => string;
  /** Deadline of each etcd request (the API server's --request-timeout); EtcdStore's default when absent. */
  requestTimeoutMs?: number;
  /** `--kvstore-compaction-interval` in ms; 0 or absent: no compaction. */
  compactionIntervalMs?: number;
  compactionTimer?: Timer;
  onCompactionError?: (error: unknown) => void;
  /** Wraps each engine before the watch cache (encryption at rest transforms values there). */
  wrapEngine?: (engine: Store) => Store;
  /** `--storage-media-type` (default JSON); it applies to the built-in resources' keys under `builtinPrefixes`. */
  mediaType?: string;
  builtinPrefixes?: string[];
  /** `--storage-backend`: kvstore3 (or unset). */
  backend?: string;
  /** Keys written with an etcd lease (events' TTL) and --lease-reuse-duration-seconds; etcd only. */
  expiring?: EtcdStoreOptions['expiring'];
}

export interface Storage {
  /** The store the REST layer uses: routed, cached. */
  store: Store;
  /** The raw engines (the default one first), for health checks and compaction. */
  engines: Store[];
  /** The watch caches (one per engine, when caching is on), for readyz and bookmarks. */
  caches: CachedStore[];
  /** Every watch cache is synced (true when caching is off). */
  synced(): boolean;
  waitSynced(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Builds the storage stack of the API server: SQLite under the data directory, or etcd when servers are
 * given; a RoutingStore in front when some resources are overridden to other etcd servers; a watch
 * cache per engine over the resources that are cached; a compactor per engine.
 */
export function createStore(options: StorageOptions): Storage {
  const kvPrefix = (options.prefix ?? '/registry').replace(/\/+$/, '');
  const root = `${kvPrefix}/`;
  const keyPrefixOf = options.keyPrefixOf ?? ((group: string, resource: string) => defaultKeyPrefix(kvPrefix, group, resource));
  const tls = {caFile: options.caFile, certFile: options.certFile, keyFile: options.keyFile};
  const servers = options.servers ?? [];

  checkStorageBackend(options.backend);
  const encoding = storageEncoding(options.mediaType);
  const builtinPrefixes = options.builtinPrefixes ?? [];
  const builtin = (key: string) => builtinPrefixes.some((p) => key.startsWith(p));
  // Values are encoded (media type) above encryption: upstream serializes, then transforms.
  const transform = options.wrapEngine ?? ((engine: Store) => engine);
  const wrap = (engine: Store): Store => new CodecStore(transform(engine), encoding, builtin);
  const defaultEngine: Store = wrap(
    servers.length > 0 ? new EtcdStore({endpoints: servers, ...tls, requestTimeoutMs: options.requestTimeoutMs, expiring: options.expiring}) : new SqliteStore({path: join(options.dataDir, SQLITE_FILE)}),
  );
  // One client per distinct server list, shared by the overrides that name the same servers.
  const overrideEngines = new Map<string, Store>();
  const routes: Array<{prefix: string; engine: Store}> = [];
  for (const override of parseServersOverrides(options.serversOverrides ?? [])) {
    const id = override.servers.join(';');
    let engine = overrideEngines.get(id);
    if (!engine) {
      engine = wrap(new EtcdStore({endpoints: override.servers, ...tls, requestTimeoutMs: options.requestTimeoutMs, expiring: options.expiring}));
      overrideEngines.set(id, engine);
    }
    routes.push({prefix: keyPrefixOf(override.group, override.resource), engine});
  }
  const engines = [defaultEngine, ...overrideEngines.values()];

  // The cached prefixes, each given to the cache of the engine that holds it.
  const sizes = parseWatchCacheSizes(options.watchCacheSizes ?? []);
  const cachedByEngine = new Map<Store, CachedPrefix[]>(engines.map((e) => [e, []]));
  if (options.watchCache ?? true) {
    for (const resource of options.cachedResources ?? []) {
      const size = sizes.get(qualifiedResource(resource.group, resource.resource));
      if (size === 0) continue;
      const prefix = resource.prefix ?? keyPrefixOf(resource.group, resource.resource);
      const engine = routes.find((r) => prefix.startsWith(r.prefix))?.engine ?? defaultEngine;
      // A --watch-cache-sizes entry sets that resource's window of events.
      cachedByEngine.get(engine)!.push({prefix, capacity: size ?? options.watchCacheCapacity});
    }
  }
  const caches: CachedStore[] = [];
  const front = new Map<Store, Store>();
  for (const engine of engines) {
    const prefixes = cachedByEngine.get(engine)!;
    if ((options.watchCache ?? true) && (prefixes.length > 0 || engine === defaultEngine)) {
      const cache = new CachedStore(engine, {root, prefixes, defaultCapacity: options.watchCacheCapacity});
      caches.push(cache);
      front.set(engine, cache);
    } else {
      front.set(engine, engine);
    }
  }
  const frontDefault = front.get(defaultEngine)!;
  const store =
    routes.length === 0
      ? frontDefault
      : new RoutingStore(
          frontDefault,
          routes.map((r): Route => ({prefix: r.prefix, store: front.get(r.engine)!})),
        );

  const compactors = engines.map(
    (engine) =>
      new Compactor(engine, {
        intervalMs: options.compactionIntervalMs ?? 0,
        timer: options.compactionTimer,
        onError: options.onCompactionError,
      }),
  );
  for (const compactor of compactors) compactor.start();

  return {
    store,
    engines,
    caches,
    synced: () => caches.every((c) => c.synced()),
    waitSynced: async (timeoutMs) => {
      await Promise.all(caches.map((c) => c.waitSynced(timeoutMs)));
    },
    close: async () => {
      for (const compactor of compactors) compactor.stop();
      // A cache closes its engine; engines without a cache are closed directly.
      await Promise.all(engines.map((engine) => front.get(engine)!.close()));
    },
  };
}
