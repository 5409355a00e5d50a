/**
 * The pure parts of custom resources: structural-schema checks, pruning, defaulting, schema
 * validation, list types, and CEL rules with their cost limits, against upstream's texts.
 */
import {describe, expect, it} from '@jest/globals';
import {applyDefaults} from '../../src/api/structural/defaults.js';
import {listTypesOf} from '../../src/api/structural/list-types.js';
import {prune} from '../../src/api/structural/prune.js';
import {structuralProblems, type Schema} from '../../src/api/structural/schema.js';
import {validateAgainstSchema} from '../../src/api/structural/validate.js';
import {compileValidator} from '../../src/api/cel/rules.js';
import {crdOpenApi} from '../../src/api/structural/openapi.js';
import {resolveServiceEndpoint} from '../../src/daemons/apiserver/rest/service-resolver.js';
import {fieldErrorText} from '../../src/api/status.js';
import type {JsonObject} from '../../src/patch/types.js';

const ROOT = 'spec.versions[0].schema.openAPIV3Schema';
const texts = (errors: Parameters<typeof fieldErrorText>[0][]) => errors.map(fieldErrorText);

const widget: Schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: {type: 'integer', minimum: 1, maximum: 10},
        color: {type: 'string', enum: ['red', 'blue'], default: 'red'},
        name: {type: 'string', pattern: '^[a-z]+$', maxLength: 8},
        port: {'x-kubernetes-int-or-string': true},
        tags: {type: 'array', maxItems: 3, items: {type: 'string'}, 'x-kubernetes-list-type': 'set'},
        ports: {
          type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'],
          items: {type: 'object', required: ['name'], properties: {name: {type: 'string'}, port: {type: 'integer', default: 80}}},
        },
        extra: {type: 'object', 'x-kubernetes-preserve-unknown-fields': true},
      },
    },
    status: {type: 'object', properties: {replicas: {type: 'integer'}}},
  },
};

describe('structural schemas', () => {
  it.each<[string, Schema, string[]]>([
    ['a structural schema', widget, []],
    ['an untyped field', {type: 'object', properties: {spec: {properties: {a: {type: 'string'}}}}},
      [`${ROOT}.properties[spec].type: Required value: must not be empty for specified object fields`]],
    ['an untyped root', {properties: {}}, [`${ROOT}.type: Required value: must not be empty at the root`]],
    ['a non-object root', {type: 'string'}, [`${ROOT}.type: Invalid value: "string": must be object at the root`]],
    ['additionalProperties at the root', {type: 'object', additionalProperties: {type: 'string'}},
      [`${ROOT}.additionalProperties: Forbidden: must not be used at the root`]],
    ['a type inside anyOf', {type: 'object', properties: {a: {type: 'string', anyOf: [{type: 'string'}]}}},
      [`${ROOT}.properties[a].anyOf[0].type: Forbidden: must be empty to be structural`]],
    ['an array without items', {type: 'object', properties: {a: {type: 'array'}}},
      [`${ROOT}.properties[a].items: Required value: must be specified`]],
    ['metadata beyond name', {type: 'object', properties: {metadata: {type: 'object', properties: {labels: {type: 'object'}}}}},
      [`${ROOT}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`]],
    ['int-or-string with its anyOf', {type: 'object', properties: {p: {'x-kubernetes-int-or-string': true, anyOf: [{type: 'integer'}, {type: 'string'}]}}}, []],
    ['a map list without keys', {type: 'object', properties: {l: {type: 'array', 'x-kubernetes-list-type': 'map', items: {type: 'object', properties: {a: {type: 'string'}}}}}},
      [`${ROOT}.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`]],
  ])('%s', (_name, schema, expected) => {
    expect(texts(structuralProblems(schema, ROOT))).toEqual(expected);
  });
});

describe('pruning, defaulting and validation', () => {
  it('prunes unknown fields except where preserved, keeping apiVersion, kind and metadata', () => {
    const object = {apiVersion: 'example.com/v1', kind: 'Widget', metadata: {name: 'w'}, spec: {size: 1, bogus: true, extra: {anything: 1}}, top: 1};
    expect(prune(object, widget)).toEqual(['spec.bogus', 'top']);
    expect(object).toEqual({apiVersion: 'example.com/v1', kind: 'Widget', metadata: {name: 'w'}, spec: {size: 1, extra: {anything: 1}}});
  });

  it('fills defaults at every depth, in list items too', () => {
    const object: JsonObject = {spec: {size: 1, ports: [{name: 'http'}, {name: 'x', port: 1}]}};
    expect(applyDefaults(object, widget)).toEqual({spec: {size: 1, color: 'red', ports: [{name: 'http', port: 80}, {name: 'x', port: 1}]}});
  });

  it.each<[string, object, string[]]>([
    ['a valid object', {spec: {size: 2, color: 'blue', port: 'http', tags: ['a', 'b']}}, []],
    ['a wrong type', {spec: {size: 'big'}}, ['spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"']],
    ['a missing required field', {spec: {}}, ['spec.size: Required value']],
    ['a value above the maximum', {spec: {size: 11}}, ['spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10']],
    ['a value outside the enum', {spec: {size: 1, color: 'pink'}}, ['spec.color: Unsupported value: "pink": supported values: "red", "blue"']],
    ['a pattern mismatch', {spec: {size: 1, name: 'A1'}}, ['spec.name: Invalid value: "A1": spec.name in body should match \'^[a-z]+$\'']],
    ['a string too long', {spec: {size: 1, name: 'abcdefghi'}}, ['spec.name: Too long: may not be more than 8 bytes']],
    ['too many items', {spec: {size: 1, tags: ['a', 'b', 'c', 'd']}}, ['spec.tags: Too many: 4: must have at most 3 items']],
    ['a duplicate in a set', {spec: {size: 1, tags: ['a', 'a']}}, ['spec.tags[1]: Duplicate value: "a"']],
    ['a duplicate map key', {spec: {size: 1, ports: [{name: 'a'}, {name: 'a'}]}}, ['spec.ports[1]: Duplicate value: "map[string]interface {}{\\"name\\":\\"a\\"}"']],
    ['int-or-string given a bool', {spec: {size: 1, port: true}}, ['spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"']],
  ])('%s', (_name, object, expected) => {
    expect(texts(validateAgainstSchema(object as never, widget))).toEqual(expected);
  });

  it('applies the schema of metadata.name', () => {
    const schema: Schema = {type: 'object', properties: {metadata: {type: 'object', properties: {name: {type: 'string', maxLength: 5}}}}};
    expect(texts(validateAgainstSchema({metadata: {name: 'toolong'}}, schema))).toEqual(['metadata.name: Too long: may not be more than 5 bytes']);
    expect(validateAgainstSchema({metadata: {name: 'ok'}}, schema)).toEqual([]);
  });

  it('names list types and map keys by path (for server-side apply)', () => {
    expect(Object.fromEntries(listTypesOf(widget))).toEqual({
      'spec.tags': {listType: 'set'},
      'spec.ports': {listType: 'map', mapKeys: ['name']},
    });
  });
});

describe('CEL rules', () => {
  const withRules = (rules: object[], extra: Partial<Schema> = {}): Schema => ({
    type: 'object',
    properties: {spec: {...(widget.properties!.spec as Schema), 'x-kubernetes-validations': rules as never, ...extra}},
  });

  it('passes and fails with the rule message, messageExpression, reason and fieldPath', () => {
    const v = compileValidator(withRules([
      {rule: 'self.size <= 5', message: 'size must be at most 5'},
      {rule: 'self.tags.all(t, t.size() < 3)', messageExpression: '"tag too long: " + self.tags.filter(t, t.size() >= 3)[0]', fieldPath: '.tags', reason: 'FieldValueForbidden'},
      {rule: "!has(self.name) || self.name.startsWith('w')"},
    ]), ROOT);
    expect(v.errors).toEqual([]);
    expect(v.validate({spec: {size: 3, tags: ['ab']}})).toEqual([]);
    expect(texts(v.validate({spec: {size: 7, tags: ['abc'], name: 'x'}}))).toEqual([
      'spec: Invalid value: "object": size must be at most 5',
      'spec.tags: Forbidden: tag too long: abc',
      'spec: Invalid value: "object": failed rule: !has(self.name) || self.name.startsWith(\'w\')',
    ]);
  });

  it('runs transition rules on update only, with oldSelf', () => {
    const v = compileValidator(withRules([{rule: 'self.size >= oldSelf.size', message: 'size may not shrink'}]), ROOT);
    expect(v.validate({spec: {size: 1}})).toEqual([]);
    expect(v.validate({spec: {size: 3}}, {spec: {size: 2}})).toEqual([]);
    expect(texts(v.validate({spec: {size: 1}}, {spec: {size: 2}}))).toEqual(['spec: Invalid value: "object": size may not shrink']);
  });

  it('offers the Kubernetes extension functions', () => {
    const v = compileValidator(withRules([
      {rule: "isURL('https://example.com:8443/x') && url('https://example.com:8443/x').getPort() == '8443'"},
      {rule: "quantity('1Gi').isGreaterThan(quantity('100Mi')) && isQuantity('5m')"},
      {rule: "[1, 2, 3].isSorted() && 'a-b'.replace('-', '_') == 'a_b' && 'abc'.charAt(1) == 'b'"},
      {rule: "'abc123'.find('[0-9]+') == '123' && self.tags.isSorted()"},
    ]), ROOT);
    expect(v.errors).toEqual([]);
    expect(v.validate({spec: {size: 1, tags: ['a', 'b']}})).toEqual([]);
  });

  it('refuses rules that do not compile, naming the rule and the cause', () => {
    const v = compileValidator(withRules([{rule: 'self.nosuch > 1'}, {rule: 'self.size +'}, {rule: 'self.size'}]), ROOT);
    expect(texts(v.errors)).toEqual([
      expect.stringMatching(/^spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: "self.nosuch > 1": compilation failed: ERROR: <input>:1:\d+: .*nosuch/),
      expect.stringMatching(/x-kubernetes-validations\[1\]\.rule: Invalid value: "self.size \+": compilation failed: ERROR: <input>:1:\d+: /),
      `${ROOT}.properties[spec].x-kubernetes-validations[2].rule: Invalid value: "self.size": compilation failed: cel expression must evaluate to a bool`,
    ]);
  });

  it('refuses oldSelf where old values cannot be correlated, and fieldPaths the schema lacks', () => {
    const schema: Schema = {type: 'object', properties: {spec: {type: 'object', properties: {
      set: {type: 'array', maxItems: 10, 'x-kubernetes-list-type': 'set', items: {type: 'string', maxLength: 10, 'x-kubernetes-validations': [{rule: 'self == oldSelf'}]}},
      byName: {type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: {
        type: 'object', required: ['name'], properties: {name: {type: 'string'}, v: {type: 'integer'}}, 'x-kubernetes-validations': [{rule: 'self.v >= oldSelf.v'}],
      }},
    }, 'x-kubernetes-validations': [{rule: 'true', fieldPath: '.nosuch'}, {rule: 'true', fieldPath: ".byName[0].name"}]}}};
    expect(texts(compileValidator(schema, ROOT).errors)).toEqual([
      `${ROOT}.properties[spec].x-kubernetes-validations[0].fieldPath: Invalid value: ".nosuch": fieldPath must be a valid path: does not refer to a valid field`,
      `${ROOT}.properties[spec].properties[set].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${ROOT}.properties[spec].properties[set]`,
    ]);
  });

  it('refuses rules whose estimated cost exceeds the budget, and accepts them once bounded', () => {
    const nested = (bounded: boolean): Schema => ({
      type: 'object',
      properties: {spec: {type: 'object', properties: {
        names: {type: 'array', ...(bounded ? {maxItems: 10} : {}), items: {type: 'string', ...(bounded ? {maxLength: 20} : {})}},
      }, 'x-kubernetes-validations': [{rule: 'self.names.all(a, self.names.all(b, a == b || !a.contains(b)))'}]}},
    });
    expect(texts(compileValidator(nested(false), ROOT).errors)).toEqual([
      expect.stringContaining(`${ROOT}.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x`),
      expect.stringContaining(`${ROOT}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget`),
    ]);
    expect(compileValidator(nested(true), ROOT).errors).toEqual([]);
  });

  it('stops at the runtime cost budget', () => {
    // Each rule fits the per-rule estimate and all fit the CRD's total; together, on a full list, they exceed the request's budget.
    const rules = Array.from({length: 30}, (_, i) => ({rule: `self.names.all(a, a.size() < ${10 + i})`}));
    const schema: Schema = {type: 'object', properties: {spec: {type: 'object', properties: {
      names: {type: 'array', maxItems: 100000, items: {type: 'string', maxLength: 3}},
    }, 'x-kubernetes-validations': rules}}};
    const v = compileValidator(schema, ROOT);
    expect(v.errors).toEqual([]);
    const many = Array.from({length: 100000}, (_, i) => String(i % 999));
    expect(texts(v.validate({spec: {names: many}}))).toEqual([expect.stringMatching(/^spec: Invalid value: "object": .*(cost budget|cost limit)/)]);
    expect(v.validate({spec: {names: ['a', 'b']}})).toEqual([]);
  });
});

describe('OpenAPI of a CRD version', () => {
  const crd = {
    spec: {
      group: 'example.com', names: {plural: 'widgets', kind: 'Widget', listKind: 'WidgetList'},
      versions: [{name: 'v1', schema: {openAPIV3Schema: {type: 'object', properties: {spec: {type: 'object', properties: {
        port: {'x-kubernetes-int-or-string': true, anyOf: [{type: 'integer'}, {type: 'string'}]},
        note: {type: 'string', nullable: true},
      }, 'x-kubernetes-validations': [{rule: 'true'}]}}}}}],
    },
  };

  it('names definitions as upstream, tags them with their group-version-kind, and strips v2 of what Swagger 2.0 cannot say', () => {
    const doc = crdOpenApi(crd as never, 'v1')!;
    expect(Object.keys(doc.v3)).toEqual(['com.example.v1.Widget', 'com.example.v1.WidgetList']);
    const v3 = doc.v3['com.example.v1.Widget'] as any;
    expect(v3['x-kubernetes-group-version-kind']).toEqual([{group: 'example.com', kind: 'Widget', version: 'v1'}]);
    expect(Object.keys(v3.properties)).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(v3.properties.spec.properties.port.anyOf).toHaveLength(2);
    const v2 = doc.v2['com.example.v1.Widget'] as any;
    expect(v2.properties.spec.properties.port).toEqual({'x-kubernetes-int-or-string': true});
    expect(v2.properties.spec.properties.note).toEqual({});
    expect(v2.properties.spec['x-kubernetes-validations']).toBeUndefined();
    expect((doc.v2['com.example.v1.WidgetList'] as any).properties.items.items).toEqual({$ref: '#/definitions/com.example.v1.Widget'});
    expect(crdOpenApi(crd as never, 'v2')).toBeUndefined();
  });
});

describe('rules as real CRDs write them', () => {
  const schema: Schema = {type: 'object', properties: {spec: {type: 'object', properties: {
    min: {type: 'integer'}, max: {type: 'integer'}, name: {type: 'string', maxLength: 20},
    labels: {type: 'object', additionalProperties: {type: 'string', maxLength: 10}, maxProperties: 10},
    port: {'x-kubernetes-int-or-string': true}, timeout: {type: 'string', maxLength: 10},
    items: {type: 'array', maxItems: 10, items: {type: 'object', properties: {n: {type: 'string', maxLength: 5}}}},
    ratio: {type: 'number'}, on: {type: 'boolean'}, when: {type: 'string', format: 'date-time'},
  }}}};
  const object: JsonObject = {spec: {
    min: 1, max: 3, name: 'abc', labels: {a: 'x', ab: 'y'}, port: 'http', timeout: '5m', items: [{n: 'x'}, {n: 'y'}],
    ratio: 0.7, on: true, when: '2024-01-01T00:00:00Z',
  }};
  it.each([
    'self.min <= self.max', 'self.name == oldSelf.name', 'self.labels.all(k, k.startsWith("a"))', 'size(self.labels) <= 5',
    'type(self.port) == int ? self.port > 0 : self.port.matches("^[a-z]+$")', "duration(self.timeout) < duration('1h')",
    'self.items.exists_one(i, i.n == "x")', 'self.items.map(i, i.n).isSorted()', 'self.ratio > 0.5 && self.on', 'self.items == oldSelf.items',
    'self.labels == oldSelf.labels', 'has(self.name) && self.name.lowerAscii() == self.name', 'self.items.filter(i, i.n.size() > 1).size() <= 2',
    "'ab' in self.labels", "self.?name.orValue('') != 'bad'", "self.name.split('-').size() < 4", "self.when > timestamp('2020-01-01T00:00:00Z')",
    'self.when.getFullYear() == 2024', 'self.min + self.max < 100', "string(self.min) == '1'", "self.items.all(i, !has(i.n) || i.n != '')",
  ])('%s compiles and holds', (rule) => {
    const s = structuredClone(schema);
    s.properties!.spec!['x-kubernetes-validations'] = [{rule}];
    const v = compileValidator(s, ROOT);
    expect(texts(v.errors)).toEqual([]);
    expect(texts(v.validate(object, object))).toEqual([]);
  });
});

describe('service references of webhooks', () => {
  const service = {spec: {ports: [{name: 'https', port: 443, targetPort: 8443}]}};
  const endpoints = {subsets: [{addresses: [{ip: '10.0.0.7'}], ports: [{name: 'https', port: 8443}]}]};
  it.each<[string, object | undefined, object | undefined, number, string]>([
    ['an endpoint of the port', service, endpoints, 443, '10.0.0.7:8443'],
    ['an external name', {spec: {type: 'ExternalName', externalName: 'hooks.example.com', ports: [{port: 443}]}}, undefined, 443, 'hooks.example.com:443'],
    ['a missing service', undefined, undefined, 443, 'service "ns/hook" not found'],
    ['an unknown port', service, endpoints, 9443, 'no service port 9443 found for service "hook"'],
    ['no endpoints', service, {subsets: []}, 443, 'no endpoints available for service "hook"'],
  ])('%s', (_name, svc, eps, port, expected) => {
    let got: string;
    try {
      const r = resolveServiceEndpoint('ns', 'hook', port, svc as never, eps as never);
      got = `${r.host}:${r.port}`;
    } catch (error) {
      got = (error as Error).message;
    }
    expect(got).toBe(expected);
  });
});
