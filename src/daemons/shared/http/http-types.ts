/**
 * The slice of Node's request/response objects the filters and health handlers use. Both
 * `http.IncomingMessage`/`http.ServerResponse` and the HTTP/2 compatibility objects of
 * `http2.createSecureServer({allowHTTP1: true})` satisfy these shapes, and tests use plain fakes.
 */

export interface RequestLike {
  url?: string;
  method?: string;
  headers: Record<string, string | string[] | undefined>;
  /** '2.0' for HTTP/2 requests, '1.1' or '1.0' otherwise. */
  httpVersion?: string;
  /** The HTTP/2 stream (compat API only): its session is what a GOAWAY closes. */
  stream?: {session?: {close(callback?: () => void): void} | null | undefined};
  on(event: 'close', listener: () => void): unknown;
}

export interface ResponseLike {
  statusCode: number;
  readonly headersSent?: boolean;
  readonly writableEnded?: boolean;
  setHeader(name: string, value: string | number | readonly string[]): unknown;
  getHeader?(name: string): unknown;
  removeHeader?(name: string): void;
  write?(chunk: string | Uint8Array, ...rest: unknown[]): boolean;
  end(chunk?: string | Uint8Array, ...rest: unknown[]): unknown;
  on(event: 'close' | 'finish', listener: () => void): unknown;
  /** Aborts the response (HTTP/1: destroys the socket). */
  destroy?(error?: Error): unknown;
}

/** A request filter: handles the request itself or passes it on with next(). */
export type Filter = (req: RequestLike, res: ResponseLike, next: () => void) => void;

/** Chains filters, outermost first, in front of a final handler. */
export function composeFilters(
  filters: readonly Filter[],
  handler: (req: RequestLike, res: ResponseLike) => void,
): (req: RequestLike, res: ResponseLike) => void {
  return filters.reduceRight<(req: RequestLike, res: ResponseLike) => void>(
    (inner, filter) => (req, res) => filter(req, res, () => inner(req, res)),
    handler,
  );
}

/** The request path, percent-decoded like Go's r.URL.Path (undecodable paths stay raw). */
export function requestPath(req: RequestLike): string {
  const raw = (req.url ?? '/').split('?', 1)[0]!;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The query parameters of the request (Go's r.URL.Query()). */
export function requestQuery(req: RequestLike): URLSearchParams {
  const url = req.url ?? '';
  const at = url.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : url.slice(at + 1));
}

export function headerValue(req: RequestLike, name: string): string {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

export function isHttp2(req: RequestLike): boolean {
  return req.httpVersion === '2.0';
}
