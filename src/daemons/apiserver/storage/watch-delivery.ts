import type {StoreEvent} from './store.js';

/**
 * One watcher's outbox. Producers push events, progress marks and a final error; they reach the
 * watcher's callbacks in that order, later, in a microtask: never synchronously from inside `watch()`
 * or from inside a write, and never after `close()`.
 */
export class WatchDelivery {
  private queue: Array<() => void> = [];
  private scheduled = false;
  /** No more pushes accepted (after fail() or close()). */
  private closed = false;
  /** close() was called: drop even what is queued. */
  private stopped = false;
  /** Revision of the last event or progress mark pushed (for callers filtering duplicates). */
  lastRevision: number;

  constructor(
    private readonly onEvent: (event: StoreEvent) => void,
    private readonly onError: (error: Error) => void,
    private readonly onProgress: ((revision: number) => void) | undefined,
    afterRevision: number,
  ) {
    this.lastRevision = afterRevision;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  event(event: StoreEvent): void {
    if (this.closed || event.revision <= this.lastRevision) return;
    this.lastRevision = event.revision;
    this.push(() => this.onEvent(event));
  }

  progress(revision: number): void {
    const onProgress = this.onProgress;
    if (this.closed || !onProgress) return;
    if (revision > this.lastRevision) this.lastRevision = revision;
    const at = this.lastRevision;
    this.push(() => onProgress(at));
  }

  /** Delivers the error after what is already queued, then nothing more. */
  fail(error: Error): void {
    if (this.closed) return;
    this.push(() => this.onError(error));
    this.closed = true;
  }

  close(): void {
    this.closed = true;
    this.stopped = true;
    this.queue = [];
  }

  private push(deliver: () => void): void {
    this.queue.push(deliver);
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const queue = this.queue;
    this.queue = [];
    for (const deliver of queue) {
      // A callback may close the watch; what remains queued is then dropped.
      if (this.stopped) break;
      deliver();
    }
  }
}
