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
 * The in-memory state of one cached resource prefix: its objects (a map plus the keys kept sorted, for
 * paging), its recent history and the watchers it feeds. Pure data structure: no I/O, no timers.
 */
export class PrefixCache {
  private readonly objects = new Map<string, KeyValue>();
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
    for (const item of items) this.objects.set(item.key, item);
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
      this.objects.set(event.key, {key: event.key, value: event.value!, createRevision, modRevision: event.revision});
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

  get(key: string): KeyValue | undefined {
    return this.objects.get(key);
  }

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
