import {describe, expect, it} from '@jest/globals';
import {alwaysAllowedPath, delegatedAuthorizer, delegatedForbiddenMessage, tokenReviewUser} from '../../src/daemons/shared/serving/delegated-auth.js';

const anonymous = {name: 'system:anonymous', groups: ['system:unauthenticated']};

describe('delegated authorization without a server to ask', () => {
  const authorizer = delegatedAuthorizer({alwaysAllowPaths: ['/healthz', '/debug/*'], alwaysAllowGroups: ['system:masters'], authorizedTtlMs: 0, unauthorizedTtlMs: 0});

  it.each([
    ['an always-allowed path', {user: anonymous, verb: 'get', resourceRequest: false, path: '/healthz'}, 'Allow'],
    ['a path under an allowed prefix', {user: anonymous, verb: 'get', resourceRequest: false, path: '/debug/pprof'}, 'Allow'],
    ['a member of an always-allowed group', {user: {name: 'root', groups: ['system:masters']}, verb: 'get', resourceRequest: false, path: '/metrics'}, 'Allow'],
    ['anything else', {user: anonymous, verb: 'get', resourceRequest: false, path: '/metrics'}, 'NoOpinion'],
  ])('%s', async (_case, attributes, decision) => {
    expect((await authorizer.authorize(attributes)).decision).toBe(decision);
  });

  it('matches paths as upstream: exact, or a prefix ending in *', () => {
    expect(alwaysAllowedPath(['/healthz'], '/healthz/ping')).toBe(false);
    expect(alwaysAllowedPath(['/healthz*'], '/healthz/ping')).toBe(true);
  });

  it('words refusals as upstream', () => {
    expect(delegatedForbiddenMessage({user: anonymous, verb: 'get', resourceRequest: false, path: '/metrics'}, '')).toBe('forbidden: User "system:anonymous" cannot get path "/metrics"');
    expect(delegatedForbiddenMessage({user: anonymous, verb: 'get', resourceRequest: true, resource: 'nodes', subresource: 'stats', apiGroup: ''}, 'no')).toBe(
      'forbidden: User "system:anonymous" cannot get resource "nodes/stats" in API group "" at the cluster scope: no',
    );
  });
});

describe('tokenReviewUser', () => {
  it('reads the user of an authenticated review, nothing otherwise', () => {
    expect(tokenReviewUser({status: {authenticated: true, user: {username: 'jane', uid: '1', groups: ['dev'], extra: {a: ['b']}}}})).toEqual({name: 'jane', uid: '1', groups: ['dev'], extra: {a: ['b']}});
    expect(tokenReviewUser({status: {authenticated: false, user: {username: 'jane'}}})).toBeUndefined();
    expect(tokenReviewUser({status: {authenticated: true}})).toBeUndefined();
    expect(tokenReviewUser('garbage')).toBeUndefined();
  });
});
