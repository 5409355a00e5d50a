/**
 * --max-connection-bytes-per-sec: a byte rate for one direction of one connection (upstream wraps
 * the two copies of an upgraded connection in flowrate readers and writers with the same limit).
 * A token bucket holding one second of bytes: a copy may run ahead by that burst, then waits so
 * that its average stays at the rate. Pure arithmetic on an injected clock; relay() does the pausing.
 */
import {systemClock, type Clock} from '../clock.js';

export class ByteRate {
  private tokens: number;
  private at: number;

  constructor(
    readonly bytesPerSec: number,
    readonly clock: Clock = systemClock,
  ) {
    this.tokens = bytesPerSec;
    this.at = clock.now();
  }

  /** Takes `bytes` just passed on; answers how many milliseconds the copy should wait before the next. */
  delayAfter(bytes: number): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.bytesPerSec, this.tokens + ((now - this.at) * this.bytesPerSec) / 1000);
    this.at = now;
    this.tokens -= bytes;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.bytesPerSec);
  }
}
