/**
 * Time as the informer machinery sees it: a monotonic `now()` in milliseconds and one-shot timers.
 * Everything that waits (reflector backoff, resync, watch timeouts, delayed queue adds, the token
 * bucket) goes through this, so tests drive it with FakeClock instead of sleeping.
 */

export interface Timer {
  cancel(): void;
}

export interface TimerClock {
  /** Milliseconds on a monotonic scale (not wall time). */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds unless cancelled. */
  setTimer(fn: () => void, ms: number): Timer;
}

export const realClock: TimerClock = {
  now: () => performance.now(),
  setTimer(fn, ms) {
    const handle = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle) };
  },
};

/** Resolves after `ms` on `clock`, or at once when `signal` aborts. */
export function sleep(clock: TimerClock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock tests move by hand. `advance(ms)` fires every timer that falls due, in time order
 * (timers set by a firing callback fire too when they fall within the advanced window).
 */
export class FakeClock implements TimerClock {
  private time: number;
  private seq = 0;
  private timers: PendingTimer[] = [];

  constructor(start = 0) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimer(fn: () => void, ms: number): Timer {
    const timer: PendingTimer = { at: this.time + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }

  /** Timers not yet fired nor cancelled. */
  pendingTimers(): number[] {
    return this.timers.filter((t) => !t.cancelled).map((t) => t.at - this.time);
  }

  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cancelled);
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers.splice(this.timers.indexOf(due), 1);
      this.time = Math.max(this.time, due.at);
      due.fn();
    }
    this.time = target;
  }
}
