/**
 * Durability and concurrency of `orch apiserver` (the CLI, as a child process) on both engines:
 * - concurrent writers, `kill -9` of the server mid-way, a restart on the same data directory (and
 *   the same etcd): every write the server acknowledged (2xx) is there;
 * - parallel read-modify-write clients (GET, increment, PUT with the resourceVersion, retry on 409)
 *   lose no update.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {type ApiClient, type Engine, type ServerProcess, configMap, sleep, startApiServerProcess} from '../helpers/apiserver.js';
import {type EtcdServer, startEtcd} from '../helpers/etcd.js';

const CM = '/api/v1/namespaces/default/configmaps';
const WRITERS = 8;
const KILL_AFTER_MS = 1500;
const RMW_CLIENTS = 8;
const INCREMENTS_PER_CLIENT = 15;

/** Creates configmaps as fast as it can until the server goes away; returns the names acknowledged with 2xx. */
async function writer(client: ApiClient, id: number, stop: {now: boolean}): Promise<{acknowledged: string[]; failures: number}> {
  const acknowledged: string[] = [];
  let failures = 0;
  for (let n = 0; !stop.now; n++) {
    const name = `w${id}-${n}`;
    try {
      const r = await client.post(CM, configMap(name, {writer: String(id), n: String(n)}, {suite: 'durability'}), {timeoutMs: 5000});
      if (r.status >= 200 && r.status < 300) acknowledged.push(name);
      else failures++;
    } catch {
      // The connection died with the server: whatever was in flight was never acknowledged.
      failures++;
      if (stop.now || failures > 1000) break;
      await sleep(10);
    }
  }
  return {acknowledged, failures};
}

/** GET, increment data.count, PUT with that resourceVersion; on 409 read again and retry. */
async function incrementer(client: ApiClient, name: string, times: number): Promise<{conflicts: number}> {
  let conflicts = 0;
  for (let i = 0; i < times; i++) {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 500) throw new Error(`increment of ${name} kept conflicting`);
      const current = await client.get(`${CM}/${name}`);
      expect(current.status).toBe(200);
      const next = {...current.body, data: {count: String(Number(current.body.data.count) + 1)}};
      const put = await client.put(`${CM}/${name}`, next);
      if (put.status === 200) break;
      expect(put.status).toBe(409);
      conflicts++;
    }
  }
  return {conflicts};
}

describe.each<Engine>(['sqlite', 'etcd'])('durability on %s', (engine) => {
  let etcd: EtcdServer | undefined;
  let server: ServerProcess;

  beforeAll(async () => {
    if (engine === 'etcd') etcd = await startEtcd();
    server = await startApiServerProcess({engine, etcdEndpoint: etcd?.endpoint});
  });
  afterAll(async () => {
    await server?.stop();
    await etcd?.stop();
  });

  it(`keeps every acknowledged write across a kill -9 during ${WRITERS} concurrent writers`, async () => {
    const stop = {now: false};
    const writers = Array.from({length: WRITERS}, (_, id) => writer(server.client, id, stop));
    await sleep(KILL_AFTER_MS);
    await server.kill9();
    stop.now = true;
    const results = await Promise.all(writers);
    const acknowledged = results.flatMap((r) => r.acknowledged);
    if (process.env.ORCH_TEST_FIGURES) process.stderr.write(`${engine}: ${acknowledged.length} acknowledged writes before kill -9\n`);
    // The test means something only if writes were under way when the server died.
    expect(acknowledged.length).toBeGreaterThan(WRITERS * 5);

    await server.restart();
    const list = await server.client.get(`${CM}?labelSelector=suite%3Ddurability`);
    expect(list.status).toBe(200);
    const stored = new Set<string>(list.body.items.map((i: {metadata: {name: string}}) => i.metadata.name));
    const lost = acknowledged.filter((name) => !stored.has(name));
    expect({acknowledged: acknowledged.length, lost}).toEqual({acknowledged: acknowledged.length, lost: []});
    // Every stored object is whole: its data is what its writer sent.
    for (const item of list.body.items as {metadata: {name: string}; data: {writer: string; n: string}}[]) {
      expect(`w${item.data.writer}-${item.data.n}`).toBe(item.metadata.name);
    }
    // And the restarted server takes writes again.
    expect((await server.client.post(CM, configMap('after-restart'))).status).toBe(201);
  }, 40_000);

  it(`loses no update from ${RMW_CLIENTS} parallel read-modify-write clients`, async () => {
    expect((await server.client.post(CM, configMap('counter', {count: '0'}))).status).toBe(201);
    const results = await Promise.all(Array.from({length: RMW_CLIENTS}, () => incrementer(server.client, 'counter', INCREMENTS_PER_CLIENT)));
    const final = await server.client.get(`${CM}/counter`);
    if (process.env.ORCH_TEST_FIGURES) process.stderr.write(`${engine}: ${results.reduce((s, r) => s + r.conflicts, 0)} conflicts retried\n`);
    expect(final.body.data.count).toBe(String(RMW_CLIENTS * INCREMENTS_PER_CLIENT));
    // The clients really raced: some of their writes were refused as stale.
    expect(results.reduce((sum, r) => sum + r.conflicts, 0)).toBeGreaterThan(0);
  }, 40_000);
});
