import {describe, expect, it} from '@jest/globals';
import {PodTolerationRestriction, isBestEffort, parseTolerationRestrictionConfig, tolerationsToAdd} from '../../src/daemons/apiserver/admission/plugins/pod-toleration-restriction.js';
import {isSuperset, mergeTolerations, verifyAgainstWhitelist, type Toleration} from '../../src/daemons/apiserver/admission/plugins/pod-helpers.js';
import {names} from '../../src/api/names.js';
import {ApiError} from '../../src/api/status.js';
import {pod, podAttributes} from '../helpers/admission-attributes.js';
import type {JsonObject} from '../../src/patch/types.js';

describe('tolerations: upstream superset and merge rules', () => {
  it.each<[string, Toleration, Toleration, boolean]>([
    ['equal', {key: 'a', operator: 'Equal', value: 'x'}, {key: 'a', operator: 'Equal', value: 'x'}, true],
    ['empty key Exists covers all', {operator: 'Exists'}, {key: 'a', value: 'x', effect: 'NoSchedule'}, true],
    ['Exists covers a value', {key: 'a', operator: 'Exists'}, {key: 'a', operator: 'Equal', value: 'x'}, true],
    ['other value', {key: 'a', operator: 'Equal', value: 'y'}, {key: 'a', operator: 'Equal', value: 'x'}, false],
    ['empty effect covers all effects', {key: 'a', operator: 'Exists'}, {key: 'a', operator: 'Exists', effect: 'NoExecute'}, true],
    ['shorter seconds do not cover longer', {key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10}, {key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 20}, false],
    ['longer seconds cover shorter', {key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30}, {key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 20}, true],
  ])('%s', (_t, ss, t, expected) => {
    expect(isSuperset(ss, t)).toBe(expected);
  });

  it('merges without the covered ones, keeping the first of equals', () => {
    expect(mergeTolerations([{key: 'a', operator: 'Equal', value: 'x'}, {key: 'b', operator: 'Exists'}], [{key: 'a', operator: 'Exists'}, {key: 'b', operator: 'Exists'}])).toEqual([
      {key: 'b', operator: 'Exists'},
      {key: 'a', operator: 'Exists'},
    ]);
    expect(verifyAgainstWhitelist([{key: 'a', operator: 'Equal', value: 'x'}], [{key: 'a', operator: 'Exists'}])).toBe(true);
    expect(verifyAgainstWhitelist([{key: 'b', operator: 'Exists'}], [{key: 'a', operator: 'Exists'}])).toBe(false);
  });

  it('adds namespace defaults on create and memory pressure for pods that are not BestEffort', () => {
    const mem = () => ({key: names().taints.memoryPressure, operator: 'Exists', effect: 'NoSchedule'});
    expect(tolerationsToAdd(true, [{key: 'x', operator: 'Exists'}], {}, true)).toEqual([{key: 'x', operator: 'Exists'}]);
    expect(tolerationsToAdd(true, undefined, {default: [{key: 'd', operator: 'Exists'}]}, false)).toEqual([{key: 'd', operator: 'Exists'}, mem()]);
    expect(tolerationsToAdd(false, undefined, {default: [{key: 'd', operator: 'Exists'}]}, true)).toEqual([]);
    expect(isBestEffort(pod())).toBe(true);
    expect(isBestEffort(pod({containers: [{name: 'a', resources: {requests: {cpu: '0'}}}]}))).toBe(true);
    expect(isBestEffort(pod({containers: [{name: 'a', resources: {limits: {memory: '1Gi'}}}]}))).toBe(false);
  });
});

describe('PodTolerationRestriction: configuration', () => {
  const group = () => `${names().podAdmission.tolerationRestrictionGroup}/v1alpha1`;
  it('reads default and whitelist', () => {
    expect(parseTolerationRestrictionConfig({apiVersion: group(), kind: 'Configuration', default: [{key: 'a', operator: 'Exists'}]})).toEqual({default: [{key: 'a', operator: 'Exists'}]});
  });
  it.each([
    [{kind: 'Configuration'}, 'apiVersion must be'],
    [{kind: 'Other', apiVersion: 'G'}, 'kind must be Configuration, got "Other"'],
    [{kind: 'Configuration', apiVersion: 'G', whitelist: [{key: 'a', operator: 'Maybe'}]}, 'PodTolerationRestriction: tr.yaml: invalid configuration: whitelist[0].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists"'],
    [{kind: 'Configuration', apiVersion: 'G', default: 'x'}, 'default: must be a list of tolerations'],
  ])('refuses %j', (config, message) => {
    const c = JSON.parse(JSON.stringify(config).replace('"G"', JSON.stringify(group()))) as JsonObject;
    expect(() => parseTolerationRestrictionConfig(c, 'tr.yaml')).toThrow(message);
  });
});

describe('PodTolerationRestriction: the plugin', () => {
  const ns = (annotations: Record<string, string>): JsonObject => ({metadata: {name: 'team', annotations}});
  const withNamespace = (annotations: Record<string, string>) => async () => ns(annotations);

  it('merges the namespace defaults and checks the namespace whitelist', async () => {
    const a = names().podAdmission;
    const plugin = new PodTolerationRestriction({}, withNamespace({
      [a.defaultTolerations]: '[{"key":"dedicated","operator":"Equal","value":"team","effect":"NoSchedule"}]',
      [a.tolerationsWhitelist]: '[{"key":"dedicated","operator":"Exists"}]',
    }));
    const p = pod({}, {namespace: 'team'});
    await plugin.admit(podAttributes('CREATE', p));
    expect((p.spec as JsonObject).tolerations).toEqual([{key: 'dedicated', operator: 'Equal', value: 'team', effect: 'NoSchedule'}]);
    const error = await plugin.admit(podAttributes('CREATE', pod({tolerations: [{key: 'gpu', operator: 'Exists'}]}, {namespace: 'team'}))).catch((e: unknown) => e);
    expect((error as ApiError).status).toMatchObject({code: 500, message: 'pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist'});
  });

  it('falls back to the cluster whitelist, and answers a malformed annotation with a 500', async () => {
    const plugin = new PodTolerationRestriction({whitelist: [{key: 'ok', operator: 'Exists'}]}, withNamespace({}));
    await expect(plugin.validate(podAttributes('CREATE', pod({tolerations: [{key: 'no', operator: 'Exists'}]})))).rejects.toThrow('conflict with its cluster whitelist');
    const broken = new PodTolerationRestriction({}, withNamespace({[names().podAdmission.defaultTolerations]: '{bad'}));
    const error = await broken.admit(podAttributes('CREATE', pod())).catch((e: unknown) => e);
    expect((error as ApiError).status.code).toBe(500);
  });
});
