/**
 * The schema-validation stage against upstream's texts (kube-apiserver's field validation
 * integration test: finding order, "unknown field" / "duplicate field", YAML line reports), Go's
 * decoder wording for type errors, required fields as 422 causes, and the custom-resource hook.
 */
import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../src/api/status.js';
import { SchemaRegistry, validateWrite, yamlDuplicateKeys, type WriteValidation } from '../../src/daemons/apiserver/rest/validation/index.js';
import { countKeyTokens, scanKeys } from '../../src/api/schema/duplicates.js';

const registry = new SchemaRegistry();

// Upstream's invalidBodyJSON (test/integration/apiserver/field_validation_test.go).
const invalidDeployment = `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {"name": "dupename", "name": "web", "labels": {"app": "nginx"}, "unknownMeta": "metaVal"},
  "spec": {
    "unknown1": "val1",
    "unknownDupe": "valDupe",
    "unknownDupe": "valDupe2",
    "paused": true,
    "paused": false,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {"containers": [{"name": "nginx", "image": "nginx:latest", "unknownNested": "val1", "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}
    }
  }
}`;

const upstreamFindings = [
  'duplicate field "metadata.name"',
  'unknown field "metadata.unknownMeta"',
  'unknown field "spec.unknown1"',
  'unknown field "spec.unknownDupe"',
  'duplicate field "spec.paused"',
  'unknown field "spec.template.spec.containers[0].unknownNested"',
  'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
];

function create(text: string, mode: WriteValidation['mode'], yaml = false, object?: unknown): { warnings: string[]; object: any } {
  const value = object ?? JSON.parse(text);
  const result = validateWrite(registry, { group: 'apps', version: 'v1', kind: 'Deployment', name: 'web', object: value, mode, operation: 'create', body: { text, yaml } });
  return { warnings: result.warnings, object: value };
}

function failure(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

describe('fieldValidation on a create', () => {
  it('Strict fails with every finding in document order, as upstream', () => {
    const error = failure(() => create(invalidDeployment, 'Strict'));
    expect(error.status.code).toBe(400);
    expect(error.status.reason).toBe('BadRequest');
    expect(error.status.message).toBe(`Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ${upstreamFindings.join(', ')}`);
  });

  it('Warn answers each finding as a warning and drops the unknown fields', () => {
    const { warnings, object } = create(invalidDeployment, 'Warn');
    expect(warnings).toEqual(upstreamFindings);
    expect(object.metadata.unknownMeta).toBeUndefined();
    expect(object.spec.unknown1).toBeUndefined();
    expect(object.spec.template.spec.containers[0].unknownNested).toBeUndefined();
    expect(object.spec.template.spec.containers[0].image).toBe('nginx:latest');
  });

  it('Ignore says nothing and still drops unknown fields', () => {
    const { warnings, object } = create(invalidDeployment, 'Ignore');
    expect(warnings).toEqual([]);
    expect(object.spec.unknown1).toBeUndefined();
  });

  it('reports YAML duplicates with their lines, then the unknown fields sorted', () => {
    const yaml = ['apiVersion: apps/v1', 'kind: Deployment', 'metadata:', '  name: a', '  name: web', '  unknownMeta: x', 'spec:',
      '  zeta: 1', '  paused: true', '  paused: false', '  selector: {matchLabels: {app: a}}',
      '  template: {metadata: {labels: {app: a}}, spec: {containers: [{name: c, image: i, alpha: 1}]}}'].join('\n');
    const object = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', unknownMeta: 'x' },
      spec: { zeta: 1, paused: false, selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'i', alpha: 1 }] } } } };
    const error = failure(() => create(yaml, 'Strict', true, structuredClone(object)));
    expect(error.status.message).toBe('Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: yaml: unmarshal errors:\n'
      + '  line 5: key "name" already set in map\n  line 10: key "paused" already set in map, unknown field "metadata.unknownMeta", '
      + 'unknown field "spec.template.spec.containers[0].alpha", unknown field "spec.zeta"');
    expect(create(yaml, 'Warn', true, structuredClone(object)).warnings).toEqual([
      'line 5: key "name" already set in map', 'line 10: key "paused" already set in map',
      'unknown field "metadata.unknownMeta"', 'unknown field "spec.template.spec.containers[0].alpha"', 'unknown field "spec.zeta"',
    ]);
  });

  it('a value of the wrong type is a 400 in Go decoder words, whatever the mode', () => {
    const body = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 'three', selector: {}, template: {} } };
    for (const mode of ['Strict', 'Warn', 'Ignore'] as const) {
      const error = failure(() => create(JSON.stringify(body), mode));
      expect(error.status.code).toBe(400);
      expect(error.status.message).toBe('Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32');
    }
    const nested = { ...body, spec: { selector: {}, template: { spec: { containers: { name: 'c' } } } } };
    expect(failure(() => create(JSON.stringify(nested), 'Warn')).status.message).toMatch(
      /cannot unmarshal object into Go struct field PodSpec\.spec\.template\.spec\.containers of type \[\]v1\.Container$/);
    const fraction = { ...body, spec: { replicas: 1.5, selector: {}, template: {} } };
    expect(failure(() => create(JSON.stringify(fraction), 'Warn')).status.message).toMatch(/cannot unmarshal number 1\.5 into Go struct field DeploymentSpec\.spec\.replicas of type int32$/);
  });

  it('accepts int-or-string and quantities in either form', () => {
    const container = { name: 'c', image: 'i', resources: { limits: { cpu: 1, memory: '1Gi' } }, ports: [{ containerPort: 80 }],
      readinessProbe: { httpGet: { port: 'http' } }, livenessProbe: { httpGet: { port: 8080 } } };
    const body = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
      spec: { selector: {}, template: { spec: { containers: [container] } }, strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } } } };
    expect(create(JSON.stringify(body), 'Strict').warnings).toEqual([]);
  });

  it('a required field missing is a 422 naming the field', () => {
    const body = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { selector: {}, template: { spec: { containers: [{ image: 'i' }] } } } };
    const error = failure(() => create(JSON.stringify(body), 'Strict'));
    expect(error.status.code).toBe(422);
    expect(error.status.reason).toBe('Invalid');
    expect(error.status.message).toBe('Deployment.apps "web" is invalid: spec.template.spec.containers[0].name: Required value');
    expect(error.status.details?.causes).toEqual([{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.template.spec.containers[0].name' }]);
  });

  it('kinds without a schema pass unchecked', () => {
    const result = validateWrite(registry, { group: 'example.com', version: 'v1', kind: 'Widget', name: 'w', object: { spec: { any: 1 } }, mode: 'Strict', operation: 'create' });
    expect(result.warnings).toEqual([]);
  });
});

describe('fieldValidation on a patch', () => {
  it('reports the patch body duplicates, then the patched object unknown fields sorted (upstream smp-strict-validation)', () => {
    const patch = `{"spec": {"unknown1": "val1", "unknownDupe": "valDupe", "unknownDupe": "valDupe2", "paused": true, "paused": false,
      "template": {"spec": {"containers": [{"name": "nginx", "unknownNested": "val1", "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}}}`;
    const patched = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
      spec: { unknownDupe: 'valDupe2', unknown1: 'val1', paused: false, selector: {}, template: { spec: { containers: [{ name: 'nginx', image: 'i', unknownNested: 'val1', imagePullPolicy: 'Never' }] } } } };
    const run = (mode: WriteValidation['mode']) => validateWrite(registry, {
      group: 'apps', version: 'v1', kind: 'Deployment', name: 'web', object: structuredClone(patched), mode, operation: 'patch', body: { text: patch, yaml: false },
    });
    const error = failure(() => run('Strict'));
    expect(error.status.code).toBe(400);
    expect(error.status.message).toBe('strict decoding error: duplicate field "spec.unknownDupe", duplicate field "spec.paused", '
      + 'duplicate field "spec.template.spec.containers[0].imagePullPolicy", unknown field "spec.template.spec.containers[0].unknownNested", '
      + 'unknown field "spec.unknown1", unknown field "spec.unknownDupe"');
    expect(run('Warn').warnings).toHaveLength(6);
  });
});

describe('fieldValidation on a server-side apply', () => {
  const config = ['apiVersion: apps/v1', 'kind: Deployment', 'metadata:', '  name: web', 'spec:', '  paused: false', '  paused: true', '  extra: 1'].join('\n');
  const run = (mode: WriteValidation['mode']) => validateWrite(registry, {
    group: 'apps', version: 'v1', kind: 'Deployment', name: 'web', object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { paused: true, extra: 1 } },
    mode, operation: 'apply', body: { text: config, yaml: true },
  });

  it('Strict stops at the repeated YAML keys with upstream text', () => {
    expect(failure(() => run('Strict')).status.message).toBe('error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "paused" already set in map');
  });

  it('Warn reports the repeated keys and the unknown fields', () => {
    expect(run('Warn').warnings).toEqual(['line 7: key "paused" already set in map', 'unknown field "spec.extra"']);
  });
});

describe('duplicate keys', () => {
  it('are found at every depth, with escaped keys and list indices', () => {
    const scan = scanKeys('{"a":{"b":1,"b":2},"l":[{"x":1},{"x":1,"x":2}],"e\\u0073c":1,"esc":2,"s":"{\\"a\\":1,\\"a\\":2}"}');
    expect(scan.duplicates.map((d) => d.path)).toEqual(['a.b', 'l[1].x', 'esc']);
  });

  it('are absent when the key tokens match the keys the walk saw', () => {
    expect(countKeyTokens('{"a":{"b":1,"c":"x:\\"y\\":"},"l":[{"d" : 1}]}')).toBe(5);
    const dup = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"},"data":{"k":"1"}}';
    const result = validateWrite(registry, { group: '', version: 'v1', kind: 'ConfigMap', name: 'b', object: JSON.parse(dup), mode: 'Warn', operation: 'create', body: { text: dup, yaml: false } });
    expect(result.warnings).toEqual(['duplicate field "metadata.name"']);
  });

  it('in YAML carry their line', () => {
    expect(yamlDuplicateKeys('a: 1\nb:\n  c: 1\n  c: 2\na: 3\n')).toEqual(['line 4: key "c" already set in map', 'line 5: key "a" already set in map']);
  });
});

describe('custom resource schemas', () => {
  it('plug in per kind: unknown fields and types are checked', () => {
    const schemas = new SchemaRegistry();
    const before = schemas.revision;
    schemas.setCustom('widgets.example.com', [{
      group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true,
      schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } }, required: ['size'] } } },
    }]);
    expect(schemas.revision).toBeGreaterThan(before);
    const write = (object: unknown, mode: WriteValidation['mode'] = 'Strict') =>
      validateWrite(schemas, { group: 'example.com', version: 'v1', kind: 'Widget', name: 'w', object, mode, operation: 'create' });
    expect(failure(() => write({ metadata: { name: 'w', bogus: 1 }, spec: { size: 1, color: 'red' } })).status.message)
      .toBe('Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "metadata.bogus", unknown field "spec.color"');
    // Required fields of custom resources are their CRD validator's (src/api/structural), not this stage's.
    expect(write({ metadata: { name: 'w' }, spec: {} }).warnings).toEqual([]);
    const typed = failure(() => write({ metadata: { name: 'w' }, spec: { size: 'big' } }));
    expect(typed.status.code).toBe(422);
    expect(typed.status.message).toBe('Widget.example.com "w" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"');
    schemas.removeCustom('widgets.example.com');
    expect(write({ spec: { anything: true } }).warnings).toEqual([]);
  });
});

describe('strategic-merge metadata from the schemas', () => {
  it('reads merge keys and strategies of either name set from the generated table', async () => {
    const { lookupSchema, fieldMeta, fieldType } = await import('../../src/api/merge-metadata.js');
    const podSpec = fieldType(fieldMeta(lookupSchema('v1', 'Pod'), 'spec'));
    expect(fieldMeta(podSpec, 'containers')).toMatchObject({ strategy: 'merge', mergeKey: 'name', type: 'Container' });
    expect(fieldMeta(podSpec, 'volumes')).toMatchObject({ strategy: 'merge,retainKeys', mergeKey: 'name' });
    expect(fieldMeta(podSpec, 'tolerations')).toEqual({ shape: 'list', type: 'Toleration', elementKind: 'struct' });
    expect(lookupSchema('rbac.orch.io/v1', 'Role')).toBe(lookupSchema('rbac.authorization.k8s.io/v1', 'Role'));
    expect(lookupSchema('coordination.orch.io/v1', 'Lease')?.name).toBe('Lease');
    expect(lookupSchema('example.com/v1', 'Widget')).toBeUndefined();
  });
});
