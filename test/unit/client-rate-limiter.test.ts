/** The client's token bucket (--orch-api-qps / --orch-api-burst) on a fake clock. */
import {describe, expect, it} from '@jest/globals';
import {TokenBucket, createRateLimiter, type LimiterClock} from '../../src/client/rate-limiter.js';

/** A clock that only moves when a sleeper asks it to (or the test does). */
class FakeClock implements LimiterClock {
  time = 0;
  slept: number[] = [];
  now(): number {
    return this.time;
  }
  async sleep(ms: number): Promise<void> {
    this.slept.push(ms);
  }
}

describe('TokenBucket', () => {
  it('lets a burst through at once, then spaces requests 1/qps apart, in arrival order', () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(5, 3, clock);
    // 3 tokens in the bucket; each later reservation waits 200ms more than the one before.
    expect([1, 2, 3, 4, 5, 6].map(() => Math.round(bucket.reserve()))).toEqual([0, 0, 0, 200, 400, 600]);
  });

  it('refills at qps while idle, never above the burst', () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(10, 2, clock);
    expect(bucket.tryAcquire()).toBe(true);
    expect(bucket.tryAcquire()).toBe(true);
    expect(bucket.tryAcquire()).toBe(false);
    clock.time += 100; // one token at 10 qps
    expect(bucket.tryAcquire()).toBe(true);
    expect(bucket.tryAcquire()).toBe(false);
    clock.time += 60_000; // a long pause refills only up to the burst
    expect([bucket.tryAcquire(), bucket.tryAcquire(), bucket.tryAcquire()]).toEqual([true, true, false]);
  });

  it('makes acquire() sleep for the reserved wait', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(2, 1, clock);
    await bucket.acquire();
    await bucket.acquire();
    await bucket.acquire();
    expect(clock.slept).toEqual([500, 1000]);
  });

  it('treats a burst below 1 as 1', () => {
    const bucket = new TokenBucket(1, 0, new FakeClock());
    expect(bucket.tryAcquire()).toBe(true);
    expect(bucket.tryAcquire()).toBe(false);
  });
});

describe('createRateLimiter', () => {
  it.each([0, -1])('qps %d means no limit', async (qps) => {
    const limiter = createRateLimiter({qps, burst: 1});
    expect(Array.from({length: 1000}, () => limiter.tryAcquire()).every(Boolean)).toBe(true);
  });

  it('qps > 0 limits', () => {
    const limiter = createRateLimiter({qps: 1, burst: 2, clock: new FakeClock()});
    expect([limiter.tryAcquire(), limiter.tryAcquire(), limiter.tryAcquire()]).toEqual([true, true, false]);
  });
});
