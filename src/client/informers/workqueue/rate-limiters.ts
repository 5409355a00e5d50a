/**
 * client-go's workqueue rate limiters: how long a failed key waits before it is retried.
 * - ItemExponentialFailureRateLimiter: base * 2^failures per key, capped.
 * - BucketRateLimiter: one token bucket over all keys (overall retry rate).
 * - MaxOfRateLimiter: the longest wait any of its limiters asks for.
 * DefaultControllerRateLimiter combines 5ms..1000s per key with 10 qps / 100 burst overall.
 */
import { TokenBucket } from '../../rate-limiter.js';
import { realClock, sleep, type TimerClock } from '../clock.js';

export interface WorkqueueRateLimiter<T> {
  /** How long to wait before retrying `item`; records a failure. */
  when(item: T): number;
  /** Stops tracking `item` (it succeeded). */
  forget(item: T): void;
  /** Failures recorded for `item`. */
  numRequeues(item: T): number;
}

export class ItemExponentialFailureRateLimiter<T> implements WorkqueueRateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    private readonly baseDelayMs: number,
    private readonly maxDelayMs: number,
  ) {}

  when(item: T): number {
    const exponent = this.failures.get(item) ?? 0;
    this.failures.set(item, exponent + 1);
    const backoff = this.baseDelayMs * 2 ** exponent;
    return backoff > this.maxDelayMs || !Number.isFinite(backoff) ? this.maxDelayMs : backoff;
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/** An overall limit: each retry reserves a token, waiting for one when the bucket is empty. */
export class BucketRateLimiter<T> implements WorkqueueRateLimiter<T> {
  private readonly bucket: TokenBucket;

  constructor(qps: number, burst: number, clock: TimerClock = realClock) {
    this.bucket = new TokenBucket(qps, burst, { now: () => clock.now(), sleep: (ms) => sleep(clock, ms) });
  }

  when(_item: T): number {
    return this.bucket.reserve();
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}

export class MaxOfRateLimiter<T> implements WorkqueueRateLimiter<T> {
  private readonly limiters: WorkqueueRateLimiter<T>[];

  constructor(...limiters: WorkqueueRateLimiter<T>[]) {
    this.limiters = limiters;
  }

  when(item: T): number {
    // Every limiter records the failure (and the bucket its reservation), as client-go's loop does.
    return Math.max(0, ...this.limiters.map((limiter) => limiter.when(item)));
  }

  forget(item: T): void {
    for (const limiter of this.limiters) limiter.forget(item);
  }

  numRequeues(item: T): number {
    return Math.max(0, ...this.limiters.map((limiter) => limiter.numRequeues(item)));
  }
}

export const DEFAULT_ITEM_BASE_DELAY_MS = 5;
export const DEFAULT_ITEM_MAX_DELAY_MS = 1000 * 1000;
export const DEFAULT_BUCKET_QPS = 10;
export const DEFAULT_BUCKET_BURST = 100;

/** workqueue.DefaultControllerRateLimiter(): per-key 5ms..1000s, overall 10 qps with a burst of 100. */
export function defaultControllerRateLimiter<T>(clock: TimerClock = realClock): WorkqueueRateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(DEFAULT_ITEM_BASE_DELAY_MS, DEFAULT_ITEM_MAX_DELAY_MS),
    new BucketRateLimiter<T>(DEFAULT_BUCKET_QPS, DEFAULT_BUCKET_BURST, clock),
  );
}
