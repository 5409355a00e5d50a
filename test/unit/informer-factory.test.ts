/** SharedInformerFactory: one informer (one list and one watch) per resource, handlers from many controllers. */
import { describe, expect, it } from '@jest/globals';
import { getEventListeners } from 'node:events';
import type { Logger } from '../../src/lib/klog.js';
import { FakeClock } from '../../src/client/informers/clock.js';
import { SharedInformerFactory } from '../../src/client/informers/factory.js';
import { FakeListWatcher } from '../../src/client/informers/fake-list-watcher.js';
import { resourceKey, resourcePath, type ResourceRef } from '../../src/client/informers/resource.js';
import { Indexer, splitMetaNamespaceKey } from '../../src/client/informers/store.js';
import type { Unstructured } from '../../src/client/informers/types.js';

const quiet: Logger = { info() {}, warning() {}, error() {}, v: () => ({ enabled: false, info() {} }) };

const PODS: ResourceRef = { group: '', version: 'v1', resource: 'pods' };
const DEPLOYMENTS: ResourceRef = { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'web' };

describe('resource paths and keys', () => {
  it.each<[ResourceRef, string]>([
    [PODS, '/api/v1/pods'],
    [{ ...PODS, namespace: 'kube system' }, '/api/v1/namespaces/kube%20system/pods'],
    [DEPLOYMENTS, '/apis/apps/v1/namespaces/web/deployments'],
    [{ group: 'coordination.orch.io', version: 'v1', resource: 'leases' }, '/apis/coordination.orch.io/v1/leases'],
  ])('%j -> %s', (ref, path) => {
    expect(resourcePath(ref)).toBe(path);
  });

  it('selectors and namespaces make different informers', () => {
    const keys = new Set([PODS, { ...PODS }, { ...PODS, fieldSelector: 'spec.nodeName=n1' }, { ...PODS, namespace: 'a' }, { ...PODS, labelSelector: 'x' }].map(resourceKey));
    expect(keys.size).toBe(4);
  });
});

describe('Indexer', () => {
  it('keys namespaced objects ns/name and cluster objects by name; indexes follow updates', () => {
    const indexer = new Indexer<Unstructured>(undefined, {
      namespace: (o) => [o.metadata?.namespace ?? ''],
      node: (o) => [String((o.spec as { nodeName?: string } | undefined)?.nodeName ?? '')],
    });
    indexer.set({ metadata: { name: 'n1' } });
    indexer.set({ metadata: { name: 'p', namespace: 'a' }, spec: { nodeName: 'n1' } });
    indexer.set({ metadata: { name: 'p', namespace: 'b' }, spec: { nodeName: 'n1' } });
    expect(indexer.listKeys()).toEqual(['n1', 'a/p', 'b/p']);
    expect(indexer.indexKeys('node', 'n1')).toEqual(['a/p', 'b/p']);
    indexer.set({ metadata: { name: 'p', namespace: 'a' }, spec: { nodeName: 'n2' } });
    expect(indexer.indexKeys('node', 'n1')).toEqual(['b/p']);
    indexer.deleteKey('b/p');
    expect(indexer.listIndexValues('node').sort()).toEqual(['', 'n2']);
    expect(splitMetaNamespaceKey('a/p')).toEqual({ namespace: 'a', name: 'p' });
    expect(splitMetaNamespaceKey('n1')).toEqual({ namespace: '', name: 'n1' });
  });
});

describe('SharedInformerFactory', () => {
  function setup(resyncPeriodMs?: number | (() => number)) {
    const sources = new Map<string, FakeListWatcher<Unstructured>>();
    const factory = new SharedInformerFactory({
      listWatcherFor: (ref, path) => {
        const lw = new FakeListWatcher<Unstructured>();
        lw.onList = () => ({ items: [{ metadata: { name: 'x', namespace: 'web' } }], resourceVersion: '3' });
        sources.set(path + (ref.fieldSelector ? `?${ref.fieldSelector}` : ''), lw);
        return lw;
      },
      clock: new FakeClock(),
      random: () => 0,
      logger: quiet,
      resyncPeriodMs,
    });
    return { factory, sources };
  }

  it('watches each resource once however many controllers ask, and every controller hears every event', async () => {
    const { factory, sources } = setup();
    const heard: string[] = [];
    for (const controller of ['replicaset', 'endpoints', 'podgc']) {
      factory.informerFor(PODS).addEventHandler({ onAdd: (o) => heard.push(`${controller} ${o.metadata?.name}`) });
    }
    const deployments = factory.informerFor(DEPLOYMENTS);
    const bound = factory.informerFor({ ...PODS, fieldSelector: 'spec.nodeName=n1' });
    expect(factory.informerFor(PODS)).not.toBe(bound);
    factory.start();
    expect(await factory.waitForCacheSync()).toEqual({
      'core/v1/pods|||': true,
      'apps/v1/deployments|web||': true,
      'core/v1/pods|||spec.nodeName=n1': true,
    });
    expect([...sources.keys()]).toEqual(['/api/v1/pods', '/apis/apps/v1/namespaces/web/deployments', '/api/v1/pods?spec.nodeName=n1']);
    const pods = sources.get('/api/v1/pods')!;
    expect([pods.lists.length, pods.watches.length]).toEqual([1, 1]);
    pods.lastWatch!.send({ type: 'ADDED', object: { metadata: { name: 'y', namespace: 'web', resourceVersion: '4' } } });
    expect(heard).toEqual(['replicaset x', 'endpoints x', 'podgc x', 'replicaset y', 'endpoints y', 'podgc y']);
    expect(deployments.hasSynced()).toBe(true);
    await factory.shutdown();
    expect([...sources.values()].flatMap((s) => s.openWatches)).toEqual([]);
  });

  it('start() later runs informers asked for after the first start; indexers can be added before and after start', async () => {
    const { factory, sources } = setup();
    factory.informerFor(PODS);
    factory.start();
    const late = factory.informerFor(DEPLOYMENTS, { indexers: { byName: (o) => [o.metadata?.name ?? ''] } });
    expect(late.isStarted).toBe(false);
    factory.start();
    await factory.waitForCacheSync();
    expect(late.indexer.byIndex('byName', 'x')).toHaveLength(1);
    // An index added to a running informer covers the objects it already holds.
    const pods = factory.informerFor(PODS, { indexers: { other: (o) => [o.metadata?.name ?? ''] } });
    expect(pods.indexer.byIndex('other', 'x')).toEqual(pods.indexer.list().filter((o) => o.metadata?.name === 'x'));
    expect(sources.size).toBe(2);
    await factory.shutdown();
  });

  it('a resync period function is asked once per informer', async () => {
    let calls = 0;
    const { factory } = setup(() => ++calls * 1000);
    factory.informerFor(PODS);
    factory.informerFor(PODS);
    factory.informerFor(DEPLOYMENTS);
    expect(calls).toBe(2);
    expect([factory.informerFor(PODS).options.resyncPeriodMs, factory.informerFor(DEPLOYMENTS).options.resyncPeriodMs]).toEqual([1000, 2000]);
    await factory.shutdown();
  });
});

describe('waiting for the caches of many informers', () => {
  it('listens once on the caller\'s signal (no MaxListenersExceededWarning), ends on abort, and leaves no listener', async () => {
    const factory = new SharedInformerFactory({
      listWatcherFor: () => {
        const lw = new FakeListWatcher<Unstructured>();
        lw.onList = () => new Promise(() => undefined); // never lists: the caches never sync
        return lw;
      },
      clock: new FakeClock(),
      logger: quiet,
    });
    for (let i = 0; i < 15; i++) factory.informerFor({ group: 'example', version: 'v1', resource: `things${i}` });
    factory.start();
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const stop = new AbortController();
      const waiting = factory.waitForCacheSync({ signal: stop.signal });
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
      stop.abort();
      const synced = await waiting;
      expect(Object.values(synced)).toEqual(Array(15).fill(false));
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await factory.shutdown();
    }
  });
});
