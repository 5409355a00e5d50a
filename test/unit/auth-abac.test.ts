import {describe, expect, it} from '@jest/globals';
import {AbacAuthorizer, AbacPolicyError, abacPolicyMatches, parseAbacPolicyFile, type AbacPolicy} from '../../src/daemons/apiserver/authorization/abac.js';
import type {AuthorizationAttributes} from '../../src/daemons/shared/authorization/attributes.js';
import type {UserInfo} from '../../src/daemons/shared/authentication/user.js';
import {selectNames} from '../../src/api/names.js';

const alice: UserInfo = {name: 'alice', groups: ['dev', 'system:authenticated']};
const bob: UserInfo = {name: 'bob', groups: ['ops', 'system:authenticated']};
const anonymous: UserInfo = {name: 'system:anonymous', groups: ['system:unauthenticated']};

const res = (user: UserInfo, verb: string, resource: string, namespace = 'default', apiGroup = ''): AuthorizationAttributes => ({user, verb, resourceRequest: true, resource, namespace, apiGroup});
const path = (user: UserInfo, verb: string, p: string): AuthorizationAttributes => ({user, verb, resourceRequest: false, path: p});
const v1 = (spec: Record<string, unknown>) => JSON.stringify({apiVersion: 'abac.authorization.orch.io/v1beta1', kind: 'Policy', spec});

function policies(...lines: string[]): AbacPolicy[] {
  return parseAbacPolicyFile(lines.join('\n'), 'policy.jsonl').policies;
}

describe('ABAC policy file parsing', () => {
  it('converts v1beta1 lines, with * user or group meaning every authenticated subject', () => {
    expect(policies(v1({user: 'alice', namespace: '*', resource: 'pods', apiGroup: '*', readonly: true}), v1({user: '*', nonResourcePath: '/version'}))).toEqual([
      {user: 'alice', group: '', readonly: true, apiGroup: '*', resource: 'pods', namespace: '*', nonResourcePath: ''},
      {user: '', group: 'system:authenticated', readonly: false, apiGroup: '', resource: '', namespace: '', nonResourcePath: '/version'},
    ]);
  });

  it('converts unversioned (v0) lines as upstream: empty fields are wildcards, every API group matches', () => {
    const parsed = parseAbacPolicyFile('{"user":"alice"}\n{"readonly":true,"resource":"pods"}\n', 'p');
    expect(parsed.policies).toEqual([
      {user: 'alice', group: '', readonly: false, apiGroup: '*', resource: '*', namespace: '*', nonResourcePath: '*'},
      {user: '', group: 'system:authenticated', readonly: true, apiGroup: '*', resource: 'pods', namespace: '*', nonResourcePath: ''},
    ]);
    expect(parsed.unversionedLines).toBe(2);
    expect(parsed.warnings[0]).toContain('contained unversioned rules');
  });

  it('skips blank lines and # comments, and warns about unknown fields with their line', () => {
    const parsed = parseAbacPolicyFile(`# admins\n\n   \n${v1({user: 'alice', resorce: 'pods'})}\n`, 'p.jsonl');
    expect(parsed.policies).toHaveLength(1);
    expect(parsed.warnings).toEqual(['policy file p.jsonl, line 4: unknown field "spec.resorce" ignored']);
  });

  it.each([
    ['not JSON', '{"user": alice}', /line 2: \{"user": alice\}: /],
    ['an array', '[1,2]', /line 2: \[1,2\]: a policy line must be a JSON object/],
    ['another apiVersion', '{"apiVersion":"v1","kind":"Policy","spec":{}}', /line 2: .*apiVersion "v1" is not "abac\.authorization\.orch\.io\/v1beta1"/],
    ['another kind', '{"apiVersion":"abac.authorization.orch.io/v1beta1","kind":"Pod","spec":{}}', /kind "Pod" is not "Policy"/],
    ['a wrong type', v1({readonly: 'yes'}), /line 2: .*readonly of type bool/],
  ])('stops at a malformed line (%s) naming the file and line number', (_case, line, message) => {
    expect(() => parseAbacPolicyFile(`{"user":"admin"}\n${line}\n`, '/etc/abac.jsonl')).toThrow(AbacPolicyError);
    expect(() => parseAbacPolicyFile(`{"user":"admin"}\n${line}\n`, '/etc/abac.jsonl')).toThrow(/^error reading policy file \/etc\/abac\.jsonl, line 2/);
    expect(() => parseAbacPolicyFile(`{"user":"admin"}\n${line}\n`, '/etc/abac.jsonl')).toThrow(message);
  });

  it('reads apiVersion under the active name set', () => {
    selectNames('kubernetes');
    try {
      const line = JSON.stringify({apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec: {user: 'alice'}});
      expect(policies(line)).toHaveLength(1);
      expect(() => policies(v1({user: 'alice'}))).toThrow(/is not "abac\.authorization\.kubernetes\.io\/v1beta1"/);
    } finally {
      selectNames('orch');
    }
  });
});

describe('ABAC matching', () => {
  const [readPodsEverywhere] = policies(v1({user: 'alice', namespace: '*', resource: 'pods', apiGroup: '*', readonly: true}));
  const [devsInTeam] = policies(v1({group: 'dev', namespace: 'team', resource: '*', apiGroup: '*'}));
  const [appsOnly] = policies(v1({user: 'bob', namespace: '*', resource: 'deployments', apiGroup: 'apps'}));
  const [healthPaths] = policies(v1({user: '*', nonResourcePath: '/healthz*', readonly: true}));
  const [everything] = policies('{"user":"bob"}');

  it.each([
    ['readonly allows get', readPodsEverywhere, res(alice, 'get', 'pods', 'x'), true],
    ['readonly allows watch', readPodsEverywhere, res(alice, 'watch', 'pods'), true],
    ['readonly refuses create', readPodsEverywhere, res(alice, 'create', 'pods'), false],
    ['other resource', readPodsEverywhere, res(alice, 'get', 'secrets'), false],
    ['other user', readPodsEverywhere, res(bob, 'get', 'pods'), false],
    ['a resource policy never matches a path', readPodsEverywhere, path(alice, 'get', '/healthz'), false],
    ['group in its namespace', devsInTeam, res(alice, 'delete', 'secrets', 'team'), true],
    ['group in another namespace', devsInTeam, res(alice, 'delete', 'secrets', 'prod'), false],
    ['group the user is not in', devsInTeam, res(bob, 'get', 'secrets', 'team'), false],
    ['apiGroup must match', appsOnly, res(bob, 'create', 'deployments', 'x', 'apps'), true],
    ['apiGroup mismatch', appsOnly, res(bob, 'create', 'deployments', 'x', 'extensions'), false],
    ['path prefix with *', healthPaths, path(anonymous, 'get', '/healthz/ping'), false],
    ['* user is every authenticated subject', healthPaths, path(alice, 'get', '/healthz/ping'), true],
    ['non-resource readonly refuses post', healthPaths, path(alice, 'post', '/healthz'), false],
    ['a path policy never matches a resource', healthPaths, res(alice, 'get', 'healthz'), false],
    ['v0 user line allows everything of the user', everything, res(bob, 'delete', 'nodes', ''), true],
    ['v0 user line allows paths too', everything, path(bob, 'get', '/metrics'), true],
  ])('%s', (_case, policy, attributes, allowed) => {
    expect(abacPolicyMatches(policy, attributes)).toBe(allowed);
  });

  it('allows when any policy matches, else no opinion with upstream\'s reason', () => {
    const authorizer = new AbacAuthorizer([readPodsEverywhere, appsOnly]);
    expect(authorizer.authorize(res(bob, 'create', 'deployments', 'x', 'apps'))).toEqual({decision: 'Allow', reason: ''});
    expect(authorizer.authorize(res(bob, 'get', 'pods'))).toEqual({decision: 'NoOpinion', reason: 'No policy matched.'});
  });
});
