/**
 * The part of an HTTP request the authenticators read. Node's IncomingMessage satisfies it; tests
 * pass plain objects.
 */
import type {IncomingHttpHeaders} from 'node:http';

export interface AuthenticationRequest {
  headers: IncomingHttpHeaders;
  /**
   * Node's per-header value lists (IncomingMessage.headersDistinct). Needed for headers a client
   * repeats, like `Impersonate-Group`: `headers` joins repeated unknown headers with ", ".
   */
  headersDistinct?: Record<string, string[] | undefined>;
  /** The request target (path and query), for anonymous access limited to paths. */
  url?: string;
  /** The connection; a TLS socket carries the client certificate. */
  socket?: unknown;
}

/** Every value of a header, in order (header names are lowercase, as Node gives them). */
export function headerValues(request: Pick<AuthenticationRequest, 'headers' | 'headersDistinct'>, name: string): string[] {
  const distinct = request.headersDistinct?.[name];
  if (distinct) return distinct;
  const value = request.headers[name];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** The first value of a header, or '' (as Go's Header.Get). */
export function headerValue(request: Pick<AuthenticationRequest, 'headers' | 'headersDistinct'>, name: string): string {
  return headerValues(request, name)[0] ?? '';
}
