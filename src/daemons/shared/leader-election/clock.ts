/**
 * The elector's only contact with time, so tests can drive it on a manual clock. Only the
 * local clock's elapsed time matters to the algorithm (see leader-election.md §3).
 */
import { setTimeout as sleepFor } from 'node:timers/promises';

export interface ElectionClock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms`, or early (without rejecting) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: ElectionClock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleepFor(Math.max(0, ms), undefined, { signal }).catch(() => undefined),
};
