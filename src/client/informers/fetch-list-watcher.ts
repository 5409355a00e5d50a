/**
 * A ListWatcher over HTTP with any `fetch`: the Kubernetes list and watch query parameters, error
 * responses as StatusError, and the watch body read as newline-delimited JSON as it streams in.
 * Usable against any API server URL the fetch can reach (tests use plain HTTP on loopback).
 */
import { StatusError } from './errors.js';
import { LineSplitter } from './ndjson.js';
import type { ListOptions, ListResult, ListWatcher, StatusObject, Unstructured, WatchEvent, WatchOptions } from './types.js';

export interface FetchListWatcherOptions {
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Sent with every request (authorization, user agent...). */
  headers?: Record<string, string>;
}

/** The query string of a list request. Pure. */
export function listQuery(options: ListOptions): URLSearchParams {
  const query = new URLSearchParams();
  // '' (a consistent read of the latest state) is omitted, as client-go's omitempty does.
  if (options.resourceVersion) query.set('resourceVersion', options.resourceVersion);
  if (options.limit) query.set('limit', String(options.limit));
  if (options.continue) query.set('continue', options.continue);
  if (options.labelSelector) query.set('labelSelector', options.labelSelector);
  if (options.fieldSelector) query.set('fieldSelector', options.fieldSelector);
  return query;
}

/** The query string of a watch request. Pure. */
export function watchQuery(options: WatchOptions): URLSearchParams {
  const query = new URLSearchParams({ watch: 'true', resourceVersion: options.resourceVersion });
  if (options.allowWatchBookmarks) query.set('allowWatchBookmarks', 'true');
  query.set('timeoutSeconds', String(options.timeoutSeconds));
  if (options.labelSelector) query.set('labelSelector', options.labelSelector);
  if (options.fieldSelector) query.set('fieldSelector', options.fieldSelector);
  return query;
}

/** The StatusError of a failed response: its Status body, or one made up from the code and text. */
export function statusErrorFromResponse(code: number, text: string): StatusError {
  try {
    const body = JSON.parse(text) as StatusObject;
    if (body && body.kind === 'Status') return new StatusError({ ...body, code: body.code || code });
  } catch {
    // not JSON: fall through
  }
  return new StatusError({ kind: 'Status', status: 'Failure', code, message: text.trim() || `the server responded with the status code ${code}` });
}

interface ListBody<T> {
  items?: T[] | null;
  metadata?: { resourceVersion?: string; continue?: string };
}

export function fetchListWatcher<T = Unstructured>(baseUrl: string, path: string, options: FetchListWatcherOptions = {}): ListWatcher<T> {
  const doFetch = options.fetch ?? fetch;
  const headers = { accept: 'application/json', ...options.headers };
  const url = (query: URLSearchParams) => `${baseUrl.replace(/\/$/, '')}${path}?${query}`;

  return {
    async list(listOptions) {
      const response = await doFetch(url(listQuery(listOptions)), { headers });
      const text = await response.text();
      if (!response.ok) throw statusErrorFromResponse(response.status, text);
      const body = JSON.parse(text) as ListBody<T>;
      const result: ListResult<T> = { items: body.items ?? [], resourceVersion: body.metadata?.resourceVersion ?? '' };
      if (body.metadata?.continue) result.continue = body.metadata.continue;
      return result;
    },

    watch(watchOptions, onEvent, onEnd) {
      const controller = new AbortController();
      let closed = false;
      const end = (error?: unknown) => {
        if (closed) return;
        closed = true;
        controller.abort();
        onEnd(error);
      };
      const stream = async () => {
        const response = await doFetch(url(watchQuery(watchOptions)), { headers, signal: controller.signal });
        if (!response.ok) throw statusErrorFromResponse(response.status, await response.text());
        if (!response.body) return;
        const splitter = new LineSplitter();
        const reader = response.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          const lines = done ? splitter.flush() : splitter.push(value);
          for (const line of lines) {
            if (closed) return;
            onEvent(JSON.parse(line) as WatchEvent<T>);
          }
          if (done) return;
        }
      };
      stream().then(
        () => end(),
        // A connection the server dropped mid-stream ends the watch like a timeout would: the
        // reflector resumes from the last resourceVersion it saw.
        (error: unknown) => end(isDroppedStream(error) ? undefined : error),
      );
      return { close: () => {
        closed = true;
        controller.abort();
      } };
    },
  };
}

/** undici reports a body cut short as `TypeError: terminated` (cause: SocketError "other side closed"). */
function isDroppedStream(error: unknown): boolean {
  return error instanceof TypeError && error.message === 'terminated';
}
