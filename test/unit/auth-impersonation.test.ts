import {describe, expect, it} from '@jest/globals';
import type {AuthorizationAttributes, Authorizer} from '../../src/daemons/shared/authorization/attributes.js';
import {createAuthorizer} from '../../src/daemons/apiserver/authorization/authorizer.js';
import {impersonate, isImpersonationHeader} from '../../src/daemons/apiserver/authentication/impersonation.js';
import {RbacPolicyIndex} from '../../src/daemons/apiserver/authorization/rbac.js';
import type {UserInfo} from '../../src/daemons/shared/authentication/user.js';

const admin: UserInfo = {name: 'orch-admin', groups: ['system:masters', 'system:authenticated']};
const bob: UserInfo = {name: 'bob', groups: ['system:authenticated']};

/** Records what was asked and allows everything. */
function recordingAuthorizer(): Authorizer & {asked: AuthorizationAttributes[]} {
  const asked: AuthorizationAttributes[] = [];
  return {asked, authorize: (a) => (asked.push(a), {decision: 'Allow', reason: ''})};
}

const request = (headersDistinct: Record<string, string[]>) => ({headers: {}, headersDistinct});

describe('impersonation', () => {
  it('passes a request without impersonation headers through unchanged', async () => {
    expect(await impersonate(request({accept: ['*/*']}), bob, recordingAuthorizer())).toEqual({impersonated: false, user: bob});
  });

  it.each([
    ['a user', {'impersonate-user': ['jane']}, {name: 'jane', groups: ['system:authenticated']}],
    ['a user with repeated groups', {'impersonate-user': ['jane'], 'impersonate-group': ['dev', 'ops']}, {name: 'jane', groups: ['dev', 'ops', 'system:authenticated']}],
    ['groups already holding system:authenticated', {'impersonate-user': ['jane'], 'impersonate-group': ['system:authenticated']}, {name: 'jane', groups: ['system:authenticated']}],
    ['the anonymous user', {'impersonate-user': ['system:anonymous']}, {name: 'system:anonymous', groups: ['system:unauthenticated']}],
    ['a service account (its groups implied)', {'impersonate-user': ['system:serviceaccount:team:builder']}, {name: 'system:serviceaccount:team:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated']}],
    ['a service account with explicit groups', {'impersonate-user': ['system:serviceaccount:team:builder'], 'impersonate-group': ['g']}, {name: 'system:serviceaccount:team:builder', groups: ['g', 'system:authenticated']}],
    ['uid and extras (keys lowercased and percent-decoded)', {'impersonate-user': ['jane'], 'impersonate-uid': ['1234'], 'impersonate-extra-scopes': ['a', 'b'], 'impersonate-extra-example.com%2fteam': ['x']}, {name: 'jane', uid: '1234', groups: ['system:authenticated'], extra: {'example.com/team': ['x'], scopes: ['a', 'b']}}],
  ])('impersonates %s', async (_case, headers, user) => {
    expect(await impersonate(request(headers), admin, recordingAuthorizer())).toEqual({impersonated: true, user});
  });

  it('asks the authorizer for each element with verb impersonate', async () => {
    const authorizer = recordingAuthorizer();
    await impersonate(request({'impersonate-user': ['system:serviceaccount:team:builder'], 'impersonate-group': ['dev'], 'impersonate-extra-scopes': ['view'], 'impersonate-uid': ['42']}), bob, authorizer);
    expect(authorizer.asked.map(({user, verb, apiGroup, resource, subresource, namespace, name}) => ({user: user.name, verb, apiGroup, resource, subresource, namespace, name}))).toEqual([
      {user: 'bob', verb: 'impersonate', apiGroup: '', resource: 'serviceaccounts', subresource: undefined, namespace: 'team', name: 'builder'},
      {user: 'bob', verb: 'impersonate', apiGroup: '', resource: 'groups', subresource: undefined, namespace: undefined, name: 'dev'},
      {user: 'bob', verb: 'impersonate', apiGroup: 'authentication.orch.io', resource: 'userextras', subresource: 'scopes', namespace: undefined, name: 'view'},
      {user: 'bob', verb: 'impersonate', apiGroup: 'authentication.orch.io', resource: 'uids', subresource: undefined, namespace: undefined, name: '42'},
    ]);
  });

  it.each([
    ['a group', {'impersonate-group': ['dev']}, 'requested [{Group  dev    }] without impersonating a user'],
    ['a uid and an extra', {'impersonate-extra-scopes': ['a'], 'impersonate-uid': ['1']}, 'requested [{UserExtra  a  authentication.orch.io/v1  scopes} {UID  1  authentication.orch.io/v1  }] without impersonating a user'],
  ])('answers 400 for %s without a user', async (_case, headers, message) => {
    const outcome = await impersonate(request(headers), admin, recordingAuthorizer());
    expect(outcome).toEqual({status: expect.objectContaining({code: 400, reason: 'BadRequest', message})});
  });

  it('answers 403 when the requester may not impersonate', async () => {
    const rbacOnly = createAuthorizer(['RBAC'], {rbac: new RbacPolicyIndex()});
    const outcome = await impersonate(request({'impersonate-user': ['jane']}), bob, rbacOnly);
    expect(outcome).toEqual({
      status: expect.objectContaining({
        code: 403,
        reason: 'Forbidden',
        message: 'users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
      }),
    });
    // system:masters may impersonate anyone, whatever the modes.
    expect(await impersonate(request({'impersonate-user': ['jane']}), admin, rbacOnly)).toMatchObject({impersonated: true});
  });

  it('falls back to the headers value arrays when distinct values are not given', async () => {
    const outcome = await impersonate({headers: {'impersonate-user': 'jane', 'impersonate-group': ['a', 'b']}}, admin, recordingAuthorizer());
    expect(outcome).toMatchObject({user: {groups: ['a', 'b', 'system:authenticated']}});
  });

  it.each([
    ['impersonate-user', true],
    ['impersonate-group', true],
    ['impersonate-uid', true],
    ['impersonate-extra-scopes', true],
    ['authorization', false],
  ])('%s is an impersonation header: %s', (name, expected) => {
    expect(isImpersonationHeader(name)).toBe(expected);
  });
});
