/**
 * client-go's Reflector: keeps a store in step with the API server. It lists (in pages), replaces
 * the store with the result, then watches from the list's resourceVersion, applying each event.
 *
 * - A watch the server ends cleanly (timeout, shutdown, dropped connection) is reopened from the
 *   last resourceVersion seen, events and BOOKMARKs alike: no relist, the cache stays warm.
 * - 410 Gone (an HTTP 410 on the watch request, or an ERROR event carrying a 410 Status) means the
 *   history the watch needs is compacted away: back off, then relist. The relist first asks for the
 *   last seen version; if that is gone too (410, or a version the server does not have yet), it
 *   lists the latest state.
 * - A refused connection or 429 while (re)opening a watch backs off and retries the watch.
 * - Any other failure backs off exponentially (apimachinery's backoff manager) and relists.
 * - Every resync period the store is told to resync (the informer redelivers every object).
 */
import { klog, type Logger } from '../../lib/klog.js';
import { ExponentialBackoff, REFLECTOR_BACKOFF, type BackoffOptions } from './backoff.js';
import { realClock, sleep, type Timer, type TimerClock } from './clock.js';
import { isConnectionRefused, isExpired, isResourceVersionTooLarge, isTooManyRequests, StatusError } from './errors.js';
import { watchTimeoutSeconds } from './jitter.js';
import type { ApiObject, ListResult, ListWatcher, WatchEvent, WatchHandle } from './types.js';

/** Where a reflector puts what it learns (the informer implements it). */
export interface ReflectorStore<T> {
  /** The complete state after a list; objects absent from `items` are gone. */
  replace(items: T[], resourceVersion: string): void;
  add(object: T): void;
  update(object: T): void;
  delete(object: T): void;
  /** Periodic resync: redeliver what is cached. */
  resync(): void;
}

export interface ReflectorOptions<T> {
  listWatcher: ListWatcher<T>;
  store: ReflectorStore<T>;
  /** For logs: the resource, e.g. `pods`. */
  name?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** List page size (client-go's pager: 500); 0 lists in one request. */
  pageSize?: number;
  /**
   * Applied to each object as it arrives, page by page and event by event, before the store sees
   * it (client-go's TransformFunc): a consumer keeping a few fields of many objects drops the rest
   * at once, so a relist holds the trimmed objects, not every page of whole ones.
   */
  transform?: (object: T) => T;
  /** 0 (the default) never resyncs. */
  resyncPeriodMs?: number;
  backoff?: Partial<BackoffOptions>;
  clock?: TimerClock;
  random?: () => number;
  logger?: Logger;
}

/** What a reflector has done, for tests and the dashboard. */
export interface ReflectorCounts {
  /** Complete lists (each possibly several pages). */
  lists: number;
  /** Watch requests opened. */
  watches: number;
  /** Watches that ended with 410 Gone. */
  expired: number;
  resyncs: number;
}

const VERY_SHORT_WATCH_MS = 1000;

export class Reflector<T extends ApiObject> {
  private readonly clock: TimerClock;
  private readonly random: () => number;
  private readonly log: Logger;
  private readonly name: string;
  /** Between list-and-watch attempts. */
  private readonly relistBackoff: ExponentialBackoff;
  /** Between attempts to reopen a watch the server refused. */
  private readonly watchBackoff: ExponentialBackoff;
  private readonly stopController = new AbortController();
  private lastSyncResourceVersion = '';
  /** Set when the server said it no longer has (or does not yet have) lastSyncResourceVersion. */
  private lastSyncResourceVersionUnavailable = false;
  private currentWatch: WatchHandle | undefined;
  private resyncTimer: Timer | undefined;
  private running: Promise<void> | undefined;
  private readonly counts: ReflectorCounts = { lists: 0, watches: 0, expired: 0, resyncs: 0 };

  constructor(private readonly options: ReflectorOptions<T>) {
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.log = options.logger ?? klog('reflector.ts');
    this.name = options.name ?? 'objects';
    const backoff = { ...REFLECTOR_BACKOFF, ...options.backoff };
    this.relistBackoff = new ExponentialBackoff(backoff, this.clock, this.random);
    this.watchBackoff = new ExponentialBackoff(backoff, this.clock, this.random);
  }

  /** Starts listing and watching until stop(); calling it again does nothing. */
  run(): void {
    this.running ??= this.loop();
  }

  /** Stops and resolves once the reflector is idle. */
  async stop(): Promise<void> {
    this.stopController.abort();
    this.currentWatch?.close();
    this.stopResync();
    await this.running;
  }

  get stopped(): boolean {
    return this.stopController.signal.aborted;
  }

  /** The resourceVersion of the last list, event or bookmark applied. */
  lastResourceVersion(): string {
    return this.lastSyncResourceVersion;
  }

  stats(): Readonly<ReflectorCounts> {
    return { ...this.counts };
  }

  /** wait.BackoffUntil(ListAndWatch): back off after every return, error or not. */
  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.listAndWatch();
      } catch (error) {
        if (!this.stopped) this.log.warning('Failed to list and watch', 'resource', this.name, 'err', String(error));
      }
      if (this.stopped) break;
      await sleep(this.clock, this.relistBackoff.next(), this.stopController.signal);
    }
  }

  private async listAndWatch(): Promise<void> {
    await this.list();
    if (this.stopped) return;
    this.startResync();
    try {
      while (!this.stopped) {
        const started = this.clock.now();
        const { error, events } = await this.watchOnce();
        if (this.stopped) return;
        if (error === undefined) {
          // A server that closes every watch at once would otherwise be hammered: relist after a backoff.
          if (events === 0 && this.clock.now() - started < VERY_SHORT_WATCH_MS) {
            throw new Error(`very short watch: ${this.name}: unexpected watch close - watch lasted less than a second and no items received`);
          }
          continue;
        }
        if (isConnectionRefused(error) || isTooManyRequests(error)) {
          this.log.v(4).info('Watch failed, retrying after backoff', 'resource', this.name, 'err', String(error));
          await sleep(this.clock, this.watchBackoff.next(), this.stopController.signal);
          continue;
        }
        if (isExpired(error)) {
          this.counts.expired++;
          this.log.v(4).info('Watch closed with expired resourceVersion, relisting', 'resource', this.name, 'err', String(error));
          return;
        }
        throw error;
      }
    } finally {
      this.stopResync();
    }
  }

  /** client-go's relistResourceVersion: "0" first (a cache may answer), then the last seen, or latest when that is gone. */
  private relistResourceVersion(): string {
    if (this.lastSyncResourceVersionUnavailable) return '';
    return this.lastSyncResourceVersion === '' ? '0' : this.lastSyncResourceVersion;
  }

  private async list(): Promise<void> {
    let result: ListResult<T>;
    try {
      result = await this.listAllPages(this.relistResourceVersion());
    } catch (error) {
      if (!(isExpired(error) || isResourceVersionTooLarge(error))) throw error;
      this.lastSyncResourceVersionUnavailable = true;
      this.log.v(4).info('List at the last resourceVersion failed, listing the latest', 'resource', this.name, 'err', String(error));
      result = await this.listAllPages('');
    }
    if (this.stopped) return;
    this.counts.lists++;
    this.lastSyncResourceVersionUnavailable = false;
    this.options.store.replace(result.items, result.resourceVersion);
    this.lastSyncResourceVersion = result.resourceVersion;
  }

  /** A list followed through its continue tokens; all pages share the first page's snapshot. */
  private async listAllPages(resourceVersion: string): Promise<ListResult<T>> {
    const { labelSelector, fieldSelector } = this.options;
    const limit = this.options.pageSize ?? 500;
    const items: T[] = [];
    let token: string | undefined;
    let page: ListResult<T>;
    do {
      // A continue token carries the snapshot's version; the server forbids a resourceVersion with it.
      const request = this.options.listWatcher.list(
        token ? { limit, continue: token, labelSelector, fieldSelector } : { resourceVersion, limit, labelSelector, fieldSelector },
      );
      const answered = await this.unlessStopped(request);
      if (!answered) return { items: [], resourceVersion: '' };
      page = answered;
      const transform = this.options.transform;
      for (const item of page.items) items.push(transform ? transform(item) : item);
      token = page.continue;
    } while (token);
    return { items, resourceVersion: page.resourceVersion };
  }

  /** The promise's value, or undefined as soon as stop() is called (a hung list must not hold stop up). */
  private unlessStopped<R>(promise: Promise<R>): Promise<R | undefined> {
    const signal = this.stopController.signal;
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise<R | undefined>((resolve, reject) => {
      const onStop = () => resolve(undefined);
      signal.addEventListener('abort', onStop, { once: true });
      promise.then(
        (value) => {
          signal.removeEventListener('abort', onStop);
          resolve(signal.aborted ? undefined : value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onStop);
          if (signal.aborted) resolve(undefined);
          else reject(error);
        },
      );
    });
  }

  /** One watch from lastSyncResourceVersion until it ends; resolves with how it ended. */
  private watchOnce(): Promise<{ error?: unknown; events: number }> {
    return new Promise((resolve) => {
      let events = 0;
      let done = false;
      let handle: WatchHandle | undefined;
      const finish = (error?: unknown) => {
        if (done) return;
        done = true;
        this.currentWatch = undefined;
        handle?.close();
        resolve({ error, events });
      };
      this.counts.watches++;
      this.currentWatch = { close: () => finish() };
      handle = this.options.listWatcher.watch(
        {
          resourceVersion: this.lastSyncResourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: watchTimeoutSeconds(this.random),
          labelSelector: this.options.labelSelector,
          fieldSelector: this.options.fieldSelector,
        },
        (event) => {
          if (done) return;
          events++;
          try {
            this.apply(event);
          } catch (error) {
            finish(error);
          }
        },
        finish,
      );
      if (done) handle.close();
    });
  }

  /** Applies one watch event to the store; an ERROR event throws its Status. */
  private apply(event: WatchEvent<T>): void {
    if (event.type === 'ERROR') throw new StatusError(event.object ?? {});
    const object = event.object && this.options.transform && event.type !== 'BOOKMARK' ? this.options.transform(event.object) : event.object;
    switch (event.type) {
      case 'ADDED':
        this.options.store.add(object);
        break;
      case 'MODIFIED':
        this.options.store.update(object);
        break;
      case 'DELETED':
        this.options.store.delete(object);
        break;
      case 'BOOKMARK':
        break;
      default:
        this.log.error('Unable to understand watch event', 'resource', this.name, 'type', String((event as { type: unknown }).type));
        return;
    }
    const resourceVersion = object?.metadata?.resourceVersion;
    if (resourceVersion) this.lastSyncResourceVersion = resourceVersion;
  }

  private startResync(): void {
    const period = this.options.resyncPeriodMs ?? 0;
    if (period <= 0 || this.stopped) return;
    this.resyncTimer = this.clock.setTimer(() => {
      if (this.stopped) return;
      this.counts.resyncs++;
      this.options.store.resync();
      this.startResync();
    }, period);
  }

  private stopResync(): void {
    this.resyncTimer?.cancel();
    this.resyncTimer = undefined;
  }
}
