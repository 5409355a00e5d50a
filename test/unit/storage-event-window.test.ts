import {describe, expect, it} from '@jest/globals';
import {EventWindow} from '../../src/daemons/apiserver/storage/event-window.js';
import {prefixEnd, rangeStart} from '../../src/daemons/apiserver/storage/keys.js';
import type {StoreEvent} from '../../src/daemons/apiserver/storage/store.js';

const put = (revision: number): StoreEvent => ({type: 'PUT', key: `/k${revision}`, value: '', revision, created: false});

describe('EventWindow', () => {
  it.each([
    // capacity, start, pushed revisions, afterRevision, expected revisions (undefined: too old)
    [3, 10, [11, 12], 10, [11, 12]],
    [3, 10, [11, 12], 11, [12]],
    [3, 10, [11, 12], 12, []],
    [3, 10, [11, 12], 9, undefined],
    [3, 10, [11, 13, 15, 17], 11, [13, 15, 17]], // 11 left; a watch from 11 needs nothing before 13
    [3, 10, [11, 13, 15, 17], 10, undefined],
    [3, 10, [11, 13, 15, 17], 14, [15, 17]],
    [3, 10, [11, 13, 15, 17], 99, []],
    [0, 10, [11, 12], 12, []],
    [0, 10, [11, 12], 11, undefined],
  ])('capacity %i from %i after pushing %j: since(%i) = %j', (capacity, start, pushed, after, expected) => {
    const window = new EventWindow(capacity, start);
    for (const revision of pushed) window.push(put(revision));
    expect(window.since(after)?.map((e) => e.revision)).toEqual(expected);
  });

  it('starts over after a reset', () => {
    const window = new EventWindow(2, 0);
    [1, 2, 3].forEach((r) => window.push(put(r)));
    window.reset(50);
    expect(window.length).toBe(0);
    expect(window.since(49)).toBeUndefined();
    expect(window.since(50)).toEqual([]);
  });
});

describe('key ranges', () => {
  it.each([
    ['/registry/pods/', '/registry/pods0'],
    ['a', 'b'],
    ['', undefined],
  ])('prefixEnd(%j) = %j', (prefix, end) => {
    expect(prefixEnd(prefix)).toBe(end);
  });

  it('starts a page just after the last key, never before the prefix', () => {
    expect(rangeStart('/p/', '/p/a')).toBe('/p/a\u0000');
    expect(rangeStart('/p/', undefined)).toBe('/p/');
    expect(rangeStart('/p/', '/a')).toBe('/p/');
  });
});
