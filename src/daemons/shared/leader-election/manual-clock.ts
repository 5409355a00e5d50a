/**
 * A clock that moves only when told to, for tests and simulations of the election: `advance`
 * fires due sleeps in time order and lets the woken code run (all pending promise callbacks)
 * before firing the next, so a run over minutes of election time takes milliseconds.
 * The woken code must not wait on real I/O, or it will not have finished when time moves on.
 */
import type { ElectionClock } from './clock.js';

interface Sleeper {
  due: number;
  seq: number;
  wake: () => void;
}

/** Lets every queued promise callback run: setImmediate fires only once the microtask queue is empty. */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class ManualClock implements ElectionClock {
  private sleepers: Sleeper[] = [];
  private seq = 0;

  constructor(private time = Date.parse('2026-11-22T10:00:00Z')) {}

  now(): number {
    return this.time;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        resolve();
      };
      const sleeper: Sleeper = {
        due: this.time + Math.max(0, ms),
        seq: this.seq++,
        wake: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.sleepers.push(sleeper);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Number of sleeps not yet due: lets a test see that everything stopped. */
  get pendingSleeps(): number {
    return this.sleepers.length;
  }

  /** Moves time forward by `ms`, waking each sleeper at its own due time. */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms;
    await settle();
    for (;;) {
      const next = this.sleepers.filter((s) => s.due <= target).sort((a, b) => a.due - b.due || a.seq - b.seq)[0];
      if (!next) break;
      this.sleepers = this.sleepers.filter((s) => s !== next);
      this.time = Math.max(this.time, next.due);
      next.wake();
      await settle();
    }
    this.time = target;
    await settle();
  }
}
