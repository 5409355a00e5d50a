/**
 * client-go's workqueue.Type: a FIFO of keys with two guarantees controllers rely on.
 * - Dedup: a key added again while still queued is queued once.
 * - Exclusive processing: a key handed to a worker is not handed to another until `done(key)`;
 *   adds meanwhile mark it dirty and it is queued again at `done`, so no change is lost and no two
 *   workers sync one object at once.
 * After shutDown adds are ignored, remaining keys are still handed out, then `get` resolves undefined.
 */
import { realClock, type TimerClock } from '../clock.js';
import { noopMetricsProvider, type QueueMetricsSink, type QueueStats, type WorkqueueMetricsProvider } from './metrics.js';

export interface QueueOptions {
  /** The `name` label of the queue's metrics (the controller's name). */
  name?: string;
  clock?: TimerClock;
  metrics?: WorkqueueMetricsProvider;
}

export class WorkQueue<T> {
  readonly name: string;
  protected readonly clock: TimerClock;
  /** Keys ready to hand out, in order; `head` skips the taken ones without shifting the array. */
  private queue: T[] = [];
  private head = 0;
  /** Keys that need processing (queued, or re-added while processing). */
  private readonly dirty = new Set<T>();
  private readonly processing = new Set<T>();
  private waiters: ((item: T | undefined) => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private shuttingDown = false;
  private readonly addedAt = new Map<T, number>();
  private readonly startedAt = new Map<T, number>();
  protected readonly sink: QueueMetricsSink;
  protected readonly counts = { adds: 0, retries: 0, gets: 0, queueLatencySecondsTotal: 0, workDurationSecondsTotal: 0 };

  constructor(options: QueueOptions = {}) {
    this.name = options.name ?? '';
    this.clock = options.clock ?? realClock;
    this.sink = (options.metrics ?? noopMetricsProvider).forQueue(this.name, {
      unfinishedWorkSeconds: () => this.unfinishedWorkSeconds(),
      longestRunningProcessorSeconds: () => this.longestRunningProcessorSeconds(),
    });
  }

  add(item: T): void {
    if (this.shuttingDown || this.dirty.has(item)) return;
    this.counts.adds++;
    this.sink.add();
    if (!this.addedAt.has(item)) this.addedAt.set(item, this.clock.now());
    this.dirty.add(item);
    this.sink.setDepth(this.dirty.size);
    if (this.processing.has(item)) return;
    this.queue.push(item);
    this.dispatch();
  }

  /**
   * The next key to process; the caller must call `done(key)` when finished. Resolves undefined
   * once the queue is shut down and empty.
   */
  get(): Promise<T | undefined> {
    if (this.length() > 0) return Promise.resolve(this.take());
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks a key processed; if it was added meanwhile it is queued again now. */
  done(item: T): void {
    const started = this.startedAt.get(item);
    if (started !== undefined) {
      const seconds = (this.clock.now() - started) / 1000;
      this.counts.workDurationSecondsTotal += seconds;
      this.sink.observeWorkDuration(seconds);
      this.startedAt.delete(item);
    }
    this.processing.delete(item);
    if (this.dirty.has(item)) {
      this.queue.push(item);
      this.dispatch();
    } else if (this.processing.size === 0) {
      for (const resolve of this.drainWaiters.splice(0)) resolve();
    }
  }

  /** Keys waiting to be handed out. */
  len(): number {
    return this.length();
  }

  /** Stops accepting keys; workers blocked in `get` with nothing left get undefined. */
  shutDown(): void {
    this.shuttingDown = true;
    if (this.length() === 0) for (const resolve of this.waiters.splice(0)) resolve(undefined);
  }

  /** shutDown, then resolves once every key handed out is done. */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  stats(): QueueStats {
    return {
      name: this.name,
      depth: this.dirty.size,
      processing: this.processing.size,
      waiting: 0,
      ...this.counts,
      unfinishedWorkSeconds: this.unfinishedWorkSeconds(),
      longestRunningProcessorSeconds: this.longestRunningProcessorSeconds(),
    };
  }

  unfinishedWorkSeconds(): number {
    const now = this.clock.now();
    let total = 0;
    for (const started of this.startedAt.values()) total += now - started;
    return total / 1000;
  }

  longestRunningProcessorSeconds(): number {
    const now = this.clock.now();
    let longest = 0;
    for (const started of this.startedAt.values()) longest = Math.max(longest, now - started);
    return longest / 1000;
  }

  private length(): number {
    return this.queue.length - this.head;
  }

  private take(): T {
    const item = this.queue[this.head++];
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    const now = this.clock.now();
    const added = this.addedAt.get(item);
    if (added !== undefined) {
      const seconds = (now - added) / 1000;
      this.counts.queueLatencySecondsTotal += seconds;
      this.sink.observeLatency(seconds);
      this.addedAt.delete(item);
    }
    this.counts.gets++;
    this.startedAt.set(item, now);
    this.processing.add(item);
    this.dirty.delete(item);
    this.sink.setDepth(this.dirty.size);
    return item;
  }

  /** Hands queued keys to workers blocked in `get`. */
  private dispatch(): void {
    while (this.waiters.length > 0 && this.length() > 0) this.waiters.shift()!(this.take());
  }
}
