/**
 * Copies one stream into another with a larger allowance than Node's 16 KiB socket high-water
 * mark: the source pauses only when more than `limit` bytes wait in the destination. Streams that
 * carry bulk data through several hops (port-forward: pod -> agent -> API server -> kubectl) stall
 * at every hop with the default, one TLS record at a time; 1 MiB keeps them busy, still bounded.
 * Ends the destination when the source ends (as pipe does).
 */
import type {Readable, Writable} from 'node:stream';

export const RELAY_LIMIT = 1024 * 1024;

export function relay(from: Readable, to: Writable, limit = RELAY_LIMIT): void {
  let waiting = false;
  from.on('data', (chunk: Buffer) => {
    if (to.destroyed || to.writableEnded) return;
    to.write(chunk);
    if (!waiting && to.writableLength > limit) {
      waiting = true;
      from.pause();
      to.once('drain', () => {
        waiting = false;
        from.resume();
      });
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
