import Database from 'better-sqlite3';
import {mkdirSync} from 'node:fs';
import {dirname} from 'node:path';
import {lowerBound, prefixEnd, rangeStart} from './keys.js';
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
  type WriteFailure,
} from './store.js';
import {WatchDelivery} from './watch-delivery.js';

/**
 * The embedded engine: one SQLite file (WAL, synchronous=FULL, so a committed transaction survives a
 * crash or power loss). Tables:
 * - `kv`: the current keys, with the revisions etcd keeps (create, last modification);
 * - `log`: one row per revision (the event log that watches replay and older reads go through), with
 *   the previous version of the key so a read at an older revision can be rebuilt from the rows after it;
 * - `meta`: the current and the compacted revision.
 *
 * Writes queue up and are applied together in one transaction per event-loop turn (group commit: one
 * fsync for many concurrent writers); each write still gets its own revision and its own condition check,
 * in arrival order, and its promise resolves only after that transaction is durable.
 */

export interface SqliteStoreOptions {
  /** The database file; its directory is created if missing. */
  path: string;
  /** Most writes per transaction. */
  maxBatch?: number;
}

interface KvRow {
  key: string;
  value: string;
  create_rev: number;
  mod_rev: number;
}

interface LogRow {
  rev: number;
  key: string;
  type: 'PUT' | 'DELETE';
  value: string | null;
  prev_value: string | null;
  created: number;
  prev_create_rev: number | null;
  prev_mod_rev: number | null;
}

type WriteOp =
  | {kind: 'create'; key: string; value: string}
  | {kind: 'update'; key: string; value: string; expected: number}
  | {kind: 'delete'; key: string; expected?: number};

interface PendingWrite {
  op: WriteOp;
  resolve: (revision: number | undefined) => void;
  reject: (error: Error) => void;
}

type WriteOutcome = {revision: number | undefined; event?: StoreEvent} | {error: Error};

interface SqliteWatcher {
  prefix: string;
  delivery: WatchDelivery;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS kv (
  key TEXT PRIMARY KEY, value TEXT NOT NULL, create_rev INTEGER NOT NULL, mod_rev INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log (
  rev INTEGER PRIMARY KEY, key TEXT NOT NULL, type TEXT NOT NULL, value TEXT, prev_value TEXT,
  created INTEGER NOT NULL, prev_create_rev INTEGER, prev_mod_rev INTEGER
);
CREATE INDEX IF NOT EXISTS log_key_rev ON log (key, rev);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS write_probe (id INTEGER PRIMARY KEY, data BLOB);
INSERT OR IGNORE INTO meta (name, value) VALUES ('revision', 1), ('compacted', 0);
`;

/** The most a write probe writes (a little over the API server's 3 MiB body limit). */
const MAX_PROBE_BYTES = 4 * 1024 * 1024;

/** SQLite has no upper bound for "every key": a string above any key the API server writes. */
const NO_END = '\uffff';

export class SqliteStore implements Store {
  readonly engine = 'sqlite';
  private readonly db: Database.Database;
  private readonly maxBatch: number;
  private revision: number;
  private compacted: number;
  private pending: PendingWrite[] = [];
  private flushScheduled = false;
  private readonly watchers = new Set<SqliteWatcher>();
  private closed = false;
  private failing: WriteFailure | undefined;
  /** How much the failed writes wrote: a probe must write as much to tell that they would work now. */
  private failedBytes = 0;
  private readonly sql;

  constructor(options: SqliteStoreOptions) {
    mkdirSync(dirname(options.path), {recursive: true});
    this.maxBatch = options.maxBatch ?? 512;
    this.db = new Database(options.path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec(SCHEMA);
    const db = this.db;
    this.sql = {
      get: db.prepare<[string], KvRow>('SELECT key, value, create_rev, mod_rev FROM kv WHERE key = ?'),
      range: db.prepare<[string, string], KvRow>(
        'SELECT key, value, create_rev, mod_rev FROM kv WHERE key >= ? AND key < ? ORDER BY key',
      ),
      insertKv: db.prepare('INSERT INTO kv (key, value, create_rev, mod_rev) VALUES (?, ?, ?, ?)'),
      updateKv: db.prepare('UPDATE kv SET value = ?, mod_rev = ? WHERE key = ?'),
      deleteKv: db.prepare('DELETE FROM kv WHERE key = ?'),
      insertLog: db.prepare(
        'INSERT INTO log (rev, key, type, value, prev_value, created, prev_create_rev, prev_mod_rev) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      logAfter: db.prepare<[number, string, string], LogRow>(
        'SELECT * FROM log WHERE rev > ? AND key >= ? AND key < ? ORDER BY rev',
      ),
      // The first change after a revision, per key: its "previous" columns are the key at that revision.
      firstChangesAfter: db.prepare<[number, string, string], LogRow>(
        `SELECT log.* FROM log JOIN (
           SELECT key AS k, MIN(rev) AS first FROM log WHERE rev > ? AND key >= ? AND key < ? GROUP BY key
         ) ON log.rev = first ORDER BY log.key`,
      ),
      setMeta: db.prepare('UPDATE meta SET value = ? WHERE name = ?'),
      getMeta: db.prepare<[string], {value: number}>('SELECT value FROM meta WHERE name = ?'),
      deleteLogUpTo: db.prepare('DELETE FROM log WHERE rev <= ?'),
      ping: db.prepare('SELECT 1'),
    };
    this.revision = this.sql.getMeta.get('revision')!.value;
    this.compacted = this.sql.getMeta.get('compacted')!.value;
  }

  async get(key: string): Promise<KeyValue | undefined> {
    this.assertOpen();
    const row = this.sql.get.get(key);
    return row && toKeyValue(row);
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    this.assertOpen();
    const at = options.revision ?? this.revision;
    if (at > this.revision) throw new StoreFutureRevisionError(at, this.revision);
    if (at < this.compacted) throw new StoreCompactedError(at, this.compacted);
    const start = rangeStart(prefix, options.startAfter);
    const end = prefixEnd(prefix) ?? NO_END;
    const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
    const rows = at === this.revision ? this.sql.range.iterate(start, end) : this.rowsAt(at, start, end);
    const items: KeyValue[] = [];
    let more = false;
    for (const row of rows) {
      if (items.length === limit) {
        more = true;
        break;
      }
      items.push(toKeyValue(row));
    }
    return {items, revision: at, more};
  }

  async create(key: string, value: string): Promise<number> {
    return (await this.enqueue({kind: 'create', key, value}))!;
  }

  async update(key: string, value: string, expectedModRevision: number): Promise<number> {
    return (await this.enqueue({kind: 'update', key, value, expected: expectedModRevision}))!;
  }

  delete(key: string, expectedModRevision?: number): Promise<number | undefined> {
    return this.enqueue({kind: 'delete', key, expected: expectedModRevision});
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
    if (afterRevision < this.compacted) {
      delivery.fail(new StoreCompactedError(afterRevision, this.compacted));
      return {close: () => delivery.close()};
    }
    // Replay and registration happen in the same synchronous step: no commit can fall between them.
    for (const row of this.sql.logAfter.iterate(afterRevision, prefix, prefixEnd(prefix) ?? NO_END)) {
      delivery.event(toEvent(row));
    }
    delivery.progress(this.revision);
    const watcher = {prefix, delivery};
    this.watchers.add(watcher);
    return {
      close: () => {
        delivery.close();
        this.watchers.delete(watcher);
      },
    };
  }

  async currentRevision(): Promise<number> {
    this.assertOpen();
    return this.revision;
  }

  async compact(revision: number): Promise<void> {
    this.assertOpen();
    if (revision > this.revision) throw new StoreFutureRevisionError(revision, this.revision);
    if (revision <= this.compacted) return;
    this.db.transaction(() => {
      this.sql.deleteLogUpTo.run(revision);
      this.sql.setMeta.run(revision, 'compacted');
    })();
    this.compacted = revision;
  }

  async ping(_timeoutMs: number): Promise<void> {
    // better-sqlite3 is synchronous and local: the query either answers at once or throws.
    try {
      this.assertOpen();
      this.sql.ping.get();
    } catch (error) {
      throw error instanceof StoreUnavailableError ? error : new StoreUnavailableError(String(error));
    }
  }

  writeFailure(): WriteFailure | undefined {
    return this.failing;
  }

  /** The allocated size of the database: its pages (free ones included, as etcd's dbSize). */
  async dbSizeBytes(): Promise<number> {
    this.assertOpen();
    return (this.db.pragma('page_count', {simple: true}) as number) * (this.db.pragma('page_size', {simple: true}) as number);
  }

  async probeWrite(): Promise<void> {
    this.assertOpen();
    try {
      // A row of the store's own (not a key, no revision) as large as the writes that failed: a
      // small write may fit in free pages while a client's large one still does not. Deleted at once.
      this.db.prepare('INSERT OR REPLACE INTO write_probe (id, data) VALUES (1, zeroblob(?))').run(Math.max(4096, this.failedBytes));
      this.db.prepare('DELETE FROM write_probe').run();
      this.failing = undefined;
      this.failedBytes = 0;
    } catch (error) {
      this.failing ??= {message: (error as Error).message ?? String(error), since: Date.now()};
      throw new StoreUnavailableError(`sqlite write failed: ${String(error)}`);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    for (const watcher of this.watchers) watcher.delivery.fail(new StoreUnavailableError('store closed'));
    this.watchers.clear();
    this.db.close();
  }

  /** The keys in [start, end) as they were at `revision`, in key order, rebuilt from the log after it. */
  private *rowsAt(revision: number, start: string, end: string): Generator<KvRow> {
    const changed = this.sql.firstChangesAfter.all(revision, start, end);
    const changedKeys = changed.map((row) => row.key);
    // Keys changed after `revision` take their previous version from the log; the others are unchanged.
    const past: KvRow[] = [];
    for (const row of changed) {
      if (row.prev_value !== null) {
        past.push({key: row.key, value: row.prev_value, create_rev: row.prev_create_rev!, mod_rev: row.prev_mod_rev!});
      }
    }
    let p = 0;
    for (const row of this.sql.range.iterate(start, end)) {
      while (p < past.length && past[p]!.key < row.key) yield past[p++]!;
      const i = lowerBound(changedKeys, row.key);
      if (changedKeys[i] === row.key) continue;
      yield row;
    }
    while (p < past.length) yield past[p++]!;
  }

  private enqueue(op: WriteOp): Promise<number | undefined> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('store closed'));
    return new Promise((resolve, reject) => {
      this.pending.push({op, resolve, reject});
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Applies the queued writes in transactions of at most maxBatch, then tells watchers and writers. */
  private flush(): void {
    this.flushScheduled = false;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      let outcomes: WriteOutcome[];
      let revision = this.revision;
      try {
        outcomes = this.db.transaction(() => {
          const results = batch.map(({op}) => this.apply(op, () => ++revision));
          if (revision !== this.revision) this.sql.setMeta.run(revision, 'revision');
          return results;
        })();
      } catch (error) {
        // A full disk (SQLITE_FULL) or an I/O error: nothing of the batch was applied (the
        // transaction rolled back), so every writer is told so; reads go on from what is stored.
        this.failing ??= {message: (error as Error).message ?? String(error), since: Date.now()};
        const bytes = batch.reduce((n, {op}) => n + ('value' in op ? op.value.length : 0), 0);
        this.failedBytes = Math.min(MAX_PROBE_BYTES, Math.max(this.failedBytes, bytes));
        const failure = new StoreUnavailableError(`sqlite write failed: ${String(error)}`);
        for (const write of batch) write.reject(failure);
        continue;
      }
      this.failing = undefined;
      this.failedBytes = 0;
      this.revision = revision;
      const events = outcomes.flatMap((o) => ('event' in o && o.event ? [o.event] : []));
      // Watchers first: their deliveries are queued before the writers' continuations run, so a
      // watch cache has seen a write by the time its writer resumes.
      this.notify(events);
      batch.forEach((write, i) => {
        const outcome = outcomes[i]!;
        if ('error' in outcome) write.reject(outcome.error);
        else write.resolve(outcome.revision);
      });
    }
  }

  /** One write inside the batch transaction; a failed condition is an outcome, not an exception. */
  private apply(op: WriteOp, nextRevision: () => number): WriteOutcome {
    const current = this.sql.get.get(op.key);
    switch (op.kind) {
      case 'create': {
        if (current) return {error: new StoreConflictError(op.key, current.mod_rev)};
        const rev = nextRevision();
        this.sql.insertKv.run(op.key, op.value, rev, rev);
        this.sql.insertLog.run(rev, op.key, 'PUT', op.value, null, 1, null, null);
        return {revision: rev, event: {type: 'PUT', key: op.key, value: op.value, revision: rev, created: true}};
      }
      case 'update': {
        if (!current || current.mod_rev !== op.expected) return {error: new StoreConflictError(op.key, current?.mod_rev)};
        const rev = nextRevision();
        this.sql.updateKv.run(op.value, rev, op.key);
        this.sql.insertLog.run(rev, op.key, 'PUT', op.value, current.value, 0, current.create_rev, current.mod_rev);
        return {
          revision: rev,
          event: {type: 'PUT', key: op.key, value: op.value, prevValue: current.value, revision: rev, created: false},
        };
      }
      case 'delete': {
        if (!current) return {revision: undefined};
        if (op.expected !== undefined && current.mod_rev !== op.expected) {
          return {error: new StoreConflictError(op.key, current.mod_rev)};
        }
        const rev = nextRevision();
        this.sql.deleteKv.run(op.key);
        this.sql.insertLog.run(rev, op.key, 'DELETE', null, current.value, 0, current.create_rev, current.mod_rev);
        return {revision: rev, event: {type: 'DELETE', key: op.key, prevValue: current.value, revision: rev, created: false}};
      }
    }
  }

  private notify(events: StoreEvent[]): void {
    for (const watcher of this.watchers) {
      for (const event of events) if (event.key.startsWith(watcher.prefix)) watcher.delivery.event(event);
      watcher.delivery.progress(this.revision);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreUnavailableError('store closed');
  }
}

function toKeyValue(row: KvRow): KeyValue {
  return {key: row.key, value: row.value, createRevision: row.create_rev, modRevision: row.mod_rev};
}

function toEvent(row: LogRow): StoreEvent {
  const event: StoreEvent = {type: row.type, key: row.key, revision: row.rev, created: row.created === 1};
  if (row.value !== null) event.value = row.value;
  if (row.prev_value !== null) event.prevValue = row.prev_value;
  return event;
}
