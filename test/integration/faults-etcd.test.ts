/**
 * etcd faults under write load, with the API server on etcd:
 * - etcd frozen (SIGSTOP) for 10 s, then resumed;
 * - etcd killed and started again a few seconds later.
 * Upstream's etcd client waits for its connection within the request's deadline (--request-timeout,
 * 1 min), so writes during a short outage are slow, not failed; a write the server could not finish
 * is answered with a Status. Every acknowledged write is in the final list, no refused one is, the
 * watch held open across the fault sees every acknowledged write, and the watch cache reconnects
 * with one watch per outage and no relist.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {type ApiClient, type InProcessServer, configMap, sleep, startApiServer} from '../helpers/apiserver.js';
import {type EtcdServer, startEtcd} from '../helpers/etcd.js';
import {listNames} from '../helpers/traffic.js';

const NS = 'default';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const WRITERS = 4;

interface Outcome {
  acknowledged: string[];
  refused: {name: string; status: number; message: string}[];
  unknown: {name: string; error: string}[];
}

/** Creates ConfigMaps one after the other until told to stop; every request ends in one of three ways. */
async function writer(client: ApiClient, prefix: string, stop: {now: boolean}, outcome: Outcome): Promise<void> {
  for (let n = 0; !stop.now; n++) {
    const name = `${prefix}-${n}`;
    try {
      const r = await client.post(CM, configMap(name, {v: 'x'.repeat(2000)}, {fault: prefix.split('-')[0]!}), {timeoutMs: 90_000});
      if (r.status === 201) outcome.acknowledged.push(name);
      else outcome.refused.push({name, status: r.status, message: r.body?.message ?? r.text.slice(0, 200)});
      if (r.status !== 201) await sleep(100);
    } catch (error) {
      outcome.unknown.push({name, error: (error as Error).message});
      await sleep(100);
    }
  }
}

async function underLoad(client: ApiClient, fault: string, during: () => Promise<void>): Promise<Outcome> {
  const outcome: Outcome = {acknowledged: [], refused: [], unknown: []};
  const stop = {now: false};
  const writers = Array.from({length: WRITERS}, (_, i) => writer(client, `${fault}-w${i}`, stop, outcome));
  await sleep(1000);
  await during();
  await sleep(1500);
  stop.now = true;
  await Promise.all(writers);
  return outcome;
}

describe('etcd faults under write load', () => {
  let etcd: EtcdServer;
  let api: InProcessServer;

  beforeAll(async () => {
    etcd = await startEtcd();
    api = await startApiServer({engine: 'etcd', etcdEndpoint: etcd.endpoint});
  }, 60_000);
  afterAll(async () => {
    etcd?.signal('SIGCONT');
    await api?.stop();
    await etcd?.stop();
  });

  const check = async (fault: string, outcome: Outcome, watched: Set<string>) => {
    // Nothing is left unknown: every request got an answer.
    expect(outcome.unknown).toEqual([]);
    for (const r of outcome.refused) expect(r.status).toBeGreaterThanOrEqual(500);
    expect(outcome.acknowledged.length).toBeGreaterThan(WRITERS);
    const listed = new Set(await listNames(api.client, NS, `${fault}-`));
    expect(outcome.acknowledged.filter((n) => !listed.has(n))).toEqual([]);
    // A refused write is not applied, unless its Status said the outcome is unknown (a timeout).
    const timeouts = outcome.refused.filter((r) => r.status === 504);
    expect(outcome.refused.filter((r) => r.status !== 504 && listed.has(r.name))).toEqual([]);
    expect(listed.size).toBeLessThanOrEqual(outcome.acknowledged.length + timeouts.length);
    await api.client.waitFor(async () => outcome.acknowledged.every((n) => watched.has(n)), 'the watch to see every acknowledged write', 15_000);
  };

  const watchAll = (fault: string) => {
    const seen = new Set<string>();
    const watch = api.client.watch(`${CM}?watch=1&labelSelector=fault%3D${fault}&resourceVersion=0&timeoutSeconds=120`);
    const poll = setInterval(() => {
      for (const e of watch.events) if (e.type === 'ADDED') seen.add(e.object.metadata.name);
    }, 50);
    return {seen, stop: () => (clearInterval(poll), watch.close())};
  };

  it('etcd frozen for 10 s: writes wait and complete, the watch and the cache carry on', async () => {
    const before = api.server.snapshot().store.watchCache!;
    const watch = watchAll('frozen');
    try {
      const outcome = await underLoad(api.client, 'frozen', async () => {
        etcd.signal('SIGSTOP');
        await sleep(10_000);
        etcd.signal('SIGCONT');
      });
      await check('frozen', outcome, watch.seen);
      expect(outcome.refused).toEqual([]);
    } finally {
      watch.stop();
    }
    const after = api.server.snapshot().store.watchCache!;
    expect(after.lists).toBe(before.lists);
    expect(after.watches - before.watches).toBeLessThanOrEqual(2);
  }, 90_000);

  it('etcd killed and restarted: acknowledged writes survive, refusals are Statuses, the cache re-watches without a relist', async () => {
    const before = api.server.snapshot().store.watchCache!;
    const watch = watchAll('killed');
    try {
      const outcome = await underLoad(api.client, 'killed', async () => {
        await etcd.kill();
        await sleep(3000);
        await etcd.restart();
      });
      await check('killed', outcome, watch.seen);
    } finally {
      watch.stop();
    }
    const after = api.server.snapshot().store.watchCache!;
    expect(after.lists).toBe(before.lists);
    expect(after.watches - before.watches).toBeLessThanOrEqual(10);
  }, 90_000);
});
