/**
 * Streaming JSON encoder for big LIST responses (upstream's KEP-5116 streaming list encoder).
 *
 * JSON.stringify of a 30,000-pod list (~69 MB) ran as one task on the event loop, so every other
 * request on the server waited ~10 s behind it. Here the list envelope is written first, then the
 * items one by one, flushed in chunks of about CHUNK_BYTES, with a turn of the event loop between
 * chunks (setImmediate) and a wait for 'drain' whenever the socket's buffer is full, so other
 * requests are served while the list is sent and a slow reader does not make the server buffer the
 * whole list in memory. The bytes are those of JSON.stringify(list): the envelope's keys are written
 * in the same order and each item with JSON.stringify.
 */
import type { ApiResponse } from './types.js';

/** Lists with more items than this are streamed; smaller ones are cheaper to encode in one go. */
export const STREAM_LIST_MIN_ITEMS = 500;
/** About this many bytes (UTF-16 code units) are collected before a write and a yield. */
export const CHUNK_BYTES = 1 << 20;

/** Items made one at a time (a list decoded lazily: RegistryStore.listLazily). */
export interface LazyItems {
  readonly length: number;
  item(index: number): unknown;
  /** The item's JSON text (JSON.stringify of item(index)) when it can be had without decoding; undefined: decode. */
  json?(index: number): string | undefined;
}

export interface JsonList {
  kind: string;
  apiVersion: string;
  metadata: unknown;
  items: readonly unknown[] | LazyItems;
}

/** The list's items as an array (made now when they are lazy). */
export function materializedItems(items: JsonList['items']): readonly unknown[] {
  return Array.isArray(items) ? items : Array.from({ length: items.length }, (_, i) => (items as LazyItems).item(i));
}

/** What the encoder needs of a response beyond ApiResponse: backpressure and abort signals. */
interface StreamableResponse extends ApiResponse {
  once?(event: 'drain' | 'close' | 'error', listener: () => void): unknown;
  removeListener?(event: 'drain' | 'close' | 'error', listener: () => void): unknown;
  readonly destroyed?: boolean;
}

/** The list's JSON in pieces of about chunkBytes: the envelope, then items, then the closing brackets. */
export function* listJsonChunks(list: JsonList, chunkBytes = CHUNK_BYTES): Generator<string> {
  // The head is JSON.stringify of the envelope with an empty items array, minus its closing "]}":
  // same key order and escaping as JSON.stringify of the whole list.
  const empty = JSON.stringify({ kind: list.kind, apiVersion: list.apiVersion, metadata: list.metadata, items: [] });
  let buffer = empty.slice(0, -2);
  const items = list.items;
  const at = Array.isArray(items) ? (i: number) => (items as readonly unknown[])[i] : (i: number) => (items as LazyItems).item(i);
  const verbatim = Array.isArray(items) ? undefined : (items as LazyItems).json?.bind(items);
  // Lazy items are decoded here too: half the bytes per turn keeps a turn's work where it was
  // (decoding and encoding about as costly as each other).
  const perTurn = Array.isArray(items) ? chunkBytes : Math.max(1, Math.floor(chunkBytes / 2));
  for (let i = 0; i < items.length; i++) {
    // JSON.stringify writes null for array members that have no JSON form (undefined, functions).
    const text = verbatim?.(i) ?? JSON.stringify(at(i)) ?? 'null';
    buffer += i === 0 ? text : ',' + text;
    if (buffer.length >= perTurn) {
      yield buffer;
      buffer = '';
    }
  }
  yield buffer + ']}';
}

/** Resolves once the response can take more data, or has been closed by the client. */
function drained(res: StreamableResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.removeListener?.('drain', done);
      res.removeListener?.('close', done);
      res.removeListener?.('error', done);
      resolve();
    };
    res.once?.('drain', done);
    res.once?.('close', done);
    res.once?.('error', done);
  });
}

/** Resolves on the event loop's next turn, after the I/O callbacks waiting now. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Writes the list as one chunked 200 response, yielding to the event loop between chunks. Stops
 * writing (without ending the response) when the client has gone away.
 */
export async function writeJsonListStreaming(res: StreamableResponse, code: number, list: JsonList, headers: Record<string, string>, chunkBytes = CHUNK_BYTES): Promise<void> {
  // 'close' is the one abort signal node:http and the http2 compat response both give; a flag
  // set from it (rather than a check of res.destroyed) also covers a close seen before a wait.
  let gone = false;
  res.on('close', () => (gone = true));
  res.writeHead(code, headers);
  let first = true;
  for (const chunk of listJsonChunks(list, chunkBytes)) {
    if (!first) await nextTurn();
    first = false;
    if (gone || res.destroyed) return;
    if (!res.write(chunk) && !gone) await drained(res);
  }
  if (!gone) res.end();
}
