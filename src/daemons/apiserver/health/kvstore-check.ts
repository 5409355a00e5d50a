/**
 * The kvstore checks (upstream's etcd checks, health.md §6): `kvstore` (healthz, livez, readyz,
 * group `kvstore`) with --kvstore-healthcheck-timeout and `kvstore-readiness` (readyz only, group
 * `kvstore-readiness`) with --kvstore-readycheck-timeout, two independent instances.
 *
 * - Until the store client exists the check fails with `kvstore client connection not yet
 *   established` (or the last connection error).
 * - At most one probe per timeout/2 (token bucket, burst 1); a call refused by the limiter returns
 *   the result of the most recently *sent* probe without probing.
 * - A probe is the store's ping with a deadline of `timeout`; failure:
 *   `error getting data from kvstore: <err>`.
 * - After close() (the server drained its requests at shutdown): `server is shutting down`.
 */
import {systemClock, type Clock} from '../../shared/clock.js';
import {TokenBucket, everyMs} from '../lifecycle/token-bucket.js';
import {errorText, type HealthCheck} from '../../shared/health/check.js';

export type KvstorePing = (timeoutMs: number) => Promise<void>;

export interface KvstoreCheckOptions {
  /** `kvstore`, `kvstore-readiness`, or `kvstore-override-<n>`... */
  name: string;
  group?: string;
  /** The probe deadline in ms. */
  timeoutMs: number;
  /** The store's ping; when given the check is connected at once. */
  ping?: KvstorePing;
  clock?: Clock;
}

const NOT_CONNECTED = 'kvstore client connection not yet established';

export class KvstoreCheck implements HealthCheck {
  readonly name: string;
  readonly group: string;
  private readonly timeoutMs: number;
  private readonly clock: Clock;
  private readonly limiter: TokenBucket;
  private ping: KvstorePing | undefined;
  private clientError: string | undefined = NOT_CONNECTED;
  private last: {error: string | undefined; sentAt: number} = {error: NOT_CONNECTED, sentAt: -Infinity};

  constructor(options: KvstoreCheckOptions) {
    this.name = options.name;
    this.group = options.group ?? options.name;
    this.timeoutMs = options.timeoutMs;
    this.clock = options.clock ?? systemClock;
    this.limiter = new TokenBucket(everyMs(this.timeoutMs / 2), 1);
    if (options.ping) this.connect(options.ping);
  }

  /** The store client is ready: probes may start. */
  connect(ping: KvstorePing): void {
    if (this.clientError === 'server is shutting down') return;
    this.ping = ping;
    this.clientError = undefined;
  }

  /** Creating the client failed (it is retried by the caller); the check reports this error. */
  connectionFailed(error: unknown): void {
    if (this.ping === undefined) this.clientError = errorText(error);
  }

  /** Shutdown: the client is closed and the check fails from now on. */
  close(): void {
    this.ping = undefined;
    this.clientError = 'server is shutting down';
  }

  async check(): Promise<void> {
    if (this.clientError !== undefined || !this.ping) throw new Error(this.clientError ?? NOT_CONNECTED);
    const sentAt = this.clock.now();
    if (!this.limiter.allow(sentAt)) {
      if (this.last.error !== undefined) throw new Error(this.last.error);
      return;
    }
    let error: string | undefined;
    try {
      await withDeadline(this.ping(this.timeoutMs), this.timeoutMs, this.clock);
    } catch (err) {
      error = `error getting data from kvstore: ${errorText(err)}`;
    }
    // Keep the result of the latest probe sent, even if an older one answers later.
    if (sentAt >= this.last.sentAt) this.last = {error, sentAt};
    if (error !== undefined) throw new Error(error);
  }
}

export interface KvstoreCheckPairOptions {
  healthcheckTimeoutMs: number;
  readycheckTimeoutMs: number;
  ping?: KvstorePing;
  clock?: Clock;
}

/** The two standard checks sharing one store ping: `kvstore` and `kvstore-readiness`. */
export function kvstoreChecks(options: KvstoreCheckPairOptions): {health: KvstoreCheck; readiness: KvstoreCheck} {
  const common = commonOptions(options);
  return {
    health: new KvstoreCheck({name: 'kvstore', timeoutMs: options.healthcheckTimeoutMs, ...common}),
    readiness: new KvstoreCheck({name: 'kvstore-readiness', timeoutMs: options.readycheckTimeoutMs, ...common}),
  };
}

/**
 * Checks for --kvstore-servers-overrides servers, numbered from 0 in option order:
 * `kvstore-override-<n>` (group `kvstore`) and `kvstore-override-readiness-<n>` (group `kvstore-readiness`).
 */
export function kvstoreOverrideChecks(
  index: number,
  options: KvstoreCheckPairOptions,
): {health: KvstoreCheck; readiness: KvstoreCheck} {
  const common = commonOptions(options);
  return {
    health: new KvstoreCheck({name: `kvstore-override-${index}`, group: 'kvstore', timeoutMs: options.healthcheckTimeoutMs, ...common}),
    readiness: new KvstoreCheck({
      name: `kvstore-override-readiness-${index}`,
      group: 'kvstore-readiness',
      timeoutMs: options.readycheckTimeoutMs,
      ...common,
    }),
  };
}

function commonOptions({ping, clock}: KvstoreCheckPairOptions): {ping?: KvstorePing; clock?: Clock} {
  return {...(ping ? {ping} : {}), ...(clock ? {clock} : {})};
}

/** Fails with `context deadline exceeded` if the probe does not settle within `ms`. */
function withDeadline(probe: Promise<void>, ms: number, clock: Clock): Promise<void> {
  if (ms <= 0) return probe;
  return new Promise((resolve, reject) => {
    const timer = clock.setTimeout(() => reject(new Error('context deadline exceeded')), ms);
    probe.then(
      () => {
        clock.clearTimeout(timer);
        resolve();
      },
      (err: unknown) => {
        clock.clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
