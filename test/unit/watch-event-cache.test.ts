/**
 * The watchers of one store event share its decoding and its serialized line (watch-event-cache.ts):
 * what made one write to a namespace with 1,000 watchers cost 1,000 parses and serializations.
 */
import {describe, expect, it} from '@jest/globals';
import {decodedEvent, sharedEventLine} from '../../src/daemons/apiserver/rest/watch-event-cache.js';
import type {StoreEvent} from '../../src/daemons/apiserver/storage/store.js';

const decoder = () => {
  const calls: string[] = [];
  return {calls, decode: (value: string, revision: number) => (calls.push(value), {...JSON.parse(value), metadata: {resourceVersion: String(revision)}})};
};

describe('watch event cache', () => {
  it('decodes an event once per decoder, current and previous, with the event revision', () => {
    const event = {type: 'PUT', key: '/r/pods/ns/a', value: '{"v":2}', prevValue: '{"v":1}', revision: 7, created: false} as StoreEvent;
    const a = decoder();
    const b = decoder();
    const first = decodedEvent(event, a);
    expect(first).toEqual({current: {v: 2, metadata: {resourceVersion: '7'}}, previous: {v: 1, metadata: {resourceVersion: '7'}}});
    for (let i = 0; i < 999; i++) expect(decodedEvent(event, a)).toBe(first);
    expect(a.calls).toEqual(['{"v":2}', '{"v":1}']);
    // Another registry (another version of the resource) decodes its own.
    expect(decodedEvent(event, b)).not.toBe(first);
    expect(b.calls).toHaveLength(2);
    // Another event of the same key is another decoding.
    decodedEvent({...event, revision: 8}, a);
    expect(a.calls).toHaveLength(4);
  });

  it('a deletion has only the previous object', () => {
    const event = {type: 'DELETE', key: '/r/pods/ns/a', prevValue: '{"v":1}', revision: 9, created: false} as StoreEvent;
    expect(decodedEvent(event, decoder())).toEqual({current: undefined, previous: {v: 1, metadata: {resourceVersion: '9'}}});
  });

  it('serializes an object once per event type, as a watch line', () => {
    const object = {kind: 'Pod', metadata: {name: 'a'}};
    const added = sharedEventLine('ADDED', object);
    expect(added).toBe('{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a"}}}\n');
    expect(sharedEventLine('ADDED', object)).toBe(added);
    expect(sharedEventLine('DELETED', object)).toBe('{"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"a"}}}\n');
  });
});
