/**
 * `--request-timeout` as kubectl reads it (clientcmd.ParseTimeout): a bare non-negative integer is
 * seconds (`5` = 5s), anything else a Go duration (`500ms`, `1m`); `0` means no timeout.
 */
import {formatDurationNs, parseDurationNs} from '../options/duration.js';

export const INVALID_TIMEOUT =
  'Invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)';

export interface RequestTimeout {
  /** Milliseconds; 0 for none. */
  ms: number;
  /** Go's canonical form, sent as the `timeout` query parameter (`5s`, `1m0s`). */
  text: string;
}

/** Parses a `--request-timeout` value; throws an Error with kubectl's message when invalid. */
export function parseRequestTimeout(value: string): RequestTimeout {
  let nanos: bigint;
  if (/^\+?\d+$/.test(value)) nanos = BigInt(value) * 1_000_000_000n;
  else {
    try {
      nanos = parseDurationNs(value);
    } catch {
      throw new Error(INVALID_TIMEOUT);
    }
  }
  // A negative duration parses in Go and then means no timeout, as 0 does.
  if (nanos <= 0n) return {ms: 0, text: '0s'};
  return {ms: Number(nanos / 1_000_000n) + Number(nanos % 1_000_000n) / 1e6, text: formatDurationNs(nanos)};
}
