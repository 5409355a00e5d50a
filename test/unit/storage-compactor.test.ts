import {describe, expect, it} from '@jest/globals';
import {Compactor, type Timer} from '../../src/daemons/apiserver/storage/compactor.js';
import type {Store} from '../../src/daemons/apiserver/storage/store.js';

/** A timer fired by hand: `fire()` runs the pending callback. */
class ManualTimer implements Timer {
  pending: Array<{callback: () => void; ms: number}> = [];
  setTimeout(callback: () => void, ms: number) {
    const entry = {callback, ms};
    this.pending.push(entry);
    return entry;
  }
  clearTimeout(handle: unknown) {
    this.pending = this.pending.filter((p) => p !== handle);
  }
  async fire() {
    const next = this.pending.shift();
    next?.callback();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function fakeStore(revisions: number[]) {
  const compacted: number[] = [];
  let failing = false;
  const store = {
    currentRevision: async () => {
      if (failing) throw new Error('down');
      return revisions.shift()!;
    },
    compact: async (revision: number) => {
      compacted.push(revision);
    },
  } as unknown as Store;
  return {store, compacted, fail: (value: boolean) => (failing = value)};
}

describe('Compactor', () => {
  it('compacts at each tick to the revision seen one interval earlier', async () => {
    const timer = new ManualTimer();
    const {store, compacted} = fakeStore([5, 9, 9, 20]);
    const compactor = new Compactor(store, {intervalMs: 300_000, timer});
    compactor.start();
    expect(timer.pending.map((p) => p.ms)).toEqual([300_000]);
    await timer.fire(); // sees 5, nothing to compact yet
    await timer.fire(); // sees 9, compacts 5
    await timer.fire(); // sees 9, compacts 9
    await timer.fire(); // sees 20, compacts 9 again (no new writes: harmless)
    expect(compacted).toEqual([5, 9, 9]);
    compactor.stop();
    expect(timer.pending).toEqual([]);
  });

  it('keeps going after a failed round and reports it', async () => {
    const timer = new ManualTimer();
    const {store, compacted, fail} = fakeStore([3, 7]);
    const errors: unknown[] = [];
    const compactor = new Compactor(store, {intervalMs: 1000, timer, onError: (e) => errors.push(e)});
    compactor.start();
    fail(true);
    await timer.fire();
    fail(false);
    await timer.fire();
    await timer.fire();
    expect(errors).toHaveLength(1);
    expect(compacted).toEqual([3]);
    compactor.stop();
  });

  it('does nothing with an interval of 0', () => {
    const timer = new ManualTimer();
    new Compactor(fakeStore([]).store, {intervalMs: 0, timer}).start();
    expect(timer.pending).toEqual([]);
  });
});
