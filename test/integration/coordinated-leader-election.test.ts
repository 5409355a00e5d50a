/**
 * Coordinated leader election as users run it: `orch apiserver` with the CoordinatedLeaderElection
 * gate and the beta APIs on, and two `orch controller-manager` processes. Both register
 * LeaseCandidates; the API server's controller writes the Lease's holder (the older candidate, the
 * versions being equal, as OldestEmulationVersion says); that one leads, the other never takes the
 * lease; after a clean stop of the leader the controller pings the candidates and hands the lease to
 * the one that answers. Then a candidate with an older emulation version joins: the controller marks
 * it preferredHolder, the leader ends its term (stops renewing, exits as upstream's controller manager
 * does on a lost lease) and the lease goes to the older version.
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
  }, 30_000);

  it('prefers an older emulation version: the leader ends its term and the lease moves', async () => {
    const leader = managers[1];
    expect((await lease())?.holderIdentity).toBe(leader.identity);
    const name = 'older-release';
    const renew = async (create: boolean) => {
      const body = {
        apiVersion: 'coordination.orch.io/v1beta1', kind: 'LeaseCandidate', metadata: {name, namespace: 'orch-system'},
        spec: {leaseName: 'orch-controller-manager', binaryVersion: '0.0.1', emulationVersion: '0.0', strategy: 'OldestEmulationVersion', renewTime: new Date().toISOString()},
      };
      if (create) return server.client.post(CANDIDATES, body, {timeoutMs: 2000});
      const current = await server.client.get(`${CANDIDATES}/${name}`, {timeoutMs: 2000});
      return server.client.put(`${CANDIDATES}/${name}`, {...body, metadata: current.body.metadata}, {timeoutMs: 2000});
    };
    expect((await renew(true)).status).toBe(201);
    // This candidate answers pings (and keeps fresh) as client-go's LeaseCandidate would.
    let renewing = true;
    const renewer = (async () => {
      while (renewing) {
        await sleep(500);
        await renew(false).catch(() => undefined);
      }
    })();
    try {
      const marked = await until('preferredHolder', async () => ((await lease())?.preferredHolder === name ? true : undefined), 10_000);
      expect(marked).toBe(true);
      const exit = await leader.waitForExit(10_000);
      expect(exit?.code).toBe(1);
      await until('the older release to hold the lease', async () => ((await lease())?.holderIdentity === name ? true : undefined), 10_000);
    } finally {
      renewing = false;
      await renewer;
    }
  }, 30_000);
});
