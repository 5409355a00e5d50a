import {describe, expect, it} from '@jest/globals';
import {withResourceVersion} from '../../src/daemons/apiserver/rest/stored-json.js';

/** What serving did before: decode, set the field, encode. */
const decoded = (stored: string, rv: string) => {
  const object = JSON.parse(stored);
  object.metadata.resourceVersion = rv;
  return JSON.stringify(object);
};

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-0',
    namespace: 'default',
    labels: {app: 'web', 'weird"key': 'va}lue\\', '0': 'zero'},
    annotations: {note: 'braces { [ ] } and "quotes" and \\ and \u00e9 \u2028 \ud83d\ude00'},
    managedFields: [{manager: 'kubectl', operation: 'Apply', fieldsV1: {'f:metadata': {'f:labels': {'.': {}, 'f:app': {}}}}}],
  },
  spec: {containers: [{name: 'app', image: 'nginx', args: ['--x={"metadata":{}}'], resources: {limits: {cpu: 1.5, memory: '1Gi'}}}], priority: -3, enableServiceLinks: true, tolerations: null},
  status: {phase: 'Running', conditions: [{type: 'Ready', status: 'True'}]},
};

describe('withResourceVersion: the served JSON from the stored JSON', () => {
  it.each([
    ['a pod with labels, annotations and managed fields full of characters to escape', pod],
    ['metadata after spec, whose template has a metadata of its own', {kind: 'Deployment', spec: {template: {metadata: {labels: {a: 'b'}}}}, metadata: {name: 'd'}, status: {}}],
    ['an empty metadata', {kind: 'X', metadata: {}}],
    ['metadata last', {kind: 'X', data: {k: '}'}, metadata: {name: 'n'}}],
    ['metadata first', {metadata: {name: 'n', uid: 'u'}, kind: 'X'}],
    ['array and number members', {items: [1, [2, {a: [3]}], 'x'], n: 1e21, f: -0.5, metadata: {generation: 2, finalizers: ['a/b']}}],
  ])('%s: as decoding, setting the field and encoding would give', (_name, object) => {
    const stored = JSON.stringify(object);
    expect(withResourceVersion(stored, '12345')).toBe(decoded(stored, '12345'));
  });

  it('keeps the text valid JSON when the stored text has whitespace', () => {
    const stored = '{ "kind" : "X" ,\n "metadata" : { "name" : "n" } , "spec" : { } }';
    expect(JSON.parse(withResourceVersion(stored, '7')!)).toEqual({kind: 'X', metadata: {name: 'n', resourceVersion: '7'}, spec: {}});
  });

  it.each([
    ['no metadata', '{"kind":"X"}'],
    ['metadata that is not an object', '{"kind":"X","metadata":null}'],
    ['a resourceVersion already stored', '{"kind":"X","metadata":{"name":"n","resourceVersion":"3"}}'],
    ['not an object', '[1,2]'],
    ['truncated text', '{"kind":"X","metadata":{"name":"n"'],
    ['an unterminated string', '{"kind":"X,"metadata":{}}'],
    ['empty text', ''],
  ])('gives undefined (the caller decodes) for %s', (_name, stored) => {
    expect(withResourceVersion(stored, '1')).toBeUndefined();
  });

  it('matches decoding on many generated objects', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const chars = ['a', 'b', '"', '\\', '{', '}', '[', ']', ':', ',', ' ', '\n', 'é', '\u0001'];
    const str = () => Array.from({length: Math.floor(random() * 6)}, () => chars[Math.floor(random() * chars.length)]).join('');
    const value = (depth: number): unknown => {
      const r = random();
      if (depth > 3 || r < 0.3) return str();
      if (r < 0.4) return Math.floor(random() * 1000) - 500;
      if (r < 0.45) return random() < 0.5;
      if (r < 0.5) return null;
      if (r < 0.75) return Array.from({length: Math.floor(random() * 4)}, () => value(depth + 1));
      return Object.fromEntries(Array.from({length: Math.floor(random() * 4)}, () => [str(), value(depth + 1)]));
    };
    for (let n = 0; n < 500; n++) {
      const object: Record<string, unknown> = {};
      const metadataAt = Math.floor(random() * 4);
      for (let k = 0; k < 4; k++) {
        if (k === metadataAt) object.metadata = Object.fromEntries(Array.from({length: Math.floor(random() * 4)}, () => [`m${str()}`, value(1)]));
        else object[`k${k}${str()}`] = value(0);
      }
      const stored = JSON.stringify(object);
      expect(withResourceVersion(stored, String(n))).toBe(decoded(stored, String(n)));
    }
  });
});
