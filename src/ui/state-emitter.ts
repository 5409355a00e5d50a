/**
 * Hands a daemon's state snapshots to a dashboard: the daemon calls update() as often as it likes,
 * subscribers hear only about real changes, and at most `maxPerSecond` times a second, so a busy
 * server never makes the terminal redraw faster than a person can read it.
 *
 * Throttling is leading + trailing: a change after a quiet period is emitted at once; changes that
 * come faster are coalesced into one emit at the end of the interval, so the last state is always
 * shown. Time comes from an injected clock so tests walk timelines on a fake one.
 */
import {isDeepStrictEqual} from 'node:util';
import {systemClock, type Clock, type TimerHandle} from '../daemons/shared/clock.js';

export interface StateEmitterOptions<T> {
  /** Emits per second at most (default 4). */
  maxPerSecond?: number;
  /** Top-level keys that do not count as a change, such as the snapshot's own timestamp. */
  ignoreKeys?: readonly (keyof T)[];
  clock?: Clock;
}

export type Listener<T> = (snapshot: T) => void;

export class StateEmitter<T extends object> {
  private readonly intervalMs: number;
  private readonly ignoreKeys: readonly (keyof T)[];
  private readonly clock: Clock;
  private readonly listeners = new Set<Listener<T>>();
  /** The newest state given to update(); the daemon may keep mutating it in place. */
  private latest: T | undefined;
  /** A private copy of what was last emitted, so later mutations of `latest` cannot alter it. */
  private emitted: T | undefined;
  private lastEmitAt = -Infinity;
  private trailing: TimerHandle | undefined;

  constructor(options: StateEmitterOptions<T> = {}) {
    const perSecond = options.maxPerSecond ?? 4;
    if (!(perSecond > 0)) throw new Error(`maxPerSecond must be positive, got ${perSecond}`);
    this.intervalMs = 1000 / perSecond;
    this.ignoreKeys = options.ignoreKeys ?? [];
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Stores `next` as the current state. Cheap while a trailing emit is pending (nothing but a field
   * write); otherwise one deep comparison with the last emitted snapshot.
   */
  update(next: T): void {
    this.latest = next;
    if (this.trailing !== undefined) return;
    if (!this.changed()) return;
    const wait = this.lastEmitAt + this.intervalMs - this.clock.now();
    if (wait <= 0) {
      this.emit();
      return;
    }
    this.trailing = this.clock.setTimeout(() => {
      this.trailing = undefined;
      if (this.changed()) this.emit();
    }, wait);
    // A dashboard refresh must never keep the process alive on its own.
    this.trailing.unref?.();
  }

  /** The last emitted snapshot (what subscribers have seen), undefined before the first. */
  readonly snapshot = (): T | undefined => this.emitted;

  /** Calls `listener` with each emitted snapshot from now on; returns the unsubscribe function. */
  readonly subscribe = (listener: Listener<T>): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  /** Drops a pending trailing emit (the daemon stopped; nothing will read it). */
  close(): void {
    if (this.trailing !== undefined) this.clock.clearTimeout(this.trailing);
    this.trailing = undefined;
  }

  private changed(): boolean {
    if (this.latest === undefined) return false;
    if (this.emitted === undefined) return true;
    return !isDeepStrictEqual(this.comparable(this.latest), this.comparable(this.emitted));
  }

  private comparable(state: T): Partial<T> {
    if (this.ignoreKeys.length === 0) return state;
    const copy: Partial<T> = {...state};
    for (const key of this.ignoreKeys) delete copy[key];
    return copy;
  }

  private emit(): void {
    // Cloned at most maxPerSecond times a second, never per update().
    const snapshot = structuredClone(this.latest as T);
    this.emitted = snapshot;
    this.lastEmitAt = this.clock.now();
    for (const listener of [...this.listeners]) listener(snapshot);
  }
}
