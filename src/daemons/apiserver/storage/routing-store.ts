import type {KeyValue, ListOptions, ListResult, Store, StoreEvent, WatchHandle} from './store.js';

export interface Route {
  /** Keys starting with this prefix go to `store` (`/registry/events/`). */
  prefix: string;
  store: Store;
}

/**
 * `--kvstore-servers-overrides`: some resources live in other stores. Each request goes to the store
 * owning its key or prefix (longest route first), everything else to the default store. A resource
 * never spans two stores, so a list or watch of one resource stays in one store; the revisions of
 * different stores are unrelated, as upstream (each resource's resourceVersions come from its store).
 */
export class RoutingStore implements Store {
  readonly engine: string;
  private readonly routes: Route[];

  constructor(
    private readonly defaultStore: Store,
    routes: Route[],
  ) {
    this.engine = defaultStore.engine;
    this.routes = [...routes].sort((a, b) => b.prefix.length - a.prefix.length);
  }

  /** The store owning a key, or a prefix inside one route (a broader prefix goes to the default store). */
  storeFor(keyOrPrefix: string): Store {
    return this.routes.find((r) => keyOrPrefix.startsWith(r.prefix))?.store ?? this.defaultStore;
  }

  /** Every distinct store, the default first. */
  stores(): Store[] {
    return [...new Set([this.defaultStore, ...this.routes.map((r) => r.store)])];
  }

  get(key: string): Promise<KeyValue | undefined> {
    return this.storeFor(key).get(key);
  }

  list(prefix: string, options?: ListOptions): Promise<ListResult> {
    return this.storeFor(prefix).list(prefix, options);
  }

  create(key: string, value: string): Promise<number> {
    return this.storeFor(key).create(key, value);
  }

  update(key: string, value: string, expectedModRevision: number): Promise<number> {
    return this.storeFor(key).update(key, value, expectedModRevision);
  }

  delete(key: string, expectedModRevision?: number): Promise<number | undefined> {
    return this.storeFor(key).delete(key, expectedModRevision);
  }

  watch(
    prefix: string,
    afterRevision: number,
    onEvent: (event: StoreEvent) => void,
    onError: (error: Error) => void,
    onProgress?: (revision: number) => void,
  ): WatchHandle {
    return this.storeFor(prefix).watch(prefix, afterRevision, onEvent, onError, onProgress);
  }

  /** The default store's revision (another store's revisions only mean something for its resources). */
  currentRevision(): Promise<number> {
    return this.defaultStore.currentRevision();
  }

  /** Compacts the default store; each override store has its own compactor (see createStore). */
  compact(revision: number): Promise<void> {
    return this.defaultStore.compact(revision);
  }

  /** Healthy only when every store answers. */
  async ping(timeoutMs: number): Promise<void> {
    await Promise.all(this.stores().map((s) => s.ping(timeoutMs)));
  }

  async close(): Promise<void> {
    await Promise.all(this.stores().map((s) => s.close()));
  }
}
