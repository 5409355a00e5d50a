/**
 * `kvstore-writable` (readyz only): fails while the store refuses writes that reads still see,
 * saying why, e.g. `writes to the kvstore fail since 2026-11-25T18:20:00Z: database or disk is full`.
 * Upstream has no such check (etcd's own NOSPACE alarm is visible to its operators); orch's embedded
 * store has no other place where a user would learn why every write answers 503. Readiness is
 * the right root: the server temporarily cannot serve part of its API.
 *
 * The store remembers its last write failure; while there is one, the check tries a small write of
 * the store's own (at most once per probeIntervalMs), so that the check passes again as soon as
 * space returns, without waiting for a client to write.
 */
import type {Store} from '../storage/store.js';
import type {HealthCheck} from '../../shared/health/check.js';

export const KVSTORE_WRITABLE = 'kvstore-writable';

export function kvstoreWritableCheck(engines: () => readonly Store[], options: {probeIntervalMs?: number; now?: () => number} = {}): HealthCheck {
  const interval = options.probeIntervalMs ?? 1000;
  const now = options.now ?? Date.now;
  const lastProbe = new WeakMap<Store, number>();
  return {
    name: KVSTORE_WRITABLE,
    async check() {
      for (const engine of engines()) {
        if (!engine.writeFailure?.()) continue;
        const at = now();
        if (engine.probeWrite && at - (lastProbe.get(engine) ?? -Infinity) >= interval) {
          lastProbe.set(engine, at);
          try {
            await engine.probeWrite();
          } catch {
            // still failing: reported below
          }
        }
        const failure = engine.writeFailure();
        if (failure) throw new Error(`writes to the kvstore fail since ${new Date(failure.since).toISOString()}: ${failure.message}`);
      }
    },
  };
}

/** The reason writes fail, for the dashboard; undefined when they work. */
export function writeFailureText(engines: readonly Store[]): string | undefined {
  for (const engine of engines) {
    const failure = engine.writeFailure?.();
    if (failure) return `${failure.message} (since ${new Date(failure.since).toISOString()})`;
  }
  return undefined;
}
