/**
 * Crash-loop back-off, as the kubelet computes it with flowcontrol.Backoff: the first restart of a
 * container is immediate; after that each restart waits 10 s, doubling up to 5 min. An entry whose
 * last restart is older than twice the maximum (10 min: the container ran that long) is forgotten,
 * so a container that crashes after running 10 minutes restarts at once again.
 * Pure: times are passed in (milliseconds), nothing here reads a clock.
 */

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = {initialMs: 10_000, maxMs: 300_000};

interface Entry {
  backoffMs: number;
  lastUpdate: number;
}

export class Backoff {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly options: BackoffOptions = DEFAULT_BACKOFF) {}

  private expired(entry: Entry, eventTime: number): boolean {
    return eventTime - entry.lastUpdate > 2 * this.options.maxMs;
  }

  /**
   * How long (ms) the container that finished at `finishedAt` must still wait at `now` before it
   * may restart; 0 when it may restart now.
   */
  remaining(key: string, finishedAt: number, now: number): number {
    const entry = this.entries.get(key);
    if (!entry || this.expired(entry, finishedAt)) return 0;
    return Math.max(0, finishedAt + entry.backoffMs - now);
  }

  /** The current back-off of `key` (ms), as the CrashLoopBackOff message reports it. */
  current(key: string): number {
    return this.entries.get(key)?.backoffMs ?? 0;
  }

  /** Records a restart at `now`: the next crash waits the initial back-off, or twice the last one. */
  next(key: string, now: number): void {
    const entry = this.entries.get(key);
    const backoffMs = !entry || this.expired(entry, now)
      ? this.options.initialMs
      : Math.min(entry.backoffMs * 2, this.options.maxMs);
    this.entries.set(key, {backoffMs, lastUpdate: now});
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}

/** Go's time.Duration String() for whole seconds and minutes, as in "back-off 2m40s restarting ...". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const totalSeconds = ms / 1000;
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  const secondsText = `${Number.isInteger(seconds) ? seconds : Number(seconds.toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${minutes}m${secondsText}`;
  return secondsText;
}
