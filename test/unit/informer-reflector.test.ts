/**
 * Reflector and informer on a fake clock and a fake ListWatcher: list then watch, resume, the two
 * 410 paths, backoff, resync, and the randomized periods.
 */
import { describe, expect, it } from '@jest/globals';
import type { Logger } from '../../src/lib/klog.js';
import { ExponentialBackoff, REFLECTOR_BACKOFF } from '../../src/client/informers/backoff.js';
import { FakeClock } from '../../src/client/informers/clock.js';
import { StatusError } from '../../src/client/informers/errors.js';
import { FakeListWatcher } from '../../src/client/informers/fake-list-watcher.js';
import { Reflector } from '../../src/client/informers/reflector.js';
import { SharedIndexInformer, type EventHandler } from '../../src/client/informers/informer.js';
import { randomResyncPeriod, watchTimeoutSeconds } from '../../src/client/informers/jitter.js';
import { DeletedFinalStateUnknown } from '../../src/client/informers/store.js';
import type { Unstructured } from '../../src/client/informers/types.js';

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

const warnings: string[] = [];
const quiet: Logger = {
  info() {},
  warning: (msg, ...kv) => void warnings.push([msg, ...kv].join(' ')),
  error() {},
  v: () => ({ enabled: false, info() {} }),
};

const pod = (name: string, rv: string, extra: Record<string, unknown> = {}): Unstructured => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', resourceVersion: rv }, ...extra,
});

const gone = (message = 'too old resource version: 5 (9)') =>
  ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Expired', code: 410 }) as const;

/** Records what handlers hear, as `add a`, `update a 3->4`, `delete a`, `delete? a` (tombstone). */
function recorder(): { log: string[]; handler: EventHandler<Unstructured> } {
  const log: string[] = [];
  const rv = (o: Unstructured) => o.metadata?.resourceVersion;
  return {
    log,
    handler: {
      onAdd: (o) => log.push(`add ${o.metadata?.name}`),
      onUpdate: (a, b) => log.push(`update ${b.metadata?.name} ${rv(a)}->${rv(b)}`),
      onDelete: (o) => log.push(o instanceof DeletedFinalStateUnknown ? `delete? ${o.key}` : `delete ${o.metadata?.name}`),
    },
  };
}

function setup(options: { resyncPeriodMs?: number; random?: () => number } = {}) {
  const clock = new FakeClock();
  const lw = new FakeListWatcher<Unstructured>();
  const informer = new SharedIndexInformer<Unstructured>({
    listWatcher: lw, clock, random: options.random ?? (() => 0), logger: quiet, resyncPeriodMs: options.resyncPeriodMs, name: 'pods',
  });
  const { log, handler } = recorder();
  informer.addEventHandler(handler);
  return { clock, lw, informer, log };
}

describe('randomized durations', () => {
  it.each([
    [0, 12 * 3600_000],
    [0.5, 18 * 3600_000],
    [0.999999, 24 * 3600_000 - 43.2],
  ])('resync period with random %f is %d ms: within [min, 2*min)', (random, expected) => {
    const period = randomResyncPeriod(12 * 3600_000, () => random);
    expect(period).toBeCloseTo(expected, 0);
    expect(period).toBeGreaterThanOrEqual(12 * 3600_000);
    expect(period).toBeLessThan(24 * 3600_000);
  });

  it('resync periods spread over the whole range', () => {
    const periods = Array.from({ length: 2000 }, () => randomResyncPeriod(1000));
    expect(Math.min(...periods)).toBeGreaterThanOrEqual(1000);
    expect(Math.max(...periods)).toBeLessThan(2000);
    expect(Math.min(...periods)).toBeLessThan(1100);
    expect(Math.max(...periods)).toBeGreaterThan(1900);
  });

  it.each([[0, 300], [0.5, 450], [0.9999, 599]])('watch timeout with random %f is %d s', (random, seconds) => {
    expect(watchTimeoutSeconds(() => random)).toBe(seconds);
  });
});

describe('ExponentialBackoff (the reflector defaults)', () => {
  it('doubles from 800ms up to the 30s cap, jitter adding up to as much again', () => {
    const clock = new FakeClock();
    const noJitter = new ExponentialBackoff(REFLECTOR_BACKOFF, clock, () => 0);
    expect(Array.from({ length: 8 }, () => noJitter.next())).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    const fullJitter = new ExponentialBackoff(REFLECTOR_BACKOFF, clock, () => 0.999);
    const waits = Array.from({ length: 8 }, () => fullJitter.next());
    expect(waits[0]).toBeCloseTo(1599.2);
    expect(waits[7]).toBeCloseTo(59970);
  });

  it('starts over after two quiet minutes, not before', () => {
    const clock = new FakeClock();
    const backoff = new ExponentialBackoff(REFLECTOR_BACKOFF, clock, () => 0);
    backoff.next();
    backoff.next();
    clock.advance(120_000);
    expect(backoff.next()).toBe(3200);
    clock.advance(120_001);
    expect(backoff.next()).toBe(800);
  });
});

describe('Reflector via the informer', () => {
  it('lists in pages from resourceVersion 0, then watches from the list version with bookmarks', async () => {
    const { lw, informer, log } = setup();
    lw.onList = (o) => (o.continue ? { items: [pod('b', '7')], resourceVersion: '9' } : { items: [pod('a', '5')], resourceVersion: '9', continue: 'next' });
    informer.run();
    await flush();
    expect(lw.lists).toEqual([
      { resourceVersion: '0', limit: 500, labelSelector: undefined, fieldSelector: undefined },
      { continue: 'next', limit: 500, labelSelector: undefined, fieldSelector: undefined },
    ]);
    expect(log).toEqual(['add a', 'add b']);
    expect(informer.hasSynced()).toBe(true);
    expect(lw.watches.map((w) => w.options)).toEqual([{ resourceVersion: '9', allowWatchBookmarks: true, timeoutSeconds: 300, labelSelector: undefined, fieldSelector: undefined }]);
    await informer.stop();
  });

  it('applies events; a watch the server ends is reopened from the last version seen (bookmarks too), without relisting', async () => {
    const { lw, informer, log, clock } = setup();
    lw.onList = () => ({ items: [pod('a', '5')], resourceVersion: '5' });
    informer.run();
    await flush();
    const first = lw.lastWatch!;
    first.send({ type: 'ADDED', object: pod('b', '6') });
    first.send({ type: 'MODIFIED', object: pod('a', '7') });
    first.send({ type: 'DELETED', object: pod('b', '8') });
    first.send({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '12' } } });
    clock.advance(2000);
    first.end();
    await flush();
    expect(log).toEqual(['add a', 'add b', 'update a 5->7', 'delete b']);
    expect(informer.indexer.listKeys()).toEqual(['default/a']);
    expect(lw.lists).toHaveLength(1);
    expect(lw.watches.map((w) => w.options.resourceVersion)).toEqual(['5', '12']);
    await informer.stop();
    expect(lw.openWatches).toEqual([]);
  });

  it.each([
    ['an HTTP 410 on the watch request', (lw: FakeListWatcher<Unstructured>) => (lw.onWatch = () => { throw new StatusError(gone()); })],
    ['an ERROR event carrying a 410 Status', (lw: FakeListWatcher<Unstructured>) => lw.lastWatch!.send({ type: 'ERROR', object: gone() })],
  ])('%s: back off, relist (the latest state when the last version is gone), deliver the difference', async (_, expire) => {
    const { lw, informer, log, clock } = setup();
    let state = [pod('a', '5'), pod('b', '5')];
    lw.onList = () => ({ items: state, resourceVersion: '5' });
    informer.run();
    await flush();
    lw.lastWatch!.send({ type: 'MODIFIED', object: pod('a', '6') });
    // Meanwhile on the server: b deleted, c created, and history compacted.
    state = [pod('a', '6'), pod('c', '9')];
    lw.onList = (o) => {
      if (o.resourceVersion === '6') throw new StatusError({ ...gone('The resourceVersion for the provided list is too old.') });
      return { items: state, resourceVersion: '9' };
    };
    expire(lw);
    // The HTTP case: the open watch ends (timeout) and reopening it is answered 410. The ERROR case
    // already closed the stream, so this end is a no-op there.
    lw.lastWatch!.end();
    await flush();
    // The stream that failed is closed; nothing is relisted before the backoff (800ms with no jitter).
    expect(lw.lists).toHaveLength(1);
    expect(clock.pendingTimers()).toEqual([800]);
    lw.onWatch = () => undefined;
    clock.advance(800);
    await flush();
    expect(lw.lists.map((o) => o.resourceVersion)).toEqual(['0', '6', '']);
    expect(log).toEqual(['add a', 'add b', 'update a 5->6', 'update a 6->6', 'add c', 'delete? default/b']);
    expect(informer.stats()).toMatchObject({ lists: 2, expired: 1 });
    expect(lw.lastWatch!.options.resourceVersion).toBe('9');
    await informer.stop();
  });

  it('a refused connection retries the watch after a backoff, keeping the cache and not relisting', async () => {
    const { lw, informer, clock } = setup();
    lw.onList = () => ({ items: [pod('a', '5')], resourceVersion: '5' });
    informer.run();
    await flush();
    lw.onWatch = () => {
      throw Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    };
    lw.lastWatch!.send({ type: 'ADDED', object: pod('b', '6') });
    lw.lastWatch!.end();
    await flush();
    expect(clock.pendingTimers()).toEqual([800]);
    clock.advance(800);
    await flush();
    expect(clock.pendingTimers()).toEqual([1600]);
    lw.onWatch = () => undefined;
    clock.advance(1600);
    await flush();
    expect(lw.lists).toHaveLength(1);
    expect(lw.watches.map((w) => w.options.resourceVersion)).toEqual(['5', '6', '6', '6']);
    expect(informer.indexer.size).toBe(2);
    await informer.stop();
  });

  it('list failures back off exponentially and the informer syncs once a list succeeds', async () => {
    const { lw, informer, clock } = setup();
    lw.onList = () => {
      throw new StatusError({ code: 500, reason: 'InternalError', message: 'store is down' });
    };
    informer.run();
    const waits: number[][] = [];
    for (let i = 0; i < 4; i++) {
      await flush();
      waits.push(clock.pendingTimers());
      clock.advance(clock.pendingTimers()[0]);
    }
    expect(waits).toEqual([[800], [1600], [3200], [6400]]);
    expect(informer.hasSynced()).toBe(false);
    expect(warnings.at(-1)).toContain('store is down');
    lw.onList = () => ({ items: [pod('a', '1')], resourceVersion: '1' });
    const synced = informer.waitForSync();
    clock.advance(12800);
    await flush();
    expect(await synced).toBe(true);
    await informer.stop();
  });

  it('a watch closed at once with no events counts as a failure: relist after a backoff', async () => {
    const { lw, informer, clock } = setup();
    informer.run();
    await flush();
    lw.lastWatch!.end();
    await flush();
    expect(lw.watches).toHaveLength(1);
    clock.advance(800);
    await flush();
    expect(lw.lists).toHaveLength(2);
    expect(warnings.at(-1)).toContain('very short watch');
    await informer.stop();
  });

  it('resyncs every period, redelivering each cached object as an update from itself', async () => {
    const { lw, informer, log, clock } = setup({ resyncPeriodMs: randomResyncPeriod(60_000, () => 0.5) });
    lw.onList = () => ({ items: [pod('a', '5'), pod('b', '5')], resourceVersion: '5' });
    informer.run();
    await flush();
    log.length = 0;
    clock.advance(89_999);
    expect(log).toEqual([]);
    clock.advance(1);
    expect(log).toEqual(['update a 5->5', 'update b 5->5']);
    clock.advance(90_000);
    expect(log).toHaveLength(4);
    await informer.stop();
    clock.advance(90_000);
    expect(log).toHaveLength(4);
    expect(informer.stats().resyncs).toBe(2);
  });
});

describe('SharedIndexInformer', () => {
  it('a handler added late is told of every cached object first; a throwing handler does not stop the others', async () => {
    const { lw, informer } = setup();
    lw.onList = () => ({ items: [pod('a', '5')], resourceVersion: '5' });
    informer.addEventHandler({ onAdd: () => { throw new Error('handler bug'); } });
    informer.run();
    await flush();
    const late = recorder();
    const registration = informer.addEventHandler(late.handler);
    expect(registration.hasSynced()).toBe(true);
    lw.lastWatch!.send({ type: 'ADDED', object: pod('b', '6') });
    registration.remove();
    lw.lastWatch!.send({ type: 'ADDED', object: pod('c', '7') });
    expect(late.log).toEqual(['add a', 'add b']);
    expect(informer.indexer.byIndex('namespace', 'default').map((o) => o.metadata?.name).sort()).toEqual(['a', 'b', 'c']);
    await informer.stop();
  });

  it('waitForSync gives up at its timeout or when the informer stops', async () => {
    const { lw, informer, clock } = setup();
    lw.onList = () => new Promise(() => undefined);
    informer.run();
    const timedOut = informer.waitForSync({ timeoutMs: 1000 });
    clock.advance(1000);
    expect(await timedOut).toBe(false);
    const stopped = informer.waitForSync();
    void informer.stop();
    expect(await stopped).toBe(false);
  });
});

describe('Reflector transform', () => {
  it('trims each object as it arrives, page by page and event by event; bookmarks still move the version on', async () => {
    const clock = new FakeClock();
    const lw = new FakeListWatcher<Unstructured>();
    const seen: unknown[] = [];
    const store = {
      replace: (items: Unstructured[]) => void seen.push(['replace', items]),
      add: (o: Unstructured) => void seen.push(['add', o]),
      update: (o: Unstructured) => void seen.push(['update', o]),
      delete: (o: Unstructured) => void seen.push(['delete', o]),
      resync: () => undefined,
    };
    const slim = (o: Unstructured): Unstructured => ({ metadata: { name: o.metadata?.name, resourceVersion: o.metadata?.resourceVersion } } as Unstructured);
    const reflector = new Reflector<Unstructured>({ listWatcher: lw, store, clock, random: () => 0, logger: quiet, transform: slim });
    const big = { spec: { containers: [{ name: 'c' }] } };
    lw.onList = (o) => (o.continue ? { items: [pod('b', '7', big)], resourceVersion: '9' } : { items: [pod('a', '5', big)], resourceVersion: '9', continue: 'next' });
    reflector.run();
    await flush();
    lw.lastWatch!.send({ type: 'ADDED', object: pod('c', '10', big) });
    lw.lastWatch!.send({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '12' } } });
    lw.lastWatch!.end();
    await flush();
    expect(seen).toEqual([
      ['replace', [{ metadata: { name: 'a', resourceVersion: '5' } }, { metadata: { name: 'b', resourceVersion: '7' } }]],
      ['add', { metadata: { name: 'c', resourceVersion: '10' } }],
    ]);
    expect(lw.watches.map((w) => w.options.resourceVersion)).toEqual(['9', '12']);
    await reflector.stop();
  });
});
