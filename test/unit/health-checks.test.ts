import {describe, expect, it} from '@jest/globals';
import {KvstoreCheck, kvstoreChecks, kvstoreOverrideChecks} from '../../src/daemons/apiserver/health/kvstore-check.js';
import {LogCheck} from '../../src/daemons/shared/health/log-check.js';
import {informerSyncCheck} from '../../src/daemons/apiserver/health/informer-sync.js';
import {storageReadinessHook} from '../../src/daemons/apiserver/health/storage-readiness.js';
import {runCheck} from '../../src/daemons/shared/health/check.js';
import {FakeClock, settle} from '../../src/daemons/shared/clock.js';

/** A store ping that answers as told and counts its calls. */
function fakePing() {
  const state = {calls: 0, fail: undefined as string | undefined, hang: false};
  const ping = (_timeoutMs: number) => {
    state.calls++;
    if (state.hang) return new Promise<void>(() => {});
    return state.fail ? Promise.reject(new Error(state.fail)) : Promise.resolve();
  };
  return {state, ping};
}

describe('kvstore check (health.md §6)', () => {
  it('fails until connected, then probes', async () => {
    const clock = new FakeClock();
    const check = new KvstoreCheck({name: 'kvstore', timeoutMs: 2000, clock});
    expect(await runCheck(check)).toBe('kvstore client connection not yet established');
    check.connectionFailed(new Error('dial tcp 127.0.0.1:2379: connect: connection refused'));
    expect(await runCheck(check)).toBe('dial tcp 127.0.0.1:2379: connect: connection refused');
    const {ping, state} = fakePing();
    check.connect(ping);
    expect(await runCheck(check)).toBeUndefined();
    expect(state.calls).toBe(1);
  });

  it('probes at most once per timeout/2 and otherwise repeats the last result', async () => {
    const clock = new FakeClock();
    const {ping, state} = fakePing();
    const check = new KvstoreCheck({name: 'kvstore', timeoutMs: 2000, ping, clock});
    expect(await runCheck(check)).toBeUndefined();
    state.fail = 'connection refused';
    // Within the same second: no probe, the last (good) result stands.
    await clock.advance(999);
    expect(await runCheck(check)).toBeUndefined();
    expect(state.calls).toBe(1);
    await clock.advance(1);
    expect(await runCheck(check)).toBe('error getting data from kvstore: connection refused');
    expect(state.calls).toBe(2);
    state.fail = undefined;
    await clock.advance(500);
    expect(await runCheck(check)).toBe('error getting data from kvstore: connection refused');
    expect(state.calls).toBe(2);
  });

  it('times a hanging probe out with its own timeout', async () => {
    const clock = new FakeClock();
    const {ping, state} = fakePing();
    state.hang = true;
    const check = new KvstoreCheck({name: 'kvstore-readiness', timeoutMs: 3000, ping, clock});
    const result = runCheck(check);
    await clock.advance(3000);
    expect(await result).toBe('error getting data from kvstore: context deadline exceeded');
  });

  it('reports "server is shutting down" once closed, and stays closed', async () => {
    const {ping} = fakePing();
    const check = new KvstoreCheck({name: 'kvstore', timeoutMs: 2000, ping, clock: new FakeClock()});
    check.close();
    check.connect(ping);
    expect(await runCheck(check)).toBe('server is shutting down');
  });

  it('builds the standard and override checks with their names and groups', () => {
    const pair = kvstoreChecks({healthcheckTimeoutMs: 2000, readycheckTimeoutMs: 2000});
    const override = kvstoreOverrideChecks(0, {healthcheckTimeoutMs: 2000, readycheckTimeoutMs: 2000});
    expect([pair.health, pair.readiness, override.health, override.readiness].map((c) => [c.name, c.group])).toEqual([
      ['kvstore', 'kvstore'],
      ['kvstore-readiness', 'kvstore-readiness'],
      ['kvstore-override-0', 'kvstore'],
      ['kvstore-override-readiness-0', 'kvstore-readiness'],
    ]);
  });

  it('keeps the two checks independent (separate limiters and timeouts)', async () => {
    const clock = new FakeClock();
    const {ping, state} = fakePing();
    const {health, readiness} = kvstoreChecks({healthcheckTimeoutMs: 2000, readycheckTimeoutMs: 2000, ping, clock});
    await runCheck(health);
    await runCheck(readiness);
    expect(state.calls).toBe(2);
  });
});

describe('log check', () => {
  it('passes while flushes complete and fails with "logging blocked" two minutes after the last one', async () => {
    const clock = new FakeClock();
    let blocked = false;
    let flushes = 0;
    const check = new LogCheck({
      clock,
      flush: () => {
        flushes++;
        return blocked ? new Promise(() => {}) : undefined;
      },
    });
    expect(await runCheck(check)).toBeUndefined();
    await clock.advance(5 * 60_000);
    expect(flushes).toBe(6);
    expect(await runCheck(check)).toBeUndefined();
    blocked = true;
    await clock.advance(60_000); // this flush never returns
    await clock.advance(60_000 - 1);
    expect(await runCheck(check)).toBeUndefined();
    await clock.advance(1);
    expect(await runCheck(check)).toBe('logging blocked');
    check.stop();
  });

  it('starts its loop only at the first check and stops it on stop()', async () => {
    const clock = new FakeClock();
    const check = new LogCheck({clock, flush: () => {}});
    expect(clock.pending).toBe(0);
    check.check();
    await settle();
    expect(clock.pending).toBe(1);
    check.stop();
    expect(clock.pending).toBe(0);
  });
});

describe('informer-sync check', () => {
  it.each([
    [[['*v1.Pod', true]], undefined],
    [
      [
        ['*v1.Pod', false],
        ['*v1.Namespace', true],
        ['*v1.ConfigMap', false],
      ],
      '2 informers not started yet: [*v1.ConfigMap *v1.Pod]',
    ],
  ] as const)('%j -> %s', async (informers, error) => {
    expect(await runCheck(informerSyncCheck(() => informers))).toBe(error);
  });
});

describe('storage initialization (--storage-initialization-timeout)', () => {
  it('holds the hook until storage is ready', async () => {
    const clock = new FakeClock();
    let ready = false;
    let done = false;
    void storageReadinessHook({timeoutMs: 60_000, isReady: () => ready, clock})({signal: new AbortController().signal}).then(() => (done = true));
    await clock.advance(30_000);
    expect(done).toBe(false);
    ready = true;
    await clock.advance(100);
    expect(done).toBe(true);
  });

  it('gives up at the timeout with a warning, letting the server become ready', async () => {
    const clock = new FakeClock();
    const warnings: string[] = [];
    let done = false;
    void storageReadinessHook({timeoutMs: 60_000, isReady: () => false, clock, warn: (m) => warnings.push(m)})({
      signal: new AbortController().signal,
    }).then(() => (done = true));
    await clock.advance(59_999);
    expect(done).toBe(false);
    await clock.advance(1);
    expect(done).toBe(true);
    expect(warnings).toEqual(['Deadline exceeded while waiting for storage readiness... ignoring']);
  });
});
