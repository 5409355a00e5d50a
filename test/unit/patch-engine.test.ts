/** applyPatch: engine choice, JSON patch and merge patch behaviour, user-facing errors. */
import { describe, expect, test } from '@jest/globals';
import { applyPatch, PatchError, type JsonObject, type JsonValue } from '../../src/patch/index.js';

const configMap = (): JsonObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' }, list: [1, 2, 3] });
const widget = (): JsonObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } });

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(PatchError);
    return (e as Error).message;
  }
  throw new Error('expected a PatchError');
}

describe('applyPatch', () => {
  test('reports whether anything changed', () => {
    expect(applyPatch({ object: configMap(), patch: { data: { a: '1' } }, type: 'strategic' }).changed).toBe(false);
    expect(applyPatch({ object: configMap(), patch: { data: { a: '2' } }, type: 'strategic' }).changed).toBe(true);
  });

  test('strategic on a custom resource is refused with kubectl\'s hint', () => {
    expect(errorOf(() => applyPatch({ object: widget(), patch: { spec: { size: 2 } }, type: 'strategic' })))
      .toBe('strategic merge patch is not supported for example.com/v1, Kind=Widget locally, try --type merge');
    expect(applyPatch({ object: widget(), patch: { spec: { size: 2 } }, type: 'merge' }).result.spec).toEqual({ size: 2 });
  });

  test('orch group names are built-in kinds too', () => {
    const lease = { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: { holderIdentity: 'a' } };
    expect(applyPatch({ object: lease, patch: { spec: { holderIdentity: 'b' } }, type: 'strategic' }).result.spec).toEqual({ holderIdentity: 'b' });
  });

  test('a result without kind is rejected like kubectl\'s decoder does', () => {
    expect(errorOf(() => applyPatch({ object: configMap(), patch: { kind: null }, type: 'merge' })))
      .toMatch(/^Object 'Kind' is missing in '\{"apiVersion":"v1","data":\{"a":"1"\}/);
  });
});

describe('json patch', () => {
  test.each<[string, JsonValue, string]>([
    ['remove missing key', [{ op: 'remove', path: '/nope' }], "error in remove for path: '/nope': Unable to remove nonexistent key: nope: missing value"],
    ['replace past the end', [{ op: 'replace', path: '/list/5', value: 0 }], 'Object to be patched is missing field (/list/5: missing value)'],
    ['add under missing parent', [{ op: 'add', path: '/a/b', value: 1 }], 'add operation does not apply: doc is missing path: "/a/b": missing value'],
    ['failed test', [{ op: 'test', path: '/data/a', value: '2' }], 'testing value /data/a failed: test failed'],
    ['unknown op', [{ op: 'frob', path: '/a' }], 'Unexpected kind: frob'],
    ['not a list', { op: 'add' }, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch'],
    ['bad index', [{ op: 'add', path: '/list/x', value: 1 }], `error in add for path: '/list/x': value was not a proper array index: 'x': strconv.Atoi: parsing "x": invalid syntax`],
  ])('%s', (_title, patch, message) => {
    expect(errorOf(() => applyPatch({ object: configMap(), patch, type: 'json' }))).toBe(message);
  });

  test('applies all six operations in order', () => {
    const { result } = applyPatch({
      object: configMap(),
      type: 'json',
      patch: [
        { op: 'add', path: '/list/-', value: 4 },
        { op: 'remove', path: '/list/0' },
        { op: 'replace', path: '/data/a', value: 'x' },
        { op: 'copy', from: '/data/a', path: '/data/b' },
        { op: 'move', from: '/data/b', path: '/data/a~1b' },
        { op: 'test', path: '/data/a~1b', value: 'x' },
      ],
    });
    expect(result.list).toEqual([2, 3, 4]);
    expect(result.data).toEqual({ a: 'x', 'a/b': 'x' });
  });

  test('a failing operation leaves nothing applied', () => {
    const object = configMap();
    errorOf(() => applyPatch({ object, type: 'json', patch: [{ op: 'replace', path: '/data/a', value: 'x' }, { op: 'remove', path: '/zz' }] }));
    expect(object.data).toEqual({ a: '1' });
  });
});

describe('merge patch', () => {
  test('null deletes, arrays replace, nested nulls of new values are dropped', () => {
    const { result } = applyPatch({ object: configMap(), type: 'merge', patch: { data: { a: null, b: { c: null } }, list: [{ x: null }] } });
    expect(result.data).toEqual({ b: {} });
    expect(result.list).toEqual([{}]);
  });

  test.each<[JsonValue, string]>([
    [null, 'Invalid JSON Patch'],
    ['x', 'Invalid JSON Patch'],
    [[1], 'json: cannot unmarshal array into Go value of type unstructured.detector'],
  ])('patch %j is rejected', (patch, message) => {
    expect(errorOf(() => applyPatch({ object: configMap(), patch, type: 'merge' }))).toBe(message);
  });
});
