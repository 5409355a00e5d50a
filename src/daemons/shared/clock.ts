/**
 * The time source of the health checks, the shutdown sequence and the filters, injected so that
 * unit tests can walk timelines of minutes in microseconds (FakeClock) while production uses the
 * wall clock and real timers (systemClock).
 */

export interface TimerHandle {
  /** Lets the process exit while the timer is pending (real timers only). */
  unref?(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Resolves after `ms` on `clock` (at once for ms <= 0). */
export function sleep(clock: Clock, ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    clock.setTimeout(resolve, ms);
  });
}

interface FakeTimer extends TimerHandle {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A manual clock: time moves only through advance(); due timers fire in time order, and the
 * promise microtasks they cause settle between timers, so async sequences behave as with real time.
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: FakeTimer[] = [];

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: FakeTimer = {at: this.current + Math.max(0, ms), seq: this.seq++, fn, unref() {}};
    this.timers.push(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t !== handle);
  }

  /** Number of timers not yet fired. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await settle();
    for (;;) {
      const next = this.nextDue(target);
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.current = next.at;
      next.fn();
      await settle();
    }
    this.current = target;
    await settle();
  }

  private nextDue(target: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers) {
      if (t.at > target) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}

/** Lets pending promise callbacks run (several turns, for chains of awaits). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Resolves when `promise` settles or after `ms`, whichever is first; the timer never outlives it. */
export async function waitAtMost(clock: Clock, promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: TimerHandle | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = clock.setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise.then(() => undefined, () => undefined), timeout]);
  } finally {
    if (timer) clock.clearTimeout(timer);
  }
}
