/**
 * The server-side apply engine (src/api/apply): field sets and their fieldsV1 encoding, typed merge,
 * compare and removal by list types, and ownership (Apply and Update) with conflicts, as upstream's
 * structured-merge-diff computes them.
 */
import { describe, expect, it } from '@jest/globals';
import { FieldSet, pathString } from '../../src/api/apply/field-set.js';
import { typeAt, UNTYPED } from '../../src/api/apply/schema.js';
import { builtinTypes, openApiTypes } from '../../src/api/apply/types.js';
import { ApplyStructureError, compare, merge, removeItems, toFieldSet } from '../../src/api/apply/typed.js';
import {
  ApplyConflictError, applyConfig, conflictMessage, decodeManagers, encodeManagers, ignoredFields, recordUpdate, type Manager,
} from '../../src/api/apply/updater.js';
import type { JsonObject } from '../../src/patch/types.js';

const deploymentType = builtinTypes.root('apps/v1', 'Deployment');
const fieldsOf = (set: FieldSet) => set.toFieldsV1();

function deployment(spec: JsonObject): JsonObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' }, spec };
}
const podSpec = (containers: JsonObject[]) => ({ template: { spec: { containers } } });

describe('field sets', () => {
  it('round-trips fieldsV1 with `.` for members that have members below', () => {
    const fieldsV1 = {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"a"}': { '.': {}, 'f:image': {} } }, 'f:finalizers': { 'v:"x"': {} }, 'f:args': {} },
    };
    const set = FieldSet.fromFieldsV1(fieldsV1);
    expect(set.toFieldsV1()).toEqual(fieldsV1);
    expect(set.has(['f:metadata', 'f:labels'])).toBe(true);
    expect(set.has(['f:metadata'])).toBe(false);
    expect(set.paths().map(pathString)).toEqual([
      '.metadata.labels', '.metadata.labels.app', '.spec.args', '.spec.containers[name="a"]', '.spec.containers[name="a"].image', '.spec.finalizers[="x"]',
    ]);
  });

  it.each([
    [['f:spec', 'f:replicas'], '.spec.replicas'],
    [['f:spec', 'f:ports', 'k:{"port":80,"protocol":"TCP"}', 'f:name'], '.spec.ports[port=80,protocol="TCP"].name'],
    [['f:metadata', 'f:finalizers', 'v:"a"'], '.metadata.finalizers[="a"]'],
    [['f:spec', 'f:args', 'i:2'], '.spec.args[2]'],
  ])('prints %j as %s', (path, text) => {
    expect(pathString(path)).toBe(text);
  });

  it('unions, subtracts (plain and recursive) and intersects', () => {
    const a = FieldSet.fromFieldsV1({ 'f:spec': { 'f:replicas': {}, 'f:template': { '.': {}, 'f:x': {} } } });
    const b = FieldSet.fromFieldsV1({ 'f:spec': { 'f:template': {}, 'f:paused': {} } });
    expect(fieldsOf(a.union(b))).toEqual({ 'f:spec': { 'f:paused': {}, 'f:replicas': {}, 'f:template': { '.': {}, 'f:x': {} } } });
    expect(fieldsOf(a.difference(b))).toEqual({ 'f:spec': { 'f:replicas': {}, 'f:template': { 'f:x': {} } } });
    expect(fieldsOf(a.recursiveDifference(b))).toEqual({ 'f:spec': { 'f:replicas': {} } });
    expect(fieldsOf(a.intersection(b))).toEqual({ 'f:spec': { 'f:template': {} } });
    expect(a.difference(a).empty()).toBe(true);
  });
});

describe('types', () => {
  it.each([
    [['spec', 'template', 'spec', 'containers'], 'map', ['name']],
    [['spec', 'template', 'spec', 'containers', '[]', 'ports'], 'map', ['containerPort', 'protocol']],
    [['metadata', 'finalizers'], 'set', []],
    [['spec', 'template', 'spec', 'tolerations'], 'atomic', []],
    [['spec', 'template', 'spec', 'containers', '[]', 'args'], 'atomic', []],
  ])('built-in Deployment %j is a %s list keyed by %j', (path, listType, keys) => {
    const node = typeAt(builtinTypes, 'apps/v1', 'Deployment', path);
    expect(node.listType).toBe(listType);
    expect(node.listMapKeys.map((k) => k.name)).toEqual(keys);
  });

  it('reads list types, map keys, key defaults and atomic maps from a CRD schema; lists without a type are atomic', () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            routes: {
              type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['host', 'port'],
              items: { type: 'object', properties: { host: { type: 'string' }, port: { type: 'integer', default: 80 } } },
            },
            tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
            hosts: { type: 'array', items: { type: 'string' } },
            selector: { type: 'object', 'x-kubernetes-map-type': 'atomic' },
          },
        },
      },
    };
    const types = openApiTypes(schema);
    const at = (...path: string[]) => typeAt(types, 'example.com/v1', 'Route', path);
    expect(at('spec', 'routes').listType).toBe('map');
    expect(at('spec', 'routes').listMapKeys).toEqual([{ name: 'host' }, { name: 'port', default: 80 }]);
    expect(at('spec', 'tags').listType).toBe('set');
    expect(at('spec', 'hosts').listType).toBe('atomic');
    expect(at('spec', 'selector').atomicMap).toBe(true);
    expect(at('metadata', 'finalizers').listType).toBe('set');
  });
});

describe('typed values', () => {
  it('gives the field set of an applied Deployment as upstream encodes it', () => {
    const config = deployment({
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'nginx', image: 'nginx', ports: [{ containerPort: 80 }] }] },
      },
    });
    expect(fieldsOf(toFieldSet(config, deploymentType))).toEqual({
      'f:apiVersion': {},
      'f:kind': {},
      'f:metadata': { 'f:name': {}, 'f:namespace': {} },
      'f:spec': {
        'f:replicas': {},
        'f:selector': {},
        'f:template': {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:containers': {
              'k:{"name":"nginx"}': {
                '.': {}, 'f:image': {}, 'f:name': {},
                'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
              },
            },
          },
        },
      },
    });
  });

  it.each([
    ['duplicate keys', [{ name: 'a' }, { name: 'a' }], '.spec.template.spec.containers: duplicate entries for key [name="a"]'],
    ['a missing key', [{ image: 'x' }], '.spec.template.spec.containers: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)'],
  ])('rejects %s in an applied list map', (_name, containers, message) => {
    expect(() => toFieldSet(deployment(podSpec(containers)), deploymentType)).toThrow(new ApplyStructureError(message));
  });

  it.each<[string, JsonObject, JsonObject, JsonObject]>([
    ['list maps merge by key; live-only items keep their place',
      podSpec([{ name: 'a', image: 'a1' }, { name: 'b', image: 'b1' }]), podSpec([{ name: 'b', image: 'b2' }, { name: 'c', image: 'c1' }]),
      podSpec([{ name: 'a', image: 'a1' }, { name: 'b', image: 'b2' }, { name: 'c', image: 'c1' }])],
    ['ports merge by containerPort and protocol (TCP by default)',
      podSpec([{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP', name: 'http' }] }]),
      podSpec([{ name: 'a', ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 80, protocol: 'UDP' }] }]),
      podSpec([{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP', name: 'http', hostPort: 8080 }, { containerPort: 80, protocol: 'UDP' }] }])],
    ['atomic lists are replaced', podSpec([{ name: 'a', args: ['x', 'y'] }]), podSpec([{ name: 'a', args: ['z'] }]), podSpec([{ name: 'a', args: ['z'] }])],
    ['atomic maps are replaced', { selector: { matchLabels: { a: '1' } } }, { selector: { matchLabels: { b: '2' } } }, { selector: { matchLabels: { b: '2' } } }],
    ['granular maps merge; null removes', { paused: true, replicas: 1 }, { replicas: 3, paused: null }, { replicas: 3 }],
  ])('merge: %s', (_name, live, config, expected) => {
    expect(merge(deployment(live), deployment(config), deploymentType)).toEqual(deployment(expected));
  });

  it('merge: sets union, shared and new items in the applied order, live-only items after', () => {
    const type = builtinTypes.root('v1', 'ConfigMap');
    const live = { metadata: { finalizers: ['a', 'b'] } };
    expect(merge(live, { metadata: { finalizers: ['c', 'a'] } }, type)).toEqual({ metadata: { finalizers: ['c', 'a', 'b'] } });
  });

  it('compare: added and removed nodes with everything below, modified leaves', () => {
    const live = deployment({ replicas: 1, ...podSpec([{ name: 'a', image: 'x' }]) });
    const next = deployment({ replicas: 2, paused: true, template: { spec: { containers: [{ name: 'b', image: 'y' }] } } });
    const c = compare(live, next, deploymentType);
    expect(c.modified.paths().map(pathString)).toEqual(['.spec.replicas']);
    expect(c.added.paths().map(pathString)).toEqual([
      '.spec.paused', '.spec.template.spec.containers[name="b"]', '.spec.template.spec.containers[name="b"].image', '.spec.template.spec.containers[name="b"].name',
    ]);
    expect(c.removed.paths().map(pathString)).toEqual([
      '.spec.template.spec.containers[name="a"]', '.spec.template.spec.containers[name="a"].image', '.spec.template.spec.containers[name="a"].name',
    ]);
  });

  it('removes members with everything below them', () => {
    const value = deployment({ replicas: 1, ...podSpec([{ name: 'a', image: 'x', args: ['1'] }, { name: 'b' }]) });
    const set = FieldSet.fromFieldsV1({ 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"a"}': { 'f:args': {} }, 'k:{"name":"b"}': {} } } } } });
    expect(removeItems(value, set, deploymentType)).toEqual(deployment({ replicas: 1, ...podSpec([{ name: 'a', image: 'x' }]) }));
  });

  it('untyped values: maps merge, lists are atomic, every map entry is owned', () => {
    expect(merge({ a: { x: 1 }, l: [1, 2] }, { a: { y: 2 }, l: [3] }, UNTYPED)).toEqual({ a: { x: 1, y: 2 }, l: [3] });
    expect(fieldsOf(toFieldSet({ a: { y: 2 }, l: [3] }, UNTYPED))).toEqual({ 'f:a': { '.': {}, 'f:y': {} }, 'f:l': {} });
  });
});

describe('ownership', () => {
  const T0 = '2024-01-01T00:00:00Z';
  const T1 = '2024-01-01T00:01:00Z';
  const base = { apiVersion: 'apps/v1', subresource: undefined, type: deploymentType, ignored: ignoredFields(undefined, true) };
  const apply = (live: JsonObject | undefined, managers: Manager[], manager: string, spec: JsonObject, force = false, time = T1) =>
    applyConfig({ ...base, live, config: deployment(spec), managers, manager, force, time });
  const owned = (managers: Manager[]) => Object.fromEntries(managers.map((m) => [`${m.manager}/${m.operation}`, m.set.paths().map(pathString)]));

  it('an apply creates and owns what it applied (not the identity fields)', () => {
    const { object, managers } = apply(undefined, [], 'a', { replicas: 2 }, false, T0);
    expect(object).toEqual(deployment({ replicas: 2 }));
    expect(encodeManagers(managers)).toEqual([
      { manager: 'a', operation: 'Apply', apiVersion: 'apps/v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
    ]);
  });

  it('a second manager changing an owned field conflicts; the same value is shared; force takes it over', () => {
    const first = apply(undefined, [], 'a', { replicas: 2, paused: false }, false, T0);
    let error: unknown;
    try {
      apply(first.object, first.managers, 'b', { replicas: 3, paused: true });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApplyConflictError);
    expect((error as ApplyConflictError).message).toBe('Apply failed with 2 conflicts: conflicts with "a":\n- .spec.paused\n- .spec.replicas');
    expect((error as ApplyConflictError).conflicts.map((c) => pathString(c.path))).toEqual(['.spec.paused', '.spec.replicas']);

    const shared = apply(first.object, first.managers, 'b', { replicas: 2 });
    expect(owned(shared.managers)).toEqual({ 'a/Apply': ['.spec.paused', '.spec.replicas'], 'b/Apply': ['.spec.replicas'] });

    const forced = apply(first.object, first.managers, 'b', { replicas: 3 }, true);
    expect(forced.object.spec).toEqual({ replicas: 3, paused: false });
    expect(owned(forced.managers)).toEqual({ 'a/Apply': ['.spec.paused'], 'b/Apply': ['.spec.replicas'] });
  });

  it('a field the applier stops applying is removed, unless another manager owns it', () => {
    const first = apply(undefined, [], 'a', { replicas: 2, paused: true, minReadySeconds: 5 }, false, T0);
    const shared = apply(first.object, first.managers, 'b', { minReadySeconds: 5 });
    const next = apply(shared.object, shared.managers, 'a', { replicas: 2 });
    expect(next.object.spec).toEqual({ replicas: 2, minReadySeconds: 5 });
    expect(owned(next.managers)).toEqual({ 'a/Apply': ['.spec.replicas'], 'b/Apply': ['.spec.minReadySeconds'] });
  });

  it('list-map items of two appliers live side by side and go with their applier', () => {
    const a = apply(undefined, [], 'a', podSpec([{ name: 'app', image: 'x' }]), false, T0);
    const b = apply(a.object, a.managers, 'b', podSpec([{ name: 'sidecar', image: 'y' }]));
    expect((b.object.spec as any).template.spec.containers.map((c: JsonObject) => c.name)).toEqual(['app', 'sidecar']);
    const gone = apply(b.object, b.managers, 'b', {});
    expect((gone.object.spec as any).template.spec.containers.map((c: JsonObject) => c.name)).toEqual(['app']);
  });

  it('an Update by another client takes the fields it changes; an apply then conflicts with it', () => {
    const first = apply(undefined, [], 'a', { replicas: 2 }, false, T0);
    const live = { ...first.object, metadata: { ...(first.object.metadata as JsonObject), managedFields: encodeManagers(first.managers) as any } };
    const next = deployment({ replicas: 5 });
    const updated = recordUpdate({ ...base, live, next, managers: decodeManagers(live.metadata.managedFields), manager: 'kubectl-scale', time: T1 });
    expect(owned(updated)).toEqual({ 'kubectl-scale/Update': ['.spec.replicas'] });
    expect(() => apply(next, updated, 'a', { replicas: 2 })).toThrow('Apply failed with 1 conflict: conflict with "kubectl-scale" using apps/v1: .spec.replicas');
  });

  it('a create owns the members of built-in structs, not the structs (their zero values exist upstream)', () => {
    const next = deployment({
      replicas: 1, strategy: { type: 'Recreate' },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'x', resources: {} }] } },
    });
    const created = recordUpdate({ ...base, live: undefined, next, managers: [], manager: 'kubectl-create', time: T0 });
    expect(created[0]!.set.toFieldsV1()).toEqual({
      'f:spec': {
        'f:replicas': {},
        'f:strategy': { 'f:type': {} },
        'f:template': {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          'f:spec': { 'f:containers': { '.': {}, 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:resources': {} } } },
        },
      },
    });
  });

  it('keeps at most 10 Update entries: the oldest merge into ancient-changes', () => {
    let managers: Manager[] = [];
    let live: JsonObject = deployment({});
    for (let i = 0; i < 12; i++) {
      const next = deployment({ ...(live.spec as JsonObject), [`f${i}`]: i });
      managers = recordUpdate({ ...base, live, next, managers, manager: `m${i}`, time: `2024-01-01T00:00:${String(i).padStart(2, '0')}Z` });
      live = next;
    }
    expect(managers).toHaveLength(10);
    const ancient = managers.find((m) => m.manager === 'ancient-changes')!;
    expect(ancient.set.paths().map(pathString)).toEqual(['.spec.f0', '.spec.f1', '.spec.f2']);
    expect(ancient.time).toBe('2024-01-01T00:00:02Z');
    expect(managers.map((m) => m.manager)).not.toContain('m2');
  });

  it('status is not owned through the main resource', () => {
    const { managers } = apply(undefined, [], 'a', { replicas: 1 }, false, T0);
    const updated = recordUpdate({
      ...base, live: deployment({ replicas: 1 }), next: { ...deployment({ replicas: 1 }), status: { replicas: 1 } }, managers, manager: 'x', time: T1,
    });
    expect(owned(updated)).toEqual({ 'a/Apply': ['.spec.replicas'] });
  });

  it('prints upstream conflict messages', () => {
    const m = (manager: string, operation: 'Apply' | 'Update'): Manager => ({ manager, operation, apiVersion: 'v1', set: new FieldSet() });
    expect(conflictMessage([{ manager: m('x', 'Update'), path: ['f:data', 'f:a'] }])).toBe('Apply failed with 1 conflict: conflict with "x" using v1: .data.a');
    expect(conflictMessage([
      { manager: m('z', 'Apply'), path: ['f:data', 'f:a'] }, { manager: m('b', 'Apply'), path: ['f:data', 'f:b'] }, { manager: m('b', 'Apply'), path: ['f:data', 'f:c'] },
    ])).toBe('Apply failed with 3 conflicts: conflicts with "b":\n- .data.b\n- .data.c\nconflicts with "z":\n- .data.a');
  });
});
