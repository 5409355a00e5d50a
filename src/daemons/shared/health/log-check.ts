/**
 * The `log` check (upstream's LogHealthz): from the first time it is checked, a background loop
 * flushes the log once a minute; the check fails with `logging blocked` when no flush has completed
 * for two minutes (a log pipe nobody reads would otherwise hang the server silently).
 */
import {systemClock, type Clock, type TimerHandle} from '../clock.js';
import type {HealthCheck} from './check.js';

const FLUSH_INTERVAL_MS = 60_000;
const BLOCKED_AFTER_MS = 2 * 60_000;

export interface LogCheckOptions {
  clock?: Clock;
  /** Resolves once pending log output is written (default: an empty write to stderr). */
  flush?: () => Promise<void> | void;
}

export class LogCheck implements HealthCheck {
  readonly name = 'log';
  private readonly clock: Clock;
  private readonly flush: () => Promise<void> | void;
  private lastVerified: number | undefined;
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(options: LogCheckOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.flush = options.flush ?? flushStderr;
  }

  check(): void {
    if (this.lastVerified === undefined) {
      this.lastVerified = this.clock.now();
      void this.loop();
    }
    if (this.clock.now() - this.lastVerified < BLOCKED_AFTER_MS) return;
    throw new Error('logging blocked');
  }

  /** Stops the flush loop (server shutdown). */
  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
  }

  // The next period starts when a flush has returned, as Go's wait.Forever (sliding).
  private async loop(): Promise<void> {
    if (this.stopped) return;
    await this.flush();
    this.lastVerified = this.clock.now();
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => void this.loop(), FLUSH_INTERVAL_MS);
    this.timer.unref?.();
  }
}

function flushStderr(): Promise<void> {
  return new Promise((resolve) => {
    process.stderr.write('', () => resolve());
  });
}
