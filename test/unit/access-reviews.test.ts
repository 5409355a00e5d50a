/**
 * The create-only reviews (src/daemons/apiserver/rest/reviews.ts) against a recording authorizer:
 * who is asked about what, and upstream's 422s for malformed reviews.
 */
import {describe, expect, it} from '@jest/globals';
import {builtinResources, type ResourceInfo} from '../../src/api/resources.js';
import {ApiError} from '../../src/api/status.js';
import {review} from '../../src/daemons/apiserver/rest/reviews.js';
import type {AuthorizationAttributes, RequestContext} from '../../src/daemons/apiserver/rest/types.js';

const info = (plural: string) => builtinResources().find((r) => r.plural === plural) as ResourceInfo;

function context(allow: (a: AuthorizationAttributes) => boolean) {
  const asked: AuthorizationAttributes[] = [];
  const ctx: RequestContext = {
    user: {name: 'admin', groups: ['system:masters', 'system:authenticated'], uid: 'u-1'},
    authorize: (a) => {
      asked.push(a);
      return {allowed: allow(a), reason: allow(a) ? 'ok by test' : undefined};
    },
  };
  return {ctx, asked};
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('access reviews', () => {
  it('SubjectAccessReview asks the authorizer about the user under review', async () => {
    const {ctx, asked} = context((a) => a.user.name === 'jane' && a.verb === 'get');
    const out = await review({spec: {user: 'jane', groups: ['devs'], resourceAttributes: {namespace: 'ns', verb: 'get', group: 'apps', resource: 'deployments', name: 'web'}}},
      {info: info('subjectaccessreviews'), namespace: '', ctx});
    expect(out.status).toEqual({allowed: true, reason: 'ok by test'});
    expect(asked).toEqual([expect.objectContaining({user: {name: 'jane', groups: ['devs'], uid: undefined, extra: undefined}, verb: 'get', resourceRequest: true, apiGroup: 'apps', resource: 'deployments', namespace: 'ns', name: 'web'})]);
  });

  it('SelfSubjectAccessReview asks about the requester, non-resource paths included', async () => {
    const {ctx, asked} = context(() => false);
    const out = await review({spec: {nonResourceAttributes: {path: '/metrics', verb: 'get'}}}, {info: info('selfsubjectaccessreviews'), namespace: '', ctx});
    expect(out).toMatchObject({kind: 'SelfSubjectAccessReview', status: {allowed: false}});
    expect(asked[0]).toMatchObject({user: {name: 'admin'}, resourceRequest: false, path: '/metrics', verb: 'get'});
  });

  it.each([
    ['subjectaccessreviews', '', {spec: {user: 'jane'}}, 'spec.resourceAttributes: Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified'],
    ['subjectaccessreviews', '', {spec: {resourceAttributes: {verb: 'get'}}}, 'spec.user: Invalid value: "": at least one of user or group must be specified'],
    ['localsubjectaccessreviews', 'ns', {spec: {user: 'jane', resourceAttributes: {namespace: 'other', verb: 'get'}}}, 'spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace'],
  ])('%s refuses a malformed review with a 422', async (plural, namespace, body, message) => {
    const {ctx, asked} = context(() => true);
    const error = await refusal(review(body, {info: info(plural), namespace, ctx}));
    expect(error.status.code).toBe(422);
    expect(error.status.message).toContain(message);
    expect(asked).toEqual([]);
  });

  it('SelfSubjectReview answers the requester; TokenReview without token authenticators says so (501)', async () => {
    const {ctx} = context(() => true);
    expect((await review({}, {info: info('selfsubjectreviews'), namespace: '', ctx})).status).toEqual({userInfo: {username: 'admin', uid: 'u-1', groups: ['system:masters', 'system:authenticated']}});
    const error = await refusal(review({spec: {token: 't'}}, {info: info('tokenreviews'), namespace: '', ctx}));
    expect(error.status).toMatchObject({code: 501, message: expect.stringContaining('TokenReview is not available')});
  });

  it('SelfSubjectRulesReview without a rules resolver says its answer is incomplete', async () => {
    const {ctx} = context(() => true);
    expect((await review({spec: {namespace: 'ns'}}, {info: info('selfsubjectrulesreviews'), namespace: '', ctx})).status).toMatchObject({incomplete: true, resourceRules: []});
  });
});
