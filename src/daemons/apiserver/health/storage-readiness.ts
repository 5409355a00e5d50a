/**
 * --storage-initialization-timeout: the post-start hook that holds readiness until storage is
 * initialized (every watch cache synced), polling every 100ms, but for at most the timeout; then it
 * logs a warning and gives up waiting, so that the server becomes ready anyway (upstream's
 * storage readiness hook, registered here as `watch-cache-initialization`).
 */
import {systemClock, sleep, type Clock} from '../../shared/clock.js';
import type {PostStartHookContext} from './post-start-hooks.js';

export const STORAGE_READINESS_HOOK = 'watch-cache-initialization';

export interface StorageReadinessOptions {
  timeoutMs: number;
  /** True once every registered storage (watch cache) is ready. */
  isReady: () => boolean | Promise<boolean>;
  clock?: Clock;
  pollMs?: number;
  warn?: (message: string) => void;
}

export function storageReadinessHook(options: StorageReadinessOptions): (context: PostStartHookContext) => Promise<void> {
  const clock = options.clock ?? systemClock;
  const pollMs = options.pollMs ?? 100;
  return async ({signal}) => {
    const deadline = clock.now() + options.timeoutMs;
    for (;;) {
      if (await options.isReady()) return;
      if (signal.aborted) return;
      if (clock.now() >= deadline) {
        options.warn?.('Deadline exceeded while waiting for storage readiness... ignoring');
        return;
      }
      await sleep(clock, Math.min(pollMs, deadline - clock.now()));
    }
  };
}
