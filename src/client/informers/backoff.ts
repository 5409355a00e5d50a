/**
 * apimachinery's exponentialBackoffManager, the reflector's error backoff: each wait doubles (from
 * `initialMs`, the base capped at `maxMs`) and gets up to `jitter` times itself added; after
 * `resetAfterMs` without needing a backoff it starts over from `initialMs`.
 *
 * Hand-written rather than cockatiel's backoff because the reset rule and the jitter on top of the
 * cap are client-go's, and the clock and random source must be injected for tests.
 */
import type { TimerClock } from './clock.js';
import { jitter } from './jitter.js';

export interface BackoffOptions {
  /** client-go's reflector: 800ms. */
  initialMs: number;
  /** client-go's reflector: 30s (the base; jitter may add up to as much again). */
  maxMs: number;
  factor: number;
  jitter: number;
  /** client-go's reflector: 2 minutes. */
  resetAfterMs: number;
}

export const REFLECTOR_BACKOFF: BackoffOptions = { initialMs: 800, maxMs: 30_000, factor: 2, jitter: 1, resetAfterMs: 120_000 };

export class ExponentialBackoff {
  private current: number;
  private lastBackoffAt: number | undefined;

  constructor(
    private readonly options: BackoffOptions,
    private readonly clock: TimerClock,
    private readonly random: () => number = Math.random,
  ) {
    this.current = options.initialMs;
  }

  /** The next wait in milliseconds. */
  next(): number {
    const now = this.clock.now();
    if (this.lastBackoffAt !== undefined && now - this.lastBackoffAt > this.options.resetAfterMs) this.current = this.options.initialMs;
    this.lastBackoffAt = now;
    const base = this.current;
    this.current = Math.min(this.current * this.options.factor, this.options.maxMs);
    return jitter(base, this.options.jitter, this.random);
  }
}
