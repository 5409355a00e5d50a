/**
 * The randomized durations of client-go's informers, pure (the random source is injected).
 */

/** wait.Jitter: `ms` plus up to `factor` times `ms` more. */
export function jitter(ms: number, factor: number, random: () => number): number {
  return factor > 0 ? ms + random() * factor * ms : ms;
}

/**
 * kube-controller-manager's ResyncPeriod: a resync period in [min, 2*min), so informers created
 * together do not all resync at once (`--min-resync-period`).
 */
export function randomResyncPeriod(minResyncMs: number, random: () => number = Math.random): number {
  return jitter(minResyncMs, 1, random);
}

/** client-go's minimum watch timeout: a reflector asks for 5 to 10 minutes, so watches do not all end together. */
export const MIN_WATCH_TIMEOUT_SECONDS = 5 * 60;

export function watchTimeoutSeconds(random: () => number = Math.random): number {
  return Math.floor(jitter(MIN_WATCH_TIMEOUT_SECONDS, 1, random));
}
