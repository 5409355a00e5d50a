import {describe, expect, it} from '@jest/globals';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import {StateEmitter} from '../../src/ui/state-emitter.js';

interface State {
  n: number;
  at: number;
}

type Step = [atMs: number, n: number];

/** Feeds `updates` (time, value) on a fake clock and returns [time, value] of every emit. */
async function emitsFor(updates: Step[], until: number, options: {maxPerSecond?: number} = {}) {
  const clock = new FakeClock(0);
  const emitter = new StateEmitter<State>({clock, ignoreKeys: ['at'], ...options});
  const seen: Step[] = [];
  emitter.subscribe((s) => seen.push([clock.now(), s.n]));
  for (const [atMs, n] of updates) {
    await clock.advance(atMs - clock.now());
    emitter.update({n, at: clock.now()});
  }
  await clock.advance(until - clock.now());
  return seen;
}

describe('StateEmitter', () => {
  it.each<[string, Step[], Step[]]>([
    ['emits the first state at once', [[0, 1]], [[0, 1]]],
    ['ignores an unchanged state (only `at` differs)', [[0, 1], [500, 1], [1000, 1]], [[0, 1]]],
    ['emits a change after a quiet period at once', [[0, 1], [300, 2], [900, 3]], [[0, 1], [300, 2], [900, 3]]],
    ['coalesces fast changes into one trailing emit of the last state', [[0, 1], [10, 2], [20, 3], [30, 4]], [[0, 1], [250, 4]]],
    ['skips the trailing emit when the state went back to what was shown', [[0, 1], [10, 2], [20, 1]], [[0, 1]]],
    [
      'never emits more than 4 times a second under a steady stream',
      Array.from({length: 100}, (_, i): Step => [i * 10, i]),
      [[0, 0], [250, 24], [500, 49], [750, 74], [1000, 99]],
    ],
  ])('%s', async (_name, updates, expected) => {
    expect(await emitsFor(updates, 2000)).toEqual(expected);
  });

  it('honours another rate', async () => {
    const updates = Array.from({length: 20}, (_, i): Step => [i * 50, i]);
    expect(await emitsFor(updates, 2000, {maxPerSecond: 1})).toEqual([[0, 0], [1000, 19]]);
  });

  it('emits a copy, so later in-place mutation by the daemon is still seen as a change', async () => {
    const clock = new FakeClock(0);
    const emitter = new StateEmitter<State>({clock, ignoreKeys: ['at']});
    const seen: number[] = [];
    emitter.subscribe((s) => seen.push(s.n));
    const live = {n: 1, at: 0};
    emitter.update(live);
    live.n = 2;
    await clock.advance(300);
    emitter.update(live);
    expect(seen).toEqual([1, 2]);
    expect(emitter.snapshot()).toEqual({n: 2, at: 0});
    expect(emitter.snapshot()).not.toBe(live);
  });

  it('stops calling a listener after unsubscribe, and close() drops the pending emit', async () => {
    const clock = new FakeClock(0);
    const emitter = new StateEmitter<State>({clock});
    const a: number[] = [];
    const b: number[] = [];
    const stopA = emitter.subscribe((s) => a.push(s.n));
    emitter.subscribe((s) => b.push(s.n));
    emitter.update({n: 1, at: 0});
    stopA();
    emitter.update({n: 2, at: 0});
    emitter.close();
    await clock.advance(1000);
    expect(a).toEqual([1]);
    expect(b).toEqual([1]);
    expect(clock.pending).toBe(0);
  });
});
