/** Focused behaviour of the strategic merge engine: directives, ordering, errors, scale. */
import { describe, expect, test } from '@jest/globals';
import { lookupSchema } from '../../src/api/merge-metadata.js';
import { strategicMergePatch } from '../../src/patch/strategic.js';
import type { JsonObject, JsonValue } from '../../src/patch/types.js';

const podSchema = lookupSchema('v1', 'Pod')!;

function pod(containers: JsonValue[], extra: JsonObject = {}): JsonObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', ...extra }, spec: { containers } };
}
const names = (o: JsonObject) => ((o.spec as JsonObject).containers as JsonObject[]).map((c) => c.name);
const c = (name: string, image = name) => ({ name, image });

describe('lookupSchema', () => {
  test.each([
    ['v1', 'Pod', true],
    ['apps/v1', 'Deployment', true],
    ['batch/v1', 'CronJob', true],
    ['coordination.k8s.io/v1', 'Lease', true],
    ['coordination.orch.io/v1', 'Lease', true],
    ['apps/v1', 'Pod', false],
    ['example.com/v1', 'Widget', false],
  ])('%s %s known: %s', (apiVersion, kind, known) => {
    expect(lookupSchema(apiVersion, kind) !== undefined).toBe(known);
  });
});

describe('list ordering', () => {
  test.each<[string, JsonValue[], JsonValue, string[]]>([
    ['new elements come first', [c('a')], [c('b')], ['b', 'a']],
    ['modified element keeps its place', [c('a'), c('x'), c('c')], [{ name: 'x', image: 'y' }], ['a', 'x', 'c']],
    ['new element after a modified one', [c('a'), c('x'), c('c')], [{ name: 'x', image: 'y' }, c('new')], ['a', 'x', 'new', 'c']],
    ['add plus delete', [c('1'), c('2'), c('4')], [c('3'), { name: '1', $patch: 'delete' }], ['3', '2', '4']],
  ])('%s', (_title, live, patchList, expected) => {
    expect(names(strategicMergePatch(pod(live), { spec: { containers: patchList } }, podSchema))).toEqual(expected);
  });

  test('$setElementOrder after a delete reads the live order through the shared slice (upstream quirk)', () => {
    const result = strategicMergePatch(pod([c('1'), c('2'), c('4')]), {
      spec: { '$setElementOrder/containers': [{ name: '2' }, { name: '3' }], containers: [c('3'), { name: '1', $patch: 'delete' }] },
    }, podSchema);
    expect(names(result)).toEqual(['2', '4', '3']);
  });

  test('scalar merge lists union with patch values placed by upstream rules', () => {
    const result = strategicMergePatch(pod([], { finalizers: ['a', 'b'] }), { metadata: { finalizers: ['a', 'c'] } }, podSchema);
    expect((result.metadata as JsonObject).finalizers).toEqual(['a', 'c', 'b']);
  });
});

describe('directives', () => {
  test('$patch: replace in a map keeps exactly the patch members', () => {
    const result = strategicMergePatch(pod([], { labels: { a: '1', b: '2' } }), { metadata: { labels: { $patch: 'replace', c: '3' } } }, podSchema);
    expect((result.metadata as JsonObject).labels).toEqual({ c: '3' });
  });

  test('$patch: delete in a map leaves an empty map', () => {
    const result = strategicMergePatch(pod([], { labels: { a: '1' } }), { metadata: { labels: { $patch: 'delete' } } }, podSchema);
    expect((result.metadata as JsonObject).labels).toEqual({});
  });

  test('$retainKeys drops live keys not listed', () => {
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } };
    const result = strategicMergePatch(deployment, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } }, lookupSchema('apps/v1', 'Deployment')!);
    expect((result.spec as JsonObject).strategy).toEqual({ type: 'Recreate' });
  });

  test('$deleteFromPrimitiveList removes values and never adds the list', () => {
    const withList = strategicMergePatch(pod([], { finalizers: ['a', 'b', 'a'] }), { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }, podSchema);
    expect((withList.metadata as JsonObject).finalizers).toEqual(['b']);
    const without = strategicMergePatch(pod([]), { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }, podSchema);
    expect(without.metadata).toEqual({ name: 'p' });
  });

  test('a new value loses nulls and $patch-carrying parts', () => {
    const result = strategicMergePatch(pod([]), { spec: { dnsConfig: { options: [{ name: 'x', value: null }, { $patch: 'delete' }] }, hostNetwork: null } }, podSchema);
    expect((result.spec as JsonObject).dnsConfig).toEqual({ options: [{ name: 'x' }] });
  });

  test('inputs are not mutated', () => {
    const original = pod([c('a')]);
    const patch = { spec: { containers: [c('b')] } };
    const before = JSON.stringify([original, patch]);
    strategicMergePatch(original, patch, podSchema);
    expect(JSON.stringify([original, patch])).toBe(before);
  });
});

describe('errors carry upstream texts', () => {
  test.each<[string, JsonValue, string]>([
    ['missing merge key', { spec: { containers: [{ image: 'x' }] } }, 'map: map[image:x] does not contain declared merge key: name'],
    ['$patch merge in a list', { spec: { containers: [{ name: 'a', $patch: 'merge' }] } }, 'merging lists cannot yet be specified in the patch'],
    ['unknown $patch in a map', { metadata: { labels: { $patch: 'merge' } } }, 'unknown patch type: merge in map: map[$patch:merge]'],
    ['non-string $patch', { metadata: { labels: { $patch: 1 } } }, 'unknown patch type: %!s(int64=1) in map: map[$patch:1]'],
    ['bad $retainKeys', { spec: { $retainKeys: 'x' } }, 'invalid patch format of retainKeys'],
    ['unlisted key with $retainKeys', { spec: { $retainKeys: ['a'], b: 1 } }, 'invalid patch format of retainKeys'],
    ['bad $deleteFromPrimitiveList key', { metadata: { $deleteFromPrimitiveListx: [] } }, 'invalid patch format of primitive list'],
    ['bad $setElementOrder key', { spec: { $setElementOrderx: [] } }, 'invalid patch format of setElementOrder list'],
    ['lists of lists', { metadata: { finalizers: [['a']] } }, 'lists of lists are not supported'],
    ['patch not an object', [1], 'invalid JSON document'],
  ])('%s', (_title, patch, message) => {
    const live = pod([c('a')], { labels: { a: '1' }, finalizers: [] });
    expect(() => strategicMergePatch(live, patch, podSchema)).toThrow(message);
  });
});

describe('scale', () => {
  function timeMerge(n: number): number {
    const live = pod(Array.from({ length: n }, (_, i) => c(`c${i}`)));
    const patch = { spec: { containers: Array.from({ length: n }, (_, i) => ({ name: `c${n - 1 - i}`, image: 'new' })) } };
    const start = process.hrtime.bigint();
    strategicMergePatch(live, patch, podSchema);
    return Number(process.hrtime.bigint() - start) / 1e6;
  }

  test('merging 2,000 containers is not quadratic', () => {
    timeMerge(200); // warm up
    const small = Math.max(timeMerge(200), 0.5);
    const large = timeMerge(2000);
    // Linear growth would be ~10x; quadratic ~100x. Allow generous noise.
    expect(large).toBeLessThan(small * 40);
    expect(large).toBeLessThan(500);
  });
});
