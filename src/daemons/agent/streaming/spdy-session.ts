/**
 * The server side of a SPDY/3.1 connection after the HTTP upgrade, as moby/spdystream serves
 * kubelet streams: every stream the client opens (SYN_STREAM) is answered at once with a
 * SYN_REPLY (spdystream drops data on streams not replied yet) and handed over as a Duplex; a FIN
 * half-closes, RST_STREAM destroys; PINGs are echoed; there is no flow control (spdystream neither
 * sends nor honours WINDOW_UPDATE). The connection closes after --streaming-connection-idle-timeout
 * without a frame either way, as spdystream's idle-aware framer does.
 *
 * The transport is any Duplex: the upgraded TLS socket, or a WebSocket stream when kubectl tunnels
 * SPDY over WebSocket (port-forward of kubectl 1.31+).
 */
import {EventEmitter} from 'node:events';
import {Duplex} from 'node:stream';
import {BufferPool, RELAY_LIMIT, overRelayLimit} from '../../shared/serving/relay.js';
import {RstStatus, SpdyDecoder, SpdyEncoder, type SpdyFrame, type SpdyHeaders} from './spdy-frames.js';

/** Largest DATA frame written (spdystream reads frames of any size up to 16 MiB). */
const MAX_DATA_FRAME = 64 * 1024;
/**
 * DATA frames are assembled (header, then payload) in reused buffers, each taken back once the
 * transport has written it: a new buffer per frame would be 64 KiB of fresh ArrayBuffer each time,
 * which keeps V8 collecting (see ../../shared/serving/relay.ts).
 */
const FRAME_BUFFERS = new BufferPool(8 + MAX_DATA_FRAME, (2 * RELAY_LIMIT) / MAX_DATA_FRAME);
/** How long a closed connection waits for the client to hang up before the socket is destroyed. */
const CLOSE_GRACE_MS = 10_000;

export class SpdyStream extends Duplex {
  private remoteClosed = false;

  constructor(readonly id: number, readonly headers: SpdyHeaders, private readonly session: SpdySession) {
    super({allowHalfOpen: true});
  }

  /** The first value of a header (names are lower case). */
  header(name: string): string | undefined {
    return this.headers[name.toLowerCase()]?.[0];
  }

  _read(): void {}

  _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.session.open) return callback(new Error('SPDY connection closed'));
    if (chunk.length === 0) return callback();
    const frames: {buffer: Buffer; length: number}[] = [];
    for (let at = 0; at < chunk.length; at += MAX_DATA_FRAME) {
      const payload = chunk.subarray(at, at + MAX_DATA_FRAME);
      const buffer = FRAME_BUFFERS.take();
      this.session.encoder.writeDataHeader(buffer, this.id, payload.length);
      payload.copy(buffer, 8);
      frames.push({buffer, length: 8 + payload.length});
    }
    this.session.sendFrames(frames, callback);
  }

  _final(callback: (error?: Error | null) => void): void {
    if (this.session.open) this.session.send(this.session.encoder.data(this.id, Buffer.alloc(0), true));
    this.session.finished(this, 'local');
    callback();
  }

  _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.session.forget(this);
    callback(error);
  }

  /** Sends RST_STREAM (CANCEL) and destroys the stream. */
  reset(status: number = RstStatus.Cancel): void {
    if (this.session.open) this.session.send(this.session.encoder.rstStream(this.id, status));
    this.destroy();
  }

  /** @internal */
  receive(data: Buffer, fin: boolean): void {
    if (this.remoteClosed) return;
    if (data.length) this.push(data);
    if (fin) {
      this.remoteClosed = true;
      this.push(null);
      this.session.finished(this, 'remote');
    }
  }
}

export interface SpdySessionOptions {
  /** Closes the connection after this long without a frame; 0 never. */
  idleTimeoutMs: number;
}

export interface SpdySessionEvents {
  stream: [stream: SpdyStream];
  close: [];
}

export class SpdySession extends EventEmitter<SpdySessionEvents> {
  readonly encoder = new SpdyEncoder();
  private readonly decoder = new SpdyDecoder();
  private readonly streams = new Map<number, SpdyStream>();
  private readonly halfClosed = new Map<number, Set<'local' | 'remote'>>();
  private idleTimer?: NodeJS.Timeout;
  private closing = false;
  /** A protocol error was seen: nothing more is read. */
  private broken = false;
  private lastStreamId = 0;
  open = true;

  constructor(private readonly socket: Duplex, private readonly options: SpdySessionOptions) {
    super();
    socket.on('data', (bytes: Buffer) => this.receive(bytes));
    socket.on('end', () => this.destroy());
    socket.on('error', () => this.destroy());
    socket.on('close', () => this.destroy());
    this.touch();
  }

  /** Queues a frame; `done` runs once the transport took it (after 'drain' when its buffer is full). */
  send(frame: Buffer, done?: (error?: Error | null) => void): void {
    if (!this.open) {
      done?.(new Error('SPDY connection closed'));
      return;
    }
    this.touch();
    const flushed = this.socket.write(frame);
    if (!done) return;
    if (flushed) done();
    else this.socket.once('drain', () => done());
  }

  /**
   * Writes DATA frames assembled in FRAME_BUFFERS (one write each: a WebSocket tunnel makes each
   * write a message); each buffer goes back once written. A producer waits only past the relay allowance.
   */
  sendFrames(frames: {buffer: Buffer; length: number}[], done: (error?: Error | null) => void): void {
    if (!this.open) return done(new Error('SPDY connection closed'));
    this.touch();
    for (const {buffer, length} of frames) this.socket.write(buffer.subarray(0, length), () => FRAME_BUFFERS.give(buffer));
    if (!overRelayLimit(this.socket)) done();
    else this.socket.once('drain', () => done());
  }

  /** GOAWAY, then the socket ends once the client hangs up (or after a grace period). */
  close(): void {
    if (!this.open || this.closing) return;
    this.closing = true;
    this.send(this.encoder.goAway(this.lastStreamId, 0));
    setTimeout(() => this.destroy(), CLOSE_GRACE_MS).unref();
  }

  /** Ends everything at once: every stream is destroyed, the socket too. */
  destroy(): void {
    if (!this.open) return;
    this.open = false;
    clearTimeout(this.idleTimer);
    for (const stream of [...this.streams.values()]) stream.destroy();
    this.streams.clear();
    this.socket.destroy();
    this.emit('close');
  }

  get activeStreams(): number {
    return this.streams.size;
  }

  /** @internal A stream half-closed on one side; both sides closed removes it. */
  finished(stream: SpdyStream, side: 'local' | 'remote'): void {
    const sides = this.halfClosed.get(stream.id) ?? new Set();
    sides.add(side);
    this.halfClosed.set(stream.id, sides);
    if (sides.size === 2) this.forget(stream);
  }

  /** @internal */
  forget(stream: SpdyStream): void {
    this.streams.delete(stream.id);
    this.halfClosed.delete(stream.id);
  }

  private touch(): void {
    if (this.options.idleTimeoutMs <= 0) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.destroy(), this.options.idleTimeoutMs);
    this.idleTimer.unref();
  }

  private receive(bytes: Buffer): void {
    if (this.broken) return;
    let frames: SpdyFrame[];
    try {
      frames = this.decoder.push(bytes);
    } catch {
      // A framing or compression error leaves no way to resynchronise: GOAWAY(PROTOCOL_ERROR), then
      // the socket ends once that frame is out (destroy would drop it).
      this.send(this.encoder.goAway(this.lastStreamId, 1));
      this.broken = true;
      this.socket.end();
      setTimeout(() => this.destroy(), CLOSE_GRACE_MS).unref();
      return;
    }
    if (frames.length) this.touch();
    for (const frame of frames) this.handle(frame);
  }

  private handle(frame: SpdyFrame): void {
    switch (frame.type) {
      case 'synStream': {
        if (this.closing || this.streams.has(frame.streamId) || frame.streamId % 2 === 0) {
          this.send(this.encoder.rstStream(frame.streamId, this.closing ? RstStatus.RefusedStream : RstStatus.ProtocolError));
          return;
        }
        this.lastStreamId = Math.max(this.lastStreamId, frame.streamId);
        const stream = new SpdyStream(frame.streamId, frame.headers, this);
        this.streams.set(frame.streamId, stream);
        this.send(this.encoder.synReply(frame.streamId));
        if (frame.fin) stream.receive(Buffer.alloc(0), true);
        this.emit('stream', stream);
        return;
      }
      case 'data':
        this.streams.get(frame.streamId)?.receive(frame.data, frame.fin);
        return;
      case 'headers':
        if (frame.fin) this.streams.get(frame.streamId)?.receive(Buffer.alloc(0), true);
        return;
      case 'rstStream':
        this.streams.get(frame.streamId)?.destroy();
        return;
      case 'ping':
        // Client pings carry odd ids; answer them with the same frame.
        if (frame.id % 2 === 1) this.send(this.encoder.ping(frame.id));
        return;
      case 'goAway':
        this.closing = true;
        return;
      default:
        // SETTINGS, WINDOW_UPDATE, SYN_REPLY (the server opens no streams), unknown types: ignored.
        return;
    }
  }
}
