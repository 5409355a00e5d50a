/**
 * The request wait groups of graceful shutdown (upstream's SafeWaitGroup and
 * RateLimitedSafeWaitGroup): requests join while the server accepts work; once wait() has begun,
 * join() refuses (the caller answers 503) and wait() resolves when the last member leaves or the
 * budget runs out. With a limiter, members leaving after wait() began are released one token at
 * a time, which spreads out the end of many watches; when the budget is over they all go at once.
 */
import type {Clock, TimerHandle} from '../../shared/clock.js';
import {TokenBucket} from './token-bucket.js';

export class RequestWaitGroup {
  private count = 0;
  private waiting = false;
  private budgetOver = false;
  private limiter: TokenBucket | undefined;
  private onEmpty: (() => void) | undefined;
  /** Members waiting for a release token; woken all at once when the budget is over. */
  private readonly sleepers = new Set<() => void>();

  constructor(private readonly clock: Clock) {}

  get size(): number {
    return this.count;
  }

  get isWaiting(): boolean {
    return this.waiting;
  }

  /** Adds a member, or returns undefined once wait() has begun. Call the function returned to leave. */
  join(): ((release: () => void) => void) | undefined {
    if (this.waiting) return undefined;
    this.count++;
    let left = false;
    return (release) => {
      if (left) return;
      left = true;
      void this.leave(release);
    };
  }

  /**
   * Refuses new members and resolves when none is left, or after `budgetMs` (undefined: no
   * budget). `rateFor(count)` gives the release rate per second, from the members still in.
   */
  wait(budgetMs?: number, rateFor?: (count: number) => number): Promise<void> {
    this.waiting = true;
    if (rateFor) this.limiter = new TokenBucket(rateFor(this.count), 1);
    return new Promise((resolve) => {
      let budget: TimerHandle | undefined;
      const finish = () => {
        this.onEmpty = undefined;
        if (budget) this.clock.clearTimeout(budget);
        resolve();
      };
      if (this.count === 0) return finish();
      this.onEmpty = finish;
      if (budgetMs !== undefined) {
        budget = this.clock.setTimeout(() => {
          budget = undefined;
          this.budgetOver = true;
          for (const wake of [...this.sleepers]) wake();
          finish();
        }, budgetMs);
      }
    });
  }

  private async leave(release: () => void): Promise<void> {
    const delay = this.waiting && this.limiter && !this.budgetOver ? this.limiter.reserve(this.clock.now()) : 0;
    if (delay > 0) await this.sleep(delay);
    release();
    this.count--;
    if (this.count === 0) this.onEmpty?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.clock.clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = this.clock.setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }
}
