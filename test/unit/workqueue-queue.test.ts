/** Work queues on a fake clock: dedup, exclusive processing, delays, rate limiting, metrics. */
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { FakeClock } from '../../src/client/informers/clock.js';
import { DelayingQueue } from '../../src/client/informers/workqueue/delaying-queue.js';
import { PrometheusWorkqueueMetrics } from '../../src/client/informers/workqueue/metrics.js';
import { WorkQueue } from '../../src/client/informers/workqueue/queue.js';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
} from '../../src/client/informers/workqueue/rate-limiters.js';
import { processNextItem, RateLimitingQueue } from '../../src/client/informers/workqueue/rate-limiting-queue.js';

const settle = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A tiny script language for queue semantics: `add x`, `get` (expects the next key),
 * `get -` (expects the queue to have nothing ready), `done x`, `shutdown`, `get end` (undefined).
 */
async function run(script: string[]): Promise<{ handedOut: (string | undefined)[]; len: number; depth: number }> {
  const queue = new WorkQueue<string>();
  const handedOut: (string | undefined)[] = [];
  for (const step of script) {
    const [op, arg] = step.split(' ');
    if (op === 'add') queue.add(arg);
    else if (op === 'done') queue.done(arg);
    else if (op === 'shutdown') queue.shutDown();
    else if (op === 'get') {
      let got: string | undefined | null = null;
      void queue.get().then((item) => (got = item));
      await settle();
      handedOut.push(got === null ? '-' : got);
    }
  }
  return { handedOut, len: queue.len(), depth: queue.stats().depth };
}

describe('WorkQueue', () => {
  it.each<[string, string[], (string | undefined)[], number]>([
    ['hands keys out in order', ['add a', 'add b', 'get', 'get'], ['a', 'b'], 0],
    ['queues a key added twice once', ['add a', 'add b', 'add a', 'get', 'get', 'get'], ['a', 'b', '-'], 0],
    ['does not hand out a key being processed', ['add a', 'get', 'add a', 'get'], ['a', '-'], 0],
    ['requeues a key re-added while processing at done', ['add a', 'get', 'add a', 'add a', 'done a', 'get', 'get'], ['a', 'a', '-'], 0],
    ['forgets a processed key that was not re-added', ['add a', 'get', 'done a', 'get'], ['a', '-'], 0],
    ['other keys go while one is processed', ['add a', 'get', 'add a', 'add b', 'get'], ['a', 'b'], 0],
    ['after shutdown, ignores adds but drains what is queued', ['add a', 'shutdown', 'add b', 'get', 'get'], ['a', undefined], 0],
    ['a blocked get ends at shutdown', ['get', 'shutdown'], ['-'], 0],
  ])('%s', async (_, script, expected, len) => {
    const result = await run(script);
    expect(result.handedOut).toEqual(expected);
    expect(result.len).toBe(len);
  });

  it('a worker waiting in get receives the next add; shutdown wakes idle workers with undefined', async () => {
    const queue = new WorkQueue<string>();
    const first = queue.get();
    const second = queue.get();
    queue.add('a');
    expect(await first).toBe('a');
    queue.shutDown();
    expect(await second).toBeUndefined();
  });

  it('shutDownWithDrain waits for the keys being processed', async () => {
    const queue = new WorkQueue<string>();
    queue.add('a');
    await queue.get();
    let drained = false;
    void queue.shutDownWithDrain().then(() => (drained = true));
    await settle();
    expect(drained).toBe(false);
    queue.done('a');
    await settle();
    expect(drained).toBe(true);
  });
});

describe('DelayingQueue', () => {
  it('queues a key once its delay has passed; the earlier of two delays wins', async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.addAfter('a', 100);
    queue.addAfter('b', 50);
    queue.addAfter('a', 30);
    queue.addAfter('b', 500); // later than the pending 50ms: ignored
    expect(queue.len()).toBe(0);
    expect(queue.waitingLen()).toBe(2);
    clock.advance(29);
    expect(queue.len()).toBe(0);
    clock.advance(1);
    expect(await queue.get()).toBe('a');
    clock.advance(19);
    expect(queue.len()).toBe(0);
    clock.advance(1);
    expect(queue.len()).toBe(1);
    clock.advance(1000);
    expect(queue.len()).toBe(1); // the superseded 100ms entry of `a` does not come back
    expect(queue.stats().retries).toBe(4);
  });

  it('a zero delay adds at once; shutdown cancels the pending ones', () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.addAfter('now', 0);
    expect(queue.len()).toBe(1);
    queue.addAfter('later', 10);
    queue.shutDown();
    clock.advance(100);
    expect(queue.len()).toBe(1);
    expect(clock.pendingTimers()).toEqual([]);
  });
});

describe('rate limiters', () => {
  it('per-item exponential backoff doubles from the base up to the cap, per key, and forget resets', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(5, 1000 * 1000);
    const delays = Array.from({ length: 20 }, () => limiter.when('a'));
    expect(delays.slice(0, 5)).toEqual([5, 10, 20, 40, 80]);
    expect(delays[17]).toBe(5 * 2 ** 17);
    expect(delays[18]).toBe(1000 * 1000); // 5ms * 2^18 = 1310.72s > 1000s
    expect(limiter.when('b')).toBe(5);
    expect(limiter.numRequeues('a')).toBe(20);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(5);
    // Large exponents must not overflow into NaN/Infinity.
    for (let i = 0; i < 2000; i++) limiter.when('c');
    expect(limiter.when('c')).toBe(1000 * 1000);
  });

  it('the bucket allows a burst of 100, then 10 per second', () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter<string>(10, 100, clock);
    const burst = Array.from({ length: 100 }, (_, i) => limiter.when(`k${i}`));
    expect(burst.every((d) => d === 0)).toBe(true);
    expect(limiter.when('x')).toBeCloseTo(100);
    expect(limiter.when('y')).toBeCloseTo(200);
    clock.advance(1000);
    // 10 tokens refilled, 2 were owed: 8 go at once, the next waits a tenth of a second.
    expect(Array.from({ length: 8 }, () => limiter.when('z'))).toEqual(Array(8).fill(0));
    expect(limiter.when('z')).toBeCloseTo(100);
  });

  it('the default controller limiter is the larger of the per-item backoff and the bucket', () => {
    const clock = new FakeClock();
    const limiter = defaultControllerRateLimiter<string>(clock);
    expect([limiter.when('a'), limiter.when('a'), limiter.when('a')]).toEqual([5, 10, 20]);
    for (let i = 0; i < 97; i++) limiter.when(`other${i}`);
    // The bucket is empty now: a fresh key waits for a token (100ms) rather than 5ms.
    expect(limiter.when('fresh')).toBeCloseTo(100);
    expect(limiter.numRequeues('a')).toBe(3);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
  });

  it('MaxOf reports the largest requeue count', () => {
    const a = new ItemExponentialFailureRateLimiter<string>(1, 10);
    const max = new MaxOfRateLimiter<string>(a, new ItemExponentialFailureRateLimiter<string>(100, 1000));
    expect(max.when('k')).toBe(100);
    expect(max.when('k')).toBe(200);
    expect(max.numRequeues('k')).toBe(2);
  });
});

describe('RateLimitingQueue', () => {
  it('a failing key comes back after 5ms, 10ms, 20ms; success forgets its failures', async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({ clock });
    queue.add('pod');
    const failures: string[] = [];
    const failing = async () => {
      throw new Error('boom');
    };
    for (const wait of [5, 10, 20]) {
      expect(await processNextItem(queue, failing, (item) => failures.push(item))).toBe(true);
      clock.advance(wait - 1);
      expect(queue.len()).toBe(0);
      clock.advance(1);
      expect(queue.len()).toBe(1);
    }
    expect(queue.numRequeues('pod')).toBe(3);
    await processNextItem(queue, async () => undefined);
    expect(queue.numRequeues('pod')).toBe(0);
    expect(failures).toEqual(['pod', 'pod', 'pod']);
    queue.shutDown();
    expect(await processNextItem(queue, async () => undefined)).toBe(false);
  });

  it('keeps counts for the dashboard and client-go metrics for /metrics', async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const queue = new RateLimitingQueue<string>({ clock, name: 'replicaset', metrics: new PrometheusWorkqueueMetrics(registry) });
    queue.add('a');
    queue.add('b');
    queue.add('a');
    clock.advance(250);
    const item = (await queue.get())!;
    clock.advance(2000);
    expect(queue.stats()).toMatchObject({ name: 'replicaset', depth: 1, processing: 1, adds: 2, gets: 1, unfinishedWorkSeconds: 2, longestRunningProcessorSeconds: 2 });
    const inFlight = await registry.metrics();
    expect(inFlight).toContain('workqueue_unfinished_work_seconds{name="replicaset"} 2');
    queue.addRateLimited(item);
    queue.done(item);
    const text = await registry.metrics();
    expect(text).toContain('workqueue_depth{name="replicaset"} 1');
    expect(text).toContain('workqueue_adds_total{name="replicaset"} 2');
    expect(text).toContain('workqueue_retries_total{name="replicaset"} 1');
    expect(text).toContain('workqueue_queue_duration_seconds_count{name="replicaset"} 1');
    expect(text).toContain('workqueue_queue_duration_seconds_bucket{le="0.1",name="replicaset"} 0');
    expect(text).toContain('workqueue_queue_duration_seconds_bucket{le="1",name="replicaset"} 1');
    expect(text).toContain('workqueue_work_duration_seconds_sum{name="replicaset"} 2');
    expect(text).toContain('workqueue_unfinished_work_seconds{name="replicaset"} 0');
    expect(text).toContain('# HELP workqueue_depth Current depth of workqueue');
  });
});
