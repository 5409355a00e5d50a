/**
 * The shapes the informer machinery works with: API objects (only their metadata matters here),
 * list/watch options and results, watch events, and the ListWatcher a reflector pulls from.
 * Any client can provide a ListWatcher; fetch-list-watcher.ts and client-list-watcher.ts are two.
 */

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** What the machinery needs of an object: its metadata. Typed objects (Pod, Node...) satisfy it. */
export interface ApiObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** An object of any kind, as decoded from JSON. */
export type Unstructured = ApiObject & { [field: string]: unknown };

export interface ListOptions {
  /** Unset: a consistent read; `0`: any version (may come from a cache); `N`: not older than N. */
  resourceVersion?: string;
  /** Page size; 0 or unset lists everything at once. */
  limit?: number;
  /** The token of the previous page (the server pins the resourceVersion of the first page). */
  continue?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface ListResult<T> {
  items: T[];
  /** The list's resourceVersion: a watch from it sees every change after the list. */
  resourceVersion: string;
  /** Set when more pages remain. */
  continue?: string;
}

export interface WatchOptions {
  /** Events strictly after this version are sent. */
  resourceVersion: string;
  allowWatchBookmarks: boolean;
  /** The server ends the stream cleanly after this many seconds. */
  timeoutSeconds: number;
  labelSelector?: string;
  fieldSelector?: string;
}

/** The `Status` object of an API failure (api-conventions §5), as an ERROR event carries it. */
export interface StatusObject {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes?: { reason?: string; message?: string; field?: string }[]; [field: string]: unknown };
}

export type WatchEvent<T> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T }
  | { type: 'ERROR'; object: StatusObject };

export interface WatchHandle {
  /** Stops the stream; `onEnd` is not called after this. */
  close(): void;
}

export interface ListWatcher<T = Unstructured> {
  list(options: ListOptions): Promise<ListResult<T>>;
  /**
   * Opens a watch. `onEvent` receives each event in order. `onEnd` is called once when the stream
   * ends by itself: with no argument when the server closed it cleanly (timeout, shutdown, dropped
   * connection), with the error when the request failed (an HTTP 410 rejects as a StatusError with
   * code 410) or the stream could not be read. It is never called after `close()`.
   */
  watch(options: WatchOptions, onEvent: (event: WatchEvent<T>) => void, onEnd: (error?: unknown) => void): WatchHandle;
}
