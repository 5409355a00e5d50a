/**
 * client-go's SharedInformerFactory: one informer per resource (group/version/resource, namespace
 * and selectors) per process, however many controllers ask for it; each registers its handlers on
 * the shared informer. `start()` runs the informers asked for so far (call it again after asking
 * for more); `waitForCacheSync()` waits for the started ones.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from '../../lib/klog.js';
import type { BackoffOptions } from './backoff.js';
import type { TimerClock } from './clock.js';
import { SharedIndexInformer } from './informer.js';
import { resourceKey, resourcePath, type ResourceRef } from './resource.js';
import type { IndexFunc } from './store.js';
import type { ApiObject, ListWatcher, Unstructured } from './types.js';

export interface SharedInformerFactoryOptions {
  /** Builds the ListWatcher of a collection (e.g. `(ref, path) => fetchListWatcher(url, path)`). */
  listWatcherFor: (ref: ResourceRef, path: string) => ListWatcher<any>;
  /**
   * The resync period of each informer; a function is called once per informer, e.g.
   * `() => randomResyncPeriod(minResyncMs)` for `--min-resync-period`. 0: no resync.
   */
  resyncPeriodMs?: number | (() => number);
  pageSize?: number;
  backoff?: Partial<BackoffOptions>;
  clock?: TimerClock;
  random?: () => number;
  logger?: Logger;
}

export interface InformerRequest<T> {
  /** Extra indexes; adding them to an informer that already exists is allowed before it starts. */
  indexers?: Record<string, IndexFunc<T>>;
}

export class SharedInformerFactory {
  private readonly informers = new Map<string, SharedIndexInformer<any>>();
  private shuttingDown = false;

  constructor(private readonly options: SharedInformerFactoryOptions) {}

  /** The shared informer of this collection, created on first request. */
  informerFor<T extends ApiObject = Unstructured>(ref: ResourceRef, request: InformerRequest<T> = {}): SharedIndexInformer<T> {
    const key = resourceKey(ref);
    let informer = this.informers.get(key) as SharedIndexInformer<T> | undefined;
    if (!informer) {
      const { resyncPeriodMs } = this.options;
      informer = new SharedIndexInformer<T>({
        listWatcher: this.options.listWatcherFor(ref, resourcePath(ref)),
        name: ref.group ? `${ref.resource}.${ref.group}` : ref.resource,
        labelSelector: ref.labelSelector,
        fieldSelector: ref.fieldSelector,
        resyncPeriodMs: typeof resyncPeriodMs === 'function' ? resyncPeriodMs() : resyncPeriodMs,
        pageSize: this.options.pageSize,
        backoff: this.options.backoff,
        clock: this.options.clock,
        random: this.options.random,
        logger: this.options.logger,
      });
      this.informers.set(key, informer);
    }
    if (request.indexers) {
      const missing = Object.fromEntries(Object.entries(request.indexers).filter(([name]) => !informer!.indexer.hasIndex(name)));
      if (Object.keys(missing).length > 0) {
        // client-go refuses this for thread safety; here the indexer indexes its current objects at
        // once, on the one thread that also applies watch events, so a late index is safe.
        informer.indexer.addIndexers(missing);
      }
    }
    return informer;
  }

  /** Runs every informer not yet running. */
  start(): void {
    if (this.shuttingDown) return;
    for (const informer of this.informers.values()) informer.run();
  }

  /** Waits for every started informer; the result says which synced (by resource key). */
  async waitForCacheSync(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<Record<string, boolean>> {
    const started = [...this.informers].filter(([, informer]) => informer.isStarted);
    // One listener on the caller's signal, relayed to a signal of our own that each informer's wait
    // listens to (and stops listening to when it ends): a caller's signal with one listener per
    // informer would trip Node's MaxListenersExceededWarning past ten informers.
    const outer = options.signal;
    const inner = new AbortController();
    setMaxListeners(started.length + 1, inner.signal);
    const relay = () => inner.abort();
    if (outer?.aborted) inner.abort();
    else outer?.addEventListener('abort', relay, { once: true });
    try {
      const results = await Promise.all(started.map(([, informer]) => informer.waitForSync({ ...options, signal: inner.signal })));
      return Object.fromEntries(started.map(([key], i) => [key, results[i]]));
    } finally {
      outer?.removeEventListener('abort', relay);
    }
  }

  /** Stops every informer; the factory starts nothing afterwards. */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    await Promise.all([...this.informers.values()].map((informer) => informer.stop()));
  }

  /** The informers by resource key, for the dashboard and tests. */
  entries(): [string, SharedIndexInformer<any>][] {
    return [...this.informers];
  }
}
