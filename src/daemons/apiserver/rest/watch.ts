/**
 * Watch streams: newline-delimited JSON events (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) from
 * the store's watch, filtered by label and field selectors the way upstream's cacher does (an
 * object leaving the selector is DELETED, one entering it ADDED), with the initial state for
 * resourceVersion unset/0 or sendInitialEvents, bookmarks and a timeout.
 */
import { names } from '../../../api/names.js';
import { failureStatus, internalError } from '../../../api/status.js';
import { toTable } from '../../../api/table.js';
import type { JsonObject } from '../../../patch/types.js';
import { StoreCompactedError, type StoreEvent, type WatchHandle } from '../storage/store.js';
import type { ListParams } from './list-options.js';
import type { Representation } from './negotiation.js';
import type { RegistryStore } from './registry-store.js';
import type { ApiResponse, Clock } from './types.js';
import { DEFAULT_MAX_QUEUED_BYTES, WatchSender } from './watch-sender.js';
import { decodedEvent, sharedEventLine, type DecodedEvent } from './watch-event-cache.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  type: WatchEventType;
  object: JsonObject;
}

/**
 * Maps one store event to the watch event a client with these selectors sees, if any. Pure.
 * Upstream's cache_watcher: in->in MODIFIED, out->in ADDED, in->out DELETED (old content, new resourceVersion).
 */
export function translateEvent(registry: RegistryStore, params: ListParams, event: StoreEvent, decoded: DecodedEvent = decodeOwn(registry, event)): WatchEvent | undefined {
  const matches = (o: JsonObject | undefined) => o !== undefined && registry.matches(o, params.labelSelector, params.fieldSelector);
  const previous = decoded.previous;
  if (event.type === 'DELETE') return matches(previous) ? { type: 'DELETED', object: previous! } : undefined;
  const current = decoded.current!;
  const now = matches(current);
  const before = !event.created && matches(previous);
  if (now && before) return { type: 'MODIFIED', object: current };
  if (now) return { type: 'ADDED', object: current };
  if (before) return { type: 'DELETED', object: previous! };
  return undefined;
}

/** The event's objects decoded for this watch alone (objects it may change). */
function decodeOwn(registry: RegistryStore, event: StoreEvent): DecodedEvent {
  return {
    current: event.value !== undefined ? registry.decode(event.value, event.revision) : undefined,
    previous: event.prevValue !== undefined ? registry.decode(event.prevValue, event.revision) : undefined,
  };
}

export interface WatchRequest {
  registry: RegistryStore;
  namespace: string;
  params: ListParams;
  representation: Representation;
  res: ApiResponse;
  clock: Clock;
  /** How often to send bookmarks when the client allows them. */
  bookmarkIntervalMs: number;
  /** Seconds until the server ends a watch that gave no timeoutSeconds. */
  defaultTimeoutSeconds: () => number;
  /** Called once when the stream ends, for whatever reason. */
  onEnd: () => void;
  /** Bytes of events allowed to wait for a slow client before the watch is ended (default 4 MiB). */
  maxQueuedBytes?: number;
}

export interface ActiveWatch {
  /** Ends the stream cleanly (shutdown). */
  close(): void;
  /** Resolves when the stream has ended. */
  done: Promise<void>;
  ended(): boolean;
}

/** The annotation that marks the end of the initial events of a streaming list (client-go reads this name). */

export async function serveWatch(request: WatchRequest): Promise<ActiveWatch> {
  const { registry, params, res } = request;
  const prefix = registry.collectionPrefix(request.namespace);

  // The starting point: the state at a revision (resourceVersion unset or 0, or a streaming list), or events after N.
  let initial: JsonObject[] = [];
  let startRevision: number;
  const sendInitial = params.sendInitialEvents ?? (params.resourceVersion === undefined || params.resourceVersion === '0');
  if (sendInitial) {
    const listed = await registry.list(request.namespace, { ...params, limit: 0, continueToken: undefined, resourceVersionMatch: undefined });
    initial = listed.items;
    startRevision = Number(listed.resourceVersion);
  } else {
    startRevision = Number(params.resourceVersion ?? 0);
  }

  // Watch streams are plain `application/json` even when the events carry Tables (upstream).
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  (res as { flushHeaders?: () => void }).flushHeaders?.();

  let ended = false;
  let handle: WatchHandle | undefined;
  let lastRevision = startRevision;
  let tableColumnsSent = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));

  const render = (event: WatchEvent): WatchEvent => {
    if (request.representation.kind !== 'table' || event.type === 'ERROR' || event.type === 'BOOKMARK') return event;
    const options = {
      apiVersion: `${request.representation.group}/${request.representation.version}`,
      includeObject: request.representation.includeObject,
      now: request.clock.now(),
      omitColumns: tableColumnsSent,
    };
    const table = registry.hooks ? registry.hooks.table([event.object], {}, options) : toTable(registry.info.kind, [event.object], {}, options);
    tableColumnsSent = true;
    return { type: event.type, object: table };
  };
  // Events go out in order and only as fast as the client reads (see watch-sender.ts); a client
  // that falls too far behind has its watch ended, and watches again from its last resourceVersion.
  const sender = new WatchSender(res as unknown as ConstructorParameters<typeof WatchSender>[0], {
    maxQueuedBytes: request.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES,
    onOverflow: () => end(),
  });
  const send = (event: WatchEvent, bytes = 0) => {
    if (!ended) sender.send(() => JSON.stringify(render(event)) + '\n', bytes);
  };
  // Live events go to every watch of the collection: as JSON objects served as stored, they are
  // decoded and serialized once for all of them (watch-event-cache.ts).
  const shares = request.representation.kind !== 'table' && !registry.convertsOnRead();
  const sendShared = (event: WatchEvent, bytes: number) => {
    if (!ended) sender.send(() => sharedEventLine(event.type, event.object), bytes);
  };
  const end = () => {
    if (ended) return;
    ended = true;
    handle?.close();
    clearInterval(bookmarkTimer);
    clearTimeout(timeoutTimer);
    sender.end();
    request.onEnd();
    resolveDone();
  };
  const bookmark = (annotations?: Record<string, string>) => {
    const metadata: JsonObject = { resourceVersion: String(lastRevision) };
    if (annotations) metadata.annotations = annotations;
    send({ type: 'BOOKMARK', object: { kind: registry.info.kind, apiVersion: registry.apiVersion, metadata } });
  };

  for (const object of initial) send({ type: 'ADDED', object });
  if (params.sendInitialEvents) bookmark({ [names().annotations.initialEventsEnd]: 'true' });

  const bookmarkTimer = params.allowWatchBookmarks ? setInterval(() => bookmark(), request.bookmarkIntervalMs) : undefined;
  const timeoutSeconds = params.timeoutSeconds !== undefined && params.timeoutSeconds > 0 ? params.timeoutSeconds : request.defaultTimeoutSeconds();
  const timeoutTimer = setTimeout(end, timeoutSeconds * 1000);
  // Open watches must not keep a stopping process alive.
  timeoutTimer.unref?.();
  bookmarkTimer?.unref?.();
  res.on('close', end);

  // History the client asked for (a resourceVersion in the past) is replayed as the client reads
  // and does not count against the bound for a client falling behind, which is about live events:
  // upstream's cacheWatcher sends its initial interval straight to the client, and only live events
  // waiting in its buffer end a slow watcher. Counting the replay ended every re-watch of a client
  // that had fallen behind once (its catch-up alone passed the bound), so it never caught up. The
  // store's first progress mark gives the revision the replay goes to (the cache and SQLite send
  // it after the replay; a raw etcd watch before it, so there the replay counts as live).
  let replayedUntil: number | undefined;
  const counts = (revision: number) => replayedUntil !== undefined && revision > replayedUntil;
  // Objects a conversion webhook must convert are sent in order, each once converted.
  let converting = Promise.resolve();
  handle = request.registry.watchStore(prefix, startRevision, (event) => {
    lastRevision = Math.max(lastRevision, event.revision);
    const translated = translateEvent(registry, params, event, shares ? decodedEvent(event, registry) : undefined);
    if (!translated) return;
    // What waits for a slow client counts against its bound at about the stored size.
    const bytes = counts(event.revision) ? (event.value ?? event.prevValue ?? '').length : 0;
    if (shares) return sendShared(translated, bytes);
    if (!registry.convertsOnRead()) return send(translated, bytes);
    converting = converting.then(async () => {
      try {
        const [object] = await registry.served([translated.object]);
        send({ type: translated.type, object: object! }, bytes);
      } catch (error) {
        send({ type: 'ERROR', object: (error as { status?: unknown }).status as JsonObject ?? internalError(error).status as unknown as JsonObject });
        end();
      }
    });
  }, (error) => {
    const status = error instanceof StoreCompactedError
      ? failureStatus(410, 'Expired', `too old resource version: ${startRevision} (${error.compacted + 1})`)
      : internalError(error).status;
    send({ type: 'ERROR', object: status as unknown as JsonObject });
    end();
  }, (revision) => {
    replayedUntil ??= revision;
  });
  if (ended) handle.close();
  return { close: end, done, ended: () => ended };
}
