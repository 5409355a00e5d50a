/**
 * A ListWatcher over any client that can GET JSON and iterate a watch stream, such as the REST
 * client (src/client/rest-client.ts: `get(path, query)` and `watch(path, query, signal)`), which
 * brings TLS, credentials and the client-side rate limiter. Typed structurally so this module does
 * not depend on that client's other details.
 */
import type { ListResult, ListWatcher, Unstructured, WatchEvent } from './types.js';

export interface StreamingClient {
  get<R = unknown>(path: string, query?: Record<string, string | undefined>): Promise<R>;
  /** Adds `watch=true` itself; rejects/throws on an error response (with a `code`), ends quietly on abort. */
  watch<R = unknown>(path: string, query?: Record<string, string | undefined>, signal?: AbortSignal): AsyncIterable<{ type: string; object: R }>;
}

export function clientListWatcher<T = Unstructured>(client: StreamingClient, path: string): ListWatcher<T> {
  return {
    async list(options) {
      const body = await client.get<{ items?: T[] | null; metadata?: { resourceVersion?: string; continue?: string } }>(path, {
        // '' (a consistent read of the latest state) is omitted, as client-go's omitempty does.
        resourceVersion: options.resourceVersion || undefined,
        limit: options.limit ? String(options.limit) : undefined,
        continue: options.continue || undefined,
        labelSelector: options.labelSelector || undefined,
        fieldSelector: options.fieldSelector || undefined,
      });
      const result: ListResult<T> = { items: body.items ?? [], resourceVersion: body.metadata?.resourceVersion ?? '' };
      if (body.metadata?.continue) result.continue = body.metadata.continue;
      return result;
    },

    watch(options, onEvent, onEnd) {
      const controller = new AbortController();
      let closed = false;
      const query = {
        resourceVersion: options.resourceVersion,
        allowWatchBookmarks: options.allowWatchBookmarks ? 'true' : undefined,
        timeoutSeconds: String(options.timeoutSeconds),
        labelSelector: options.labelSelector || undefined,
        fieldSelector: options.fieldSelector || undefined,
      };
      (async () => {
        for await (const event of client.watch<T>(path, query, controller.signal)) {
          if (closed) return;
          onEvent(event as WatchEvent<T>);
        }
      })().then(
        () => !closed && ((closed = true), onEnd()),
        (error: unknown) => !closed && ((closed = true), onEnd(error)),
      );
      return {
        close: () => {
          closed = true;
          controller.abort();
        },
      };
    },
  };
}
