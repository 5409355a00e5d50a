/**
 * Priority and fairness's queues on a fake clock: dispatch at once when seats are free, fair queuing
 * between an elephant flow of slow requests and a mouse flow of quick ones, queue length limits,
 * queue wait timeouts, cancellation, the Reject response, wide requests, and shuffle sharding.
 */
import {describe, expect, test} from '@jest/globals';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import {QueueSet, type QueuingConfig, type RejectReason} from '../../src/daemons/apiserver/filters/flowcontrol/queue-set.js';
import {SeatPool} from '../../src/daemons/apiserver/filters/flowcontrol/seat-pool.js';
import {dealHand, hashFlowId} from '../../src/daemons/apiserver/filters/flowcontrol/shuffle-shard.js';

function level(clock: FakeClock, nominal: number, queuing: QueuingConfig | undefined) {
  const pool = new SeatPool();
  pool.configure('l', {nominal, lendable: 0, borrowingLimit: 0});
  return {pool, queues: new QueueSet(clock, pool.limiter('l'), queuing)};
}

interface Outcome {
  dispatchedAfterMs?: number;
  rejected?: RejectReason;
}

/** Submits a request that runs `durationMs` on the fake clock once dispatched. */
function submit(clock: FakeClock, queues: QueueSet, flow: string, durationMs: number, opts: {seats?: number; waitLimitMs?: number} = {}) {
  const outcome: Outcome = {};
  const ticket = queues.enqueue({
    flowHash: hashFlowId('schema', flow),
    seats: opts.seats ?? 1,
    waitLimitMs: opts.waitLimitMs ?? 60_000,
    onDispatch: (waited) => {
      outcome.dispatchedAfterMs = waited;
      clock.setTimeout(() => ticket.finish(), durationMs);
    },
    onReject: (reason) => (outcome.rejected = reason),
  });
  return {outcome, ticket};
}

describe('priority level queues', () => {
  test('a request runs at once while seats are free, and queues once they are taken', async () => {
    const clock = new FakeClock();
    const {queues, pool} = level(clock, 2, {queues: 4, handSize: 2, queueLengthLimit: 10});
    const a = submit(clock, queues, 'a', 100);
    const b = submit(clock, queues, 'b', 100);
    const c = submit(clock, queues, 'c', 100);
    expect(a.outcome.dispatchedAfterMs).toBe(0);
    expect(b.outcome.dispatchedAfterMs).toBe(0);
    expect(c.outcome.dispatchedAfterMs).toBeUndefined();
    expect(pool.inUse('l')).toBe(2);
    expect(queues.waitingRequests).toBe(1);
    await clock.advance(100);
    expect(c.outcome.dispatchedAfterMs).toBe(100);
    await clock.advance(100);
    expect(pool.inUse('l')).toBe(0);
  });

  test('fair queuing: a flood of slow requests from one flow does not hold back a flow of quick ones', async () => {
    const clock = new FakeClock();
    const {queues} = level(clock, 2, {queues: 64, handSize: 1, queueLengthLimit: 1000});
    // The elephant: 200 requests of 200 ms queued at once (40 s of work on 2 seats).
    for (let i = 0; i < 200; i++) submit(clock, queues, 'elephant', 200);
    // The mouse: one 5 ms request every 100 ms, 50 of them.
    const mice: Outcome[] = [];
    for (let i = 0; i < 50; i++) {
      mice.push(submit(clock, queues, 'mouse', 5).outcome);
      await clock.advance(100);
    }
    await clock.advance(60_000);
    const waits = mice.map((m) => m.dispatchedAfterMs!);
    expect(waits.every((w) => w !== undefined)).toBe(true);
    // A mouse waits at most for one elephant request to end (200 ms), never behind the elephant's queue.
    expect(Math.max(...waits)).toBeLessThanOrEqual(200);
  });

  test('without separate queues the mouse waits behind the elephant (what fair queuing avoids)', async () => {
    const clock = new FakeClock();
    const {queues} = level(clock, 2, {queues: 1, handSize: 1, queueLengthLimit: 1000});
    for (let i = 0; i < 200; i++) submit(clock, queues, 'elephant', 200);
    const mouse = submit(clock, queues, 'mouse', 5).outcome;
    await clock.advance(60_000);
    expect(mouse.dispatchedAfterMs).toBeGreaterThan(10_000);
  });

  test('fair shares are in seat-time, not in requests: two backlogged flows get equal service time', async () => {
    const clock = new FakeClock();
    const {queues} = level(clock, 2, {queues: 64, handSize: 1, queueLengthLimit: 1000});
    const slow: Outcome[] = [];
    const quick: Outcome[] = [];
    for (let i = 0; i < 500; i++) {
      slow.push(submit(clock, queues, 'elephant', 200).outcome);
      quick.push(submit(clock, queues, 'mouse', 5).outcome);
    }
    await clock.advance(2000);
    const served = (list: Outcome[]) => list.filter((o) => o.dispatchedAfterMs !== undefined).length;
    // Round robin by request would serve both about equally (~20 each); by seat-time the quick flow
    // gets ~40 times as many requests through.
    expect(served(quick)).toBeGreaterThan(10 * served(slow));
    expect(served(slow)).toBeGreaterThan(0);
  });

  test('the same load in one flow is served first come, first served', async () => {
    const clock = new FakeClock();
    const {queues} = level(clock, 1, {queues: 1, handSize: 1, queueLengthLimit: 1000});
    for (let i = 0; i < 10; i++) submit(clock, queues, 'x', 100);
    const last = submit(clock, queues, 'x', 5).outcome;
    await clock.advance(2000);
    expect(last.dispatchedAfterMs).toBe(1000);
  });

  test('a full queue rejects with queue-full', () => {
    const clock = new FakeClock();
    const {queues} = level(clock, 1, {queues: 1, handSize: 1, queueLengthLimit: 2});
    submit(clock, queues, 'x', 100);
    submit(clock, queues, 'x', 100);
    submit(clock, queues, 'x', 100);
    expect(submit(clock, queues, 'x', 100).outcome.rejected).toBe('queue-full');
  });

  test('a request waiting past its wait limit is rejected with time-out and leaves its queue', async () => {
    const clock = new FakeClock();
    const {queues} = level(clock, 1, {queues: 2, handSize: 1, queueLengthLimit: 10});
    submit(clock, queues, 'x', 10_000);
    const waiting = submit(clock, queues, 'y', 10, {waitLimitMs: 500}).outcome;
    await clock.advance(499);
    expect(waiting.rejected).toBeUndefined();
    await clock.advance(1);
    expect(waiting.rejected).toBe('time-out');
    expect(queues.waitingRequests).toBe(0);
  });

  test('a cancelled waiting request leaves its queue; cancelling a running one changes nothing', async () => {
    const clock = new FakeClock();
    const {queues, pool} = level(clock, 1, {queues: 2, handSize: 1, queueLengthLimit: 10});
    const running = submit(clock, queues, 'x', 1000);
    const waiting = submit(clock, queues, 'y', 10);
    waiting.ticket.cancel();
    expect(waiting.outcome.rejected).toBe('cancelled');
    running.ticket.cancel();
    expect(pool.inUse('l')).toBe(1);
    await clock.advance(1000);
    expect(pool.inUse('l')).toBe(0);
    expect(waiting.outcome.dispatchedAfterMs).toBeUndefined();
  });

  test('the Reject response: what does not fit at once is rejected with concurrency-limit', () => {
    const clock = new FakeClock();
    const {queues} = level(clock, 1, undefined);
    expect(submit(clock, queues, 'x', 100).outcome.dispatchedAfterMs).toBe(0);
    expect(submit(clock, queues, 'y', 100).outcome.rejected).toBe('concurrency-limit');
  });

  test('a request wider than the limit runs when the level is idle, and waits for it to be', async () => {
    const clock = new FakeClock();
    const {queues, pool} = level(clock, 2, {queues: 4, handSize: 2, queueLengthLimit: 10});
    submit(clock, queues, 'x', 100);
    const wide = submit(clock, queues, 'y', 100, {seats: 5}).outcome;
    expect(wide.dispatchedAfterMs).toBeUndefined();
    await clock.advance(100);
    expect(wide.dispatchedAfterMs).toBe(100);
    expect(pool.inUse('l')).toBe(5);
  });
});

describe('shuffle sharding', () => {
  test('a hand has handSize distinct cards of the deck, the same for the same flow', () => {
    for (const flow of ['alice', 'bob', 'system:serviceaccount:a:b', '']) {
      const hand = dealHand(hashFlowId('global-default', flow), 128, 6);
      expect(new Set(hand).size).toBe(6);
      expect(hand.every((card) => card >= 0 && card < 128)).toBe(true);
      expect(dealHand(hashFlowId('global-default', flow), 128, 6)).toEqual(hand);
    }
  });

  test('the FNV-1a hash of the flow identity is 64-bit and differs per flow', () => {
    const a = hashFlowId('s', 'alice');
    expect(a).toBeLessThan(2n ** 64n);
    expect(hashFlowId('s', 'bob')).not.toBe(a);
    // The zero byte between the parts keeps ("ab", "c") apart from ("a", "bc").
    expect(hashFlowId('ab', 'c')).not.toBe(hashFlowId('a', 'bc'));
  });

  test('hands spread: 1000 flows use every queue of a 64-queue deck', () => {
    const used = new Set<number>();
    for (let i = 0; i < 1000; i++) for (const card of dealHand(hashFlowId('s', `user-${i}`), 64, 8)) used.add(card);
    expect(used.size).toBe(64);
  });
});
