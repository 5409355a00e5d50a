/**
 * MutatingAdmissionPolicy's mutations, table-driven on an in-memory object store: an
 * ApplyConfiguration merged with the kind's merge semantics, JSONPatch, params, match conditions,
 * reinvocation, and failures under each failure policy.
 */
import {describe, expect, it} from '@jest/globals';
import {names} from '../../src/api/names.js';
import {builtinResource} from '../../src/api/resources.js';
import type {ApiError} from '../../src/api/status.js';
import type {AdmissionAttributes, AdmissionObjects} from '../../src/daemons/apiserver/admission/interfaces.js';
import {MutatingAdmissionPolicyPlugin} from '../../src/daemons/apiserver/admission/plugins/mutating-admission-policy.js';
import {compilePolicy} from '../../src/daemons/apiserver/admission/plugins/policy/compile.js';
import type {JsonObject} from '../../src/patch/types.js';

const AR = () => names().groups.admissionregistration;

function memoryObjects(initial: Array<[string, string, string, JsonObject]>): AdmissionObjects {
  const store = new Map<string, JsonObject>();
  const key = (g: string, r: string, ns: string, n: string) => `${g}/${r}/${ns}/${n}`;
  for (const [g, r, ns, o] of initial) store.set(key(g, r, ns, (o.metadata as JsonObject).name as string), o);
  return {
    get: async (g, r, ns, n) => store.get(key(g, r, ns, n)),
    list: async (g, r, ns = '') => [...store.entries()].filter(([k]) => k.startsWith(`${g}/${r}/${ns ? `${ns}/` : ''}`)).map(([, v]) => v),
    create: async (_g, _r, _ns, o) => o,
    update: async (_g, _r, _ns, o) => o,
  };
}

const policy = (name: string, spec: JsonObject): [string, string, string, JsonObject] => [AR(), 'mutatingadmissionpolicies', '', {
  apiVersion: `${AR()}/v1beta1`, kind: 'MutatingAdmissionPolicy', metadata: {name, generation: 1},
  spec: {failurePolicy: 'Fail', reinvocationPolicy: 'Never', matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods']}]}, ...spec},
}];
const binding = (policyName: string, spec: JsonObject = {}): [string, string, string, JsonObject] => [AR(), 'mutatingadmissionpolicybindings', '', {
  apiVersion: `${AR()}/v1beta1`, kind: 'MutatingAdmissionPolicyBinding', metadata: {name: `${policyName}-binding`}, spec: {policyName, ...spec},
}];
const apply = (expression: string) => ({patchType: 'ApplyConfiguration', applyConfiguration: {expression}});
const jsonPatch = (expression: string) => ({patchType: 'JSONPatch', jsonPatch: {expression}});

const pod = (): JsonObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: {name: 'web', namespace: 'team-a', labels: {app: 'web'}},
  spec: {containers: [{name: 'app', image: 'nginx'}]},
});

async function admit(objects: Array<[string, string, string, JsonObject]>): Promise<{object: JsonObject; error?: ApiError}> {
  const plugin = new MutatingAdmissionPolicyPlugin({objects: memoryObjects([['', 'namespaces', '', {metadata: {name: 'team-a'}}], ...objects])});
  const object = pod();
  const attributes: AdmissionAttributes = {
    operation: 'CREATE', resource: builtinResource('', 'pods')!, subresource: '', namespace: 'team-a', name: 'web', object,
    user: {name: 'alice', groups: []}, dryRun: false,
  };
  try {
    await plugin.admit(attributes);
    return {object};
  } catch (error) {
    return {object, error: error as ApiError};
  } finally {
    plugin.close();
  }
}

describe('MutatingAdmissionPolicy mutations', () => {
  const cases: Array<[string, Array<[string, string, string, JsonObject]>, (r: {object: JsonObject; error?: ApiError}) => void]> = [
    ['an ApplyConfiguration adds a label, keeping the others', [
      policy('add-label', {mutations: [apply('Object{metadata: Object.metadata{labels: {"team": "a"}}}')]}), binding('add-label'),
    ], ({object}) => expect((object.metadata as JsonObject).labels).toEqual({app: 'web', team: 'a'})],
    ['an ApplyConfiguration merges containers by name (a keyed list), not by replacing the list', [
      policy('sidecar', {mutations: [apply('Object{spec: Object.spec{containers: [Object.spec.containers{name: "app", imagePullPolicy: "Always"}, Object.spec.containers{name: "proxy", image: "envoy"}]}}')]}), binding('sidecar'),
    ], ({object}) => expect((object.spec as JsonObject).containers).toEqual([
      {name: 'app', image: 'nginx', imagePullPolicy: 'Always'}, {name: 'proxy', image: 'envoy'},
    ])],
    ['a JSONPatch adds an annotation with an escaped key', [
      policy('annotate', {mutations: [jsonPatch('[JSONPatch{op: "add", path: "/metadata/annotations", value: {}}, JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("example.com/owner"), value: request.userInfo.username}]')]}), binding('annotate'),
    ], ({object}) => expect((object.metadata as JsonObject).annotations).toEqual({'example.com/owner': 'alice'})],
    ['params feed the mutation', [
      [...policy('from-param', {paramKind: {apiVersion: 'v1', kind: 'ConfigMap'}, mutations: [apply('Object{metadata: Object.metadata{labels: {"tier": params.data.tier}}}')]})],
      binding('from-param', {paramRef: {name: 'defaults', namespace: 'team-a', parameterNotFoundAction: 'Deny'}}),
      ['', 'configmaps', 'team-a', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'defaults', namespace: 'team-a'}, data: {tier: 'gold'}}],
    ], ({object}) => expect(((object.metadata as JsonObject).labels as JsonObject).tier).toBe('gold')],
    ['a false match condition leaves the object alone', [
      policy('skip', {matchConditions: [{name: 'db-only', expression: 'object.metadata.labels.app == "db"'}], mutations: [apply('Object{metadata: Object.metadata{labels: {"x": "y"}}}')]}), binding('skip'),
    ], ({object, error}) => {
      expect(error).toBeUndefined();
      expect((object.metadata as JsonObject).labels).toEqual({app: 'web'});
    }],
    ['IfNeeded runs a policy again after a later one changed the object', [
      policy('a-copy', {reinvocationPolicy: 'IfNeeded', mutations: [apply('Object{metadata: Object.metadata{labels: {"copy": has(object.metadata.labels.team) ? object.metadata.labels.team : "none"}}}')]}), binding('a-copy'),
      policy('b-team', {mutations: [apply('Object{metadata: Object.metadata{labels: {"team": "b"}}}')]}), binding('b-team'),
    ], ({object}) => expect((object.metadata as JsonObject).labels).toEqual({app: 'web', copy: 'b', team: 'b'})],
    ['an error under Fail refuses the request, the object unchanged', [
      policy('broken', {mutations: [apply('Object{metadata: Object.metadata{labels: {"x": object.spec.missing}}}')]}), binding('broken'),
    ], ({object, error}) => {
      expect(error?.code).toBe(403);
      expect(error?.reason).toBe('Invalid');
      expect(error?.message).toBe("policy 'broken' with binding 'broken-binding' denied request: expression 'Object{metadata: Object.metadata{labels: {\"x\": object.spec.missing}}}' resulted in error: no such key: missing");
      expect((object.metadata as JsonObject).labels).toEqual({app: 'web'});
    }],
    ['an error under Ignore is passed over', [
      policy('broken', {failurePolicy: 'Ignore', mutations: [apply('Object{metadata: Object.metadata{labels: {"x": object.spec.missing}}}')]}), binding('broken'),
    ], ({error}) => expect(error).toBeUndefined()],
  ];
  it.each(cases)('%s', async (_title, objects, check) => check(await admit(objects)));

  it('the API refuses a mutation whose expression does not compile or is not an object', () => {
    const [, , , bad] = policy('bad', {mutations: [apply('Object{metadata: '), jsonPatch('"not a list"')]});
    expect(compilePolicy(bad, true).errors.map((e) => e.field)).toEqual(['spec.mutations[0].applyConfiguration.expression', 'spec.mutations[1].jsonPatch.expression']);
  });
});
