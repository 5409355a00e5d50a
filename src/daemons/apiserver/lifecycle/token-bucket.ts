/**
 * A token bucket with Go's x/time/rate semantics, as upstream uses it for the kvstore probe rate
 * and the watch drain at shutdown: tokens refill continuously at `ratePerSecond` up to `burst`;
 * allow() takes a token if one is there; reserve() always takes one, possibly going into debt, and
 * says how long the caller must wait for it.
 */
export class TokenBucket {
  private tokens: number;
  private last: number | undefined;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  /** True (and a token is spent) if a token is available at `now` (ms). */
  allow(now: number): boolean {
    if (this.ratePerSecond === Infinity) return true;
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Spends a token and returns how many ms from `now` until it is really available (0: at once). */
  reserve(now: number): number {
    if (this.ratePerSecond === Infinity) return 0;
    this.refill(now);
    this.tokens -= 1;
    if (this.tokens >= 0) return 0;
    return (-this.tokens / this.ratePerSecond) * 1000;
  }

  private refill(now: number): void {
    if (this.last !== undefined && now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.ratePerSecond);
    }
    if (this.last === undefined || now > this.last) this.last = now;
  }
}

/** rate.Every(interval): one token per `intervalMs` (an interval of 0 means no limit). */
export function everyMs(intervalMs: number): number {
  return intervalMs <= 0 ? Infinity : 1000 / intervalMs;
}
