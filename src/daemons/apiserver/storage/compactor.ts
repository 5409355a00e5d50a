import type {Store} from './store.js';

/** The timer functions the compactor uses; tests pass a fake one. */
export interface Timer {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimer: Timer = {
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    // Compaction alone must not keep the process alive.
    handle.unref();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface CompactorOptions {
  /** `--kvstore-compaction-interval` in milliseconds; 0 disables compaction. */
  intervalMs: number;
  timer?: Timer;
  /** Told about failed rounds (the store may be down); the loop goes on. */
  onError?: (error: unknown) => void;
  /** Told about each compaction, for logs and the dashboard. */
  onCompacted?: (revision: number) => void;
}

/**
 * Drops old history periodically, as upstream's compactor does: at each tick it compacts up to the
 * revision it observed at the previous tick, so history always covers at least one interval and
 * watchers that are up to a full interval behind can still resume.
 */
export class Compactor {
  private handle: unknown;
  private previous: number | undefined;
  private running = false;
  private readonly timer: Timer;

  constructor(
    private readonly store: Store,
    private readonly options: CompactorOptions,
  ) {
    this.timer = options.timer ?? realTimer;
  }

  start(): void {
    if (this.options.intervalMs <= 0 || this.running) return;
    this.running = true;
    this.schedule();
  }

  stop(): void {
    this.running = false;
    if (this.handle !== undefined) this.timer.clearTimeout(this.handle);
    this.handle = undefined;
  }

  /** One round; exposed for tests and for a final compaction. */
  async tick(): Promise<void> {
    try {
      const current = await this.store.currentRevision();
      if (this.previous !== undefined && this.previous > 0) {
        await this.store.compact(this.previous);
        this.options.onCompacted?.(this.previous);
      }
      this.previous = current;
    } catch (error) {
      this.options.onError?.(error);
    }
  }

  private schedule(): void {
    this.handle = this.timer.setTimeout(() => {
      void this.tick().finally(() => {
        if (this.running) this.schedule();
      });
    }, this.options.intervalMs);
  }
}
