/**
 * The API server source and mirror pods against the real REST handler (startTestApi): the agent
 * sees only the pods bound to its node, follows adds and deletions through the watch, and keeps a
 * mirror pod for each static pod: created with the hash annotation and the Node as owner,
 * recreated when deleted or changed through the API, removed when the manifest goes.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientListWatcher } from '../../src/client/informers/client-list-watcher.js';
import { SharedInformerFactory } from '../../src/client/informers/factory.js';
import { RestClient } from '../../src/client/rest-client.js';
import type { Logger } from '../../src/lib/klog.js';
import {
  ApiSource,
  configHashAnnotation,
  configMirrorAnnotation,
  configSourceAnnotation,
  PodConfig,
  PodSources,
  type PodUpdate,
  type SourcePod,
} from '../../src/daemons/agent/sources/index.js';
import { call, startTestApi, type TestApi } from '../helpers/memory-store.js';

const quiet: Logger = { info() {}, warning() {}, error() {}, v: () => ({ enabled: false, info() {} }) };
const PODS = '/api/v1/namespaces/default/pods';
const boundPod = (name: string, nodeName: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { nodeName, containers: [{ name: 'c', image: 'i', command: ['sleep', '1'] }] },
});
const manifest = (name: string, command = 'sleep') =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: main\n    image: none\n    command: [${command}, "100"]\n`;

async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs}ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let api: TestApi;
let factory: SharedInformerFactory;
let client: RestClient;
let nodeUid: string;

beforeEach(async () => {
  api = await startTestApi();
  client = new RestClient({ config: { server: api.url, insecure: false } });
  factory = new SharedInformerFactory({ listWatcherFor: (_ref, path) => clientListWatcher(client, path), logger: quiet });
  for (const name of ['node-1', 'node-2']) {
    const reply = await call(api, 'POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name } } });
    expect(reply.status).toBe(201);
    if (name === 'node-1') nodeUid = reply.body.metadata.uid;
  }
});
afterEach(async () => {
  await factory.shutdown();
  client.close();
  await api.close();
});

describe('API server source', () => {
  it('pushes only the pods bound to its node, and follows the watch', async () => {
    for (const [name, node] of [['mine-a', 'node-1'], ['theirs', 'node-2'], ['mine-b', 'node-1']] as const) {
      expect((await call(api, 'POST', PODS, { body: boundPod(name, node) })).status).toBe(201);
    }
    const updates: PodUpdate[] = [];
    const config = new PodConfig({ listener: (u) => updates.push(u), logger: quiet });
    const source = new ApiSource({ factory, nodeName: 'node-1', push: (s, pods) => config.set(s, pods) });
    source.start();
    await eventually(() => updates.length > 0);
    expect(updates).toHaveLength(1);
    expect(updates[0]!.op).toBe('ADD');
    expect(updates[0]!.pods.map((p) => p.metadata.name).sort()).toEqual(['mine-a', 'mine-b']);
    expect(updates[0]!.pods[0]!.metadata.annotations![configSourceAnnotation()]).toBe('api');

    await call(api, 'POST', PODS, { body: boundPod('theirs-2', 'node-2') });
    await call(api, 'POST', PODS, { body: boundPod('mine-c', 'node-1') });
    await eventually(() => updates.some((u) => u.op === 'ADD' && u.pods.some((p) => p.metadata.name === 'mine-c')));

    // A graceful deletion (the API server sets deletionTimestamp) is a DELETE; the final removal a REMOVE.
    await call(api, 'DELETE', `${PODS}/mine-a`);
    await eventually(() => updates.some((u) => u.op === 'DELETE' && u.pods[0]!.metadata.name === 'mine-a'));
    await call(api, 'DELETE', `${PODS}/mine-a`, { body: { gracePeriodSeconds: 0 } });
    await eventually(() => updates.some((u) => u.op === 'REMOVE' && u.pods[0]!.metadata.name === 'mine-a'));
    expect(config.pods('api').map((p) => p.metadata.name).sort()).toEqual(['mine-b', 'mine-c']);
    expect(updates.flatMap((u) => u.pods.map((p) => p.metadata.name))).not.toContain('theirs-2');
    source.stop();
  });
});

describe('mirror pods', () => {
  let dir: string;
  let sources: PodSources;
  let updates: PodUpdate[];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-mirror-'));
    updates = [];
    sources = new PodSources({
      nodeName: 'node-1',
      staticPodPath: dir,
      fileCheckFrequencyMs: 60_000,
      httpCheckFrequencyMs: 60_000,
      api: { factory, client, mirrorResyncMs: 0 },
      listener: (u) => updates.push(u),
      logger: quiet,
    });
  });
  afterEach(async () => {
    await sources.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const getMirror = async (): Promise<SourcePod | undefined> => {
    const reply = await call(api, 'GET', `${PODS}/web-node-1`);
    return reply.status === 200 ? reply.body : undefined;
  };

  it('creates a mirror for a static pod, recreates it when deleted or changed through the API, and deletes it with the file', async () => {
    await writeFile(join(dir, 'web.yaml'), manifest('web'));
    sources.start();
    const mirror = await eventually(getMirror);
    const staticPod = sources.config.pods('file')[0]!;
    const hash = staticPod.metadata.annotations![configHashAnnotation()]!;
    expect(mirror.metadata.annotations![configMirrorAnnotation()]).toBe(hash);
    expect(mirror.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Node', name: 'node-1', uid: nodeUid, controller: true }]);
    expect(mirror.spec.nodeName).toBe('node-1');
    expect((mirror.spec.containers as { command: string[] }[])[0]!.command).toEqual(['sleep', '100']);
    expect(sources.allSourcesReady()).toBe(true);

    // The mirror is never a pod to run: the API source does not pass it on.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sources.config.pods('api')).toEqual([]);
    expect(updates.filter((u) => u.source === 'api').flatMap((u) => u.pods)).toEqual([]);

    // kubectl delete (graceful): the agent finishes the deletion and makes a new mirror.
    expect((await call(api, 'DELETE', `${PODS}/web-node-1`)).status).toBe(200);
    const recreated = await eventually(async () => {
      const m = await getMirror();
      return m && m.metadata.uid !== mirror.metadata.uid && !m.metadata.deletionTimestamp && m;
    });
    expect(recreated.metadata.annotations![configMirrorAnnotation()]).toBe(hash);

    // A change of the mirror through the API does not stick: the mirror is made again from the file.
    const patched = await call(api, 'PATCH', `${PODS}/web-node-1`, {
      body: { metadata: { annotations: { [configMirrorAnnotation()]: 'edited' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(patched.status).toBe(200);
    const restored = await eventually(async () => {
      const m = await getMirror();
      return m && m.metadata.uid !== recreated.metadata.uid && m.metadata.annotations?.[configMirrorAnnotation()] === hash && m;
    });
    expect(restored.metadata.ownerReferences?.[0]?.uid).toBe(nodeUid);
    // The static pod itself never changed.
    expect(updates.filter((u) => u.source === 'file').map((u) => u.op)).toEqual(['ADD']);

    // Editing the manifest replaces the mirror by one with the new hash.
    await writeFile(join(dir, 'web.yaml'), manifest('web', 'sleep2'));
    const edited = await eventually(async () => {
      const m = await getMirror();
      return m && m.metadata.annotations?.[configMirrorAnnotation()] !== hash && m;
    });
    expect(edited.metadata.annotations![configMirrorAnnotation()]).toBe(sources.config.pods('file')[0]!.metadata.uid);

    await unlink(join(dir, 'web.yaml'));
    await eventually(async () => (await getMirror()) === undefined);
  });

  it('deletes a mirror left over from a static pod that is gone once the files were read', async () => {
    const leftover = { ...boundPod('old-node-1', 'node-1'), metadata: { name: 'old-node-1', annotations: { [configMirrorAnnotation()]: 'x' } } };
    expect((await call(api, 'POST', PODS, { body: leftover })).status).toBe(201);
    expect((await call(api, 'POST', PODS, { body: { ...leftover, metadata: { ...leftover.metadata, name: 'other' }, spec: { ...leftover.spec, nodeName: 'node-2' } } })).status).toBe(201);
    sources.start();
    await eventually(async () => (await call(api, 'GET', `${PODS}/old-node-1`)).status === 404);
    // Another node's mirror is not this agent's business.
    expect((await call(api, 'GET', `${PODS}/other`)).status).toBe(200);
  });

  it('creates no mirror while its Node is not registered, and does once it is', async () => {
    await call(api, 'DELETE', '/api/v1/nodes/node-1');
    const problems: string[] = [];
    await sources.stop();
    sources = new PodSources({
      nodeName: 'node-1',
      staticPodPath: dir,
      fileCheckFrequencyMs: 60_000,
      httpCheckFrequencyMs: 60_000,
      api: { factory, client, mirrorResyncMs: 50 },
      listener: () => {},
      onProblem: (p) => problems.push(p.message),
      logger: quiet,
    });
    await writeFile(join(dir, 'web.yaml'), manifest('web'));
    sources.start();
    await eventually(() => problems.length > 0);
    expect(problems[0]).toMatch(/^failed to create mirror pod default\/web-node-1: failed to get node UID/);
    expect(await getMirror()).toBeUndefined();
    const node = await call(api, 'POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } } });
    const mirror = await eventually(getMirror);
    expect(mirror.metadata.ownerReferences?.[0]?.uid).toBe(node.body.metadata.uid);
  });
});
