/**
 * The API server's observable state: what the dashboard shows and `orch status` may read. The
 * server updates it as things happen (cheap field writes, never on the request path's critical
 * work); the dashboard reads snapshots through a throttled emitter (src/ui/state-emitter.ts).
 */

export interface CheckState {
  name: string;
  ok: boolean;
  /** Why it fails, when it does (the text upstream writes to the log, never to the HTTP body). */
  reason?: string;
}

export type ShutdownPhase = 'starting' | 'serving normally' | 'delaying termination' | 'graceful termination' | 'stopped';

export interface ApiServerSnapshot {
  /** https://host:port the server listens on. */
  url: string;
  version: string;
  /** Where the admin orchconfig was written. */
  orchconfigPath: string;
  store: {
    engine: string;
    /** e.g. the SQLite file or the etcd endpoints. */
    location: string;
    revision: number;
    reachable: boolean;
    /** Whether every watch cache has synced. */
    cachesSynced: boolean;
    /** Why writes fail while reads work (e.g. a full disk), when they do. */
    writeFailure?: string;
    /** Full lists and watches the watch caches made of the store since start (see CachedStore.counts). */
    watchCache?: {lists: number; watches: number};
  };
  livez: CheckState[];
  readyz: CheckState[];
  requests: {
    total: number;
    /** Requests per second over the last few seconds. */
    ratePerSecond: number;
    inFlightReadOnly: number;
    inFlightMutating: number;
    latencyMs: {p50: number; p99: number};
    /** Count per HTTP status code class, e.g. {"2xx": 120, "4xx": 3}. */
    byCode: Record<string, number>;
  };
  watches: {open: number; byResource: Record<string, number>};
  /** Priority and fairness's levels (when on): seats in use of the nominal limit, and queued requests. */
  priorityLevels?: Array<{name: string; exempt: boolean; seatsInUse: number; limit: number; queued: number}>;
  shutdown: {phase: ShutdownPhase; inFlight: number; longRunning: number};
  /** Wall-clock time of the snapshot, ms since the epoch. */
  /** When the daemon was created, ms since the epoch (the dashboard's uptime). */
  startedAt: number;
  at: number;
}
