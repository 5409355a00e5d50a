/**
 * Graceful termination of the API server (shutdown.md; the seed's state table):
 *
 * | phase                  | entered when                                                     |
 * |------------------------|------------------------------------------------------------------|
 * | `serving normally`     | start                                                            |
 * | `delaying termination` | first SIGTERM/SIGINT, with a shutdown delay or pre-shutdown hooks |
 * | `graceful termination` | delay elapsed and hooks done (NotAcceptingNewRequest)            |
 * | `stopped`              | requests drained and the HTTP server shut down                    |
 *
 * The upstream lifecycle signals fire along the way (ShutdownInitiated, PreShutdownHooksStopped,
 * AfterShutdownDelayDuration, NotAcceptingNewRequest, InFlightRequestsDrained,
 * HTTPServerStoppedListening, and HasBeenReady at the first successful /readyz).
 *
 * Default mode: at NotAcceptingNewRequest the listeners close, connections get up to the request
 * timeout to finish, and late requests on open connections get 503 `apiserver is shutting down`.
 * --shutdown-send-retry-after: the listeners stay open until the drain is over, and every
 * non-exempt request gets 429 with `Retry-After: 5` and `Connection: close`; then the HTTP server
 * gets 2s to close. Watches are drained (ended, release rate-limited) only with
 * --shutdown-watch-termination-grace-period > 0. A second signal exits at once with code 1.
 */
import {EventEmitter} from 'node:events';
import {tearDownConnection} from '../filters/connection.js';
import {requestPath, headerValue, type Filter, type RequestLike} from '../../shared/http/http-types.js';
import {isLongRunning, requestInfoOf} from '../filters/request-info.js';
import {writeHttpError, writeStatus} from '../../shared/http/status.js';
import type {HealthCheck} from '../../shared/health/check.js';
import {sleep, systemClock, waitAtMost, type Clock} from '../../shared/clock.js';
import {RequestWaitGroup} from './wait-group.js';

export type ShutdownPhase = 'serving normally' | 'delaying termination' | 'graceful termination' | 'stopped';

export type LifecycleSignal =
  | 'HasBeenReady'
  | 'ShutdownInitiated'
  | 'PreShutdownHooksStopped'
  | 'AfterShutdownDelayDuration'
  | 'NotAcceptingNewRequest'
  | 'InFlightRequestsDrained'
  | 'HTTPServerStoppedListening';

/** What the lifecycle asks of the HTTP server (the lead's wiring of node:http/node:http2). */
export interface ServerControl {
  /**
   * Stop accepting: close the listening sockets (server.close()), close idle keep-alive
   * connections and send GOAWAY on HTTP/2 sessions. Must not wait for active connections.
   */
  closeListeners(): void | Promise<void>;
  /** Resolves once no connection is left (server.close's callback). Default: at once. */
  connectionsClosed?(): Promise<void>;
  /** Cuts every connection still open (the end of shutdown; watches included). */
  closeConnections?(): void;
}

export interface ShutdownOptions {
  /** --shutdown-delay-duration, ms. */
  shutdownDelayMs?: number;
  /** --shutdown-send-retry-after. */
  sendRetryAfter?: boolean;
  /** --shutdown-watch-termination-grace-period, ms; 0 leaves watches alone. */
  watchTerminationGracePeriodMs?: number;
  /** --request-timeout, ms: the HTTP server's shutdown timeout in default mode and the drain bound. */
  requestTimeoutMs?: number;
  server: ServerControl;
  clock?: Clock;
  isLongRunning?: (req: RequestLike) => boolean;
  isWatch?: (req: RequestLike) => boolean;
  /** User-Agent prefix of the server's own loopback client, exempt from rejections. */
  loopbackUserAgentPrefix?: string;
  /** Called by a second signal (default: process.exit). */
  exit?: (code: number) => void;
  /** Structured log of the shutdown events (klog-style message and key/values). */
  log?: (message: string, ...kv: unknown[]) => void;
}

export interface LifecycleSnapshot {
  phase: ShutdownPhase;
  signals: LifecycleSignal[];
  /** Non-long-running requests being served. */
  inFlight: number;
  /** Long-running requests (watches, exec...) being served. */
  longRunning: number;
}

/** Paths served normally whatever the shutdown phase (probes and metrics). */
const EXEMPT_PATH_PREFIXES = ['/readyz', '/livez', '/healthz', '/metrics'];
const RETRY_AFTER_MESSAGE = 'The apiserver is shutting down, please try again later.';
/** Retry-after mode: how long http.Server.Shutdown may take after the drain. */
const RETRY_AFTER_MODE_SHUTDOWN_TIMEOUT_MS = 2000;
/** Watch releases per second at least, whatever the grace period (upstream's floor). */
const MIN_WATCH_RELEASE_RATE = 200;

export class ShutdownLifecycle extends EventEmitter<{
  phase: [phase: ShutdownPhase, previous: ShutdownPhase];
  signal: [name: LifecycleSignal];
}> {
  private currentPhase: ShutdownPhase = 'serving normally';
  private readonly fired = new Map<LifecycleSignal, {promise: Promise<void>; resolve: () => void; done: boolean}>();
  private readonly firedOrder: LifecycleSignal[] = [];
  private readonly preShutdownHooks: {name: string; hook: () => Promise<void> | void}[] = [];
  private readonly clock: Clock;
  private readonly options: Required<Omit<ShutdownOptions, 'server' | 'clock' | 'log'>> & Pick<ShutdownOptions, 'log'>;
  private readonly server: ServerControl;
  private readonly requests: RequestWaitGroup;
  private readonly watches: RequestWaitGroup;
  private readonly watchController = new AbortController();
  private signalCount = 0;
  private longRunningCount = 0;
  /** Resolves when the phase is `stopped`. */
  readonly done: Promise<void>;
  private resolveDone!: () => void;

  constructor(options: ShutdownOptions) {
    super();
    const delay = options.shutdownDelayMs ?? 0;
    const grace = options.watchTerminationGracePeriodMs ?? 0;
    if (delay < 0) throw new Error('--shutdown-delay-duration can not be negative value');
    if (grace < 0) throw new Error('--shutdown-watch-termination-grace-period can not be negative value');
    this.clock = options.clock ?? systemClock;
    this.server = options.server;
    this.options = {
      shutdownDelayMs: delay,
      sendRetryAfter: options.sendRetryAfter ?? false,
      watchTerminationGracePeriodMs: grace,
      requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
      isLongRunning: options.isLongRunning ?? ((req) => isLongRunning(requestInfoOf(req))),
      isWatch: options.isWatch ?? ((req) => requestInfoOf(req).verb === 'watch'),
      loopbackUserAgentPrefix: options.loopbackUserAgentPrefix ?? 'orch-apiserver/',
      exit: options.exit ?? ((code) => process.exit(code)),
      log: options.log,
    };
    this.requests = new RequestWaitGroup(this.clock);
    this.watches = new RequestWaitGroup(this.clock);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  get phase(): ShutdownPhase {
    return this.currentPhase;
  }

  hasSignaled(name: LifecycleSignal): boolean {
    return this.entry(name).done;
  }

  /** Resolves when the signal fires (at once if it has). */
  signaled(name: LifecycleSignal): Promise<void> {
    return this.entry(name).promise;
  }

  /**
   * Aborted when watches must end (NotAcceptingNewRequest, only with a watch termination grace
   * period): the watch handler ends its stream without an ERROR event.
   */
  get watchStopSignal(): AbortSignal {
    return this.watchController.signal;
  }

  snapshot(): LifecycleSnapshot {
    return {phase: this.currentPhase, signals: [...this.firedOrder], inFlight: this.requests.size, longRunning: this.longRunningCount};
  }

  /** The readyz-only `shutdown` check: fails from the first signal on. */
  readonly shutdownCheck: HealthCheck = {
    name: 'shutdown',
    check: () => {
      if (this.hasSignaled('ShutdownInitiated')) throw new Error('process is shutting down');
    },
  };

  /** The first successful /readyz (wire to HealthRegistry.whenFirstReady). */
  markReady(): void {
    this.fire('HasBeenReady');
  }

  /** Runs sequentially when shutdown starts; NotAcceptingNewRequest waits for them. */
  addPreShutdownHook(name: string, hook: () => Promise<void> | void): void {
    if (this.preShutdownHooks.some((h) => h.name === name)) throw new Error(`unable to add ${JSON.stringify(name)} because it is already registered`);
    this.preShutdownHooks.push({name, hook});
  }

  /** SIGTERM/SIGINT: the first starts the graceful sequence, the second exits with code 1. */
  handleSignal(): void {
    this.signalCount++;
    if (this.signalCount === 1) this.initiateShutdown();
    else this.options.exit(1);
  }

  /** Listens to SIGTERM and SIGINT on `target`; returns a function removing the listeners. */
  installSignalHandlers(target: Pick<NodeJS.Process, 'on' | 'off'> = process): () => void {
    const listener = () => this.handleSignal();
    target.on('SIGTERM', listener);
    target.on('SIGINT', listener);
    return () => {
      target.off('SIGTERM', listener);
      target.off('SIGINT', listener);
    };
  }

  /** Starts the graceful sequence (idempotent). */
  initiateShutdown(): void {
    if (this.hasSignaled('ShutdownInitiated')) return;
    this.fire('ShutdownInitiated');
    if (this.options.shutdownDelayMs > 0 || this.preShutdownHooks.length > 0) this.setPhase('delaying termination');

    void this.runPreShutdownHooks().then(() => this.fire('PreShutdownHooksStopped'));
    void sleep(this.clock, this.options.shutdownDelayMs).then(() => this.fire('AfterShutdownDelayDuration'));
    void Promise.all([this.signaled('PreShutdownHooksStopped'), this.signaled('AfterShutdownDelayDuration')]).then(() =>
      this.stopAcceptingRequests(),
    );
  }

  /**
   * The shutdown part of the filter chain; place it outermost (before authentication): it answers
   * 429/503 while draining and tracks in-flight requests.
   */
  readonly filter: Filter = (req, res, next) => {
    const exempt = this.isExempt(req);
    if (this.options.sendRetryAfter && this.hasSignaled('NotAcceptingNewRequest') && !exempt) {
      tearDownConnection(req, res);
      res.setHeader('Retry-After', '5');
      writeHttpError(res, 429, RETRY_AFTER_MESSAGE);
      return;
    }

    if (this.options.isLongRunning(req)) {
      this.longRunningCount++;
      res.on('close', () => this.longRunningCount--);
      if (this.options.watchTerminationGracePeriodMs > 0 && this.options.isWatch(req)) {
        const leave = this.watches.join();
        if (!leave) return writeShuttingDown(res);
        deferEndWhileDraining(res, leave);
      }
      return next();
    }

    const leave = this.requests.join();
    if (!leave) {
      if (exempt) return next();
      return writeShuttingDown(res);
    }
    res.on('close', () => leave(() => {}));
    next();
  };

  private isExempt(req: RequestLike): boolean {
    const path = requestPath(req);
    if (EXEMPT_PATH_PREFIXES.some((prefix) => path.startsWith(prefix))) return true;
    return headerValue(req, 'user-agent').startsWith(this.options.loopbackUserAgentPrefix);
  }

  private async runPreShutdownHooks(): Promise<void> {
    for (const {name, hook} of this.preShutdownHooks) {
      try {
        await hook();
      } catch (error) {
        this.options.log?.('PreShutdownHook failed', 'name', name, 'err', error);
      }
    }
  }

  private stopAcceptingRequests(): void {
    this.fire('NotAcceptingNewRequest');
    this.setPhase('graceful termination');
    const retryAfterMode = this.options.sendRetryAfter;
    const httpStopped = retryAfterMode
      ? this.signaled('InFlightRequestsDrained').then(() => this.stopHttpServer(RETRY_AFTER_MODE_SHUTDOWN_TIMEOUT_MS))
      : this.stopHttpServer(this.options.requestTimeoutMs);

    // Each request is bounded by the request timeout, so waiting longer than it cannot help.
    const requestsDrained = this.requests.wait(this.options.requestTimeoutMs);
    const grace = this.options.watchTerminationGracePeriodMs;
    let watchesDrained = Promise.resolve();
    if (grace > 0) {
      watchesDrained = this.watches.wait(grace, (count) => Math.max(count / (grace / 1000), MIN_WATCH_RELEASE_RATE));
      this.watchController.abort();
    }
    void Promise.all([requestsDrained, watchesDrained]).then(() => this.fire('InFlightRequestsDrained'));
    void Promise.all([this.signaled('InFlightRequestsDrained'), httpStopped]).then(() => {
      this.setPhase('stopped');
      this.resolveDone();
    });
  }

  /** http.Server.Shutdown: close listeners, then give connections `timeoutMs` before cutting them. */
  private async stopHttpServer(timeoutMs: number): Promise<void> {
    await this.server.closeListeners();
    this.fire('HTTPServerStoppedListening');
    await waitAtMost(this.clock, this.server.connectionsClosed?.() ?? Promise.resolve(), timeoutMs);
    this.server.closeConnections?.();
  }

  private entry(name: LifecycleSignal): {promise: Promise<void>; resolve: () => void; done: boolean} {
    let entry = this.fired.get(name);
    if (!entry) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      entry = {promise, resolve, done: false};
      this.fired.set(name, entry);
    }
    return entry;
  }

  private fire(name: LifecycleSignal): void {
    const entry = this.entry(name);
    if (entry.done) return;
    entry.done = true;
    this.firedOrder.push(name);
    entry.resolve();
    this.options.log?.('[graceful-termination] shutdown event', 'name', name);
    this.emit('signal', name);
  }

  private setPhase(phase: ShutdownPhase): void {
    if (phase === this.currentPhase) return;
    const previous = this.currentPhase;
    this.currentPhase = phase;
    this.emit('phase', phase, previous);
  }
}

/** The wait-group rejection: 503, `Retry-After: 1`, a ServiceUnavailable Status. */
function writeShuttingDown(res: Parameters<Filter>[1]): void {
  res.setHeader('Retry-After', '1');
  writeStatus(res, 503, 'ServiceUnavailable', 'apiserver is shutting down');
}

/**
 * A tracked watch leaves the wait group when its handler ends the response; while draining, that
 * end is held back until the release limiter allows it, so that clients reconnect spread out.
 */
function deferEndWhileDraining(res: Parameters<Filter>[1], leave: (release: () => void) => void): void {
  const end = res.end.bind(res);
  let ended = false;
  res.end = ((...args: Parameters<typeof end>) => {
    if (ended) return res;
    ended = true;
    leave(() => end(...args));
    return res;
  }) as typeof res.end;
  // A client that goes away leaves at once.
  res.on('close', () => {
    if (!ended) {
      ended = true;
      leave(() => {});
    }
  });
}
