/** Reading request bodies and writing JSON and Status responses. */
import { ApiError, badRequest, requestEntityTooLarge, type Status } from '../../../api/status.js';
import type { Readable } from 'node:stream';
import type { ApiRequest, ApiResponse } from './types.js';
import { materializedItems, STREAM_LIST_MIN_ITEMS, writeJsonListStreaming, type JsonList } from './list-stream.js';
import { sendContinue } from '../../shared/serving/http1-requests.js';

/** Upstream's MaxRequestBodyBytes. */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/**
 * How much of a body past the limit is read and thrown away, so that the 413 reaches the client
 * and the connection stays usable; a client sending more than this is cut off.
 */
export const DISCARD_AFTER_LIMIT_BYTES = 2 * MAX_REQUEST_BODY_BYTES;

export async function readBody(req: ApiRequest, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) throw requestEntityTooLarge(`limit is ${limit}`);
  // A client that sent `Expect: 100-continue` waits for this before it sends the body.
  sendContinue(req);
  const stream = req as unknown as Partial<Readable>;
  if (typeof stream.on !== 'function' || typeof stream.off !== 'function' || stream.readableEnded) return readIterable(req, limit);
  // Plain 'data'/'end' listeners rather than `for await`: the stream's async iterator costs an
  // AbortSignal and several promises per request, a visible share of a small write.
  const emitter = stream as Readable;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      emitter.off('data', onData);
      emitter.off('end', onEnd);
      emitter.off('error', onError);
      emitter.off('close', onClose);
    };
    const onData = (chunk: Buffer | string) => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buffer.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        reject(requestEntityTooLarge(`limit is ${limit}`));
        discardRest(emitter, size - limit);
        return;
      }
      chunks.push(buffer);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    // A request that closes before its end (the client went away) fails like the iterator did.
    const onClose = () => {
      cleanup();
      reject(Object.assign(new Error('Premature close'), {code: 'ERR_STREAM_PREMATURE_CLOSE'}));
    };
    emitter.on('data', onData);
    emitter.on('end', onEnd);
    emitter.on('error', onError);
    emitter.on('close', onClose);
  });
}

/**
 * Reads and drops the rest of a body that went over the limit (a chunked one: its length was not
 * declared). Destroying the request instead would destroy an HTTP/1 connection before the 413 is
 * written, so the client would see a reset; upstream answers 413. Past DISCARD_AFTER_LIMIT_BYTES
 * the request is destroyed after all.
 */
function discardRest(stream: Readable, alreadyOver: number): void {
  let discarded = alreadyOver;
  const onData = (chunk: Buffer | string) => {
    discarded += chunk.length;
    if (discarded > DISCARD_AFTER_LIMIT_BYTES) {
      stream.off('data', onData);
      stream.destroy();
    }
  };
  stream.on('data', onData);
  stream.on('error', () => undefined);
}

/** Request-like objects that are only async iterables (and streams already ended). */
async function readIterable(req: ApiRequest, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > limit) throw requestEntityTooLarge(`limit is ${limit}`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** Nesting deeper than this is refused before any recursive processing can overflow the stack. */
export const MAX_JSON_DEPTH = 1000;

/** Rejects documents nested deeper than MAX_JSON_DEPTH (400), checked iteratively. */
export function checkDepth(value: unknown): void {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length) {
    const { value: v, depth } = stack.pop()!;
    if (depth > MAX_JSON_DEPTH) throw badRequest(`json: exceeded max depth of ${MAX_JSON_DEPTH}`);
    if (v && typeof v === 'object') for (const child of Object.values(v as object)) if (child && typeof child === 'object') stack.push({ value: child, depth: depth + 1 });
  }
}

/** The `Warning` header of upstream's warnings (RFC 7234 code 299, the text as a quoted string). */
export function warningHeader(warnings: readonly string[]): string {
  return warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(', ');
}

/** Warnings added while serving a request (admission, deprecations), sent with whatever response it gets. */
const responseWarnings = new WeakMap<ApiResponse, string[]>();

/** Adds a warning to the response's Warning header, once per text, as upstream's warning recorder. */
export function addResponseWarning(res: ApiResponse, text: string): void {
  const list = responseWarnings.get(res) ?? [];
  if (!list.includes(text)) list.push(text);
  responseWarnings.set(res, list);
}

/** The headers of a JSON response: type, no caching, and the warnings collected for this response. */
function jsonHeaders(res: ApiResponse, options: { contentType?: string; warnings?: readonly string[] }): Record<string, string> {
  const added = responseWarnings.get(res) ?? [];
  const warnings = [...added, ...(options.warnings ?? []).filter((w) => !added.includes(w))];
  return {
    'Content-Type': options.contentType ?? 'application/json',
    'Cache-Control': 'no-cache, private',
    ...(warnings.length ? { Warning: warningHeader(warnings) } : {}),
  };
}

export function writeJson(res: ApiResponse, code: number, body: unknown, options: { pretty?: boolean; contentType?: string; warnings?: readonly string[] } = {}): void {
  const text = options.pretty ? JSON.stringify(body, null, 2) + '\n' : JSON.stringify(body);
  res.writeHead(code, { ...jsonHeaders(res, options), 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Writes a list: big ones (not pretty-printed) streamed item by item so the event loop stays free for
 * other requests (list-stream.ts), the others as writeJson does. Same bytes either way.
 */
export async function writeJsonList(res: ApiResponse, code: number, list: JsonList, options: { pretty?: boolean } = {}): Promise<void> {
  if (options.pretty || list.items.length <= STREAM_LIST_MIN_ITEMS) return writeJson(res, code, { ...list, items: materializedItems(list.items) }, options);
  await writeJsonListStreaming(res, code, list, jsonHeaders(res, {}));
}

export function writeStatus(res: ApiResponse, status: Status, pretty = false): void {
  writeJson(res, status.code, status, { pretty });
}

export function writeError(res: ApiResponse, error: ApiError, pretty = false): void {
  writeStatus(res, error.status, pretty);
}

/** Go's http.NotFound body, for paths outside every served group. */
export function writePlainNotFound(res: ApiResponse): void {
  const text = '404 page not found\n';
  res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
