/**
 * --lease-reuse-duration-seconds on etcd: events are written with an etcd lease of --event-ttl (as
 * upstream's event registry), one lease shared by the events of the reuse window, read back from
 * etcd itself; on SQLite no lease exists and the sweeper expires events.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {Etcd3} from 'etcd3';
import {startApiServer, type InProcessServer} from '../helpers/apiserver.js';
import {type EtcdServer, startEtcd} from '../helpers/etcd.js';

const event = (name: string) => ({
  metadata: {name},
  involvedObject: {kind: 'Pod', namespace: 'default', name: 'p'},
  reason: 'Test', message: name, type: 'Normal',
});

describe('event leases on etcd', () => {
  let etcd: EtcdServer;
  let client: Etcd3;
  const servers: InProcessServer[] = [];
  beforeAll(async () => {
    etcd = await startEtcd();
    client = new Etcd3({hosts: etcd.endpoint});
  }, 30_000);
  afterAll(async () => {
    for (const s of servers) await s.stop();
    client?.close();
    await etcd?.stop();
  });

  /** The lease of each stored event of the server, and that lease's granted TTL. */
  const leases = async (s: InProcessServer) => {
    const prefix = `${s.server.config.keyPrefix}/events/default/`;
    const kvs = (await client.kv.range({key: Buffer.from(prefix), range_end: Buffer.from(prefix.slice(0, -1) + '0')})).kvs;
    const ids = kvs.map((kv) => kv.lease);
    const ttls = await Promise.all([...new Set(ids)].map(async (id) => Number((await client.leaseClient.leaseTimeToLive({ID: id})).grantedTTL)));
    return {ids, ttls};
  };

  it('shares one lease of TTL + reuse among the events written within the reuse window', async () => {
    const s = await startApiServer({engine: 'etcd', etcdEndpoint: etcd.endpoint, config: {eventTtlMs: 200_000, leaseReuseDurationSeconds: 10}});
    servers.push(s);
    for (let i = 0; i < 8; i++) expect((await s.client.post('/api/v1/namespaces/default/events', event(`e${i}`))).status).toBe(201);
    const {ids, ttls} = await leases(s);
    expect(ids).toHaveLength(8);
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).not.toBe('0');
    // 200 s of TTL and 10 s of reuse (under 5% of the TTL).
    expect(ttls).toEqual([210]);
  }, 30_000);

  it('grants a lease per event when the reuse window is shorter than a second of the TTL', async () => {
    const s = await startApiServer({engine: 'etcd', etcdEndpoint: etcd.endpoint, config: {eventTtlMs: 10_000}});
    servers.push(s);
    for (let i = 0; i < 3; i++) expect((await s.client.post('/api/v1/namespaces/default/events', event(`e${i}`))).status).toBe(201);
    const {ids, ttls} = await leases(s);
    expect(new Set(ids).size).toBe(3);
    expect(ttls).toEqual([10, 10, 10]);
    // A key without a TTL takes no lease.
    await s.client.post('/api/v1/namespaces/default/configmaps', {metadata: {name: 'plain'}});
    const cm = (await client.kv.range({key: Buffer.from(`${s.server.config.keyPrefix}/configmaps/default/plain`)})).kvs[0];
    expect(cm?.lease).toBe('0');
  }, 30_000);
});
