/**
 * Watches of large objects under write load, as the traffic bench found them (issue 18: writes
 * "lost or unseen by a watch"): a watch is ended when more than 4 MiB of live events wait for a slow
 * client (as upstream's cacher ends an unresponsive watcher), and the client watches again from its
 * last resourceVersion. Two things kept a client that reads at once from ever keeping up:
 *
 * - the history replayed to a watch resumed from a past resourceVersion counted against that bound,
 *   so a client that had fallen behind by over 4 MiB was ended again by its own catch-up, on every
 *   re-watch;
 * - the sender stopped at each response's 16 KiB high-water mark and wrote one event per event-loop
 *   turn, while the server took in several writes per turn.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {type InProcessServer, startApiServer} from '../helpers/apiserver.js';

const NS = 'default';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const SIZE = 100_000;
const configMap = (name: string) => ({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, labels: {catchup: 'yes'}}, data: {k: 'x'.repeat(SIZE)}});

describe('watches of large objects keep up', () => {
  let api: InProcessServer;

  beforeAll(async () => {
    api = await startApiServer({engine: 'sqlite'});
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('replays 6 MB of history to a watch resumed from a past resourceVersion, to the end', async () => {
    const from = (await api.client.get(`${CM}?limit=1`)).body.metadata.resourceVersion as string;
    for (let i = 0; i < 60; i++) expect((await api.client.post(CM, configMap(`replay-${i}`))).status).toBe(201);
    const watch = api.client.watch(`${CM}?watch=1&labelSelector=catchup%3Dyes&resourceVersion=${from}&timeoutSeconds=60`);
    try {
      await watch.next((e) => e.object?.metadata?.name === 'replay-59', 30_000);
      expect(watch.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(Array.from({length: 60}, (_, i) => `ADDED replay-${i}`));
    } finally {
      watch.close();
    }
  }, 60_000);

  it('keeps a reading client up to date while eight writers create 100 KB objects', async () => {
    const from = (await api.client.get(`${CM}?limit=1`)).body.metadata.resourceVersion as string;
    let watch = api.client.watch(`${CM}?watch=1&labelSelector=catchup%3Dyes&resourceVersion=${from}&timeoutSeconds=120`);
    const added = new Set<string>();
    // The client, in this process, shares the CPU with the server: on a loaded machine it may really
    // fall behind and be ended once or twice, and then resumes as real clients do. What the bugs did
    // was end a client reading at once on every re-watch (hundreds of re-watches, one event each).
    let rewatches = 0;
    try {
      expect(await watch.status).toBe(200);
      let next = 0;
      const writer = async () => {
        while (next < 240) expect((await api.client.post(CM, configMap(`live-${next++}`))).status).toBe(201);
      };
      await Promise.all(Array.from({length: 8}, writer));
      for (;;) {
        const done = await watch.next((e) => e.type === 'ADDED' && e.object.metadata.name === 'live-239', 30_000).then(() => true, () => false);
        for (const e of watch.events) if (e.type === 'ADDED') added.add(e.object.metadata.name as string);
        if (done || rewatches >= 5) break;
        const last = watch.events.filter((e) => e.object?.metadata?.resourceVersion).at(-1)?.object.metadata.resourceVersion ?? from;
        watch.close();
        rewatches++;
        watch = api.client.watch(`${CM}?watch=1&labelSelector=catchup%3Dyes&resourceVersion=${last}&timeoutSeconds=120`);
      }
      const missing = Array.from({length: 240}, (_, i) => `live-${i}`).filter((n) => !added.has(n));
      expect({missing: missing.length, first: missing.slice(0, 5)}).toEqual({missing: 0, first: []});
      expect(rewatches).toBeLessThanOrEqual(2);
    } finally {
      watch.close();
    }
  }, 120_000);
});
