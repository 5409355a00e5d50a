/**
 * The loop of a queue-driven controller, as upstream's Run(ctx, workers): start the informers,
 * wait for their caches, run `workers` loops over the queue until it shuts down; when `signal`
 * aborts, remove the informer handlers and shut the queue down. A failed sync is logged and the key
 * retried with the queue's back-off.
 */
import {processNextItem, type HandlerRegistration, type RateLimitingQueue} from '../../../client/informers/index.js';
import type {ControllerContext} from './types.js';

export interface QueueWorkers<T> {
  ctx: ControllerContext;
  signal: AbortSignal;
  queue: RateLimitingQueue<T>;
  workers: number;
  sync: (item: T) => Promise<void>;
  /** The controller's name in the failure log lines. */
  name: string;
  registrations: HandlerRegistration[];
}

/** Resolves when every worker has stopped. */
export function runQueueWorkers<T>({ctx, signal, queue, workers, sync, name, registrations}: QueueWorkers<T>): Promise<void> {
  ctx.informers.start();
  const onError = (item: T, error: unknown) => ctx.logger.error('Sync failed', name, String(item), 'err', String(error));
  const runWorker = async () => {
    while (await processNextItem(queue, sync, onError));
  };
  const done = (async () => {
    await ctx.informers.waitForCacheSync({signal});
    await Promise.all(signal.aborted ? [] : Array.from({length: Math.max(1, workers)}, runWorker));
  })();
  const stop = () => {
    for (const registration of registrations) registration.remove();
    queue.shutDown();
  };
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, {once: true});
  return done;
}
