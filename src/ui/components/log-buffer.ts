/**
 * The log lines a daemon writes while its dashboard is up. The daemon appends (klog's `out`/`err`
 * sinks), the dashboard's log pane reads what is new since its last read and prints it once.
 *
 * Lines are numbered from 0 in append order; only the newest `capacity` are kept, so a dashboard
 * that mounts late still shows the recent start-up lines, and a server that logs for days does not
 * grow without bound. No React here: the daemon side imports this.
 */

export interface LogRead {
  lines: string[];
  /** The number to pass to the next read. */
  next: number;
}

export class LogBuffer {
  private readonly capacity: number;
  private retained: string[] = [];
  /** Number of the first retained line. */
  private first = 0;
  private readonly listeners = new Set<() => void>();

  constructor(capacity = 1000) {
    this.capacity = capacity;
  }

  /**
   * Adds one chunk of output: klog hands whole lines ending in a newline; a chunk holding several
   * lines (a multi-line message) becomes several entries.
   */
  append(text: string): void {
    const lines = text.replace(/\r?\n$/, '').split(/\r?\n/);
    this.retained.push(...lines);
    const excess = this.retained.length - this.capacity;
    if (excess > 0) {
      this.retained.splice(0, excess);
      this.first += excess;
    }
    for (const listener of [...this.listeners]) listener();
  }

  /** Total lines appended so far (the number the next line will get). */
  get end(): number {
    return this.first + this.retained.length;
  }

  /** Lines numbered `from` and later that are still retained (older ones were dropped). */
  read(from: number): LogRead {
    const start = Math.max(from, this.first) - this.first;
    return {lines: this.retained.slice(start), next: this.end};
  }

  /** `listener` runs after each append; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
}
