import {describe, expect, it} from '@jest/globals';
import {EventEmitter} from 'node:events';
import {ShutdownLifecycle, type ShutdownOptions, type ShutdownPhase} from '../../src/daemons/apiserver/lifecycle/shutdown.js';
import {FakeClock, settle} from '../../src/daemons/shared/clock.js';
import {runCheck} from '../../src/daemons/shared/health/check.js';
import {FakeRequest, FakeResponse} from './filters-fake-http.js';

const SHUTTING_DOWN_503 =
  '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"apiserver is shutting down","reason":"ServiceUnavailable","code":503}\n';

function setup(options: Partial<ShutdownOptions> = {}) {
  const clock = new FakeClock();
  const calls: string[] = [];
  let connectionsGone!: () => void;
  const exits: number[] = [];
  const lifecycle = new ShutdownLifecycle({
    clock,
    requestTimeoutMs: 60_000,
    exit: (code) => exits.push(code),
    server: {
      closeListeners: () => void calls.push('closeListeners'),
      connectionsClosed: () => new Promise<void>((resolve) => (connectionsGone = resolve)),
      closeConnections: () => void calls.push('closeConnections'),
    },
    ...options,
  });
  const phases: ShutdownPhase[] = [lifecycle.phase];
  lifecycle.on('phase', (phase) => phases.push(phase));

  /** Sends a request through the lifecycle filter; `served` tells whether it reached the handler. */
  const request = (url: string, headers: Record<string, string> = {}, method = 'GET') => {
    const req = new FakeRequest(url, method, headers);
    const res = new FakeResponse();
    let served = false;
    lifecycle.filter(req as never, res as never, () => (served = true));
    return {req, res, served};
  };
  return {clock, lifecycle, calls, phases, exits, request, closeAllConnections: () => connectionsGone()};
}

describe('shutdown state table (default mode)', () => {
  it('walks serving -> delaying -> graceful -> stopped with the upstream signals', async () => {
    const {clock, lifecycle, calls, request} = setup({shutdownDelayMs: 70_000});
    const inFlight = request('/api/v1/namespaces/default/pods');
    expect(inFlight.served).toBe(true);

    lifecycle.handleSignal();
    expect(lifecycle.phase).toBe('delaying termination');
    // readyz fails at once through the shutdown check; everything else is served normally.
    expect(await runCheck(lifecycle.shutdownCheck)).toBe('process is shutting down');
    expect(request('/api/v1/pods', {}, 'POST').served).toBe(true);
    await clock.advance(69_999);
    expect(lifecycle.phase).toBe('delaying termination');
    expect(calls).toEqual([]);

    await clock.advance(1);
    expect(lifecycle.phase).toBe('graceful termination');
    expect(calls).toEqual(['closeListeners']);
    expect(lifecycle.snapshot().signals).toEqual([
      'ShutdownInitiated',
      'PreShutdownHooksStopped',
      'AfterShutdownDelayDuration',
      'NotAcceptingNewRequest',
      'HTTPServerStoppedListening',
    ]);

    // A late request on an open connection: 503 with Retry-After: 1 and a Status.
    const late = request('/api/v1/pods');
    expect(late.served).toBe(false);
    expect([late.res.statusCode, late.res.headers, late.res.body]).toEqual([
      503,
      {'retry-after': '1', 'content-type': 'application/json', 'x-content-type-options': 'nosniff'},
      SHUTTING_DOWN_503,
    ]);
    // Probes and the server's own loopback client are still served.
    expect(request('/readyz').served).toBe(true);
    expect(request('/api/v1/pods', {'User-Agent': 'orch-apiserver/v0.1.0 (linux/amd64)'}).served).toBe(true);

    // Two requests still in flight (one from before the signal, one from the delay window).
    expect(lifecycle.snapshot().inFlight).toBe(2);
    inFlight.res.end();
    await settle();
    expect(lifecycle.hasSignaled('InFlightRequestsDrained')).toBe(false);
    expect(lifecycle.snapshot().inFlight).toBe(1);
  });

  it('drains, then stops once the connections are gone', async () => {
    const {clock, lifecycle, calls, phases, request, closeAllConnections} = setup({shutdownDelayMs: 1000});
    const a = request('/api/v1/pods');
    lifecycle.handleSignal();
    await clock.advance(1000);
    a.res.end();
    await settle();
    expect(lifecycle.hasSignaled('InFlightRequestsDrained')).toBe(true);
    expect(lifecycle.phase).toBe('graceful termination');
    closeAllConnections();
    await settle();
    expect(lifecycle.phase).toBe('stopped');
    expect(calls).toEqual(['closeListeners', 'closeConnections']);
    expect(phases).toEqual(['serving normally', 'delaying termination', 'graceful termination', 'stopped']);
    await lifecycle.done;
  });

  it('goes straight to graceful termination without a delay', async () => {
    const {lifecycle, phases, closeAllConnections} = setup();
    lifecycle.initiateShutdown();
    await settle();
    closeAllConnections();
    await settle();
    expect(phases).toEqual(['serving normally', 'graceful termination', 'stopped']);
  });

  it('gives connections at most the request timeout before cutting them', async () => {
    const {clock, lifecycle, calls} = setup({requestTimeoutMs: 60_000});
    lifecycle.initiateShutdown();
    await clock.advance(59_999);
    expect(lifecycle.phase).toBe('graceful termination');
    await clock.advance(1);
    expect(calls).toEqual(['closeListeners', 'closeConnections']);
    expect(lifecycle.phase).toBe('stopped');
  });

  it('bounds the drain of a stuck request by the request timeout', async () => {
    const {clock, lifecycle, request} = setup({requestTimeoutMs: 5000});
    request('/api/v1/pods');
    lifecycle.initiateShutdown();
    await clock.advance(4999);
    expect(lifecycle.hasSignaled('InFlightRequestsDrained')).toBe(false);
    await clock.advance(1);
    expect(lifecycle.hasSignaled('InFlightRequestsDrained')).toBe(true);
  });

  it('waits for pre-shutdown hooks even when the delay is shorter', async () => {
    const {clock, lifecycle} = setup({shutdownDelayMs: 1000});
    let finishHook!: () => void;
    const order: string[] = [];
    lifecycle.addPreShutdownHook('remove-endpoint', () => new Promise<void>((resolve) => (finishHook = resolve)));
    lifecycle.addPreShutdownHook('second', () => void order.push('second'));
    lifecycle.initiateShutdown();
    await clock.advance(5000);
    expect(order).toEqual([]); // sequential: the second waits for the first
    expect(lifecycle.hasSignaled('AfterShutdownDelayDuration')).toBe(true);
    expect(lifecycle.hasSignaled('NotAcceptingNewRequest')).toBe(false);
    finishHook();
    await settle();
    expect(order).toEqual(['second']);
    expect(lifecycle.hasSignaled('NotAcceptingNewRequest')).toBe(true);
  });

  it('keeps long-running requests out of the drain when there is no watch grace period', async () => {
    const {lifecycle, request} = setup();
    const watch = request('/api/v1/pods?watch=true');
    lifecycle.initiateShutdown();
    await settle();
    expect(lifecycle.hasSignaled('InFlightRequestsDrained')).toBe(true);
    expect(lifecycle.watchStopSignal.aborted).toBe(false);
    // A watch opened after the wait began still works until the server goes.
    expect(request('/api/v1/pods?watch=1').served).toBe(true);
    expect(lifecycle.snapshot().longRunning).toBe(2);
    watch.res.end();
    expect(lifecycle.snapshot().longRunning).toBe(1);
  });

  it('exits with code 1 on a second signal', () => {
    const {lifecycle, exits} = setup({shutdownDelayMs: 10_000});
    lifecycle.handleSignal();
    expect(exits).toEqual([]);
    lifecycle.handleSignal();
    expect(exits).toEqual([1]);
  });

  it('listens to SIGTERM and SIGINT', () => {
    const {lifecycle, exits} = setup({shutdownDelayMs: 10_000});
    const fakeProcess = new EventEmitter();
    const uninstall = lifecycle.installSignalHandlers(fakeProcess as never);
    fakeProcess.emit('SIGTERM');
    expect(lifecycle.phase).toBe('delaying termination');
    fakeProcess.emit('SIGINT');
    expect(exits).toEqual([1]);
    uninstall();
    expect(fakeProcess.listenerCount('SIGTERM')).toBe(0);
  });

  it.each([
    [{shutdownDelayMs: -1}, '--shutdown-delay-duration can not be negative value'],
    [{watchTerminationGracePeriodMs: -1}, '--shutdown-watch-termination-grace-period can not be negative value'],
  ])('rejects %j', (options, message) => {
    expect(() => setup(options)).toThrow(message);
  });

  it('records HasBeenReady', () => {
    const {lifecycle} = setup();
    lifecycle.markReady();
    expect(lifecycle.snapshot().signals).toEqual(['HasBeenReady']);
  });
});

describe('shutdown with --shutdown-send-retry-after', () => {
  it('keeps listening while draining, answering 429 with Retry-After: 5 and Connection: close', async () => {
    const {clock, lifecycle, calls, phases, request, closeAllConnections} = setup({shutdownDelayMs: 1000, sendRetryAfter: true});
    const inFlight = request('/apis/apps/v1/deployments');
    lifecycle.handleSignal();
    await clock.advance(1000);
    expect(lifecycle.phase).toBe('graceful termination');
    expect(calls).toEqual([]); // listener still open

    const rejected = request('/api/v1/pods');
    expect(rejected.served).toBe(false);
    expect([rejected.res.statusCode, rejected.res.headers, rejected.res.body]).toEqual([
      429,
      {
        connection: 'close',
        'retry-after': '5',
        'content-type': 'text/plain; charset=utf-8',
        'x-content-type-options': 'nosniff',
      },
      'The apiserver is shutting down, please try again later.\n',
    ]);
    // A watch is rejected the same way; probes, metrics and the loopback client are not.
    expect(request('/api/v1/pods?watch=true').res.statusCode).toBe(429);
    for (const path of ['/readyz', '/livez/ping', '/healthz?verbose', '/metrics']) expect(request(path).served).toBe(true);
    expect(request('/api/v1/pods', {'user-agent': 'orch-apiserver/v0.1.0'}).served).toBe(true);

    inFlight.res.end();
    await settle();
    expect(lifecycle.hasSignaled('InFlightRequestsDrained')).toBe(true);
    expect(calls).toEqual(['closeListeners']);
    // http.Server.Shutdown gets a fixed 2s after the drain.
    await clock.advance(1999);
    expect(lifecycle.phase).toBe('graceful termination');
    await clock.advance(1);
    expect(calls).toEqual(['closeListeners', 'closeConnections']);
    expect(phases).toEqual(['serving normally', 'delaying termination', 'graceful termination', 'stopped']);
    closeAllConnections();
  });

  it('serves everything normally during the delay', async () => {
    const {clock, lifecycle, request} = setup({shutdownDelayMs: 1000, sendRetryAfter: true});
    lifecycle.handleSignal();
    await clock.advance(999);
    expect(request('/api/v1/pods').served).toBe(true);
  });
});

describe('watch termination (--shutdown-watch-termination-grace-period)', () => {
  it('ends active watches at NotAcceptingNewRequest and spreads their release', async () => {
    const {clock, lifecycle, request} = setup({watchTerminationGracePeriodMs: 10_000});
    const watches = [1, 2, 3].map(() => request('/api/v1/pods?watch=true'));
    expect(watches.every((w) => w.served)).toBe(true);
    // The watch handler ends its stream when the stop signal fires.
    lifecycle.watchStopSignal.addEventListener('abort', () => watches.forEach((w) => w.res.end()));
    lifecycle.initiateShutdown();
    await settle();
    expect(lifecycle.watchStopSignal.aborted).toBe(true);
    // Rate max(3 / 10s, 200)/s with burst 1: one at once, then one every 5ms.
    expect(watches.map((w) => w.res.writableEnded)).toEqual([true, false, false]);
    await clock.advance(5);
    expect(watches.map((w) => w.res.writableEnded)).toEqual([true, true, false]);
    expect(lifecycle.hasSignaled('InFlightRequestsDrained')).toBe(false);
    await clock.advance(5);
    expect(watches.map((w) => w.res.writableEnded)).toEqual([true, true, true]);
    expect(lifecycle.hasSignaled('InFlightRequestsDrained')).toBe(true);
  });

  it('rejects new watches with 503 and waits at most the grace period', async () => {
    const {clock, lifecycle, request} = setup({watchTerminationGracePeriodMs: 10_000});
    request('/api/v1/pods?watch=true'); // never ends
    lifecycle.initiateShutdown();
    await settle();
    const late = request('/api/v1/namespaces/default/configmaps?watch=true');
    expect([late.served, late.res.statusCode, late.res.body]).toEqual([false, 503, SHUTTING_DOWN_503]);
    await clock.advance(9_999);
    expect(lifecycle.hasSignaled('InFlightRequestsDrained')).toBe(false);
    await clock.advance(1);
    expect(lifecycle.hasSignaled('InFlightRequestsDrained')).toBe(true);
  });

  it('does not track exec or other long-running non-watch requests', async () => {
    const {lifecycle, request} = setup({watchTerminationGracePeriodMs: 10_000});
    request('/api/v1/namespaces/default/pods/web/exec', {}, 'POST');
    lifecycle.initiateShutdown();
    await settle();
    expect(lifecycle.hasSignaled('InFlightRequestsDrained')).toBe(true);
  });

  it('lets a watch whose client went away leave at once', async () => {
    const {lifecycle, request} = setup({watchTerminationGracePeriodMs: 10_000});
    const watch = request('/api/v1/pods?watch=true');
    lifecycle.initiateShutdown();
    watch.res.abort();
    await settle();
    expect(lifecycle.hasSignaled('InFlightRequestsDrained')).toBe(true);
  });
});
