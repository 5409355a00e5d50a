/**
 * The per-zone queue of nodes waiting for their NoExecute taint, drained at the zone's eviction
 * rate: upstream's RateLimitedTimedQueue (scheduler/rate_limited_queue.go) with its token bucket.
 *
 * Time is passed in (`now`, ms) so the queue is pure bookkeeping, driven by the controller's clock.
 */

/**
 * A token bucket of burst 1 (upstream's EvictionRateLimiterBurst), as golang.org/x/time/rate
 * behaves for it: full when created; after a token is taken the next one is whole exactly 1/qps
 * later. Hand-written rather than src/client's TokenBucket because that one accumulates fractional
 * refills on every poll (the queue is polled every 100 ms, so 0.01/s would drift by float error) and
 * reads its own clock; with burst 1 "next token at" is one exact number.
 * qps <= 0 gives upstream's FakeNeverRateLimiter: no token, ever.
 */
export class EvictionLimiter {
  private nextTokenAt: number;

  constructor(readonly qps: number, now: number, drained = false) {
    this.nextTokenAt = drained ? now + this.periodMs() : -Infinity;
  }

  private periodMs(): number {
    return this.qps > 0 ? 1000 / this.qps : Infinity;
  }

  tryAccept(now: number): boolean {
    if (!(this.qps > 0) || now < this.nextTokenAt) return false;
    this.nextTokenAt = now + this.periodMs();
    return true;
  }
}

interface QueuedItem {
  value: string;
  processAt: number;
  /** Tie-breaker: FIFO among equal times. */
  seq: number;
}

/**
 * Node names in processing order (by time added, FIFO), each at most once. A name stays "marked"
 * after it was handed out by process() until remove(): add() refuses marked names, so a node that
 * was already tainted is not queued again while it stays not ready.
 */
export class RateLimitedTimedQueue {
  private limiter: EvictionLimiter;
  private queue: QueuedItem[] = [];
  private readonly marked = new Set<string>();
  private seq = 0;

  constructor(qps: number, now: number) {
    this.limiter = new EvictionLimiter(qps, now);
  }

  /** The rate in force, nodes per second (0: stopped). */
  get qps(): number {
    return this.limiter.qps;
  }

  /** Queues `value` to be processed from `now` on; false when it is already queued or marked. */
  add(value: string, now: number): boolean {
    if (this.marked.has(value)) return false;
    this.marked.add(value);
    this.insert({value, processAt: now, seq: this.seq++});
    return true;
  }

  /** Forgets `value` entirely (queued or marked); true when it was known. */
  remove(value: string): boolean {
    const known = this.marked.delete(value);
    this.queue = this.queue.filter((item) => item.value !== value);
    return known;
  }

  /** Whether `value` is waiting in the queue (not yet handed out). */
  isQueued(value: string): boolean {
    return this.queue.some((item) => item.value === value);
  }

  /** Whether `value` is queued or was handed out and not removed since. */
  isMarked(value: string): boolean {
    return this.marked.has(value);
  }

  /** Names waiting, in processing order. */
  queued(): string[] {
    return this.queue.map((item) => item.value);
  }

  /**
   * Hands out the names whose turn has come: for each head item, a token first (none: stop until
   * a later call), then the item if its time has come. The token is spent even when the head is not
   * due yet, as upstream's Try does. Names handed out stay marked; see requeue() for failures.
   */
  process(now: number): string[] {
    const out: string[] = [];
    while (this.queue.length > 0) {
      if (!this.limiter.tryAccept(now)) break;
      const head = this.queue[0];
      if (now < head.processAt) break;
      this.queue.shift();
      out.push(head.value);
    }
    return out;
  }

  /** Puts a handed-out name back, to be retried at `at` (its action failed). */
  requeue(value: string, at: number): void {
    this.queue = this.queue.filter((item) => item.value !== value);
    this.marked.add(value);
    this.insert({value, processAt: at, seq: this.seq++});
  }

  /**
   * Replaces the limiter for a new rate (upstream SwapLimiter): nothing when the rate is unchanged;
   * the new bucket starts drained when the old one had no token, so a rate change never grants an
   * extra eviction.
   */
  swapLimiter(qps: number, now: number): void {
    if (this.limiter.qps === qps) return;
    const oldHadToken = this.limiter.tryAccept(now);
    this.limiter = qps > 0 ? new EvictionLimiter(qps, now, !oldHadToken) : new EvictionLimiter(0, now);
  }

  get length(): number {
    return this.queue.length;
  }

  private insert(item: QueuedItem): void {
    const index = this.queue.findIndex((q) => q.processAt > item.processAt || (q.processAt === item.processAt && q.seq > item.seq));
    if (index < 0) this.queue.push(item);
    else this.queue.splice(index, 0, item);
  }
}
