/**
 * The threshold logic of a kubelet probe worker, pure: a probe's reported result changes only after
 * `failureThreshold` consecutive failures or `successThreshold` consecutive successes.
 */
import type {Probe} from './types.js';

export type ProbeKind = 'liveness' | 'readiness' | 'startup';
export type ProbeResult = 'success' | 'failure' | 'unknown';

export interface ProbeTiming {
  initialDelayMs: number;
  periodMs: number;
  timeoutMs: number;
  successThreshold: number;
  failureThreshold: number;
}

/** The upstream defaults (10 s period, 1 s timeout, thresholds 1 and 3); liveness and startup need successThreshold 1. */
export function probeTiming(probe: Probe, kind: ProbeKind): ProbeTiming {
  return {
    initialDelayMs: (probe.initialDelaySeconds ?? 0) * 1000,
    periodMs: (probe.periodSeconds ?? 10) * 1000,
    timeoutMs: (probe.timeoutSeconds ?? 1) * 1000,
    successThreshold: kind === 'readiness' ? probe.successThreshold ?? 1 : 1,
    failureThreshold: probe.failureThreshold ?? 3,
  };
}

/**
 * The result a probe reports before its first verdict: readiness starts failed (not ready until
 * proven), liveness starts successful (alive until proven dead), startup unknown (not started).
 */
export function initialResult(kind: ProbeKind): ProbeResult {
  return kind === 'readiness' ? 'failure' : kind === 'liveness' ? 'success' : 'unknown';
}

export class ProbeTracker {
  private last: ProbeResult | undefined;
  private run = 0;
  private reported: ProbeResult;

  constructor(private readonly kind: ProbeKind, private readonly timing: Pick<ProbeTiming, 'successThreshold' | 'failureThreshold'>) {
    this.reported = initialResult(kind);
  }

  get result(): ProbeResult {
    return this.reported;
  }

  /** Records one probe outcome; returns true when the reported result changed. */
  observe(outcome: 'success' | 'failure'): boolean {
    this.run = this.last === outcome ? this.run + 1 : 1;
    this.last = outcome;
    const threshold = outcome === 'success' ? this.timing.successThreshold : this.timing.failureThreshold;
    if (this.run < threshold || this.reported === outcome) return false;
    this.reported = outcome;
    return true;
  }

  /** Back to the initial result, as when the container restarts. */
  reset(): void {
    this.last = undefined;
    this.run = 0;
    this.reported = initialResult(this.kind);
  }
}
