import {describe, expect, it} from '@jest/globals';
import {PodNodeSelector, decideNodeSelector, parsePodNodeSelectorConfig, selectorToLabels} from '../../src/daemons/apiserver/admission/plugins/pod-node-selector.js';
import {names} from '../../src/api/names.js';
import {pod, podAttributes} from '../helpers/admission-attributes.js';
import {ApiError} from '../../src/api/status.js';
import type {JsonObject} from '../../src/patch/types.js';

describe('PodNodeSelector: the decision', () => {
  it.each([
    ['merged with the namespace selector', {disk: 'ssd'}, {env: 'prod'}, {}, {allowed: true, nodeSelector: {env: 'prod', disk: 'ssd'}}],
    ['a conflict with the namespace', {env: 'dev'}, {env: 'prod'}, {}, {allowed: false, reason: 'pod node label selector conflicts with its namespace node label selector'}],
    ['within the whitelist', {}, {env: 'prod'}, {env: 'prod', tier: 'web'}, {allowed: true, nodeSelector: {env: 'prod'}}],
    ['outside the whitelist', {gpu: 'yes'}, {env: 'prod'}, {env: 'prod'}, {allowed: false, reason: 'pod node label selector labels conflict with its namespace whitelist'}],
  ])('%s', (_t, podSel, nsSel, whitelist, expected) => {
    expect(decideNodeSelector(podSel, nsSel, whitelist, true)).toEqual(expected);
  });

  it('parses selectors as upstream', () => {
    expect(selectorToLabels('a=b, c = d')).toEqual({a: 'b', c: 'd'});
    expect(() => selectorToLabels('a=b=c')).toThrow('invalid selector: [a b c]');
    expect(() => selectorToLabels('a!=b')).toThrow('invalid label key "a!"');
  });
});

describe('PodNodeSelector: configuration', () => {
  it('reads the cluster default and namespace whitelists', () => {
    expect(parsePodNodeSelectorConfig({podNodeSelectorPluginConfig: {clusterDefaultNodeSelector: 'env=prod', team: 'env=prod'}})).toEqual({clusterDefaultNodeSelector: 'env=prod', team: 'env=prod'});
    expect(parsePodNodeSelectorConfig(undefined)).toEqual({});
  });
  it.each([
    [{podNodeSelectorPluginConfig: 'env=prod'}, 'PodNodeSelector: cfg.yaml: podNodeSelectorPluginConfig must be a map of namespace names to node selectors'],
    [{podNodeSelectorPluginConfig: {team: 'env'}}, 'PodNodeSelector: cfg.yaml: the node selector of "team": invalid selector: [env]'],
    [{podNodeSelectorPluginConfig: {team: 3}}, 'PodNodeSelector: cfg.yaml: the node selector of "team" must be a string, got 3'],
  ])('refuses %j', (config, message) => {
    expect(() => parsePodNodeSelectorConfig(config as JsonObject, 'cfg.yaml')).toThrow(message);
  });
});

describe('PodNodeSelector: the plugin', () => {
  const namespaces: Record<string, JsonObject> = {
    annotated: {metadata: {name: 'annotated', annotations: {}}},
    plain: {metadata: {name: 'plain'}},
    broken: {metadata: {name: 'broken', annotations: {}}},
  };
  const get = async (name: string) => {
    (namespaces.annotated!.metadata as JsonObject).annotations = {[names().podAdmission.nodeSelector]: 'env=prod'};
    (namespaces.broken!.metadata as JsonObject).annotations = {[names().podAdmission.nodeSelector]: 'env'};
    return namespaces[name];
  };
  const plugin = new PodNodeSelector({clusterDefaultNodeSelector: 'zone=a'}, get);

  it('merges the annotation, else the cluster default', async () => {
    const p = pod({}, {namespace: 'annotated'});
    await plugin.admit(podAttributes('CREATE', p));
    expect((p.spec as JsonObject).nodeSelector).toEqual({env: 'prod'});
    const q = pod({}, {namespace: 'plain'});
    await plugin.admit(podAttributes('CREATE', q));
    expect((q.spec as JsonObject).nodeSelector).toEqual({zone: 'a'});
  });

  it('refuses a conflicting pod and answers a bad annotation with a 500', async () => {
    await expect(plugin.admit(podAttributes('CREATE', pod({nodeSelector: {env: 'dev'}}, {namespace: 'annotated'})))).rejects.toThrow(
      'pods "web" is forbidden: pod node label selector conflicts with its namespace node label selector',
    );
    const error = await plugin.admit(podAttributes('CREATE', pod({}, {namespace: 'broken'}))).catch((e: unknown) => e);
    expect((error as ApiError).status.code).toBe(500);
    const missing = await plugin.admit(podAttributes('CREATE', pod({}, {namespace: 'gone'}))).catch((e: unknown) => e);
    expect((missing as ApiError).status.code).toBe(404);
  });
});
