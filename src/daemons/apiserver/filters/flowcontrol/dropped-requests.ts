/**
 * The Retry-After of a rejected request (upstream's dropped_requests_tracker.go), per priority level,
 * mimicking TCP's congestion control: it starts at 1 s, doubles (up to 32 s, at most once per
 * Retry-After period) when at least 3 x Retry-After requests were dropped in the last Retry-After
 * seconds, and goes down by one second when fewer than Retry-After were.
 */
const MAX_RETRY_AFTER = 32;

interface LevelStats {
  history: Array<{unix: number; requests: number}>;
  retryAfter: number;
  updatedUnix: number;
}

export class DroppedRequestsTracker {
  private readonly levels = new Map<string, LevelStats>();

  constructor(private readonly nowMs: () => number) {}

  recordDropped(level: string): void {
    const unix = Math.floor(this.nowMs() / 1000);
    let stats = this.levels.get(level);
    if (!stats) this.levels.set(level, (stats = {history: [], retryAfter: 1, updatedUnix: 0}));
    const last = stats.history[stats.history.length - 1];
    if (last && last.unix === unix) last.requests++;
    else stats.history.push({unix, requests: 1});
    // Keep what the longest window may look at.
    const horizon = Math.max(stats.retryAfter, MAX_RETRY_AFTER);
    while (stats.history.length && unix - stats.history[0]!.unix > horizon) stats.history.shift();
    update(stats, unix);
  }

  retryAfter(level: string): number {
    return this.levels.get(level)?.retryAfter ?? 1;
  }
}

/** Over [unix - retryAfter, unix): the seconds before the current one. */
function update(stats: LevelStats, unix: number): void {
  let dropped = 0;
  for (let i = stats.history.length - 1; i >= 0; i--) {
    const entry = stats.history[i]!;
    if (unix - entry.unix > stats.retryAfter) break;
    if (entry.unix < unix) dropped += entry.requests;
  }
  if (unix - stats.updatedUnix >= stats.retryAfter && dropped >= 3 * stats.retryAfter) {
    stats.retryAfter = Math.min(MAX_RETRY_AFTER, stats.retryAfter * 2);
    stats.updatedUnix = unix;
    return;
  }
  if (dropped < stats.retryAfter && stats.retryAfter > 1) stats.retryAfter--;
}
