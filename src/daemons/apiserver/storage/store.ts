/**
 * The store interface of the API server: one contract, two engines (SQLite embedded, etcd v3
 * distributed). Keys are full paths under the kvstore prefix (`/registry/pods/default/web`);
 * values are the JSON text of objects. Revisions are global and monotonic, as in etcd: every
 * write gets the next revision, and an object's resourceVersion is the revision of its last write.
 * A write resolves only after it is durable.
 */

export interface KeyValue {
  key: string;
  value: string;
  /** Revision of the write that created the key. */
  createRevision: number;
  /** Revision of the last write to the key. */
  modRevision: number;
}

export type WatchEventType = 'PUT' | 'DELETE';

export interface StoreEvent {
  type: WatchEventType;
  key: string;
  /** The value after the event (for DELETE, undefined). */
  value?: string;
  /** The value before the event, when there was one. */
  prevValue?: string;
  /** The revision of this event. */
  revision: number;
  /** For PUT, whether the key was created by this event. */
  created: boolean;
}

export interface ListResult {
  items: KeyValue[];
  /** The store revision at which the list was read. */
  revision: number;
  /** More keys remain after the last one returned (when a limit was given). */
  more: boolean;
}

export interface ListOptions {
  /** Return at most this many keys (0 or undefined: all). */
  limit?: number;
  /** Start after this key (exclusive), for paging. */
  startAfter?: string;
  /** Read at this revision instead of the latest (must not be compacted, nor in the future). */
  revision?: number;
  /**
   * "Not older than" reads (resourceVersion=N on a list): the result must reflect at least this
   * revision. Engines always read the latest, so they ignore it; the watch cache waits for it (bounded)
   * and falls back to the engine. A result whose revision is still lower means N is in the future
   * (the API answers 504 ResourceVersionTooLarge).
   */
  minRevision?: number;
}

/** Thrown by conditional writes whose condition failed (the key changed or exists). */
export class StoreConflictError extends Error {
  constructor(
    readonly key: string,
    readonly currentRevision: number | undefined,
  ) {
    super(`conflict on ${key}`);
  }
}

/** Thrown when asking for a revision older than the compacted one (the API turns it into 410 Gone). */
export class StoreCompactedError extends Error {
  constructor(
    readonly requested: number,
    readonly compacted: number,
  ) {
    super(`required revision ${requested} has been compacted (oldest available ${compacted + 1})`);
  }
}

/** Thrown when asking to read or compact at a revision the store has not reached yet. */
export class StoreFutureRevisionError extends Error {
  constructor(
    readonly requested: number,
    readonly current: number,
  ) {
    super(`required revision ${requested} is a future revision (current ${current})`);
  }
}

/** Thrown when the store cannot be reached (the API turns it into 500/503 and readyz fails). */
export class StoreUnavailableError extends Error {}

export interface WatchHandle {
  /** Stops the watch; the events iterator ends. */
  close(): void;
}

export interface Store {
  /** `sqlite` or `etcd`, for the dashboard and logs. */
  readonly engine: string;
  get(key: string): Promise<KeyValue | undefined>;
  list(prefix: string, options?: ListOptions): Promise<ListResult>;
  /** Creates the key; StoreConflictError if it exists. Returns the new revision. */
  create(key: string, value: string): Promise<number>;
  /**
   * Replaces the key's value if its modRevision equals `expectedModRevision`
   * (StoreConflictError otherwise, including when the key is gone). Returns the new revision.
   */
  update(key: string, value: string, expectedModRevision: number): Promise<number>;
  /**
   * Deletes the key, if `expectedModRevision` is given only when it matches.
   * Returns the revision of the delete, or undefined if the key did not exist.
   */
  delete(key: string, expectedModRevision?: number): Promise<number | undefined>;
  /**
   * Streams every event on keys under `prefix` with a revision greater than `afterRevision`,
   * in revision order, first the stored history, then live. StoreCompactedError (through onError)
   * when `afterRevision` is older than the compacted revision. The watch ends after the first error
   * (StoreUnavailableError when the connection drops): the caller re-watches from the last revision
   * it saw. Callbacks are never called synchronously from inside `watch()`.
   *
   * `onProgress(revision)`, when given, means "the watch is established and every event up to
   * `revision` has been delivered" (it is called once the watch is set up, after the replay, and as
   * the store moves on, also when no key under `prefix` changed). The watch cache uses it to know how
   * fresh it is; the REST layer uses it for BOOKMARK events.
   */
  watch(
    prefix: string,
    afterRevision: number,
    onEvent: (event: StoreEvent) => void,
    onError: (error: Error) => void,
    onProgress?: (revision: number) => void,
  ): WatchHandle;
  /** The latest revision. */
  currentRevision(): Promise<number>;
  /**
   * Drops history before `revision`: afterwards, reads at `revision` or later and watches with
   * `afterRevision >= revision` still work, older ones fail with StoreCompactedError. Compacting at or
   * below the already compacted revision does nothing; a future revision is StoreFutureRevisionError.
   */
  compact(revision: number): Promise<void>;
  /** Resolves when the store answers, rejects (StoreUnavailableError) otherwise; used by the kvstore health check. */
  ping(timeoutMs: number): Promise<void>;
  /**
   * Why writes fail now (e.g. `database or disk is full`), with when they started to, while reads
   * may still work; undefined when the last write went through. Engines that cannot tell leave it out.
   */
  writeFailure?(): WriteFailure | undefined;
  /** Tries a small write of the store's own, to learn whether writes work again (clears writeFailure when they do). */
  probeWrite?(): Promise<void>;
  /** The database's allocated size in bytes (apiserver_storage_size_bytes); engines that cannot tell leave it out. */
  dbSizeBytes?(): Promise<number>;
  close(): Promise<void>;
}

export interface WriteFailure {
  message: string;
  /** Epoch ms of the first failed write of this run of failures. */
  since: number;
}
