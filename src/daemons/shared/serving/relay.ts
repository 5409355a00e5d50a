/**
 * Copies one stream into another with a larger allowance than Node's 16 KiB socket high-water
 * mark: the source pauses only when more than `limit` bytes wait in the destination. Streams that
 * carry bulk data through several hops (port-forward: pod -> agent -> API server -> kubectl) stall
 * at every hop with the default, one TLS record at a time; 1 MiB keeps them busy, still bounded.
 * Ends the destination when the source ends (as pipe does).
 *
 * The bulk direction of a hop reads into reused buffers instead (relayReads, Node's `onread`):
 * a socket read otherwise allocates a new ArrayBuffer for every chunk (16 KiB per TLS record,
 * 64 KiB per TCP read), and in a process with a heap the size of the API server's that rate of
 * external allocation keeps V8 scavenging and, with the old generation near its limit, starting
 * one full mark-compact after another (measured: about ten per 128 MiB forwarded, more CPU than the
 * copying itself). A buffer goes back to its pool once the write made from it has completed: by
 * then a socket or a TLS connection has copied or encrypted it.
 */
import type {Readable, Writable} from 'node:stream';
import type {Socket} from 'node:net';
import type {ByteRate} from './byte-rate.js';

export const RELAY_LIMIT = 1024 * 1024;

export function relay(from: Readable, to: Writable, limit = RELAY_LIMIT, rate?: ByteRate): void {
  let waiting = false;
  // With a byte rate (--max-connection-bytes-per-sec) the source also rests until the rate allows more.
  let resting = false;
  const resume = () => {
    if (!waiting && !resting) from.resume();
  };
  from.on('data', (chunk: Buffer) => {
    if (to.destroyed || to.writableEnded) return;
    to.write(chunk);
    if (!waiting && to.writableLength > limit) {
      waiting = true;
      from.pause();
      to.once('drain', () => {
        waiting = false;
        resume();
      });
    }
    const delay = rate ? rate.delayAfter(chunk.length) : 0;
    if (delay > 0 && !resting) {
      resting = true;
      from.pause();
      rate!.clock.setTimeout(() => {
        resting = false;
        resume();
      }, delay);
    }
  });
  from.once('end', () => {
    if (!to.destroyed && !to.writableEnded) to.end();
  });
}

/** Whether a writer should wait for 'drain' before taking more (the same allowance, for producers). */
export function overRelayLimit(to: Writable, limit = RELAY_LIMIT): boolean {
  return to.writableLength > limit;
}

/**
 * Buffers of one size for reads and frames, reused; at most `keep` wait for reuse (the rest are
 * left to the GC). The pools here keep 2 MiB each at most: what two relay allowances hold in flight.
 */
export class BufferPool {
  private readonly free: Buffer[] = [];
  /** How many buffers were ever allocated (tests compare it with the reads served). */
  allocated = 0;

  constructor(readonly size: number, private readonly keep: number) {}

  take(): Buffer {
    const reused = this.free.pop();
    if (reused) return reused;
    this.allocated++;
    return Buffer.allocUnsafeSlow(this.size);
  }

  give(buffer: Buffer): void {
    if (this.free.length < this.keep && buffer.length === this.size) this.free.push(buffer);
  }

  get waiting(): number {
    return this.free.length;
  }
}

/** For TLS connections: a read hands over at most one record's plaintext (16 KiB). */
export const TLS_READ_BUFFERS = new BufferPool(16 * 1024, (2 * RELAY_LIMIT) / (16 * 1024));
/** For plain TCP connections: libuv's own read size (64 KiB). */
export const TCP_READ_BUFFERS = new BufferPool(64 * 1024, (2 * RELAY_LIMIT) / (64 * 1024));

export interface OnRead {
  buffer: () => Buffer;
  callback: (this: Socket, bytes: number, buffer: Buffer) => boolean;
}

/**
 * The `onread` option of net.connect / tls.connect that relays what the socket reads into `to`
 * with relay()'s allowance. The caller ends `to` on the socket's 'end' (see relayEnd).
 */
export function relayReads(to: () => Writable | undefined, buffers: BufferPool, limit = RELAY_LIMIT): OnRead {
  let waiting = false;
  return {
    buffer: () => buffers.take(),
    callback(bytes, buffer) {
      const target = to();
      if (!target || target.destroyed || target.writableEnded) {
        buffers.give(buffer);
        return true;
      }
      target.write(bytes === buffer.length ? buffer : buffer.subarray(0, bytes), () => buffers.give(buffer));
      if (target.writableLength <= limit) return !waiting;
      // A TLS socket may hand over the rest of a decrypted read after the pause: one resume is enough.
      if (!waiting) {
        waiting = true;
        target.once('drain', () => {
          waiting = false;
          this.resume();
        });
      }
      return false;
    },
  };
}

/** Ends `to` when `from` ends (the 'end' half of relay(), for sockets read with relayReads). */
export function relayEnd(from: Readable, to: Writable): void {
  from.once('end', () => {
    if (!to.destroyed && !to.writableEnded) to.end();
  });
}
