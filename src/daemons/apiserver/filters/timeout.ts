/**
 * --request-timeout for non-long-running requests (upstream's WithRequestDeadline and
 * WithTimeoutForNonLongRunningRequests). The deadline is the server default, shortened (never
 * lengthened) by a positive `?timeout=` Go duration; `?timeout=0s` means "the default". A request
 * still unanswered at its deadline gets 504 with a `Timeout` Status; whatever the handler writes
 * afterwards is dropped. When the handler had already started its response, the response is
 * aborted instead (upstream resets the stream), since a status can no longer be sent.
 *
 * Handlers can observe their deadline through requestDeadline(req).signal to stop work early.
 */
import {parseDuration} from '../../../options/duration.js';
import {systemClock, type Clock} from '../../shared/clock.js';
import {requestQuery, type Filter, type RequestLike, type ResponseLike} from '../../shared/http/http-types.js';
import {isLongRunningRequest} from './request-info.js';
import {writeStatus} from '../../shared/http/status.js';

export interface RequestTimeoutOptions {
  /** --request-timeout in milliseconds; <= 0: no server default. */
  requestTimeoutMs: number;
  clock?: Clock;
  isLongRunning?: (req: RequestLike) => boolean;
  /** Called when a request times out (metrics, logs). */
  onTimeout?: (req: RequestLike) => void;
}

export interface RequestDeadline {
  /** Epoch milliseconds. */
  deadline: number;
  /** Aborted when the deadline passes. */
  signal: AbortSignal;
}

export const TIMEOUT_MESSAGE = 'Timeout: request did not complete within requested timeout - context deadline exceeded';
const INVALID_TIMEOUT = 'invalid timeout specified in the request URL';

const deadlines = new WeakMap<RequestLike, RequestDeadline>();

/** The deadline the timeout filter gave this request, if any. */
export function requestDeadline(req: RequestLike): RequestDeadline | undefined {
  return deadlines.get(req);
}

/**
 * The effective timeout of a request in ms (0: none), or the 400 message for an unparsable
 * `?timeout=`.
 */
export function effectiveTimeoutMs(req: RequestLike, defaultMs: number): {timeoutMs: number} | {error: string} {
  const value = requestQuery(req).get('timeout');
  let timeoutMs = Math.max(0, defaultMs);
  if (value !== null && value !== '') {
    let userMs: number;
    try {
      userMs = parseDuration(value);
    } catch (err) {
      return {error: `${INVALID_TIMEOUT} - ${(err as Error).message}`};
    }
    if (userMs > 0 && (timeoutMs === 0 || userMs < timeoutMs)) timeoutMs = userMs;
  }
  return {timeoutMs};
}

export function requestTimeoutFilter(options: RequestTimeoutOptions): Filter {
  const clock = options.clock ?? systemClock;
  const longRunning = options.isLongRunning ?? isLongRunningRequest;

  return (req, res, next) => {
    if (longRunning(req)) return next();
    const timeout = effectiveTimeoutMs(req, options.requestTimeoutMs);
    if ('error' in timeout) {
      writeStatus(res, 400, 'BadRequest', timeout.error);
      return;
    }
    if (timeout.timeoutMs === 0) return next();

    // The AbortController is made only when a handler asks for the signal: creating one costs more
    // than the rest of this filter, and almost no request ever looks at it.
    let controller: AbortController | undefined;
    let expired: Error | undefined;
    const signalOf = () => {
      if (!controller) {
        controller = new AbortController();
        if (expired) controller.abort(expired);
      }
      return controller.signal;
    };
    deadlines.set(req, {
      deadline: clock.now() + timeout.timeoutMs,
      get signal() {
        return signalOf();
      },
    });
    const guard = guardResponse(res);
    let finished = false;
    const timer = clock.setTimeout(() => {
      if (finished) return;
      expired = new Error('context deadline exceeded');
      controller?.abort(expired);
      options.onTimeout?.(req);
      if (res.headersSent || res.writableEnded) {
        guard.silence();
        abortResponse(req, res);
        return;
      }
      guard.takeOver(() => writeStatus(res, 504, 'Timeout', TIMEOUT_MESSAGE, {}));
    }, timeout.timeoutMs);
    res.on('close', () => {
      finished = true;
      clock.clearTimeout(timer);
    });
    next();
  };
}

type Method = (...args: unknown[]) => unknown;
const GUARDED = ['writeHead', 'setHeader', 'removeHeader', 'write', 'end', 'flushHeaders'] as const;

/**
 * Lets the filter take the response away from a handler that may still be running: after
 * silence(), the handler's writes are dropped (Go's timeout writer returns ErrHandlerTimeout).
 */
function guardResponse(res: ResponseLike): {silence(): void; takeOver(write: () => void): void} {
  let mode: 'handler' | 'filter' | 'silenced' = 'handler';
  const target = res as unknown as Record<string, Method | undefined>;
  for (const name of GUARDED) {
    const original = target[name];
    if (typeof original !== 'function') continue;
    target[name] = function (this: unknown, ...args: unknown[]) {
      if (mode === 'silenced') return name === 'write' ? false : res;
      return original.apply(res, args);
    };
  }
  return {
    silence: () => {
      mode = 'silenced';
    },
    takeOver: (write) => {
      mode = 'filter';
      write();
      mode = 'silenced';
    },
  };
}

/** Ends a response whose head is already out: reset the HTTP/2 stream or drop the HTTP/1 socket. */
function abortResponse(req: RequestLike, res: ResponseLike): void {
  const stream = (req as {stream?: {close?: (code?: number) => void}}).stream;
  if (stream?.close) stream.close(2 /* NGHTTP2_INTERNAL_ERROR */);
  else res.destroy?.(new Error('request timed out'));
}
