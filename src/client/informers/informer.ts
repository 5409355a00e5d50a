/**
 * client-go's SharedIndexInformer: a Reflector feeding an Indexer, and event handlers told of every
 * change with the old and new object. Several controllers register handlers on one informer, so a
 * resource is listed and watched once (see factory.ts).
 *
 * Handlers run synchronously, in registration order, as each event is applied; a handler that
 * throws is logged and does not stop the others. Handlers should only enqueue keys (workqueue) and
 * must not mutate the objects they get: the cache shares them.
 */
import { klog, type Logger } from '../../lib/klog.js';
import type { BackoffOptions } from './backoff.js';
import { realClock, type TimerClock } from './clock.js';
import { Reflector, type ReflectorCounts, type ReflectorStore } from './reflector.js';
import { DeletedFinalStateUnknown, Indexer, type IndexFunc, type KeyFunc } from './store.js';
import type { ApiObject, ListWatcher } from './types.js';

export interface EventHandler<T> {
  /** A new object; `isInInitialList` when it came with the first list (or the replay to a late handler). */
  onAdd?(object: T, isInInitialList: boolean): void;
  /** A change, a relist finding the object again, or a periodic resync (then `oldObject === newObject`). */
  onUpdate?(oldObject: T, newObject: T): void;
  /** A deletion; a tombstone when it was noticed only by a relist. */
  onDelete?(object: T | DeletedFinalStateUnknown<T>): void;
}

export interface HandlerRegistration {
  /** True once the handler has been told of everything in the first list. */
  hasSynced(): boolean;
  remove(): void;
}

export interface InformerOptions<T> {
  listWatcher: ListWatcher<T>;
  /** For logs: the resource, e.g. `pods`. */
  name?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** 0 (the default): no periodic resync. */
  resyncPeriodMs?: number;
  keyFunc?: KeyFunc<T>;
  /** Defaults to the namespace index. */
  indexers?: Record<string, IndexFunc<T>>;
  pageSize?: number;
  backoff?: Partial<BackoffOptions>;
  clock?: TimerClock;
  random?: () => number;
  logger?: Logger;
}

interface Registration<T> {
  handler: EventHandler<T>;
  synced: boolean;
  removed: boolean;
}

export class SharedIndexInformer<T extends ApiObject> {
  readonly indexer: Indexer<T>;
  private readonly reflector: Reflector<T>;
  private readonly log: Logger;
  private readonly clock: TimerClock;
  private registrations: Registration<T>[] = [];
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private started = false;

  constructor(readonly options: InformerOptions<T>) {
    this.indexer = new Indexer<T>(options.keyFunc, options.indexers);
    this.log = options.logger ?? klog('informer.ts');
    this.clock = options.clock ?? realClock;
    const store: ReflectorStore<T> = {
      replace: (items) => this.replace(items),
      add: (object) => this.upsert(object, false),
      update: (object) => this.upsert(object, false),
      delete: (object) => this.remove(object),
      resync: () => this.resync(),
    };
    this.reflector = new Reflector<T>({
      listWatcher: options.listWatcher,
      store,
      name: options.name,
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      pageSize: options.pageSize,
      resyncPeriodMs: options.resyncPeriodMs,
      backoff: options.backoff,
      clock: this.clock,
      random: options.random,
      logger: options.logger,
    });
  }

  /**
   * Registers a handler. One added after objects are cached is first told of each as an add
   * (client-go does the same), so it never misses the initial state.
   */
  addEventHandler(handler: EventHandler<T>): HandlerRegistration {
    const registration: Registration<T> = { handler, synced: false, removed: false };
    this.registrations = [...this.registrations, registration];
    for (const object of this.indexer.list()) this.call(registration, 'onAdd', () => handler.onAdd?.(object, true));
    registration.synced = this.synced;
    return {
      hasSynced: () => registration.synced,
      remove: () => {
        registration.removed = true;
        this.registrations = this.registrations.filter((r) => r !== registration);
      },
    };
  }

  /** Starts the reflector; calling it again does nothing. */
  run(): void {
    if (this.started) return;
    this.started = true;
    this.reflector.run();
  }

  async stop(): Promise<void> {
    await this.reflector.stop();
    this.resolveWaiters();
  }

  get isStarted(): boolean {
    return this.started;
  }

  get isStopped(): boolean {
    return this.reflector.stopped;
  }

  /** True once the first list has been applied and handed to the handlers. */
  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * Resolves true once synced, or false when the informer stops, `signal` aborts or `timeoutMs`
   * (on the informer's clock) passes first.
   */
  waitForSync(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (this.reflector.stopped || options.signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = options.timeoutMs !== undefined ? this.clock.setTimer(() => finish(), options.timeoutMs) : undefined;
      const finish = () => {
        timer?.cancel();
        options.signal?.removeEventListener('abort', finish);
        this.syncWaiters = this.syncWaiters.filter((w) => w !== finish);
        resolve(this.synced);
      };
      options.signal?.addEventListener('abort', finish, { once: true });
      this.syncWaiters.push(finish);
    });
  }

  lastSyncResourceVersion(): string {
    return this.reflector.lastResourceVersion();
  }

  stats(): Readonly<ReflectorCounts> {
    return this.reflector.stats();
  }

  private resolveWaiters(): void {
    for (const waiter of [...this.syncWaiters]) waiter();
  }

  private call(registration: Registration<T>, what: string, fn: () => void): void {
    if (registration.removed) return;
    try {
      fn();
    } catch (error) {
      this.log.error('Event handler failed', 'resource', this.options.name ?? 'objects', 'handler', what, 'err', String(error));
    }
  }

  private notify(fn: (handler: EventHandler<T>) => void, what: string): void {
    for (const registration of this.registrations) this.call(registration, what, () => fn(registration.handler));
  }

  /** An add or update from the watch: an update when the key is cached, else an add. */
  private upsert(object: T, isInInitialList: boolean): void {
    const old = this.indexer.set(object);
    if (old) this.notify((h) => h.onUpdate?.(old, object), 'onUpdate');
    else this.notify((h) => h.onAdd?.(object, isInInitialList), 'onAdd');
  }

  private remove(object: T): void {
    // client-go delivers the watch's final state even when the cache had already dropped it.
    this.indexer.delete(object);
    this.notify((h) => h.onDelete?.(object), 'onDelete');
  }

  /**
   * A list result: objects found again are updates (even when unchanged, as client-go's Replaced
   * deltas are), new ones adds, and cached ones missing from the list deletions with a tombstone.
   */
  private replace(items: T[]): void {
    const initial = !this.synced;
    const listed = new Set<string>();
    for (const object of items) {
      listed.add(this.indexer.keyOf(object));
      this.upsert(object, initial);
    }
    for (const key of this.indexer.listKeys()) {
      if (listed.has(key)) continue;
      const last = this.indexer.deleteKey(key)!;
      const tombstone = new DeletedFinalStateUnknown(key, last);
      this.notify((h) => h.onDelete?.(tombstone), 'onDelete');
    }
    if (!this.synced) {
      this.synced = true;
      for (const registration of this.registrations) registration.synced = true;
      this.resolveWaiters();
    }
  }

  /** Periodic resync: every cached object again, as an update from itself to itself. */
  private resync(): void {
    for (const object of this.indexer.list()) this.notify((h) => h.onUpdate?.(object, object), 'onUpdate');
  }
}
