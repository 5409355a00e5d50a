import {describe, expect, it} from '@jest/globals';
import {createHealthHandler} from '../../src/daemons/shared/health/handler.js';
import {HealthRegistry} from '../../src/daemons/shared/health/registry.js';
import {namedCheck, pingCheck} from '../../src/daemons/shared/health/check.js';
import {PostStartHooks} from '../../src/daemons/apiserver/health/post-start-hooks.js';
import {FakeClock, settle} from '../../src/daemons/shared/clock.js';
import {FakeRequest, FakeResponse, ended} from './filters-fake-http.js';

async function get(registry: HealthRegistry, url: string): Promise<FakeResponse | undefined> {
  const res = new FakeResponse();
  const handled = createHealthHandler(registry)(new FakeRequest(url) as never, res as never);
  return handled ? ended(res) : undefined;
}

function standardRegistry(options: ConstructorParameters<typeof HealthRegistry>[0] = {}) {
  const registry = new HealthRegistry(options);
  let kvstoreUp = true;
  let shuttingDown = false;
  registry.addHealthChecks(pingCheck, namedCheck('log', () => {}));
  registry.addHealthChecks(
    namedCheck(
      'kvstore',
      () => {
        if (!kvstoreUp) throw new Error('error getting data from kvstore: connection refused');
      },
      'kvstore',
    ),
  );
  registry.addReadyzChecks(namedCheck('kvstore-readiness', () => {}, 'kvstore-readiness'), namedCheck('informer-sync', () => {}));
  registry.setShutdownCheck(
    namedCheck('shutdown', () => {
      if (shuttingDown) throw new Error('process is shutting down');
    }),
  );
  return {
    registry,
    setKvstore: (up: boolean) => (kvstoreUp = up),
    shutdown: () => (shuttingDown = true),
  };
}

describe('health endpoints over fake HTTP', () => {
  it('registers each check on the roots of health.md §4, shutdown last on readyz', async () => {
    const {registry} = standardRegistry();
    const hooks = new PostStartHooks({registry});
    hooks.add('bootstrap-controller', () => {});
    await hooks.run();
    expect((await get(registry, '/healthz?verbose'))!.body).toBe(
      '[+]ping ok\n[+]log ok\n[+]kvstore ok\n[+]poststarthook/bootstrap-controller ok\nhealthz check passed\n',
    );
    expect((await get(registry, '/livez?verbose'))!.body).toBe(
      '[+]ping ok\n[+]log ok\n[+]kvstore ok\n[+]poststarthook/bootstrap-controller ok\nlivez check passed\n',
    );
    expect((await get(registry, '/readyz?verbose'))!.body).toBe(
      '[+]ping ok\n[+]log ok\n[+]kvstore ok\n[+]kvstore-readiness ok\n[+]informer-sync ok\n' +
        '[+]poststarthook/bootstrap-controller ok\n[+]shutdown ok\nreadyz check passed\n',
    );
  });

  it('answers a healthy root with "ok" and the plain-text headers', async () => {
    const res = (await get(standardRegistry().registry, '/livez'))!;
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('ok');
    expect(res.headers).toEqual({'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff'});
  });

  it('fails a root with 500 and the withheld reason, logging the real one', async () => {
    const logs: [number, string][] = [];
    const {registry, setKvstore} = standardRegistry({logger: (v, m) => logs.push([v, m])});
    setKvstore(false);
    const res = (await get(registry, '/livez?exclude=shutdown'))!;
    expect(res.statusCode).toBe(500);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).toBe(
      '[+]ping ok\n[+]log ok\n[-]kvstore failed: reason withheld\n' +
        'warn: some health checks cannot be excluded: no matches for "shutdown"\nlivez check failed\n',
    );
    expect(logs).toEqual([
      [6, 'cannot exclude some health checks, no health checks are installed matching "shutdown"'],
      [2, 'kvstore check failed: livez\n[-]kvstore failed: error getting data from kvstore: connection refused\n'],
    ]);
  });

  it('serves individual checks, revealing the error text', async () => {
    const {registry, setKvstore, shutdown} = standardRegistry();
    const ok = (await get(registry, '/readyz/kvstore'))!;
    expect([ok.statusCode, ok.body, ok.headers['content-type']]).toEqual([200, 'ok', 'text/plain; charset=utf-8']);
    setKvstore(false);
    shutdown();
    const failed = (await get(registry, '/livez/kvstore?verbose&exclude=kvstore'))!;
    expect([failed.statusCode, failed.body]).toEqual([500, 'internal server error: error getting data from kvstore: connection refused\n']);
    expect(failed.headers['x-content-type-options']).toBe('nosniff');
    const shut = (await get(registry, '/readyz/shutdown'))!;
    expect([shut.statusCode, shut.body]).toEqual([500, 'internal server error: process is shutting down\n']);
  });

  it.each([
    ['/livez/shutdown', 'shutdown is readyz-only'],
    ['/healthz/informer-sync', 'informer-sync is readyz-only'],
    ['/readyz/nope', 'unknown check'],
    ['/readyz/', 'trailing slash'],
    ['/readyzz', 'other path'],
    ['/api/v1/pods', 'API path'],
  ])('leaves %s to the caller (%s)', async (url) => {
    expect(await get(standardRegistry().registry, url)).toBeUndefined();
  });

  it('serves check names containing slashes, percent-encoded or not', async () => {
    const {registry} = standardRegistry();
    const hooks = new PostStartHooks({registry});
    hooks.add('rbac/bootstrap-roles', () => {});
    expect((await get(registry, '/readyz/poststarthook/rbac/bootstrap-roles'))!.body).toBe('internal server error: not finished\n');
    await hooks.run();
    expect((await get(registry, '/readyz/poststarthook%2Frbac%2Fbootstrap-roles'))!.body).toBe('ok');
  });

  it('serves a root with no checks as a single ping', async () => {
    expect((await get(new HealthRegistry(), '/healthz?verbose'))!.body).toBe('[+]ping ok\nhealthz check passed\n');
  });

  it('rejects a check name registered twice on a root', () => {
    const registry = new HealthRegistry();
    registry.addHealthChecks(pingCheck);
    expect(() => registry.addReadyzChecks(pingCheck)).toThrow('health check "ping" is already registered on /readyz');
  });

  it('rejects a negative livez grace period', () => {
    expect(() => new HealthRegistry({livezGracePeriodMs: -1})).toThrow('--livez-grace-period can not be a negative value');
  });

  it('signals the first successful readyz once', async () => {
    let ready = 0;
    const {registry, setKvstore} = standardRegistry({onFirstReady: () => ready++});
    setKvstore(false);
    await get(registry, '/readyz');
    await get(registry, '/livez');
    expect(ready).toBe(0);
    setKvstore(true);
    await get(registry, '/readyz');
    await get(registry, '/readyz');
    expect(ready).toBe(1);
  });

  it('does not write to a response a filter already ended', async () => {
    const registry = new HealthRegistry();
    const res = new FakeResponse();
    res.end('timeout');
    createHealthHandler(registry)(new FakeRequest('/healthz') as never, res as never);
    await settle();
    expect(res.body).toBe('timeout');
  });
});

describe('post-start hooks and the livez grace period (health.md §5)', () => {
  it.each([
    // [grace ms, ms after registration, livez line, readyz line]
    [0, 1, '[-]poststarthook/slow failed: reason withheld', '[-]poststarthook/slow failed: reason withheld'],
    [10_000, 0, '[+]poststarthook/slow ok', '[-]poststarthook/slow failed: reason withheld'],
    [10_000, 10_000, '[+]poststarthook/slow ok', '[-]poststarthook/slow failed: reason withheld'],
    [10_000, 10_001, '[-]poststarthook/slow failed: reason withheld', '[-]poststarthook/slow failed: reason withheld'],
  ])('grace %ims, %ims after registration, hook not finished', async (grace, elapsed, livezLine, readyzLine) => {
    const clock = new FakeClock(1_000);
    const registry = new HealthRegistry({clock, livezGracePeriodMs: grace});
    const hooks = new PostStartHooks({registry});
    hooks.add('slow', () => new Promise(() => {}));
    void hooks.run();
    await clock.advance(elapsed);
    expect((await get(registry, '/livez?verbose'))!.body).toContain(livezLine + '\n');
    expect((await get(registry, '/readyz?verbose'))!.body).toContain(readyzLine + '\n');
    expect((await get(registry, '/healthz?verbose'))!.body).toContain(readyzLine + '\n');
  });

  it('passes a hook check once the hook returns, and only then', async () => {
    const registry = new HealthRegistry();
    const hooks = new PostStartHooks({registry});
    let finish!: () => void;
    hooks.add('bootstrap-controller', () => new Promise<void>((resolve) => (finish = resolve)));
    const all = hooks.run();
    await settle();
    expect(hooks.status()).toEqual([{name: 'bootstrap-controller', done: false}]);
    expect((await get(registry, '/readyz/poststarthook/bootstrap-controller'))!.statusCode).toBe(500);
    finish();
    await all;
    expect((await get(registry, '/readyz/poststarthook/bootstrap-controller'))!.body).toBe('ok');
  });

  it('reports a failing hook as fatal, with upstream wording', async () => {
    const fatal: string[] = [];
    const hooks = new PostStartHooks({registry: new HealthRegistry(), onFatal: (m) => fatal.push(m)});
    hooks.add('rbac/bootstrap-roles', () => {
      throw new Error('kvstore down');
    });
    void hooks.run();
    await settle();
    expect(fatal).toEqual(['PostStartHook "rbac/bootstrap-roles" failed: kvstore down']);
  });

  it('does not count a hook ended by the stop signal as failed', async () => {
    const fatal: string[] = [];
    const hooks = new PostStartHooks({registry: new HealthRegistry(), onFatal: (m) => fatal.push(m)});
    hooks.add('rbac/bootstrap-roles', ({signal}) => new Promise<void>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))));
    const stop = new AbortController();
    const all = hooks.run(stop.signal);
    await settle();
    stop.abort();
    await all;
    expect(fatal).toEqual([]);
    expect(hooks.status()).toEqual([{name: 'rbac/bootstrap-roles', done: false}]);
  });

  it('refuses duplicate hooks and hooks added after the run', async () => {
    const hooks = new PostStartHooks({registry: new HealthRegistry()});
    hooks.add('a', () => {});
    expect(() => hooks.add('a', () => {})).toThrow('unable to add "a" because it was already registered');
    await hooks.run();
    expect(() => hooks.add('b', () => {})).toThrow('unable to add "b" because PostStartHooks have already been executed');
  });

  it('hands the hooks the shutdown signal', async () => {
    const stop = new AbortController();
    const hooks = new PostStartHooks({registry: new HealthRegistry()});
    let seen: AbortSignal | undefined;
    hooks.add('controller', ({signal}) => void (seen = signal));
    await hooks.run(stop.signal);
    stop.abort();
    expect(seen?.aborted).toBe(true);
  });
});
