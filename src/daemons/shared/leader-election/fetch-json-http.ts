/**
 * JsonHttp over the global fetch, for the lease lock until it sits on the REST client.
 */
import type { JsonHttp, JsonReply } from './lease-lock.js';

export interface FetchJsonHttpOptions {
  /** Extra headers on every request (e.g. `authorization`). */
  headers?: Record<string, string>;
  /** Per-request timeout; a request that takes longer rejects. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export function fetchJsonHttp(baseUrl: string, options: FetchJsonHttpOptions = {}): JsonHttp {
  const doFetch = options.fetch ?? fetch;
  const base = baseUrl.replace(/\/+$/, '');
  const send = async (method: string, path: string, body?: unknown): Promise<JsonReply> => {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await doFetch(base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: options.timeoutMs ? AbortSignal.timeout(options.timeoutMs) : undefined,
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed };
  };
  return {
    get: (path) => send('GET', path),
    post: (path, body) => send('POST', path, body),
    put: (path, body) => send('PUT', path, body),
  };
}
