/**
 * The peer cache (peers/peer-discovery.ts) over a real in-memory store and a fake clock: which
 * identity leases are peers (API servers' label, not this server's own), when a peer's discovery is
 * read (a new lease, a new holder or address; not a renewal), retries of a failed read on the clock,
 * and a deleted lease dropping its peer.
 */
import {afterEach, describe, expect, it} from '@jest/globals';
import {names} from '../../src/api/names.js';
import {PeerDiscovery} from '../../src/daemons/apiserver/peers/peer-discovery.js';
import {resourceKeyPrefix} from '../../src/daemons/apiserver/storage-keys.js';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import {MemoryStore} from '../helpers/memory-store.js';

const n = names();
const prefix = `${resourceKeyPrefix('/registry', n.groups.coordination, 'leases')}${n.namespaces.system}/`;

function lease(name: string, holder: string, address?: string, labels: Record<string, string> = {[n.labels.apiserverIdentity]: `${n.product}-apiserver`}) {
  return JSON.stringify({
    apiVersion: `${n.groups.coordination}/v1`, kind: 'Lease',
    metadata: {name, namespace: n.namespaces.system, labels, ...(address ? {annotations: {[n.annotations.peerAdvertiseAddress]: address}} : {})},
    spec: {holderIdentity: holder, leaseDurationSeconds: 3600, renewTime: '2026-01-01T00:00:00.000000Z'},
  });
}

const settle = async (until: () => boolean) => {
  for (let i = 0; i < 200 && !until(); i++) await new Promise((r) => setTimeout(r, 5));
};

let discovery: PeerDiscovery | undefined;
afterEach(() => discovery?.stop());

function start(store: MemoryStore, clock: FakeClock, served: (address: string) => Promise<Set<string>>) {
  discovery = new PeerDiscovery({store, keyPrefix: '/registry', self: 'apiserver-self', served, clock, retryMs: 100, maxRetryMs: 400});
  discovery.start();
  return discovery;
}

describe('peer discovery cache', () => {
  it('reads the discovery of other API servers\' leases only, and again only when the holder or address changes', async () => {
    const store = new MemoryStore();
    const asked: string[] = [];
    await store.create(`${prefix}apiserver-self`, lease('apiserver-self', 'self_1', '10.0.0.1:6443'));
    await store.create(`${prefix}some-controller`, lease('some-controller', 'x', '10.0.0.9:6443', {app: 'other'}));
    const rev = await store.create(`${prefix}apiserver-b`, lease('apiserver-b', 'b_1', '10.0.0.2:6443'));
    const d = start(store, new FakeClock(0), async (address) => (asked.push(address), new Set([`${n.groups.storage}/v1/storageclasses`])));
    await settle(() => d.peers().length === 1);
    expect(d.synced).toBe(true);
    expect(asked).toEqual(['10.0.0.2:6443']);
    expect(d.peers()).toEqual([{id: 'apiserver-b', address: '10.0.0.2:6443', expiresAt: Date.parse('2026-01-01T01:00:00Z'), served: new Set([`${n.groups.storage}/v1/storageclasses`])}]);

    // A renewal (same holder, same address) is not a reason to ask again; a restarted peer (new holder) is.
    const renewed = await store.update(`${prefix}apiserver-b`, lease('apiserver-b', 'b_1', '10.0.0.2:6443'), rev);
    await store.update(`${prefix}apiserver-b`, lease('apiserver-b', 'b_2', '10.0.0.3:6443'), renewed);
    await settle(() => asked.length === 2);
    expect(asked).toEqual(['10.0.0.2:6443', '10.0.0.3:6443']);
    await settle(() => d.peers()[0]?.address === '10.0.0.3:6443');
    expect(d.peers().map((p) => p.address)).toEqual(['10.0.0.3:6443']);
  });

  it('retries a failed read on the clock, and forgets a peer whose lease is deleted', async () => {
    const store = new MemoryStore();
    const clock = new FakeClock(0);
    let failures = 2;
    const rev = await store.create(`${prefix}apiserver-b`, lease('apiserver-b', 'b_1', '10.0.0.2:6443'));
    const d = start(store, clock, async () => {
      if (failures-- > 0) throw new Error('discovery request /apis failed with status: 403');
      return new Set(['/v1/pods']);
    });
    await settle(() => failures === 1);
    expect(d.peers()).toEqual([]); // not read yet: serves nothing
    await clock.advance(100);
    await settle(() => failures === 0);
    expect(d.peers()).toEqual([]);
    await clock.advance(200); // the pause doubles
    await settle(() => d.peers().length === 1);
    expect(d.peers()[0]?.served).toEqual(new Set(['/v1/pods']));

    await store.delete(`${prefix}apiserver-b`, rev);
    await settle(() => d.peers().length === 0);
    expect(d.peers()).toEqual([]);
  });

  it('keeps a peer without an address (its server runs without the gate) as serving nothing', async () => {
    const store = new MemoryStore();
    const asked: string[] = [];
    await store.create(`${prefix}apiserver-c`, lease('apiserver-c', 'c_1'));
    const d = start(store, new FakeClock(0), async (address) => (asked.push(address), new Set(['x'])));
    await settle(() => d.peers().length === 1);
    expect(d.peers()[0]).toMatchObject({id: 'apiserver-c', address: undefined, served: new Set()});
    expect(asked).toEqual([]);
  });
});
