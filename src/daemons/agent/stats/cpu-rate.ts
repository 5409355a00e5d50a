/**
 * CPU usage rates (usageNanoCores) from cumulative CPU times, as cAdvisor derives them from two
 * samples. The agent samples only when asked (a /stats/summary request), so no timer runs while
 * nobody looks: each series keeps a baseline sample, and a rate is the change since it. The baseline
 * moves forward once it is older than the window, so the rate covers roughly the last window, as
 * metrics-server's does. Pure, with an injected clock.
 */

export interface CpuSample {
  /** Cumulative CPU time in nanoseconds. */
  nanos: number;
  /** When it was read, in ms. */
  at: number;
}

export interface CpuRate {
  usageNanoCores: number;
  /** The span the rate covers, in ms. */
  windowMs: number;
}

export interface CpuRateOptions {
  /** How old a baseline may grow before the next sample replaces it (default 10 s). */
  windowMs?: number;
  /**
   * A shorter span than this gives no rate (default 500 ms): /proc counts CPU in 10 ms ticks, so over
   * 500 ms a rate is good to 20 millicores; over less it would say too little about a busy process.
   */
  minSpanMs?: number;
}

export class CpuRates {
  private readonly baselines = new Map<string, CpuSample>();
  private readonly windowMs: number;
  readonly minSpanMs: number;

  constructor(options: CpuRateOptions = {}) {
    this.windowMs = options.windowMs ?? 10_000;
    this.minSpanMs = options.minSpanMs ?? 500;
  }

  /** Whether a series has a baseline old enough to give a rate at `now`. */
  ready(id: string, now: number): boolean {
    const base = this.baselines.get(id);
    return base !== undefined && now - base.at >= this.minSpanMs;
  }

  /**
   * Records a sample and returns the rate since the baseline, or undefined for a series seen for the
   * first time (or too recently). A counter that went back (a process group lost members whose
   * time nobody reaped) restarts the series rather than giving a negative rate.
   */
  observe(id: string, sample: CpuSample): CpuRate | undefined {
    const base = this.baselines.get(id);
    if (!base || sample.nanos < base.nanos) {
      this.baselines.set(id, sample);
      return undefined;
    }
    const span = sample.at - base.at;
    if (span < this.minSpanMs) return undefined;
    if (span >= this.windowMs) this.baselines.set(id, sample);
    // nanoCores: CPU nanoseconds per second of wall time.
    return {usageNanoCores: Math.round(((sample.nanos - base.nanos) * 1000) / span), windowMs: span};
  }

  /** Forgets the series not in `live` (pods and containers that are gone). */
  retain(live: ReadonlySet<string>): void {
    for (const id of this.baselines.keys()) if (!live.has(id)) this.baselines.delete(id);
  }
}
