import {describe, expect, it} from '@jest/globals';
import {breakdownRule, compactRules, compactString, escalationMessage, ruleCovers, uncoveredRules} from '../../src/daemons/apiserver/authorization/rbac-escalation.js';
import type {PolicyRule} from '../../src/daemons/apiserver/authorization/rbac-types.js';

const jane = {name: 'jane', groups: ['dev', 'system:authenticated']};

describe('breakdownRule', () => {
  it('splits a rule into group × resource × verb (× name) and URL × verb', () => {
    expect(breakdownRule({apiGroups: ['', 'apps'], resources: ['pods'], verbs: ['get', 'list']})).toEqual([
      {apiGroups: [''], resources: ['pods'], verbs: ['get']},
      {apiGroups: [''], resources: ['pods'], verbs: ['list']},
      {apiGroups: ['apps'], resources: ['pods'], verbs: ['get']},
      {apiGroups: ['apps'], resources: ['pods'], verbs: ['list']},
    ]);
    expect(breakdownRule({apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['a', 'b']})).toHaveLength(2);
    expect(breakdownRule({nonResourceURLs: ['/healthz', '/metrics'], verbs: ['get']})).toEqual([
      {nonResourceURLs: ['/healthz'], verbs: ['get']},
      {nonResourceURLs: ['/metrics'], verbs: ['get']},
    ]);
  });
});

describe('ruleCovers', () => {
  const sub = (r: PolicyRule) => r;
  it.each<[string, PolicyRule, PolicyRule, boolean]>([
    ['exact', {apiGroups: [''], resources: ['pods'], verbs: ['get']}, sub({apiGroups: [''], resources: ['pods'], verbs: ['get']}), true],
    ['wildcards', {apiGroups: ['*'], resources: ['*'], verbs: ['*']}, sub({apiGroups: ['apps'], resources: ['deployments'], verbs: ['delete']}), true],
    ['other verb', {apiGroups: [''], resources: ['pods'], verbs: ['get']}, sub({apiGroups: [''], resources: ['pods'], verbs: ['delete']}), false],
    ['*/subresource covers any resource\'s subresource', {apiGroups: ['apps'], resources: ['*/scale'], verbs: ['update']}, sub({apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['update']}), true],
    ['a resource does not cover its subresource', {apiGroups: [''], resources: ['pods'], verbs: ['get']}, sub({apiGroups: [''], resources: ['pods/log'], verbs: ['get']}), false],
    ['unnamed covers named', {apiGroups: [''], resources: ['secrets'], verbs: ['get']}, sub({apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['x']}), true],
    ['named does not cover unnamed', {apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['x']}, sub({apiGroups: [''], resources: ['secrets'], verbs: ['get']}), false],
    ['named covers the same name', {apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['x', 'y']}, sub({apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['y']}), true],
    ['URL prefix', {nonResourceURLs: ['/healthz/*'], verbs: ['get']}, sub({nonResourceURLs: ['/healthz/etcd'], verbs: ['get']}), true],
    ['resource rules do not cover URLs', {apiGroups: ['*'], resources: ['*'], verbs: ['*']}, sub({nonResourceURLs: ['/metrics'], verbs: ['get']}), false],
  ])('%s', (_case, owner, subrule, covered) => {
    expect(ruleCovers(owner, subrule)).toBe(covered);
  });
});

describe('escalationMessage', () => {
  const owner: PolicyRule[] = [{apiGroups: [''], resources: ['pods', 'configmaps'], verbs: ['get', 'list', 'watch', 'create']}];

  it('is undefined when the owner holds every rule', () => {
    expect(escalationMessage(jane, owner, [{apiGroups: [''], resources: ['pods'], verbs: ['get', 'create']}])).toBeUndefined();
    expect(uncoveredRules(owner, [])).toEqual([]);
  });

  it('lists what is missing, compacted per resource and sorted, in upstream\'s words', () => {
    const wanted: PolicyRule[] = [
      {apiGroups: [''], resources: ['pods', 'secrets'], verbs: ['get', 'delete']},
      {nonResourceURLs: ['/metrics'], verbs: ['get']},
    ];
    expect(escalationMessage(jane, owner, wanted, ['clusterrole.rbac.orch.io "gone" not found'])).toBe(
      'user "jane" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n' +
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}\n' +
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}' +
        '; resolution errors: [clusterrole.rbac.orch.io "gone" not found]',
    );
  });

  it('compacts only simple rules and prints every part of a rule', () => {
    expect(compactRules([
      {apiGroups: ['apps'], resources: ['deployments'], verbs: ['get']},
      {apiGroups: ['apps'], resources: ['deployments'], verbs: ['list']},
      {apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['a']},
      {apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['b']},
    ])).toEqual([
      {apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list']},
      {apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['a']},
      {apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['b']},
    ]);
    expect(compactString({apiGroups: [''], resources: ['secrets'], resourceNames: ['a'], verbs: ['get']})).toBe('{APIGroups:[""], Resources:["secrets"], ResourceNames:["a"], Verbs:["get"]}');
  });
});
