/**
 * An in-memory Store for REST tests: the same contract as the SQLite and etcd engines (global
 * monotonic revisions, conditional writes, history replay on watch, compaction with
 * StoreCompactedError), without durability. Reads at an older revision are answered from the
 * kept history, as etcd's MVCC would.
 *
 * Also here: the REST API test harness (the handler on a loopback HTTP server over a MemoryStore),
 * shared by the rest-*.test.ts files.
 */
import {
  StoreCompactedError,
  StoreConflictError,
  StoreUnavailableError,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Store,
  type StoreEvent,
  type WatchHandle,
} from '../../src/daemons/apiserver/storage/store.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiHandler, type ApiHandler, type ApiHandlerOptions } from '../../src/daemons/apiserver/rest/handler.js';
import type { AuthorizationAttributes, AuthorizationDecision, Clock } from '../../src/daemons/apiserver/rest/types.js';
import { bootstrapNamespaces } from '../../src/daemons/apiserver/rest/bootstrap.js';

interface Watcher {
  prefix: string;
  onEvent: (event: StoreEvent) => void;
  closed: boolean;
}

export class MemoryStore implements Store {
  readonly engine = 'memory';
  private revision = 0;
  private compacted = 0;
  private readonly data = new Map<string, KeyValue>();
  /** Every event since the last compaction, in revision order. */
  private history: StoreEvent[] = [];
  /** Every version of every key since the last compaction (kv undefined: deleted), for reads in the past. */
  private readonly versions = new Map<string, { revision: number; kv?: KeyValue }[]>();
  private readonly watchers = new Set<Watcher>();
  /** Tests flip this to simulate an unreachable store. */
  down = false;

  private check(): void {
    if (this.down) throw new StoreUnavailableError('store is down');
  }

  async get(key: string): Promise<KeyValue | undefined> {
    this.check();
    const kv = this.data.get(key);
    return kv && { ...kv };
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    this.check();
    const at = options.revision && options.revision > 0 ? options.revision : this.revision;
    if (options.revision && options.revision > 0 && options.revision <= this.compacted) {
      throw new StoreCompactedError(options.revision, this.compacted);
    }
    const snapshot = at === this.revision ? this.data : this.snapshotAt(at);
    const keys = [...snapshot.keys()].filter((k) => k.startsWith(prefix) && (!options.startAfter || k > options.startAfter)).sort();
    const limit = options.limit && options.limit > 0 ? options.limit : keys.length;
    const page = keys.slice(0, limit);
    return { items: page.map((k) => ({ ...snapshot.get(k)! })), revision: at, more: keys.length > page.length };
  }

  /** The key space as it was at `revision`: for each key, its last version not newer than it. */
  private snapshotAt(revision: number): Map<string, KeyValue> {
    const state = new Map<string, KeyValue>();
    for (const [key, versions] of this.versions) {
      const version = versions.filter((v) => v.revision <= revision).at(-1);
      if (version?.kv) state.set(key, version.kv);
    }
    return state;
  }

  private emit(event: StoreEvent): void {
    this.history.push(event);
    const versions = this.versions.get(event.key) ?? [];
    const kv = this.data.get(event.key);
    versions.push({ revision: event.revision, kv: kv && { ...kv } });
    this.versions.set(event.key, versions);
    for (const watcher of this.watchers) {
      if (!watcher.closed && event.key.startsWith(watcher.prefix)) watcher.onEvent({ ...event });
    }
  }

  async create(key: string, value: string): Promise<number> {
    this.check();
    const existing = this.data.get(key);
    if (existing) throw new StoreConflictError(key, existing.modRevision);
    const revision = ++this.revision;
    this.data.set(key, { key, value, createRevision: revision, modRevision: revision });
    this.emit({ type: 'PUT', key, value, revision, created: true });
    return revision;
  }

  async update(key: string, value: string, expectedModRevision: number): Promise<number> {
    this.check();
    const existing = this.data.get(key);
    if (!existing || existing.modRevision !== expectedModRevision) throw new StoreConflictError(key, existing?.modRevision);
    const revision = ++this.revision;
    this.data.set(key, { key, value, createRevision: existing.createRevision, modRevision: revision });
    this.emit({ type: 'PUT', key, value, prevValue: existing.value, revision, created: false });
    return revision;
  }

  async delete(key: string, expectedModRevision?: number): Promise<number | undefined> {
    this.check();
    const existing = this.data.get(key);
    if (!existing) {
      if (expectedModRevision !== undefined) throw new StoreConflictError(key, undefined);
      return undefined;
    }
    if (expectedModRevision !== undefined && existing.modRevision !== expectedModRevision) {
      throw new StoreConflictError(key, existing.modRevision);
    }
    const revision = ++this.revision;
    this.data.delete(key);
    this.emit({ type: 'DELETE', key, prevValue: existing.value, revision, created: false });
    return revision;
  }

  watch(prefix: string, afterRevision: number, onEvent: (event: StoreEvent) => void, onError: (error: Error) => void): WatchHandle {
    const watcher: Watcher = { prefix, onEvent, closed: false };
    if (afterRevision < this.compacted) {
      // Deliver asynchronously, as a real engine would.
      queueMicrotask(() => !watcher.closed && onError(new StoreCompactedError(afterRevision, this.compacted)));
      return { close: () => void (watcher.closed = true) };
    }
    // Register at once so no live event is missed, but hold live events back until the stored
    // history after `afterRevision` has been delivered (asynchronously, as a real engine would).
    const backlog: StoreEvent[] = this.history.filter((e) => e.revision > afterRevision && e.key.startsWith(prefix)).map((e) => ({ ...e }));
    let replaying = true;
    const deliver = (event: StoreEvent) => {
      if (watcher.closed) return;
      if (replaying) backlog.push(event);
      else onEvent(event);
    };
    const registered: Watcher = { prefix, onEvent: deliver, closed: false };
    this.watchers.add(registered);
    queueMicrotask(() => {
      // Events written by onEvent itself land in the backlog too and keep their order.
      while (backlog.length && !watcher.closed) onEvent(backlog.shift()!);
      replaying = false;
    });
    return {
      close: () => {
        watcher.closed = true;
        this.watchers.delete(registered);
      },
    };
  }

  async currentRevision(): Promise<number> {
    this.check();
    return this.revision;
  }

  async compact(revision: number): Promise<void> {
    this.check();
    this.compacted = Math.max(this.compacted, revision);
    this.history = this.history.filter((e) => e.revision > this.compacted);
    for (const [key, versions] of this.versions) {
      // Keep the newest version at or before the compacted revision: reads after it still need it.
      const base = versions.filter((v) => v.revision <= this.compacted).at(-1);
      const kept = [...(base?.kv ? [base] : []), ...versions.filter((v) => v.revision > this.compacted)];
      if (kept.length) this.versions.set(key, kept);
      else this.versions.delete(key);
    }
  }

  async ping(): Promise<void> {
    this.check();
  }

  async close(): Promise<void> {
    for (const w of this.watchers) w.closed = true;
    this.watchers.clear();
  }

  /** Test helper: number of open watches. */
  get openWatches(): number {
    return this.watchers.size;
  }
}

// ---------------------------------------------------------------------------------------------
// A REST API harness for tests: the API handler over a MemoryStore on 127.0.0.1, real HTTP.


/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private time = Date.parse('2024-01-02T03:04:05Z')) {}
  now(): Date {
    return new Date(this.time);
  }
  advance(ms: number): void {
    this.time += ms;
  }
}

export interface TestApi {
  url: string;
  store: MemoryStore;
  handler: ApiHandler;
  clock: ManualClock;
  /** Authorization decisions the test can change; everything is allowed by default. */
  authorizer: { decide: (attributes: AuthorizationAttributes) => AuthorizationDecision; seen: AuthorizationAttributes[] };
  close(): Promise<void>;
}

export async function startTestApi(options: Partial<ApiHandlerOptions> & { bootstrap?: boolean } = {}): Promise<TestApi> {
  const store = options.store instanceof MemoryStore ? options.store : new MemoryStore();
  const clock = new ManualClock();
  const handler = createApiHandler({
    store,
    clock,
    version: {
      major: '1', minor: '32', gitVersion: 'v1.32.0-orch', gitCommit: 'abc', gitTreeState: 'clean', buildDate: '2024-01-01T00:00:00Z',
      goVersion: 'node', compiler: 'tsc', platform: 'linux/amd64',
    },
    serverAddresses: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1:6443' }],
    ...options,
  });
  await handler.whenSynced();
  if (options.bootstrap !== false) await bootstrapNamespaces(store, { clock });
  const authorizer: TestApi['authorizer'] = { decide: () => ({ allowed: true }), seen: [] };
  const server: Server = createServer((req, res) => {
    handler(req, res, {
      user: { name: 'tester', groups: ['system:masters'] },
      authorize: (attributes) => {
        authorizer.seen.push(attributes);
        return authorizer.decide(attributes);
      },
    }).then((handled) => {
      if (!handled) {
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end('404 page not found\n');
      }
    }, (error: Error) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    store,
    handler,
    clock,
    authorizer,
    async close() {
      handler.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (!(options.store instanceof MemoryStore)) await store.close();
    },
  };
}

export interface Reply {
  status: number;
  headers: Headers;
  /** The parsed JSON body (undefined when the body is not JSON). */
  body: any;
  text: string;
}

/** One HTTP request against a TestApi; `body` objects are sent as JSON unless `contentType` says otherwise. */
export async function call(
  api: TestApi,
  method: string,
  path: string,
  options: { body?: unknown; contentType?: string; accept?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.accept) headers.accept = options.accept;
  let payload: string | undefined;
  if (options.body !== undefined) {
    payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] = options.contentType ?? 'application/json';
  }
  const response = await fetch(api.url + path, { method, headers, body: payload });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}

/** Reads a watch stream line by line. */
export class WatchReader {
  private buffer = '';
  private readonly events: any[] = [];
  private waiters: (() => void)[] = [];
  ended = false;

  static async open(api: TestApi, path: string, headers: Record<string, string> = {}): Promise<{ status: number; reader: WatchReader; controller: AbortController }> {
    const controller = new AbortController();
    const response = await fetch(api.url + path, { signal: controller.signal, headers });
    const reader = new WatchReader();
    void reader.pump(response.body!, controller);
    return { status: response.status, reader, controller };
  }

  private async pump(stream: ReadableStream<Uint8Array>, controller: AbortController): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
        this.buffer += decoder.decode(chunk, { stream: true });
        let newline;
        while ((newline = this.buffer.indexOf('\n')) >= 0) {
          const line = this.buffer.slice(0, newline);
          this.buffer = this.buffer.slice(newline + 1);
          if (line.trim()) this.events.push(JSON.parse(line));
        }
        this.wake();
      }
    } catch {
      // aborted
    }
    this.ended = true;
    this.wake();
    void controller;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits until `count` events arrived (or the stream ended, or the timeout passed) and returns them all. */
  async take(count: number, timeoutMs = 2000): Promise<any[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < count && !this.ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return [...this.events];
  }

  /** Waits for the stream to end. */
  async end(timeoutMs = 3000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return this.ended;
  }
}
