import {describe, expect, it} from '@jest/globals';
import {EvictionLimiter, RateLimitedTimedQueue} from '../../src/daemons/controller-manager/node-lifecycle/index.js';

/** Polls `queue.process` every `stepMs` over `durationMs`; returns [time, name] for each handed-out name. */
function drain(queue: RateLimitedTimedQueue, durationMs: number, stepMs = 100, start = 0): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  for (let t = start; t <= start + durationMs; t += stepMs) for (const name of queue.process(t)) out.push([t, name]);
  return out;
}

describe('eviction limiter (token bucket, burst 1)', () => {
  it.each([
    [0.1, [0, 10_000, 20_000, 30_000]],
    [0.5, [0, 2_000, 4_000, 6_000]],
    [0.01, [0]], // next one at 100 s
    [2, [0, 500, 1_000, 1_500]],
  ])('rate %f/s grants at %j within the first 30 s', (qps, expected) => {
    const limiter = new EvictionLimiter(qps, 0);
    const granted: number[] = [];
    for (let t = 0; t <= 30_000 && granted.length < 4; t += 100) if (limiter.tryAccept(t)) granted.push(t);
    expect(granted).toEqual(expected);
  });

  it('0.01/s polled every 100 ms grants exactly every 100 s (no drift)', () => {
    const limiter = new EvictionLimiter(0.01, 0);
    const granted: number[] = [];
    for (let t = 0; t <= 1_000_000; t += 100) if (limiter.tryAccept(t)) granted.push(t);
    expect(granted).toEqual([0, 100_000, 200_000, 300_000, 400_000, 500_000, 600_000, 700_000, 800_000, 900_000, 1_000_000]);
  });

  it('rate 0 never grants', () => {
    const limiter = new EvictionLimiter(0, 0);
    expect([0, 1e6, 1e9].some((t) => limiter.tryAccept(t))).toBe(false);
  });
});

describe('rate-limited timed queue', () => {
  it('rate 0.1/s hands out one node every 10 s, first come first served', () => {
    const q = new RateLimitedTimedQueue(0.1, 0);
    for (const name of ['a', 'b', 'c', 'd']) q.add(name, 0);
    expect(drain(q, 40_000)).toEqual([[0, 'a'], [10_000, 'b'], [20_000, 'c'], [30_000, 'd']]);
  });

  it('a node added later waits for the next token; a quiet queue keeps one token (burst 1)', () => {
    const q = new RateLimitedTimedQueue(0.1, 0);
    expect(drain(q, 60_000)).toEqual([]);
    q.add('a', 60_000);
    q.add('b', 60_000);
    expect(drain(q, 20_000, 100, 60_000)).toEqual([[60_000, 'a'], [70_000, 'b']]);
  });

  it('a node is queued once, and not again after it was handed out until removed', () => {
    const q = new RateLimitedTimedQueue(1, 0);
    expect(q.add('a', 0)).toBe(true);
    expect(q.add('a', 0)).toBe(false);
    expect(q.process(0)).toEqual(['a']);
    expect(q.add('a', 5_000)).toBe(false); // still marked
    expect(q.isQueued('a')).toBe(false);
    q.remove('a');
    expect(q.add('a', 5_000)).toBe(true);
  });

  it('removing a queued node lets the next one go', () => {
    const q = new RateLimitedTimedQueue(0.1, 0);
    q.add('a', 0);
    q.add('b', 0);
    q.remove('a');
    expect(drain(q, 1_000)).toEqual([[0, 'b']]);
  });

  it('a failed item is retried at its retry time, behind items due earlier', () => {
    const q = new RateLimitedTimedQueue(10, 0);
    q.add('a', 0);
    q.add('b', 0);
    expect(q.process(0)).toEqual(['a']);
    q.requeue('a', 50);
    expect(drain(q, 300, 100, 100)).toEqual([[100, 'b'], [200, 'a']]);
  });

  it('swapping to rate 0 stops the queue; swapping back starts drained', () => {
    const q = new RateLimitedTimedQueue(0.1, 0);
    for (const name of ['a', 'b', 'c']) q.add(name, 0);
    expect(q.process(0)).toEqual(['a']);
    q.swapLimiter(0, 1_000);
    expect(q.qps).toBe(0);
    expect(drain(q, 100_000, 1_000, 1_000)).toEqual([]);
    q.swapLimiter(0.1, 200_000);
    // The stopped limiter had no token, so the new one starts empty: first grant 10 s later.
    expect(drain(q, 30_000, 1_000, 200_000)).toEqual([[210_000, 'b'], [220_000, 'c']]);
  });

  it('swapping to the same rate keeps the bucket', () => {
    const q = new RateLimitedTimedQueue(0.1, 0);
    q.swapLimiter(0.1, 0);
    q.add('a', 0);
    expect(q.process(0)).toEqual(['a']);
  });

  it('a swap with a token available starts the new rate full', () => {
    const q = new RateLimitedTimedQueue(0.1, 0);
    q.swapLimiter(0.01, 5_000);
    q.add('a', 5_000);
    q.add('b', 5_000);
    expect(drain(q, 200_000, 1_000, 5_000)).toEqual([[5_000, 'a'], [105_000, 'b']]);
  });
});
