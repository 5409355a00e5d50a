/** Number formatting and ranking shared by the dashboards (pure, so tested without rendering). */

/** Requests per second: one decimal while small, whole numbers once the decimal is noise. */
export function formatRate(perSecond: number): string {
  return perSecond < 10 ? perSecond.toFixed(1) : String(Math.round(perSecond));
}

/** A latency in the unit a person reads at a glance: 0.42 ms, 3.1 ms, 120 ms, 2.5 s. */
export function formatMs(ms: number): string {
  if (ms >= 1000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 10) return `${Math.round(ms)} ms`;
  if (ms >= 1) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

export interface TopEntries {
  top: [name: string, count: number][];
  /** How many entries did not make the top. */
  others: number;
}

/** The `n` largest counts, largest first (ties by name, so the order does not flicker). */
export function topEntries(counts: Record<string, number>, n: number): TopEntries {
  const sorted = Object.entries(counts).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  return {top: sorted.slice(0, n), others: Math.max(0, sorted.length - n)};
}
