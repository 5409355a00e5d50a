/**
 * client-go's DelayingInterface: `addAfter(key, ms)` queues a key once its delay has passed. A key
 * already waiting keeps the earlier of its two ready times. One timer (on the injected clock) is
 * armed for the earliest key; waiting keys sit in a binary heap.
 */
import type { Timer } from '../clock.js';
import { WorkQueue, type QueueOptions } from './queue.js';
import type { QueueStats } from './metrics.js';

interface Waiting<T> {
  item: T;
  readyAt: number;
}

/** A min-heap on readyAt; entries whose readyAt no longer matches `current` are stale and skipped. */
class ReadyHeap<T> {
  private readonly heap: Waiting<T>[] = [];

  get size(): number {
    return this.heap.length;
  }

  peek(): Waiting<T> | undefined {
    return this.heap[0];
  }

  push(entry: Waiting<T>): void {
    const h = this.heap;
    h.push(entry);
    for (let i = h.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (h[parent].readyAt <= h[i].readyAt) break;
      [h[parent], h[i]] = [h[i], h[parent]];
      i = parent;
    }
  }

  pop(): Waiting<T> | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let min = i;
        if (l < h.length && h[l].readyAt < h[min].readyAt) min = l;
        if (r < h.length && h[r].readyAt < h[min].readyAt) min = r;
        if (min === i) break;
        [h[min], h[i]] = [h[i], h[min]];
        i = min;
      }
    }
    return top;
  }
}

export class DelayingQueue<T> extends WorkQueue<T> {
  private readonly readyAt = new Map<T, number>();
  private readonly heap = new ReadyHeap<T>();
  private timer: Timer | undefined;
  private timerAt = Infinity;

  constructor(options: QueueOptions = {}) {
    super(options);
  }

  /** Queues `item` after `delayMs` (at once when <= 0). Counts as a retry, as client-go does. */
  addAfter(item: T, delayMs: number): void {
    if (this.isShuttingDown()) return;
    this.counts.retries++;
    this.sink.retry();
    if (delayMs <= 0) {
      this.add(item);
      return;
    }
    const readyAt = this.clock.now() + delayMs;
    const existing = this.readyAt.get(item);
    if (existing !== undefined && existing <= readyAt) return;
    this.readyAt.set(item, readyAt);
    this.heap.push({ item, readyAt });
    this.arm();
  }

  override shutDown(): void {
    super.shutDown();
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  override stats(): QueueStats {
    return { ...super.stats(), waiting: this.readyAt.size };
  }

  /** Keys whose delay has not passed yet. */
  waitingLen(): number {
    return this.readyAt.size;
  }

  /** Moves every key that is ready into the queue, then re-arms for the next one. */
  private flush(): void {
    const now = this.clock.now();
    for (let top = this.heap.peek(); top && top.readyAt <= now; top = this.heap.peek()) {
      this.heap.pop();
      if (this.readyAt.get(top.item) !== top.readyAt) continue; // superseded by an earlier time
      this.readyAt.delete(top.item);
      this.add(top.item);
    }
    this.arm();
  }

  private arm(): void {
    while (this.heap.size > 0 && this.readyAt.get(this.heap.peek()!.item) !== this.heap.peek()!.readyAt) this.heap.pop();
    const next = this.heap.peek();
    if (!next || this.isShuttingDown()) return;
    if (this.timer && this.timerAt <= next.readyAt) return;
    this.timer?.cancel();
    this.timerAt = next.readyAt;
    this.timer = this.clock.setTimer(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.flush();
    }, next.readyAt - this.clock.now());
  }
}
