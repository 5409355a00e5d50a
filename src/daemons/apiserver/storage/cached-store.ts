import {CachedEntry, PrefixCache} from './prefix-cache.js';
import {
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Store,
  type StoreEvent,
  StoreCompactedError,
  StoreUnavailableError,
  type WatchHandle,
} from './store.js';
import {WatchDelivery} from './watch-delivery.js';

/** Entries read at a time when a resource is (re)loaded. */
const LOAD_PAGE_SIZE = 1000;

/**
 * The watch cache, as a Store decorator. It keeps the objects of some resource prefixes in memory and
 * their recent events in a ring buffer, filled by ONE watch of the underlying store on the common root
 * (`/registry/`): since every write under the root reaches that watch in revision order, the cache
 * always knows the store revision it reflects (`revision`), for every cached resource at once. That
 * is what lets it answer "latest" and "not older than N" reads and send bookmarks without asking the
 * store (upstream needs etcd progress requests for the same).
 *
 * Reads of a cached prefix come from memory while the cache is synced, else from the store. Writes go
 * to the store and resolve once the cache has seen them (bounded), so a client reads its own writes.
 * When the store's watch breaks, the cache is unsynced and retries with backoff, resuming where it
 * was; if that history was compacted meanwhile it relists, and its watchers end with 410 Gone.
 */

export interface CachedPrefix {
  /** A resource's key prefix, ending in `/` (`/registry/pods/`). */
  prefix: string;
  /** Events kept for watches (default 1000). */
  capacity?: number;
}

export interface CachedStoreOptions {
  /** The common prefix of every key (the kvstore prefix with a trailing `/`). */
  root: string;
  prefixes: CachedPrefix[];
  defaultCapacity?: number;
  /** How long a write waits for the cache to see it before resolving anyway (default 5s). */
  writeVisibilityTimeoutMs?: number;
  /** How long a "not older than N" read waits for the cache before reading the store (default 3s). */
  freshnessTimeoutMs?: number;
  /** Retry delays after the store's watch fails (default 100ms doubling to 5s). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

interface RevisionWaiter {
  revision: number;
  resolve: (reached: boolean) => void;
  timer: NodeJS.Timeout;
}

export interface CachedPrefixStatus {
  prefix: string;
  synced: boolean;
  objects: number;
  events: number;
  watchers: number;
}

export class CachedStore implements Store {
  readonly engine: string;
  private readonly caches: PrefixCache[] = [];
  /** The caches by their prefix, for cacheFor's lookups by path segment. */
  private readonly byPrefix = new Map<string, PrefixCache>();
  private allPrefixesEndInSlash = true;
  private readonly root: string;
  private readonly defaultCapacity: number;
  private readonly writeVisibilityTimeoutMs: number;
  private readonly freshnessTimeoutMs: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  /** Every event up to this revision has been applied. */
  private position = 0;
  private handle: WatchHandle | undefined;
  /** The store's watch answered (first progress) since it was last (re)opened. */
  private established = false;
  private needsRelist = true;
  private retryTimer: NodeJS.Timeout | undefined;
  private backoffMs: number;
  private closed = false;
  private waiters: RevisionWaiter[] = [];
  private syncListeners = new Set<() => void>();
  /** Bumped on every (re)open of the store's watch, so callbacks of an older one are ignored. */
  private generation = 0;

  constructor(
    readonly underlying: Store,
    options: CachedStoreOptions,
  ) {
    this.engine = underlying.engine;
    this.root = options.root;
    this.defaultCapacity = options.defaultCapacity ?? 1000;
    this.writeVisibilityTimeoutMs = options.writeVisibilityTimeoutMs ?? 5000;
    this.freshnessTimeoutMs = options.freshnessTimeoutMs ?? 3000;
    this.initialBackoffMs = options.initialBackoffMs ?? 100;
    this.maxBackoffMs = options.maxBackoffMs ?? 5000;
    this.backoffMs = this.initialBackoffMs;
    for (const p of options.prefixes) this.register(p);
    void this.recover();
  }

  /** True when the store's watch is established and every cached prefix (or `prefix`) is loaded. */
  synced(prefix?: string): boolean {
    if (this.closed || !this.established || !this.handle) return false;
    if (prefix === undefined) return this.caches.every((c) => c.ready);
    return this.cacheFor(prefix)?.ready ?? false;
  }

  /** Resolves once synced; rejects after `timeoutMs`. */
  waitSynced(timeoutMs: number, prefix?: string): Promise<void> {
    if (this.synced(prefix)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!this.synced(prefix)) return;
        clearTimeout(timer);
        this.syncListeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.syncListeners.delete(check);
        reject(new StoreUnavailableError(`watch cache not synced within ${timeoutMs}ms`));
      }, timeoutMs);
      this.syncListeners.add(check);
    });
  }

  /** The store revision the cache reflects (for bookmarks and the dashboard). */
  revision(): number {
    return this.position;
  }

  /**
   * How often the cache listed every prefix (its first load, and a relist when the history to resume
   * from was compacted) and opened its watch of the store (first, and after each lost watch): a store
   * outage should cost one watch per reconnection, never a relist.
   */
  readonly counts = {lists: 0, watches: 0};

  status(): CachedPrefixStatus[] {
    return this.caches.map((c) => ({
      prefix: c.prefix,
      synced: this.synced(c.prefix),
      objects: c.count,
      events: c.window.length,
      watchers: c.watchers.size,
    }));
  }

  /** How many objects the cache holding `keyOrPrefix` has (priority and fairness's list work estimate); undefined when not cached. */
  objectCount(keyOrPrefix: string): number | undefined {
    return this.cacheFor(keyOrPrefix)?.count;
  }

  /** Starts caching one more prefix (a custom resource); resolves once it is loaded. */
  async addPrefix(prefix: CachedPrefix, timeoutMs = 30_000): Promise<void> {
    if (!this.cacheFor(prefix.prefix)) {
      const cache = this.register(prefix);
      // Before the first sync the initial load takes it; afterwards it is listed at the current position.
      if (!this.needsRelist) void this.loadLater(cache);
    }
    await this.waitSynced(timeoutMs, prefix.prefix);
  }

  /**
   * What get() and list() answer from memory, synchronously, for hot in-process readers (the
   * admission plugins' reads, admission/decoded-objects.ts): undefined when the cache cannot
   * answer (prefix not cached or not synced), and the caller reads through the async methods.
   */
  peek(key: string): {found: KeyValue | undefined} | undefined {
    const cache = this.usableCache(key);
    return cache ? {found: cache.get(key)} : undefined;
  }

  peekList(prefix: string): KeyValue[] | undefined {
    return this.usableCache(prefix)?.list(prefix, undefined, undefined).items;
  }

  async get(key: string): Promise<KeyValue | undefined> {
    const cache = this.usableCache(key);
    return cache ? cache.get(key) : this.underlying.get(key);
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    const cache = this.usableCache(prefix);
    if (!cache) return this.underlying.list(prefix, options);
    // An exact older revision (a continue token, resourceVersionMatch=Exact): the store has the history.
    if (options.revision !== undefined && options.revision !== this.position) return this.underlying.list(prefix, options);
    if (options.minRevision !== undefined && options.minRevision > this.position) {
      const current = await this.underlying.currentRevision();
      // A revision the store has not reached: the store's answer shows it (the API says "too large").
      if (current < options.minRevision) return this.underlying.list(prefix, {...options, minRevision: undefined});
      const reached = await this.waitForPosition(options.minRevision, this.freshnessTimeoutMs);
      if (!reached || !this.usableCache(prefix)) return this.underlying.list(prefix, options);
    }
    const {items, more} = cache.list(prefix, options.startAfter, options.limit);
    return {items, more, revision: this.position};
  }

  async create(key: string, value: string): Promise<number> {
    return this.visible(key, await this.underlying.create(key, value));
  }

  async update(key: string, value: string, expectedModRevision: number): Promise<number> {
    return this.visible(key, await this.underlying.update(key, value, expectedModRevision));
  }

  async delete(key: string, expectedModRevision?: number): Promise<number | undefined> {
    const revision = await this.underlying.delete(key, expectedModRevision);
    return revision === undefined ? undefined : this.visible(key, revision);
  }

  watch(
    prefix: string,
    afterRevision: number,
    onEvent: (event: StoreEvent) => void,
    onError: (error: Error) => void,
    onProgress?: (revision: number) => void,
  ): WatchHandle {
    const cache = this.usableCache(prefix);
    if (!cache) return this.underlying.watch(prefix, afterRevision, onEvent, onError, onProgress);
    const delivery = new WatchDelivery(onEvent, onError, onProgress, afterRevision);
    const history = cache.window.since(afterRevision);
    if (!history) {
      delivery.fail(new StoreCompactedError(afterRevision, cache.window.windowStart));
      return {close: () => delivery.close()};
    }
    for (const event of history) if (event.key.startsWith(prefix)) delivery.event(event);
    delivery.progress(this.position);
    const watcher = {prefix, delivery};
    cache.watchers.add(watcher);
    return {
      close: () => {
        delivery.close();
        cache.watchers.delete(watcher);
      },
    };
  }

  currentRevision(): Promise<number> {
    return this.underlying.currentRevision();
  }

  compact(revision: number): Promise<void> {
    return this.underlying.compact(revision);
  }

  ping(timeoutMs: number): Promise<void> {
    return this.underlying.ping(timeoutMs);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.handle?.close();
    this.handle = undefined;
    for (const cache of this.caches) {
      for (const watcher of cache.watchers) watcher.delivery.fail(new StoreUnavailableError('watch cache closed'));
      cache.watchers.clear();
    }
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    this.waiters = [];
    await this.underlying.close();
  }

  /**
   * Every entry under `prefix` at `revision`, read in pages and kept as cache entries page by page:
   * the values read as text die young instead of all of them (at 150,000 pods, 600 MB) living
   * until the whole resource is loaded.
   */
  private async readAll(prefix: string, revision: number): Promise<CachedEntry[]> {
    const entries: CachedEntry[] = [];
    let startAfter: string | undefined;
    for (;;) {
      const page = await this.underlying.list(prefix, {revision, limit: LOAD_PAGE_SIZE, startAfter});
      for (const kv of page.items) entries.push(new CachedEntry(kv.key, kv.value, kv.createRevision, kv.modRevision));
      if (!page.more || page.items.length === 0) return entries;
      startAfter = page.items.at(-1)!.key;
    }
  }

  private register(prefix: CachedPrefix): PrefixCache {
    if (!prefix.prefix.startsWith(this.root)) {
      throw new Error(`cached prefix ${prefix.prefix} is outside the watched root ${this.root}`);
    }
    const cache = new PrefixCache(prefix.prefix, prefix.capacity ?? this.defaultCapacity);
    this.caches.push(cache);
    // Longest prefix first, so cacheFor() finds the most specific one.
    this.caches.sort((a, b) => b.prefix.length - a.prefix.length);
    this.byPrefix.set(cache.prefix, cache);
    if (!cache.prefix.endsWith('/')) this.allPrefixesEndInSlash = false;
    return cache;
  }

  /**
   * The most specific cache whose prefix the key or prefix starts with. Every read and write asks,
   * with a hundred or so cached resources: when every prefix ends in `/` (as resource prefixes do),
   * the key's own `/`-ended prefixes are looked up, longest first, instead of trying each cache.
   */
  private cacheFor(keyOrPrefix: string): PrefixCache | undefined {
    if (!this.allPrefixesEndInSlash) return this.caches.find((c) => keyOrPrefix.startsWith(c.prefix));
    for (let i = keyOrPrefix.lastIndexOf('/'); i >= 0; i = i === 0 ? -1 : keyOrPrefix.lastIndexOf('/', i - 1)) {
      const cache = this.byPrefix.get(keyOrPrefix.slice(0, i + 1));
      if (cache) return cache;
    }
    return undefined;
  }

  private usableCache(keyOrPrefix: string): PrefixCache | undefined {
    const cache = this.cacheFor(keyOrPrefix);
    return cache && cache.ready && this.established && this.handle && !this.closed ? cache : undefined;
  }

  /** Resolves a write once the cache reflects it (or after the timeout: the write is durable anyway). */
  private async visible(key: string, revision: number): Promise<number> {
    if (this.usableCache(key)) await this.waitForPosition(revision, this.writeVisibilityTimeoutMs);
    return revision;
  }

  private waitForPosition(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.position >= revision) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: RevisionWaiter = {
        revision,
        resolve,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve(false);
        }, timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  private advance(revision: number): void {
    if (revision <= this.position) return;
    this.position = revision;
    if (this.waiters.length === 0) return;
    const still: RevisionWaiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.revision <= revision) {
        clearTimeout(waiter.timer);
        waiter.resolve(true);
      } else {
        still.push(waiter);
      }
    }
    this.waiters = still;
  }

  private notifySync(): void {
    for (const listener of [...this.syncListeners]) listener();
  }

  /**
   * (Re)connects to the store: a full list of every prefix at one revision when needed (first start,
   * or the history to resume from was compacted), then the root watch from the cache's position.
   */
  private async recover(): Promise<void> {
    this.retryTimer = undefined;
    if (this.closed) return;
    try {
      if (this.needsRelist) {
        this.counts.lists++;
        const revision = await this.underlying.currentRevision();
        const lists = await Promise.all(this.caches.map((c) => this.readAll(c.prefix, revision)));
        if (this.closed) return;
        this.caches.forEach((cache, i) => {
          // Watchers of the old state may have missed events: they end with 410 and start over.
          for (const watcher of cache.watchers) watcher.delivery.fail(new StoreCompactedError(watcher.delivery.lastRevision, revision));
          cache.watchers.clear();
          cache.load(lists[i]!, revision);
        });
        this.position = revision;
        this.advance(revision);
        this.needsRelist = false;
      } else {
        // Probe first: while the store is down this fails fast and we back off.
        await this.underlying.currentRevision();
      }
      if (this.closed) return;
      this.openWatch();
    } catch (error) {
      if (error instanceof StoreCompactedError) this.needsRelist = true;
      this.scheduleRecover();
    }
  }

  private openWatch(): void {
    this.counts.watches++;
    const generation = ++this.generation;
    const current = () => generation === this.generation && !this.closed;
    this.established = false;
    this.handle = this.underlying.watch(
      this.root,
      this.position,
      (event) => {
        if (!current()) return;
        this.cacheFor(event.key)?.apply(event);
        this.advance(event.revision);
      },
      (error) => {
        if (!current()) return;
        this.handle = undefined;
        this.established = false;
        if (error instanceof StoreCompactedError) this.needsRelist = true;
        this.scheduleRecover();
      },
      (revision) => {
        if (!current()) return;
        const wasSynced = this.synced();
        this.established = true;
        this.backoffMs = this.initialBackoffMs;
        this.advance(revision);
        for (const cache of this.caches) if (cache.ready) cache.progress(this.position);
        if (!wasSynced) this.notifySync();
      },
    );
  }

  private scheduleRecover(): void {
    if (this.closed || this.retryTimer) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.maxBackoffMs);
    this.retryTimer = setTimeout(() => void this.recover(), delay);
  }

  /** Lists a prefix added while the cache runs, at the position it has reached; events meanwhile wait. */
  private async loadLater(cache: PrefixCache): Promise<void> {
    for (let delay = this.initialBackoffMs; !this.closed && !cache.ready; delay = Math.min(delay * 2, this.maxBackoffMs)) {
      const revision = this.position;
      try {
        const entries = await this.readAll(cache.prefix, revision);
        if (cache.ready) return; // a relist loaded it meanwhile
        // Events after `revision` that arrived during the list are in `pending`; load applies them.
        cache.load(entries, revision);
        this.notifySync();
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}
