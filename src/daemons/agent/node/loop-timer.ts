/**
 * A cancellable wait on an injected clock, shared by the status loop and the lease controller: stop()
 * or wake() ends the current wait at once, so a loop can be stopped or nudged without waiting out its period.
 */
import type { Clock, TimerHandle } from '../../shared/clock.js';

export class LoopTimer {
  private timer: TimerHandle | undefined;
  private resolve: (() => void) | undefined;

  constructor(private readonly clock: Clock) {}

  /** Resolves after `ms`, or earlier on wake(). */
  wait(ms: number): Promise<void> {
    this.wake();
    return new Promise((resolve) => {
      this.resolve = resolve;
      this.timer = this.clock.setTimeout(() => this.wake(), Math.max(0, ms));
    });
  }

  wake(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const resolve = this.resolve;
    this.resolve = undefined;
    resolve?.();
  }
}

/** Upstream's wait.Jitter: `period` plus up to `factor` of it at random. */
export function jittered(periodMs: number, factor: number, random: () => number): number {
  return periodMs + random() * factor * periodMs;
}
