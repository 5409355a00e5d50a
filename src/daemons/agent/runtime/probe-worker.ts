/**
 * Runs one probe of one container on its period (after the initial delay) and reports when its
 * thresholded result changes. Timers come from the injected clock.
 */
import type {Clock, TimerHandle} from '../../shared/clock.js';
import type {ProbeOutcome} from './probe-handlers.js';
import {ProbeTracker, type ProbeKind, type ProbeResult, type ProbeTiming} from './probe-tracker.js';

export interface ProbeWorkerOptions {
  kind: ProbeKind;
  timing: ProbeTiming;
  clock: Clock;
  /** One probe attempt; undefined means no verdict (an unsupported handler). */
  probe: () => Promise<ProbeOutcome | undefined>;
  onChange: (result: ProbeResult, outcome: ProbeOutcome) => void;
}

export class ProbeWorker {
  private readonly tracker: ProbeTracker;
  private timer: TimerHandle | undefined;
  private stopped = false;
  /** The last attempt's outcome, for the dashboard. */
  lastOutcome: ProbeOutcome | undefined;

  constructor(private readonly options: ProbeWorkerOptions) {
    this.tracker = new ProbeTracker(options.kind, options.timing);
  }

  get kind(): ProbeKind {
    return this.options.kind;
  }

  get result(): ProbeResult {
    return this.tracker.result;
  }

  /** Starts probing after `delayMs` (what is left of the initial delay). */
  start(delayMs = this.options.timing.initialDelayMs): void {
    this.schedule(Math.max(0, delayMs));
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    if (this.stopped) return;
    const outcome = await this.options.probe();
    if (this.stopped) return;
    if (outcome) {
      this.lastOutcome = outcome;
      if (this.tracker.observe(outcome.result)) this.options.onChange(this.tracker.result, outcome);
    }
    this.schedule(this.options.timing.periodMs);
  }
}
