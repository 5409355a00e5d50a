/**
 * The store contract, one suite for every engine and for the watch cache over each: what the REST
 * layer relies on (conditional writes, global revisions, paging, reads at a revision, ordered watches
 * with history, compaction). Each test works under its own key prefix, so engines can be shared.
 */
import {expect, it} from '@jest/globals';
import {
  type Store,
  type StoreEvent,
  StoreCompactedError,
  StoreConflictError,
  StoreFutureRevisionError,
} from '../../src/daemons/apiserver/storage/store.js';

export interface ContractSubject {
  store: () => Store;
  /** A fresh prefix (ending in `/`) under which a test may write. */
  prefix: () => string;
  /** Cached stores keep their own bounded history: writes enough events to push `before` out of it. */
  historyCapacity?: number;
}

export interface Recorder {
  events: StoreEvent[];
  errors: Error[];
  progress: number[];
  close(): void;
  /** Resolves once `predicate` holds (polling), rejects after 3s. */
  until(predicate: () => boolean, what: string): Promise<void>;
}

export function record(store: Store, prefix: string, afterRevision: number): Recorder {
  const events: StoreEvent[] = [];
  const errors: Error[] = [];
  const progress: number[] = [];
  const handle = store.watch(
    prefix,
    afterRevision,
    (e) => events.push(e),
    (e) => errors.push(e),
    (r) => progress.push(r),
  );
  return {
    events,
    errors,
    progress,
    close: () => handle.close(),
    until: (predicate, what) => eventually(predicate, what),
  };
}

export async function eventually(predicate: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

export function storeContract(subject: ContractSubject): void {
  const s = () => subject.store();

  it('creates a key once; a second create conflicts and reports the current revision', async () => {
    const key = `${subject.prefix()}web`;
    const revision = await s().create(key, '{"v":1}');
    expect(await s().get(key)).toEqual({key, value: '{"v":1}', createRevision: revision, modRevision: revision});
    const error = await rejection(s().create(key, '{"v":2}'));
    expect(error).toBeInstanceOf(StoreConflictError);
    expect((error as StoreConflictError).currentRevision).toBe(revision);
    expect((await s().get(key))?.value).toBe('{"v":1}');
  });

  it('updates only at the expected revision, and never a missing key', async () => {
    const key = `${subject.prefix()}web`;
    const created = await s().create(key, 'a');
    const updated = await s().update(key, 'b', created);
    expect(updated).toBeGreaterThan(created);
    expect(await s().get(key)).toEqual({key, value: 'b', createRevision: created, modRevision: updated});
    const stale = await rejection(s().update(key, 'c', created));
    expect(stale).toBeInstanceOf(StoreConflictError);
    expect((stale as StoreConflictError).currentRevision).toBe(updated);
    expect((await s().get(key))?.value).toBe('b');
    const missing = await rejection(s().update(`${subject.prefix()}ghost`, 'x', 1));
    expect(missing).toBeInstanceOf(StoreConflictError);
    expect((missing as StoreConflictError).currentRevision).toBeUndefined();
  });

  it('deletes with and without a revision precondition; a missing key gives undefined', async () => {
    const prefix = subject.prefix();
    const created = await s().create(`${prefix}a`, 'a');
    await s().create(`${prefix}b`, 'b');
    expect(await rejection(s().delete(`${prefix}a`, created - 1))).toBeInstanceOf(StoreConflictError);
    expect((await s().get(`${prefix}a`))?.value).toBe('a');
    const deleted = await s().delete(`${prefix}a`, created);
    expect(deleted).toBeGreaterThan(created);
    expect(await s().get(`${prefix}a`)).toBeUndefined();
    expect(await s().delete(`${prefix}b`)).toBeGreaterThan(deleted!);
    expect(await s().delete(`${prefix}a`)).toBeUndefined();
    expect(await s().delete(`${prefix}a`, 5)).toBeUndefined();
  });

  it('gives every write the next global revision, across keys', async () => {
    const prefix = subject.prefix();
    const revisions: number[] = [];
    revisions.push(await s().create(`${prefix}x`, '1'));
    revisions.push(await s().create(`${prefix}y`, '1'));
    revisions.push(await s().update(`${prefix}x`, '2', revisions[0]!));
    revisions.push((await s().delete(`${prefix}y`))!);
    for (let i = 1; i < revisions.length; i++) expect(revisions[i]).toBeGreaterThan(revisions[i - 1]!);
    expect(await s().currentRevision()).toBeGreaterThanOrEqual(revisions.at(-1)!);
    expect((await s().list(prefix)).revision).toBeGreaterThanOrEqual(revisions.at(-1)!);
  });

  it('pages a prefix in key order with limit and startAfter, and ignores sibling prefixes', async () => {
    const prefix = subject.prefix();
    for (const name of ['e', 'a', 'd', 'b', 'c']) await s().create(`${prefix}${name}`, name);
    await s().create(`${prefix.slice(0, -1)}x/a`, 'sibling'); // `/…/t1x/a` is not under `/…/t1/`
    const first = await s().list(prefix, {limit: 2});
    expect(first.items.map((i) => i.value)).toEqual(['a', 'b']);
    expect(first.more).toBe(true);
    const second = await s().list(prefix, {limit: 2, startAfter: first.items[1]!.key, revision: first.revision});
    expect(second.items.map((i) => i.value)).toEqual(['c', 'd']);
    expect(second.more).toBe(true);
    const last = await s().list(prefix, {limit: 2, startAfter: second.items[1]!.key, revision: first.revision});
    expect(last.items.map((i) => i.value)).toEqual(['e']);
    expect(last.more).toBe(false);
    expect((await s().list(prefix)).items.map((i) => i.value)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect((await s().list(prefix, {limit: 5})).more).toBe(false);
  });

  it('lists a prefix as it was at an older revision', async () => {
    const prefix = subject.prefix();
    const r1 = await s().create(`${prefix}k1`, 'v1');
    const r2 = await s().update(`${prefix}k1`, 'v2', r1);
    const r3 = await s().create(`${prefix}k2`, 'w1');
    const r4 = (await s().delete(`${prefix}k1`))!;
    const at = async (revision: number) =>
      (await s().list(prefix, {revision})).items.map((i) => [i.key.slice(prefix.length), i.value, i.createRevision, i.modRevision]);
    expect(await at(r1)).toEqual([['k1', 'v1', r1, r1]]);
    expect(await at(r2)).toEqual([['k1', 'v2', r1, r2]]);
    expect(await at(r3)).toEqual([
      ['k1', 'v2', r1, r2],
      ['k2', 'w1', r3, r3],
    ]);
    expect(await at(r4)).toEqual([['k2', 'w1', r3, r3]]);
    // Paging at an older revision sees the keys of that time.
    const page = await s().list(prefix, {revision: r3, limit: 1});
    expect(page.items.map((i) => i.value)).toEqual(['v2']);
    expect(page.more).toBe(true);
    expect((await s().list(prefix, {revision: r3, startAfter: `${prefix}k1`})).items.map((i) => i.value)).toEqual(['w1']);
    expect(await rejection(s().list(prefix, {revision: (await s().currentRevision()) + 100}))).toBeInstanceOf(
      StoreFutureRevisionError,
    );
  });

  it('replays a watch from a revision, then delivers live events in order with previous values', async () => {
    const prefix = subject.prefix();
    const before = await s().currentRevision();
    const r1 = await s().create(`${prefix}a`, 'v1');
    const r2 = await s().update(`${prefix}a`, 'v2', r1);
    const watch = record(s(), prefix, before);
    try {
      await watch.until(() => watch.events.length === 2, 'the replay');
      const r3 = (await s().delete(`${prefix}a`))!;
      const r4 = await s().create(`${prefix}b`, 'b1');
      await watch.until(() => watch.events.length === 4, 'the live events');
      expect(watch.events).toEqual([
        {type: 'PUT', key: `${prefix}a`, value: 'v1', revision: r1, created: true},
        {type: 'PUT', key: `${prefix}a`, value: 'v2', prevValue: 'v1', revision: r2, created: false},
        {type: 'DELETE', key: `${prefix}a`, prevValue: 'v2', revision: r3, created: false},
        {type: 'PUT', key: `${prefix}b`, value: 'b1', revision: r4, created: true},
      ]);
      await watch.until(() => watch.progress.some((p) => p >= r4), 'progress up to the last event');
      expect(watch.errors).toEqual([]);
    } finally {
      watch.close();
    }
  });

  it('watches only the keys under its prefix, and a narrower prefix of one object', async () => {
    const prefix = subject.prefix();
    const sibling = `${prefix.slice(0, -1)}z/`;
    const from = await s().currentRevision();
    const all = record(s(), prefix, from);
    const one = record(s(), `${prefix}mine`, from);
    try {
      await s().create(`${sibling}other`, 'no');
      await s().create(`${prefix}mine`, 'yes');
      await s().create(`${prefix}yours`, 'yes too');
      await all.until(() => all.events.length === 2, 'two events');
      await one.until(() => one.events.length === 1, 'one event');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(all.events.map((e) => e.key)).toEqual([`${prefix}mine`, `${prefix}yours`]);
      expect(one.events.map((e) => e.key)).toEqual([`${prefix}mine`]);
    } finally {
      all.close();
      one.close();
    }
  });

  it('stops delivering once closed', async () => {
    const prefix = subject.prefix();
    const watch = record(s(), prefix, await s().currentRevision());
    await s().create(`${prefix}a`, '1');
    await watch.until(() => watch.events.length === 1, 'the first event');
    watch.close();
    await s().create(`${prefix}b`, '1');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(watch.events).toHaveLength(1);
  });

  it('refuses a watch from a revision whose history is gone, but serves one from after it', async () => {
    const prefix = subject.prefix();
    const before = await s().currentRevision();
    let last = await s().create(`${prefix}k`, '0');
    // Enough writes to leave a cache's bounded history, then compaction of the engine.
    for (let i = 1; i <= (subject.historyCapacity ?? 1) + 1; i++) last = await s().update(`${prefix}k`, String(i), last);
    await s().compact(last);
    const old = record(s(), prefix, before);
    const recent = record(s(), prefix, last);
    try {
      await old.until(() => old.errors.length === 1, 'the compaction error');
      expect(old.errors[0]).toBeInstanceOf(StoreCompactedError);
      expect((old.errors[0] as StoreCompactedError).requested).toBe(before);
      expect(old.events).toEqual([]);
      const next = await s().update(`${prefix}k`, 'after', last);
      await recent.until(() => recent.events.length === 1, 'the event after compaction');
      expect(recent.events[0]).toMatchObject({value: 'after', revision: next});
      expect(recent.errors).toEqual([]);
      // Compacting again at or below the compacted revision changes nothing.
      await s().compact(last - 1);
    } finally {
      old.close();
      recent.close();
    }
  });

  it('answers pings', async () => {
    await expect(s().ping(1000)).resolves.toBeUndefined();
  });
}
