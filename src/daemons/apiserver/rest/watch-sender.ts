/**
 * The outbound side of a watch stream: events are written in order and only as fast as the client
 * reads them (the response's backpressure, with WRITE_AHEAD_BYTES in flight), as a Go handler's
 * writes block under HTTP/2 flow control. Writing every event at once instead piles the bytes up in
 * the process without bound (a large initial list, a client that does not read).
 *
 * Events that wait are kept in a queue; when the bytes waiting pass maxQueuedBytes, the client is
 * not keeping up and the watch is ended (onOverflow), as upstream's cacher terminates an
 * unresponsive watcher: the client watches again from the last resourceVersion it received, so it
 * misses nothing. Lines are made when their turn comes (a function giving the line), so that a long
 * initial list is serialized one event at a time as the client reads, not all up front, and so that
 * per-stream state (a Table's column definitions go with the first line sent) follows the order of
 * the stream; each entry carries an estimate of its size for the bound.
 */

/** The slice of a response the sender needs (HTTP/1 ServerResponse and the HTTP/2 compatibility response). */
export interface WritableResponse {
  write(chunk: string): boolean;
  end(): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off?(event: 'drain' | 'close', listener: () => void): unknown;
  readonly writableEnded?: boolean;
  readonly destroyed?: boolean;
  /** Bytes written and not yet sent (Node's responses have it). */
  readonly writableLength?: number;
}

export interface WatchSenderOptions {
  /** Bytes of ready lines allowed to wait for the client before the watch is ended. */
  maxQueuedBytes: number;
  /** Called once when the queue overflows (the caller ends the watch). */
  onOverflow: () => void;
  /** Bytes a response may hold unsent before the sender waits for it to drain (default WRITE_AHEAD_BYTES). */
  writeAheadBytes?: number;
}

/**
 * How far ahead of the client a watch writes. A response reports backpressure past its 16 KiB
 * high-water mark, and its 'drain' comes only once that is sent, a turn of the event loop later: a
 * sender stopping there writes one event of 16 KiB or more per turn, while a busy server takes in
 * several writes per turn, so every watch of large objects fell behind under write load and was
 * ended as a slow client although its client read at once. Go's handler writes on until the
 * client's flow-control window (4 MiB for client-go) is full. What is written ahead sits in the
 * stream's buffer, not against an HTTP/2 session's memory.
 */
export const WRITE_AHEAD_BYTES = 1024 * 1024;

/** Upstream's cacher gives each watcher a buffer of about 100 events; this bounds what one slow client holds. */
export const DEFAULT_MAX_QUEUED_BYTES = 4 * 1024 * 1024;

interface Entry {
  make: () => string | undefined;
  bytes: number;
}

export class WatchSender {
  private readonly queue: Entry[] = [];
  private queuedBytes = 0;
  private waitingForDrain = false;
  private closed = false;
  private endWhenFlushed = false;
  private overflowed = false;

  constructor(
    private readonly res: WritableResponse,
    private readonly options: WatchSenderOptions,
  ) {
    res.once('close', () => {
      this.closed = true;
      this.queue.length = 0;
      this.queuedBytes = 0;
    });
  }

  /**
   * Queues a line, made when its turn comes (undefined: nothing to send); written at once when
   * nothing waits and the client keeps up. `bytes` (an estimate of its size) counts against
   * maxQueuedBytes while it waits; 0 for what is held in memory anyway (an initial list).
   */
  send(make: () => string | undefined, bytes: number): void {
    if (this.closed || this.endWhenFlushed || this.overflowed) return;
    this.queue.push({make, bytes});
    this.queuedBytes += bytes;
    if (this.queuedBytes > this.options.maxQueuedBytes) {
      this.overflowed = true;
      this.queue.length = 0;
      this.queuedBytes = 0;
      this.options.onOverflow();
      return;
    }
    this.pump();
  }

  /** Ends the response once everything queued is written (at once when the watch was dropped). */
  end(): void {
    if (this.overflowed) this.queue.length = 0;
    this.endWhenFlushed = true;
    this.pump();
  }

  /** Lines waiting for the client (for tests and the dashboard). */
  get pending(): number {
    return this.queue.length;
  }

  private pump(): void {
    while (!this.waitingForDrain && this.queue.length > 0 && !this.closed) {
      const entry = this.queue.shift()!;
      this.queuedBytes -= entry.bytes;
      const line = entry.make();
      if (line === undefined) continue;
      // Past the high-water mark, writing goes on while the response holds less than the
      // write-ahead (a response that cannot tell how much it holds is taken at its word).
      if (!this.res.write(line) && (this.res.writableLength ?? Infinity) >= (this.options.writeAheadBytes ?? WRITE_AHEAD_BYTES)) {
        this.waitingForDrain = true;
        this.res.once('drain', () => {
          this.waitingForDrain = false;
          this.pump();
        });
      }
    }
    // The end goes behind what was written, so it need not wait for a drain.
    if (this.endWhenFlushed && this.queue.length === 0 && !this.closed && !this.res.writableEnded) this.res.end();
  }
}
