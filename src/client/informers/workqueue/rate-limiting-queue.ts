/**
 * client-go's RateLimitingInterface: a delaying queue whose failed keys come back after the rate
 * limiter's delay. A worker calls `addRateLimited(key)` when a sync fails and `forget(key)` when it
 * succeeds (which resets the key's backoff), then `done(key)` either way.
 */
import { DelayingQueue } from './delaying-queue.js';
import type { QueueOptions } from './queue.js';
import { defaultControllerRateLimiter, type WorkqueueRateLimiter } from './rate-limiters.js';

export interface RateLimitingQueueOptions<T> extends QueueOptions {
  /** Defaults to defaultControllerRateLimiter on the queue's clock. */
  rateLimiter?: WorkqueueRateLimiter<T>;
}

export class RateLimitingQueue<T> extends DelayingQueue<T> {
  private readonly rateLimiter: WorkqueueRateLimiter<T>;

  constructor(options: RateLimitingQueueOptions<T> = {}) {
    super(options);
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<T>(this.clock);
  }

  /** Queues `item` after the rate limiter's delay for it. */
  addRateLimited(item: T): void {
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /** The item succeeded: its backoff starts over. (Does not take it out of the queue.) */
  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }
}

/**
 * One turn of the usual controller worker loop: take a key, sync it, forget it on success or
 * requeue it rate-limited on failure (`onError` hears of the failure). Resolves false once the
 * queue is shut down, so `while (await processNextItem(q, sync));` is a worker.
 */
export async function processNextItem<T>(
  queue: RateLimitingQueue<T>,
  sync: (item: T) => Promise<void>,
  onError: (item: T, error: unknown) => void = () => undefined,
): Promise<boolean> {
  const item = await queue.get();
  if (item === undefined) return false;
  try {
    await sync(item);
    queue.forget(item);
  } catch (error) {
    onError(item, error);
    queue.addRateLimited(item);
  } finally {
    queue.done(item);
  }
  return true;
}
