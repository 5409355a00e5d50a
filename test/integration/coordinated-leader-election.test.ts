/**
 * Coordinated leader election as users run it: `orch apiserver` with the CoordinatedLeaderElection
 * gate and the beta APIs on, and two `orch controller-manager` processes. Both register
 * LeaseCandidates; the API server's controller writes the Lease's holder (the older candidate, the
 * versions being equal, as OldestEmulationVersion says); that one leads, the other never takes the
 * lease; after a clean stop of the leader the controller pings the candidates and hands the lease to
 * the one that answers.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {startApiServerProcess, sleep, type ServerProcess} from '../helpers/apiserver.js';
import {SHORT_LEASE_ARGS, startControllerManager, type ControllerManagerProcess} from '../helpers/controller-manager.js';

const NS = '/apis/coordination.orch.io';
const LEASE = `${NS}/v1/namespaces/orch-system/leases/orch-controller-manager`;
const CANDIDATES = `${NS}/v1beta1/namespaces/orch-system/leasecandidates`;

let server: ServerProcess;
const managers: ControllerManagerProcess[] = [];

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

async function lease(): Promise<{holderIdentity?: string; strategy?: string; preferredHolder?: string} | undefined> {
  const r = await server.client.get(LEASE, {timeoutMs: 2000});
  return r.status === 200 ? r.body.spec : undefined;
}

beforeAll(async () => {
  server = await startApiServerProcess({
    engine: 'sqlite',
    args: [
      '--feature-gates=CoordinatedLeaderElection=true', '--runtime-config=api/beta=true',
      '--coordinated-leadership-lease-duration=2s', '--coordinated-leadership-renew-deadline=1500ms', '--coordinated-leadership-retry-period=500ms',
    ],
  });
}, 30_000);

afterAll(async () => {
  await Promise.all(managers.map((m) => m.stop()));
  await server?.stop();
});

describe('coordinated leader election', () => {
  it('elects the older candidate, keeps the other out, and hands over after the leader stops', async () => {
    const start = (name: string) => startControllerManager({name, orchconfigPath: server.orchconfigPath, args: [...SHORT_LEASE_ARGS, '--controllers=nodelifecycle']});
    const first = await start('cm-1');
    managers.push(first);
    await first.waitForLine(/Coordinated leader election: registering as a LeaseCandidate/, 10_000);
    // A second later, so the creation timestamps (second precision) tell the two apart.
    await until('the first candidate', async () => {
      const r = await server.client.get(`${CANDIDATES}/${first.identity}`, {timeoutMs: 2000});
      return r.status === 200 ? r.body : undefined;
    }, 10_000).catch((error) => {
      throw new Error(`${error.message}\n${first.output().slice(-3000)}`);
    });
    await sleep(1100);
    const second = await start('cm-2');
    managers.push(second);

    const candidates = await until('both LeaseCandidates', async () => {
      const r = await server.client.get(CANDIDATES, {timeoutMs: 2000});
      const items = (r.body.items ?? []) as {metadata: {name: string}; spec: Record<string, string>}[];
      return items.length === 2 ? items : undefined;
    }, 10_000);
    for (const c of candidates) {
      expect(c.spec).toMatchObject({leaseName: 'orch-controller-manager', strategy: 'OldestEmulationVersion'});
      expect(c.spec.binaryVersion).toMatch(/^\d+\.\d+\.\d+$/);
      expect(c.spec.emulationVersion).toMatch(/^\d+\.\d+$/);
    }

    // The controller named the first; it leads, and the lease carries the strategy.
    await first.waitForLine(/"Starting controller"/, 10_000);
    const held = await lease();
    expect(held).toMatchObject({holderIdentity: first.identity, strategy: 'OldestEmulationVersion'});
    // The second is a candidate only: for several lease durations it never takes the lease.
    await sleep(4000);
    expect((await lease())?.holderIdentity).toBe(first.identity);
    expect(second.output()).not.toMatch(/"Starting controller"/);

    // A clean stop releases the lease; the controller pings, the second answers and is elected.
    const stoppedAt = Date.now();
    await first.signal('SIGTERM');
    await second.waitForLine(/"Starting controller"/, 15_000);
    const takeoverMs = Date.now() - stoppedAt;
    expect((await lease())?.holderIdentity).toBe(second.identity);
    console.log(`coordinated takeover after a clean stop: ${takeoverMs} ms`);
  }, 60_000);
});
