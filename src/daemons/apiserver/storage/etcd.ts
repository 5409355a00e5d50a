import {ConsecutiveBreaker, circuitBreaker, handleWhen, noop, retry} from 'cockatiel';
import {Etcd3, type IKeyValue, type IOptions, type Watcher, isRecoverableError} from 'etcd3';
import {readFileSync} from 'node:fs';
import {rootCertificates} from 'node:tls';
import {keyAfter, prefixEnd} from './keys.js';
import {
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Store,
  type StoreEvent,
  StoreCompactedError,
  StoreConflictError,
  StoreFutureRevisionError,
  StoreUnavailableError,
  type WatchHandle,
} from './store.js';
import {WatchDelivery} from './watch-delivery.js';
import {LeaseManager} from './lease-manager.js';

/**
 * The distributed engine: etcd v3 through the `etcd3` client. Keys are used as given (the caller adds
 * the kvstore prefix). Conditional writes are etcd transactions comparing the key's create or mod
 * revision, exactly as upstream's storage layer does, so etcd itself arbitrates concurrent writers.
 */

export interface EtcdStoreOptions {
  /** Client URLs, `http://host:port` or `https://host:port`. */
  endpoints: string[];
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  /**
   * Deadline of each unary request (default 10s); watches have none. The API server passes its
   * --request-timeout: requests made while etcd is unreachable wait for it that long (see call()).
   */
  requestTimeoutMs?: number;
  /**
   * Keys that expire: a key under one of the prefixes is written with an etcd lease of its TTL
   * (events under --event-ttl, as upstream's event registry), leases shared as --lease-reuse-duration-seconds says.
   */
  expiring?: {prefixes: {prefix: string; ttlSeconds: number}[]; leaseReuseDurationSeconds: number};
}

/** Errors that prove a request never reached etcd (no connection, or the breaker refused it): safe to send again. */
const NOT_SENT = /circuit breaker is open|No connection established|ECONNREFUSED|failed to connect|Name resolution failed/i;
/** Errors after which a read may be sent again (a read applies nothing). */
const READ_RETRYABLE = /UNAVAILABLE|Connection dropped|circuit breaker|ECONNREFUSED|ECONNRESET/i;
const RETRY_INITIAL_MS = 100;
const RETRY_MAX_MS = 1000;

/** etcd sends at most this many distinct revisions in one catch-up response (mvcc watchBatchMaxRevs). */
const WATCH_BATCH_MAX_REVS = 1000;

export class EtcdStore implements Store {
  readonly engine = 'etcd';
  private readonly client: Etcd3;
  private readonly watchers = new Set<Watcher>();
  /** The highest revision this process compacted at (etcd does not report it), for error messages. */
  private compactedAt = 0;
  private closed = false;
  private readonly requestTimeoutMs: number;
  private readonly expiring: {prefix: string; ttlSeconds: number}[];
  /** Shared leases for expiring keys (./lease-manager.ts). */
  readonly leases: LeaseManager;

  constructor(options: EtcdStoreOptions) {
    if (options.endpoints.length === 0) throw new Error('EtcdStore needs at least one endpoint');
    const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.requestTimeoutMs = requestTimeoutMs;
    const clientOptions: IOptions = {
      hosts: options.endpoints,
      dialTimeout: requestTimeoutMs,
      defaultCallOptions: (context) => (context.isStream ? {} : {deadline: Date.now() + requestTimeoutMs}),
      faultHandling: {
        // The default breaker keeps a host "open" 5s after 3 failures, which delays noticing a restarted
        // single etcd; 1s still spares a dead member of a cluster.
        host: () => circuitBreaker(handleWhen(isRecoverableError), {halfOpenAfter: 1000, breaker: new ConsecutiveBreaker(3)}),
        // With several endpoints a failed request is tried once on another one; with one there is
        // nowhere else to go, and the caller (the API) reports the failure rather than hiding it.
        global: options.endpoints.length > 1 ? retry(handleWhen(isRecoverableError), {maxAttempts: 1}) : noop,
      },
    };
    const credentials = tlsCredentials(options);
    if (credentials) clientOptions.credentials = credentials;
    this.client = new Etcd3(clientOptions);
    this.expiring = options.expiring?.prefixes ?? [];
    this.leases = new LeaseManager(
      async (ttl) => (await this.call(() => this.client.leaseClient.leaseGrant({TTL: ttl}), undefined, 'write')).ID,
      options.expiring?.leaseReuseDurationSeconds ?? 60,
    );
  }

  /** The lease `key` is written with, or undefined for keys that do not expire. */
  private async leaseOf(key: string): Promise<string | undefined> {
    const rule = this.expiring.find((e) => key.startsWith(e.prefix));
    return rule ? this.leases.leaseFor(rule.ttlSeconds) : undefined;
  }

  private put(key: string, value: string, lease: string | undefined) {
    const put = this.client.put(key).value(value);
    return lease === undefined ? put : put.lease(lease);
  }

  async get(key: string): Promise<KeyValue | undefined> {
    const response = await this.call(() => this.client.kv.range({key: Buffer.from(key)}), undefined, 'read');
    const kv = response.kvs[0];
    return kv && toKeyValue(kv);
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    const end = prefixEnd(prefix);
    const start = options.startAfter !== undefined && options.startAfter >= prefix ? keyAfter(options.startAfter) : prefix;
    const response = await this.call(
      () =>
        this.client.kv.range({
          key: Buffer.from(start),
          // "\0" as range_end means "every key from `key` on" in etcd.
          range_end: Buffer.from(end ?? '\u0000'),
          limit: options.limit && options.limit > 0 ? options.limit : 0,
          revision: options.revision ?? 0,
        }),
      options.revision,
      'read',
    );
    return {
      items: response.kvs.map(toKeyValue),
      revision: options.revision ?? Number(response.header.revision),
      more: response.more,
    };
  }

  async create(key: string, value: string): Promise<number> {
    const lease = await this.leaseOf(key);
    const response = await this.settle(key, (kv) => (kv?.value === value ? kv.modRevision : undefined), () => this.call(() =>
      this.client.if(key, 'Create', '==', 0).then(this.put(key, value, lease)).else(this.client.get(key)).commit(),
      undefined,
      'write',
    ));
    if (typeof response === 'number') return response;
    if (!response.succeeded) throw new StoreConflictError(key, modRevisionOf(response.responses[0]?.response_range?.kvs));
    return Number(response.header.revision);
  }

  async update(key: string, value: string, expectedModRevision: number): Promise<number> {
    const lease = await this.leaseOf(key);
    const response = await this.settle(key, (kv) => (kv && kv.modRevision !== expectedModRevision && kv.value === value ? kv.modRevision : undefined), () => this.call(() =>
      this.client
        .if(key, 'Mod', '==', expectedModRevision)
        .then(this.put(key, value, lease))
        .else(this.client.get(key))
        .commit(),
      undefined,
      'write',
    ));
    if (typeof response === 'number') return response;
    if (!response.succeeded) throw new StoreConflictError(key, modRevisionOf(response.responses[0]?.response_range?.kvs));
    return Number(response.header.revision);
  }

  async delete(key: string, expectedModRevision?: number): Promise<number | undefined> {
    if (expectedModRevision === undefined) {
      const response = await this.call(() => this.client.kv.deleteRange({key: Buffer.from(key)}), undefined, 'write');
      return Number(response.deleted) > 0 ? Number(response.header.revision) : undefined;
    }
    const response = await this.call(() =>
      this.client
        .if(key, 'Mod', '==', expectedModRevision)
        .then(this.client.delete().key(key))
        .else(this.client.get(key))
        .commit(),
      undefined,
      'write',
    );
    if (response.succeeded) {
      return Number(response.responses[0]?.response_delete_range?.deleted) > 0 ? Number(response.header.revision) : undefined;
    }
    const current = response.responses[0]?.response_range?.kvs ?? [];
    if (current.length === 0) return undefined;
    throw new StoreConflictError(key, modRevisionOf(current));
  }

  watch(
    prefix: string,
    afterRevision: number,
    onEvent: (event: StoreEvent) => void,
    onError: (error: Error) => void,
    onProgress?: (revision: number) => void,
  ): WatchHandle {
    const delivery = new WatchDelivery(onEvent, onError, onProgress, afterRevision);
    if (this.closed) {
      delivery.fail(new StoreUnavailableError('store closed'));
      return {close: () => delivery.close()};
    }
    const end = prefixEnd(prefix);
    const watcher = this.client
      .watch()
      .inRange({start: prefix, end: end ?? '\u0000'})
      .startRevision(String(afterRevision + 1))
      .withPreviousKV()
      .watcher();
    this.watchers.add(watcher);
    /** `cancel`: false when etcd already canceled it (cancelling again confuses the client library). */
    const stop = (cancel: boolean) => {
      this.watchers.delete(watcher);
      watcher.removeAllListeners();
      // Swallow the "cancel" errors of a dead connection: the watch is over either way.
      watcher.on('error', () => undefined);
      if (cancel) watcher.cancel().catch(() => undefined);
    };
    // The client would reconnect on its own, resuming from the header revision of the last response,
    // which can skip events after a large catch-up; ending the watch lets the caller resume from the
    // last event it really got.
    const fail = (error: Error, cancel: boolean) => {
      if (delivery.isClosed) return;
      stop(cancel);
      delivery.fail(error);
    };
    watcher.on('connected', () => delivery.progress(afterRevision));
    watcher.on('data', (response) => {
      const revisions = new Set<string>();
      for (const raw of response.events) {
        revisions.add(raw.kv.mod_revision);
        delivery.event(toEvent(raw.type, raw.kv, raw.prev_kv));
      }
      // Empty responses are progress notifications. A response with fewer than etcd's batch limit of
      // revisions carries everything up to its header revision; a full one may be followed by more.
      if (revisions.size < WATCH_BATCH_MAX_REVS) delivery.progress(Number(response.header.revision));
    });
    watcher.on('disconnected', (error: Error) => fail(new StoreUnavailableError(`kvstore watch lost: ${error.message}`), true));
    watcher.on('error', (error: Error) => {
      // etcd canceled the watch. It does so for a compacted start revision without saying why; a read
      // at that revision tells.
      stop(false);
      this.compactionError(prefix, afterRevision).then(
        (compacted) => fail(compacted ?? mapError(error), false),
        () => fail(mapError(error), false),
      );
    });
    return {
      close: () => {
        if (delivery.isClosed && !this.watchers.has(watcher)) return;
        delivery.close();
        stop(this.watchers.has(watcher));
      },
    };
  }

  async currentRevision(): Promise<number> {
    const response = await this.call(() => this.client.kv.range({key: Buffer.from('\u0000'), count_only: true}));
    return Number(response.header.revision);
  }

  async compact(revision: number): Promise<void> {
    try {
      await this.call(() => this.client.kv.compact({revision, physical: true}), revision);
      this.compactedAt = Math.max(this.compactedAt, revision);
    } catch (error) {
      if (error instanceof StoreCompactedError) return;
      throw error;
    }
  }

  /** etcd's own figure: the status call's dbSize (the backend file's allocated size). */
  async dbSizeBytes(): Promise<number> {
    const status = await this.client.maintenance.status({deadline: Date.now() + this.requestTimeoutMs});
    return Number(status.dbSize);
  }

  async ping(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreUnavailableError(`kvstore did not answer within ${timeoutMs}ms`)), timeoutMs);
    });
    try {
      // Upstream's health check also reads a fixed key ("health"); any answer, even "absent", is health.
      const request = this.client.kv.range({key: Buffer.from('health')}, {deadline: Date.now() + timeoutMs});
      await Promise.race([request, timeout]);
    } catch (error) {
      throw error instanceof StoreUnavailableError ? error : new StoreUnavailableError(`kvstore unreachable: ${String(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const watcher of [...this.watchers]) {
      watcher.removeAllListeners();
      watcher.on('error', () => undefined);
      await Promise.race([watcher.cancel().catch(() => undefined), new Promise((r) => setTimeout(r, 500))]);
    }
    this.watchers.clear();
    this.client.close();
  }

  /** StoreCompactedError when `afterRevision + 1` can no longer be read, else undefined. */
  private async compactionError(prefix: string, afterRevision: number): Promise<StoreCompactedError | undefined> {
    try {
      await this.client.kv.range({key: Buffer.from(prefix), revision: afterRevision + 1, count_only: true});
      return undefined;
    } catch (error) {
      return isCompacted(error) ? new StoreCompactedError(afterRevision, Math.max(this.compactedAt, afterRevision + 1)) : undefined;
    }
  }

  /**
   * Runs one request, turning etcd's errors into the store's. `revision` is the one asked for, if any.
   *
   * `read` and `write` requests (those of API requests) wait out a short outage, as upstream's etcd
   * client does (gRPC's WaitForReady within the request's deadline): while etcd cannot be reached
   * they are sent again with a backoff until requestTimeoutMs has passed, so a restart or a pause of
   * etcd makes writes slow, not failed. A write is sent again only when the error proves etcd never
   * got it; one lost in flight is reported (its outcome is unknown, as upstream reports it).
   * Probes (currentRevision, compaction) fail at once, for callers that back off on their own.
   */
  private async call<T>(request: () => Promise<T>, revision?: number, kind: 'read' | 'write' | 'probe' = 'probe'): Promise<T> {
    if (this.closed) throw new StoreUnavailableError('store closed');
    const deadline = Date.now() + this.requestTimeoutMs;
    for (let delay = RETRY_INITIAL_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
      try {
        return await request();
      } catch (error) {
        const text = String((error as Error)?.message ?? error);
        const again = kind === 'read' ? READ_RETRYABLE.test(text) : kind === 'write' && NOT_SENT.test(text);
        if (!again || this.closed || Date.now() + delay >= deadline) throw await this.storeError(error, revision);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /**
   * Runs a write; when it fails with its outcome unknown (the connection to etcd was lost after the
   * request was sent, or etcd answered `request timed out`), reads the key back once etcd answers
   * (within the request deadline) and lets `applied` decide from what is stored: the revision the
   * write got when it was applied, undefined when it was not. The stored values the API server
   * writes carry a uid and timestamps of their own request, so equal content means this write. A
   * client then learns the truth (acknowledged, or refused and not applied) instead of an error
   * that may hide an applied write. When even the read fails, the original error stands.
   */
  private async settle<T>(key: string, applied: (kv: KeyValue | undefined) => number | undefined, write: () => Promise<T>): Promise<T | number> {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || NOT_SENT.test(error.message) || this.closed) throw error;
      let stored: KeyValue | undefined;
      try {
        stored = await this.get(key);
      } catch {
        throw error;
      }
      const revision = applied(stored);
      if (revision !== undefined) return revision;
      throw new StoreUnavailableError(`${error.message}; the write was not applied`);
    }
  }

  private async storeError(error: unknown, revision?: number): Promise<Error> {
    if (revision !== undefined && isCompacted(error)) return new StoreCompactedError(revision, Math.max(this.compactedAt, revision));
    if (revision !== undefined && /future revision/.test(String(error))) {
      return new StoreFutureRevisionError(revision, await this.currentRevision().catch(() => 0));
    }
    return mapError(error);
  }
}

function tlsCredentials(options: EtcdStoreOptions): IOptions['credentials'] {
  if (!options.caFile && !options.certFile && !options.keyFile) return undefined;
  return {
    rootCertificate: options.caFile ? readFileSync(options.caFile) : Buffer.from(rootCertificates.join('\n')),
    ...(options.certFile ? {certChain: readFileSync(options.certFile)} : {}),
    ...(options.keyFile ? {privateKey: readFileSync(options.keyFile)} : {}),
  };
}

function isCompacted(error: unknown): boolean {
  return /required revision has been compacted/.test(String((error as Error)?.message ?? error));
}

/** Connection-level failures become StoreUnavailableError; anything else is a real error. */
function mapError(error: unknown): Error {
  if (error instanceof StoreUnavailableError || error instanceof StoreCompactedError) return error;
  const e = error instanceof Error ? error : new Error(String(error));
  if (isRecoverableError(e) || /UNAVAILABLE|DEADLINE_EXCEEDED|circuit breaker|closed/i.test(e.message)) {
    return new StoreUnavailableError(`kvstore unreachable: ${e.message}`);
  }
  return e;
}

function modRevisionOf(kvs: IKeyValue[] | undefined): number | undefined {
  const kv = kvs?.[0];
  return kv ? Number(kv.mod_revision) : undefined;
}

function toKeyValue(kv: IKeyValue): KeyValue {
  return {
    key: kv.key.toString(),
    value: kv.value.toString(),
    createRevision: Number(kv.create_revision),
    modRevision: Number(kv.mod_revision),
  };
}

function toEvent(type: string, kv: IKeyValue, prev: IKeyValue | undefined): StoreEvent {
  const revision = Number(kv.mod_revision);
  const event: StoreEvent =
    type === 'Delete'
      ? {type: 'DELETE', key: kv.key.toString(), revision, created: false}
      : {type: 'PUT', key: kv.key.toString(), value: kv.value.toString(), revision, created: kv.create_revision === kv.mod_revision};
  if (prev) event.prevValue = prev.value.toString();
  return event;
}
