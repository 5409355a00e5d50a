/**
 * The HTTP LeaseLock against the real REST handler (loopback HTTP over a memory store), and two
 * electors on real time handing the lease over.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { Logger } from '../../src/lib/klog.js';
import { call, startTestApi, type TestApi } from '../helpers/memory-store.js';
import {
  ConflictError,
  fetchJsonHttp,
  HttpLeaseLock,
  LeaderElector,
  LeaseLockError,
  type ElectionOutcome,
} from '../../src/daemons/shared/leader-election/index.js';

const LEASES = '/apis/coordination.orch.io/v1/namespaces/orch-system/leases';
const LEASE = `${LEASES}/orch-controller-manager`;
const quiet: Logger = { info: () => undefined, warning: () => undefined, error: () => undefined, v: () => ({ enabled: false, info: () => undefined }) };

let api: TestApi;
beforeEach(async () => {
  api = await startTestApi({ bootstrap: false });
  const created = await call(api, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'orch-system' } } });
  expect(created.status).toBe(201);
});
afterEach(async () => {
  await api.close();
});

const newLock = (namespace = 'orch-system') => new HttpLeaseLock(fetchJsonHttp(api.url), namespace, 'orch-controller-manager');
const at = Date.parse('2026-11-22T10:00:00.250Z');
const record = (holderIdentity: string, leaderTransitions = 0) => ({
  holderIdentity, leaseDurationSeconds: 15, acquireTime: at, renewTime: at + 2000, leaderTransitions,
});

describe('HttpLeaseLock', () => {
  it('reads a missing lease as undefined, then creates and reads it back', async () => {
    const lock = newLock();
    expect(await lock.get()).toBeUndefined();
    const resourceVersion = await lock.create(record('cp-1_a'));
    const stored = await call(api, 'GET', LEASE);
    expect(stored.body).toMatchObject({
      apiVersion: 'coordination.orch.io/v1',
      kind: 'Lease',
      metadata: { name: 'orch-controller-manager', namespace: 'orch-system', resourceVersion },
      spec: {
        holderIdentity: 'cp-1_a', leaseDurationSeconds: 15, acquireTime: '2026-11-22T10:00:00.250000Z', renewTime: '2026-11-22T10:00:02.250000Z', leaseTransitions: 0,
      },
    });
    expect(await lock.get()).toEqual({ record: record('cp-1_a'), resourceVersion });
    expect(lock.describe()).toBe('orch-system/orch-controller-manager');
  });

  it('updates at the current resourceVersion and answers the new one', async () => {
    const lock = newLock();
    const first = await lock.create(record('a'));
    const second = await lock.update(record('b', 1), first);
    expect(second).not.toBe(first);
    expect(await newLock().get()).toEqual({ record: record('b', 1), resourceVersion: second });
  });

  it.each([
    ['create of an existing lease', async (lock: HttpLeaseLock) => {
      await lock.create(record('a'));
      await lock.create(record('b'));
    }, /already exists/],
    ['update at a stale resourceVersion', async (lock: HttpLeaseLock) => {
      const stale = await lock.create(record('a'));
      await lock.update(record('b', 1), stale);
      await lock.update(record('c', 2), stale);
    }, /the object has been modified/],
  ])('reports a %s as ConflictError', async (_name, race, message) => {
    const failure = await race(newLock()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConflictError);
    expect((failure as Error).message).toMatch(message);
  });

  it('keeps labels and annotations set by others across its updates', async () => {
    await call(api, 'POST', LEASES, {
      body: { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'orch-controller-manager', labels: { tier: 'control-plane' }, annotations: { note: 'kept' } }, spec: {} },
    });
    const lock = newLock();
    const current = await lock.get();
    expect(current?.record).toEqual({ holderIdentity: '', leaseDurationSeconds: 0, acquireTime: undefined, renewTime: undefined, leaderTransitions: 0 });
    await lock.update(record('a', 1), current!.resourceVersion);
    const stored = await call(api, 'GET', LEASE);
    expect(stored.body.metadata).toMatchObject({ labels: { tier: 'control-plane' }, annotations: { note: 'kept' } });
    expect(stored.body.spec.holderIdentity).toBe('a');
  });

  it('reports other failures as LeaseLockError with the server\'s status and message', async () => {
    const failure = await newLock('nowhere').create(record('a')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LeaseLockError);
    expect(failure).toMatchObject({ status: 404, message: 'namespaces "nowhere" not found' });
  });

  it('rejects when the server cannot be reached', async () => {
    const lock = new HttpLeaseLock(fetchJsonHttp('http://127.0.0.1:1'), 'orch-system', 'x');
    await expect(lock.get()).rejects.toThrow();
  });
});

describe('two electors over HTTP (lease 1 s, renew deadline 0.6 s, retry 0.2 s)', () => {
  interface Running {
    elector: LeaderElector;
    done: Promise<ElectionOutcome>;
    ledAt?: number;
  }

  const startElector = (identity: string, releaseOnCancel: boolean): Running => {
    const elector = new LeaderElector({
      lock: newLock(),
      identity,
      leaseDurationMs: 1000,
      renewDeadlineMs: 600,
      retryPeriodMs: 200,
      releaseOnCancel,
      logger: quiet,
      callbacks: { onStartedLeading: () => undefined, onStoppedLeading: () => undefined },
    });
    const running: Running = { elector, done: elector.run() };
    elector.onChange((state) => {
      if (state.state === 'leader' && running.ledAt === undefined) running.ledAt = Date.now();
    });
    return running;
  };

  const waitFor = async (condition: () => boolean, timeoutMs = 5000) => {
    const deadline = Date.now() + timeoutMs;
    while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(condition()).toBe(true);
  };

  const lease = async () => (await call(api, 'GET', LEASE)).body;

  it.each([
    ['hands over at once after a clean stop that releases', true, 0, 700],
    ['leaves the lease to expire when stopped without releasing', false, 750, 2500],
  ])('%s', async (_name, releaseOnCancel, minHandoverMs, maxHandoverMs) => {
    const a = startElector('host-a_1', releaseOnCancel);
    await waitFor(() => a.elector.snapshot().state === 'leader');
    const b = startElector('host-b_2', true);
    // a keeps renewing for longer than the lease duration while b waits.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(a.elector.snapshot().state).toBe('leader');
    expect(b.elector.snapshot()).toMatchObject({ state: 'candidate', holder: 'host-a_1' });
    const held = await lease();
    expect(held.spec).toMatchObject({ holderIdentity: 'host-a_1', leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(Date.parse(held.spec.renewTime)).toBeGreaterThan(Date.now() - 500);
    expect(held.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    const stoppedAt = Date.now();
    a.elector.stop();
    expect(await a.done).toBe('stopped');
    await waitFor(() => b.ledAt !== undefined);
    const handover = b.ledAt! - stoppedAt;
    expect(handover).toBeGreaterThanOrEqual(minHandoverMs);
    expect(handover).toBeLessThan(maxHandoverMs);
    expect((await lease()).spec).toMatchObject({ holderIdentity: 'host-b_2', leaseDurationSeconds: 1, leaseTransitions: 1 });

    b.elector.stop();
    expect(await b.done).toBe('stopped');
    expect((await lease()).spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 1 });
  });
});
