/**
 * Request figures for the dashboard: total, rate over the last 10 seconds, latency percentiles
 * over the last 1,000 requests, status code classes, and open watches per resource. Recording is
 * a few array writes per request, so it never slows serving.
 */
import {requestInfoOf, type Filter} from './filters/index.js';

const WINDOW_MS = 10_000;
const LATENCY_SAMPLES = 1000;

export class RequestStats {
  private total = 0;
  private readonly recent: number[] = [];
  private readonly latencies: number[] = [];
  private latencyNext = 0;
  private readonly byCode: Record<string, number> = {};
  private readonly watches = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  readonly filter: Filter = (req, res, next) => {
    const start = this.now();
    const info = requestInfoOf(req);
    const watch = info.verb === 'watch' ? info.resource : undefined;
    if (watch) this.watches.set(watch, (this.watches.get(watch) ?? 0) + 1);
    res.on('close', () => {
      const end = this.now();
      this.total++;
      this.recent.push(end);
      if (this.recent.length > 10_000) this.recent.splice(0, this.recent.length - 10_000);
      this.latencies[this.latencyNext] = end - start;
      this.latencyNext = (this.latencyNext + 1) % LATENCY_SAMPLES;
      const cls = `${Math.floor(((res as {statusCode?: number}).statusCode ?? 0) / 100)}xx`;
      this.byCode[cls] = (this.byCode[cls] ?? 0) + 1;
      if (watch) {
        const n = (this.watches.get(watch) ?? 1) - 1;
        if (n > 0) this.watches.set(watch, n);
        else this.watches.delete(watch);
      }
    });
    next();
  };

  summary(): {total: number; ratePerSecond: number; latencyMs: {p50: number; p99: number}; byCode: Record<string, number>} {
    const cutoff = this.now() - WINDOW_MS;
    while (this.recent.length > 0 && this.recent[0] < cutoff) this.recent.shift();
    const sorted = this.latencies.filter((x) => x !== undefined).sort((a, b) => a - b);
    const pct = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : 0);
    return {
      total: this.total,
      ratePerSecond: Math.round((this.recent.length / (WINDOW_MS / 1000)) * 10) / 10,
      latencyMs: {p50: pct(0.5), p99: pct(0.99)},
      byCode: {...this.byCode},
    };
  }

  watchesByResource(): Record<string, number> {
    return Object.fromEntries(this.watches);
  }
}
