import {EventWindow} from './event-window.js';
import {lowerBound, rangeStart} from './keys.js';
import type {KeyValue, StoreEvent} from './store.js';
import type {WatchDelivery} from './watch-delivery.js';

export interface CacheWatcher {
  /** The watched prefix: the cached prefix itself or a narrower one (a namespace, one object). */
  prefix: string;
  delivery: WatchDelivery;
}

/**
 * One cached object. Its JSON is kept as UTF-8 bytes in a buffer of its own, outside the
 * JavaScript heap: the cache is most of what a big server holds (150,000 pods: about 600 MB of
 * JSON), and V8 lets its heap grow to twice what is live (GOGC=100, lib/heap-growth.ts) before
 * collecting, which as strings doubled the cache in resident memory. `value` decodes the bytes on
 * each read (microseconds; the registry parses the text anyway). Its own allocation rather than a
 * slice of Node's shared pool, which one surviving small value would keep whole.
 */
export class CachedEntry implements KeyValue {
  readonly #bytes: Buffer;

  constructor(
    readonly key: string,
    value: string,
    readonly createRevision: number,
    readonly modRevision: number,
  ) {
    const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(value, 'utf8'));
    bytes.write(value, 0, 'utf8');
    this.#bytes = bytes;
  }

  get value(): string {
    return this.#bytes.toString('utf8');
  }
}

/**
 * The in-memory state of one cached resource prefix: its objects (a map plus the keys kept sorted, for
 * paging), its recent history and the watchers it feeds. Pure data structure: no I/O, no timers.
 */
export class PrefixCache {
  private readonly objects = new Map<string, CachedEntry>();
  private keys: string[] = [];
  readonly window: EventWindow;
  readonly watchers = new Set<CacheWatcher>();
  /** False while the initial (or a re-) list is running; events then wait in `pending`. */
  ready = false;
  pending: StoreEvent[] = [];

  constructor(
    readonly prefix: string,
    capacity: number,
  ) {
    this.window = new EventWindow(capacity, 0);
  }

  get count(): number {
    return this.objects.size;
  }

  /** Replaces the state with a list read at `revision`, then applies the events that came meanwhile. */
  load(items: KeyValue[], revision: number): void {
    this.objects.clear();
    for (const item of items) this.objects.set(item.key, item instanceof CachedEntry ? item : new CachedEntry(item.key, item.value, item.createRevision, item.modRevision));
    this.keys = [...this.objects.keys()].sort();
    this.window.reset(revision);
    const pending = this.pending;
    this.pending = [];
    this.ready = true;
    for (const event of pending) if (event.revision > revision) this.apply(event);
  }

  /** Applies one event from the store, records it and hands it to the watchers. */
  apply(event: StoreEvent): void {
    if (!this.ready) {
      this.pending.push(event);
      return;
    }
    const existing = this.objects.get(event.key);
    if (event.type === 'PUT') {
      const createRevision = event.created || !existing ? event.revision : existing.createRevision;
      this.objects.set(event.key, new CachedEntry(event.key, event.value!, createRevision, event.revision));
      if (!existing) this.keys.splice(lowerBound(this.keys, event.key), 0, event.key);
    } else if (existing) {
      this.objects.delete(event.key);
      this.keys.splice(lowerBound(this.keys, event.key), 1);
    }
    this.window.push(event);
    for (const watcher of this.watchers) if (event.key.startsWith(watcher.prefix)) watcher.delivery.event(event);
  }

  progress(revision: number): void {
    for (const watcher of this.watchers) watcher.delivery.progress(revision);
  }

  /** A plain KeyValue (its value decoded now). */
  get(key: string): KeyValue | undefined {
    const entry = this.objects.get(key);
    return entry && {key: entry.key, value: entry.value, createRevision: entry.createRevision, modRevision: entry.modRevision};
  }

  /**
   * The entries under `prefix`, in key order. Their `value` is a getter that decodes on each read
   * (a list of every pod would otherwise copy the whole cache at once): read it, do not spread them.
   */
  list(prefix: string, startAfter: string | undefined, limit: number | undefined): {items: KeyValue[]; more: boolean} {
    const max = limit && limit > 0 ? limit : Infinity;
    const items: KeyValue[] = [];
    for (let i = lowerBound(this.keys, rangeStart(prefix, startAfter)); i < this.keys.length; i++) {
      const key = this.keys[i]!;
      if (!key.startsWith(prefix)) break;
      if (items.length === max) return {items, more: true};
      items.push(this.objects.get(key)!);
    }
    return {items, more: false};
  }
}
