/**
 * `--event-ttl`: events expire a TTL after their last write. The store has no leases, so a
 * sweeper deletes expired events; an event's last write is the latest of its timestamps
 * (creation, lastTimestamp, eventTime, series.lastObservedTime, managedFields times).
 */
import { isJsonObject, type JsonObject, type JsonValue } from '../../../patch/types.js';
import type { Store } from '../storage/store.js';
import { systemClock, type Clock } from './types.js';

export interface EventSweeperOptions {
  store: Store;
  ttlMs: number;
  clock?: Clock;
  keyPrefix?: string;
  /** How often `start()` sweeps. Default: a tenth of the TTL, between 1 s and 1 min. */
  intervalMs?: number;
}

export interface EventSweeper {
  /** Deletes the expired events now; resolves to how many were deleted. */
  sweep(): Promise<number>;
  start(): void;
  stop(): void;
}

function timestamps(event: JsonObject): number[] {
  const values: JsonValue[] = [];
  const meta = isJsonObject(event.metadata) ? event.metadata : {};
  values.push(meta.creationTimestamp ?? null, event.lastTimestamp ?? null, event.eventTime ?? null);
  if (isJsonObject(event.series)) values.push(event.series.lastObservedTime ?? null);
  for (const entry of Array.isArray(meta.managedFields) ? meta.managedFields : []) if (isJsonObject(entry)) values.push(entry.time ?? null);
  return values.filter((v): v is string => typeof v === 'string').map((v) => Date.parse(v)).filter((n) => Number.isFinite(n));
}

/** When an event expires (ms since the epoch), or undefined when it carries no timestamp. */
export function eventExpiry(event: JsonObject, ttlMs: number): number | undefined {
  const times = timestamps(event);
  return times.length ? Math.max(...times) + ttlMs : undefined;
}

export function createEventSweeper(options: EventSweeperOptions): EventSweeper {
  const clock = options.clock ?? systemClock;
  const prefix = `${(options.keyPrefix ?? '/registry').replace(/\/+$/, '')}/events/`;
  const interval = options.intervalMs ?? Math.min(60_000, Math.max(1000, Math.floor(options.ttlMs / 10)));
  let timer: NodeJS.Timeout | undefined;
  let running = false;

  async function sweep(): Promise<number> {
    const now = clock.now().getTime();
    const listed = await options.store.list(prefix);
    let deleted = 0;
    for (const kv of listed.items) {
      let event: JsonObject;
      try {
        event = JSON.parse(kv.value) as JsonObject;
      } catch {
        continue;
      }
      const expiry = eventExpiry(event, options.ttlMs);
      if (expiry === undefined || expiry > now) continue;
      try {
        // Only the version we judged: an event written since then lives on.
        if ((await options.store.delete(kv.key, kv.modRevision)) !== undefined) deleted++;
      } catch {
        // A concurrent update or delete: the next sweep looks again.
      }
    }
    return deleted;
  }

  return {
    sweep,
    start() {
      if (timer) return;
      timer = setInterval(() => {
        if (running) return;
        running = true;
        sweep().catch(() => undefined).finally(() => (running = false));
      }, interval);
      timer.unref?.();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
