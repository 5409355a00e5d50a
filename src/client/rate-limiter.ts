/**
 * The client-side rate limiter applied to every request to the API server: a token bucket as
 * client-go's `flowcontrol.NewTokenBucketRateLimiter(qps, burst)` (golang.org/x/time/rate) builds it.
 * The bucket starts full with `burst` tokens and refills at `qps` tokens per second; a request takes
 * one token, waiting when none is left. Waiters are served in arrival order because each one
 * reserves its token when it arrives (the bucket may go negative), as rate.Limiter.Wait does.
 *
 * Hand-written: the npm limiters either lack an injectable clock (needed to test it without real
 * waiting) or implement fixed windows rather than Go's token-bucket reservation semantics.
 */

/** Time as the limiter sees it; tests pass a fake one. */
export interface LimiterClock {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: LimiterClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export interface RateLimiterOptions {
  /** Tokens per second; 0 or less means no limit (client-go's negative QPS). */
  qps: number;
  /** Bucket size: how many requests may go at once after a quiet period; at least 1. */
  burst: number;
  clock?: LimiterClock;
}

export interface RateLimiter {
  /** Resolves when the caller may send one request. */
  acquire(): Promise<void>;
  /** Takes a token only if one is available now (never waits). */
  tryAcquire(): boolean;
}

/** A limiter that never waits: for qps <= 0. */
export const unlimited: RateLimiter = {acquire: async () => undefined, tryAcquire: () => true};

export class TokenBucket implements RateLimiter {
  private tokens: number;
  private last: number;
  private readonly burst: number;
  private readonly clock: LimiterClock;

  constructor(private readonly qps: number, burst: number, clock: LimiterClock = systemClock) {
    if (!(qps > 0)) throw new RangeError(`a token bucket needs qps > 0, got ${qps}`);
    this.burst = Math.max(1, Math.floor(burst));
    this.clock = clock;
    this.tokens = this.burst;
    this.last = clock.now();
  }

  /** Tokens available at `now` (may be negative while reservations are outstanding). */
  private refill(now: number): void {
    const elapsed = Math.max(0, now - this.last);
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.qps) / 1000);
    this.last = now;
  }

  /**
   * Reserves one token and returns how long the caller must wait before using it (0 when a token
   * was available). Pure bookkeeping: no timers.
   */
  reserve(): number {
    this.refill(this.clock.now());
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  tryAcquire(): boolean {
    this.refill(this.clock.now());
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  async acquire(): Promise<void> {
    const wait = this.reserve();
    if (wait > 0) await this.clock.sleep(wait);
  }
}

/** The limiter for `--orch-api-qps`/`--orch-api-burst` style settings. */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  return options.qps > 0 ? new TokenBucket(options.qps, options.burst, options.clock) : unlimited;
}
