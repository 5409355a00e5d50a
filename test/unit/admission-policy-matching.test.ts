/**
 * The pure parts under the admission policies: resource rules as upstream's webhook rule matcher
 * reads them (scope, operations, groups, versions, resources with subresources), matchPolicy
 * Equivalent, and the rewrite of CEL message literals (`Object{...}`) to maps.
 */
import {describe, expect, it} from '@jest/globals';
import {rewriteObjectLiterals} from '../../src/api/cel/object-literals.js';
import {builtinResource} from '../../src/api/resources.js';
import type {AdmissionAttributes} from '../../src/daemons/apiserver/admission/interfaces.js';
import {matchesResources, ruleMatches} from '../../src/daemons/apiserver/admission/plugins/policy/matching.js';
import type {JsonObject} from '../../src/patch/types.js';

const rule = (r: JsonObject): JsonObject => ({apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'], ...r});

describe('resource rules', () => {
  const pods = {group: '', version: 'v1', resource: 'pods'};
  const namespaces = {group: '', version: 'v1', resource: 'namespaces'};
  const cases: Array<[string, JsonObject, {operation: AdmissionAttributes['operation']; namespace: string; subresource: string}, typeof pods, boolean]> = [
    ['wildcards match a main resource', rule({}), {operation: 'CREATE', namespace: 'a', subresource: ''}, pods, true],
    ['`*` does not match a subresource', rule({}), {operation: 'UPDATE', namespace: 'a', subresource: 'status'}, pods, false],
    ['`*/*` matches a subresource', rule({resources: ['*/*']}), {operation: 'UPDATE', namespace: 'a', subresource: 'status'}, pods, true],
    ['`pods/status` matches only that subresource', rule({resources: ['pods/status']}), {operation: 'UPDATE', namespace: 'a', subresource: 'status'}, pods, true],
    // Upstream's matcher compares `*` with any subresource, the empty one included.
    ['`pods/*` matches the main resource too', rule({resources: ['pods/*']}), {operation: 'CREATE', namespace: 'a', subresource: ''}, pods, true],
    ['`deployments/*` is another resource', rule({resources: ['deployments/*']}), {operation: 'CREATE', namespace: 'a', subresource: ''}, pods, false],
    ['an operation not listed', rule({operations: ['CREATE']}), {operation: 'DELETE', namespace: 'a', subresource: ''}, pods, false],
    ['a group not listed', rule({apiGroups: ['apps']}), {operation: 'CREATE', namespace: 'a', subresource: ''}, pods, false],
    ['a version not listed', rule({apiVersions: ['v2']}), {operation: 'CREATE', namespace: 'a', subresource: ''}, pods, false],
    ['Namespaced scope: a namespaced request', rule({scope: 'Namespaced'}), {operation: 'CREATE', namespace: 'a', subresource: ''}, pods, true],
    ['Namespaced scope: not Namespace objects', rule({scope: 'Namespaced'}), {operation: 'CREATE', namespace: '', subresource: ''}, namespaces, false],
    ['Cluster scope: Namespace objects are cluster scoped', rule({scope: 'Cluster'}), {operation: 'CREATE', namespace: '', subresource: ''}, namespaces, true],
    ['Cluster scope: not a namespaced request', rule({scope: 'Cluster'}), {operation: 'CREATE', namespace: 'a', subresource: ''}, pods, false],
  ];
  it.each(cases)('%s', (_t, r, attributes, gvr, expected) => expect(ruleMatches(r, attributes, gvr)).toBe(expected));
});

describe('matchPolicy', () => {
  const hpa = builtinResource('autoscaling', 'horizontalpodautoscalers')!;
  const attributes = {
    operation: 'CREATE', resource: hpa, subresource: '', namespace: 'a', name: 'h', object: {metadata: {name: 'h'}}, user: {name: 'u', groups: []}, dryRun: false,
  } as AdmissionAttributes;
  const other = hpa.version === 'v2' ? 'v1' : 'v2';
  const env = {
    namespace: async () => ({metadata: {name: 'a'}}),
    equivalents: () => [{group: 'autoscaling', version: other, resource: 'horizontalpodautoscalers', kind: 'HorizontalPodAutoscaler'}],
  };
  const constraints = (matchPolicy: string) => ({matchPolicy, resourceRules: [rule({apiGroups: ['autoscaling'], apiVersions: [other], resources: ['horizontalpodautoscalers']})]});
  it('Exact matches only the version requested', async () => expect((await matchesResources(constraints('Exact'), attributes, env)).matches).toBe(false));
  it('Equivalent matches another version of the resource, and says which', async () => {
    const result = await matchesResources(constraints('Equivalent'), attributes, env);
    expect(result).toEqual({matches: true, resource: {group: 'autoscaling', version: other, resource: 'horizontalpodautoscalers'}, kind: {group: 'autoscaling', version: other, kind: 'HorizontalPodAutoscaler'}});
  });
  it('a missing namespace is an error only when the rules match', async () => {
    const missing = {...env, namespace: async () => undefined};
    const selecting = {namespaceSelector: {matchLabels: {a: 'b'}}, resourceRules: [rule({})]};
    await expect(matchesResources(selecting, attributes, missing)).rejects.toThrow('namespaces "a" not found');
    expect((await matchesResources({...selecting, resourceRules: [rule({apiGroups: ['apps']})]}, attributes, missing)).matches).toBe(false);
  });
});

describe('CEL message literals', () => {
  const cases: Array<[string, string]> = [
    ['Object{metadata: Object.metadata{labels: {"a": "b"}}}', '{"metadata": {"labels": {"a": "b"}}}'],
    ['[JSONPatch{op: "add", path: "/x", value: 1}]', '[{"op": "add", "path": "/x", "value": 1}]'],
    ['Object{spec: Object.spec{containers: [Object.spec.containers{name: "a"}]}}', '{"spec": {"containers": [{"name": "a"}]}}'],
    ['"Object{a: 1}" + object.metadata.name', '"Object{a: 1}" + object.metadata.name'],
    ['{"k": Object{v: x ? 1 : 2}}', '{"k": {"v": x ? 1 : 2}}'],
    ['object.Object', 'object.Object'],
  ];
  it.each(cases)('%s', (source, expected) => expect(rewriteObjectLiterals(source, ['Object', 'JSONPatch'])).toBe(expected));
});
