import { describe, expect, it } from '@jest/globals';
import { ApiConnectionError, ApiStatusError } from '../../src/client/errors.js';
import { FakeClock } from '../../src/daemons/shared/clock.js';
import { type LeaseObject, type NodeApiClient, type NodeObject, NodeLeaseController } from '../../src/daemons/agent/node/index.js';

const T0 = Date.parse('2024-05-01T10:00:00Z');
const micro = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

const statusError = (code: number, reason: string) => new ApiStatusError({ kind: 'Status', status: 'Failure', code, reason, message: `${reason}!` });
const refused = () => new ApiConnectionError('GET', 'http://127.0.0.1:1/x', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));

/** An in-memory API with the calls counted and failures injectable per method. */
class FakeApi implements NodeApiClient {
  nodes = new Map<string, NodeObject>();
  leases = new Map<string, LeaseObject>();
  calls: string[] = [];
  failures: Partial<Record<keyof NodeApiClient, Error[]>> = {};
  private rv = 0;

  private check(method: keyof NodeApiClient): void {
    this.calls.push(method);
    const error = this.failures[method]?.shift();
    if (error) throw error;
  }

  addNode(name: string): void {
    this.nodes.set(name, { apiVersion: 'v1', kind: 'Node', metadata: { name, uid: `uid-${name}` }, spec: {} });
  }

  async createNode(node: NodeObject) {
    this.check('createNode');
    return node;
  }
  async getNode(name: string) {
    this.check('getNode');
    const node = this.nodes.get(name);
    if (!node) throw statusError(404, 'NotFound');
    return structuredClone(node);
  }
  async patchNode(name: string) {
    this.check('patchNode');
    return this.getNode(name);
  }
  async patchNodeStatus(name: string) {
    this.check('patchNodeStatus');
    return this.getNode(name);
  }
  async getLease(namespace: string, name: string) {
    this.check('getLease');
    const lease = this.leases.get(`${namespace}/${name}`);
    if (!lease) throw statusError(404, 'NotFound');
    return structuredClone(lease);
  }
  async createLease(lease: LeaseObject) {
    this.check('createLease');
    const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
    if (this.leases.has(key)) throw statusError(409, 'AlreadyExists');
    const stored = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
    this.leases.set(key, stored);
    return structuredClone(stored);
  }
  async updateLease(lease: LeaseObject) {
    this.check('updateLease');
    const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
    const current = this.leases.get(key);
    if (!current || current.metadata.resourceVersion !== lease.metadata.resourceVersion) throw statusError(409, 'Conflict');
    return this.store(key, lease);
  }
  /** A write by someone else (or this test). */
  store(key: string, lease: LeaseObject): LeaseObject {
    const stored = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
    this.leases.set(key, stored);
    return structuredClone(stored);
  }
  lease(): LeaseObject | undefined {
    return this.leases.get('orch-node-lease/w1');
  }
}

function controller(api: FakeApi, random = () => 0) {
  const clock = new FakeClock(T0);
  const renewals: number[] = [];
  const errors: string[] = [];
  const lease = new NodeLeaseController({
    client: api,
    nodeName: 'w1',
    leaseDurationSeconds: 40,
    clock,
    random,
    onRenew: (at) => renewals.push(at - T0),
    onError: (e) => errors.push(e.message),
  });
  return { clock, lease, renewals, errors };
}

describe('node lease', () => {
  it('is created at once, owned by the Node, then renewed every 10 s with a PUT only', async () => {
    const api = new FakeApi();
    api.addNode('w1');
    const { clock, lease, renewals } = controller(api);
    lease.start();
    await clock.advance(0);
    expect(api.lease()).toEqual({
      apiVersion: 'coordination.orch.io/v1',
      kind: 'Lease',
      metadata: {
        name: 'w1',
        namespace: 'orch-node-lease',
        resourceVersion: '1',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'w1', uid: 'uid-w1' }],
      },
      spec: { holderIdentity: 'w1', leaseDurationSeconds: 40, renewTime: micro(T0) },
    });
    expect(lease.renewIntervalMs).toBe(10_000);

    api.calls = [];
    await clock.advance(9_999);
    expect(api.calls).toEqual([]);
    await clock.advance(1);
    expect(api.lease()?.spec.renewTime).toBe(micro(T0 + 10_000));
    await clock.advance(10_000);
    expect(api.calls).toEqual(['updateLease', 'updateLease']);
    expect(renewals).toEqual([0, 10_000, 20_000]);
    await lease.stop();
    expect(clock.pending).toBe(0);
  });

  it('creates the lease at once without an owner while the Node is missing, and adds the owner once it is there', async () => {
    const api = new FakeApi();
    const { clock, lease } = controller(api);
    lease.start();
    await clock.advance(0);
    expect(api.lease()?.spec.renewTime).toBe(micro(T0));
    expect(api.lease()?.metadata.ownerReferences).toBeUndefined();
    await clock.advance(10_000);
    expect(api.lease()?.metadata.ownerReferences).toBeUndefined();
    api.addNode('w1');
    await clock.advance(10_000);
    expect(api.lease()?.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Node', name: 'w1', uid: 'uid-w1' }]);
    expect(api.lease()?.spec.renewTime).toBe(micro(T0 + 20_000));
    await lease.stop();
  });

  it('tries an update 5 times, then falls back to reading the lease on the next interval', async () => {
    const api = new FakeApi();
    api.addNode('w1');
    const { clock, lease, errors } = controller(api);
    lease.start();
    await clock.advance(0);
    api.calls = [];
    api.failures.updateLease = Array.from({ length: 5 }, refused);
    await clock.advance(10_000);
    expect(api.calls).toEqual(Array(5).fill('updateLease').concat(['getLease', 'updateLease']));
    expect(errors).toHaveLength(5);
    expect(api.lease()?.spec.renewTime).toBe(micro(T0 + 10_000));
    await lease.stop();
  });

  it('re-reads the lease after a conflict and renews on top of the other writer', async () => {
    const api = new FakeApi();
    api.addNode('w1');
    const { clock, lease } = controller(api);
    lease.start();
    await clock.advance(0);
    api.store('orch-node-lease/w1', { ...api.lease()!, metadata: { ...api.lease()!.metadata, labels: { by: 'someone' } } });
    api.calls = [];
    await clock.advance(10_000);
    expect(api.calls).toEqual(['updateLease', 'getLease', 'updateLease']);
    expect(api.lease()).toMatchObject({ metadata: { labels: { by: 'someone' }, resourceVersion: '3' }, spec: { renewTime: micro(T0 + 10_000) } });
    await lease.stop();
  });

  it('backs off from 200 ms to at most 7 s while the lease cannot be read', async () => {
    const api = new FakeApi();
    api.addNode('w1');
    api.failures.getLease = Array.from({ length: 7 }, refused);
    const { clock, lease } = controller(api);
    const attempts: number[] = [];
    const original = api.getLease.bind(api);
    api.getLease = async (ns, name) => {
      attempts.push(clock.now() - T0);
      return original(ns, name);
    };
    lease.start();
    await clock.advance(19_600);
    // 0, +200, +400, +800, +1600, +3200, +6400, +7000 (capped)
    expect(attempts).toEqual([0, 200, 600, 1400, 3000, 6200, 12600, 19600]);
    expect(api.lease()?.spec.renewTime).toBe(micro(T0 + 19_600));
    await lease.stop();
  });

  it('adds up to 4 % jitter to the renew interval', async () => {
    const api = new FakeApi();
    api.addNode('w1');
    const { clock, lease, renewals } = controller(api, () => 1);
    lease.start();
    await clock.advance(10_399);
    expect(renewals).toEqual([0]);
    await clock.advance(1);
    expect(renewals).toEqual([0, 10_400]);
    await lease.stop();
  });
});
