import {describe, expect, it} from '@jest/globals';
import {WebhookAuthorizer, subjectAccessReview} from '../../src/daemons/shared/authorization/webhook-authorizer.js';
import {createAuthorizer} from '../../src/daemons/apiserver/authorization/authorizer.js';
import type {AuthorizationAttributes, Authorizer} from '../../src/daemons/shared/authorization/attributes.js';

const jane = {name: 'jane', uid: '42', groups: ['dev', 'system:authenticated'], extra: {scopes: ['a']}};
const getPod: AuthorizationAttributes = {user: jane, verb: 'get', resourceRequest: true, apiGroup: '', apiVersion: 'v1', resource: 'pods', namespace: 'team', name: 'web'};
const listDeployments: AuthorizationAttributes = {user: jane, verb: 'list', resourceRequest: true, apiGroup: 'apps', apiVersion: 'v1', resource: 'deployments', namespace: 'team'};
const getMetrics: AuthorizationAttributes = {user: jane, verb: 'get', resourceRequest: false, path: '/metrics'};

const answer = (status: Record<string, unknown>, version = 'v1') => ({apiVersion: `authorization.orch.io/${version}`, kind: 'SubjectAccessReview', status});

/** A webhook double that records the reviews it is sent and answers from a script. */
function scripted(respond: (review: Record<string, unknown>) => unknown) {
  const sent: Record<string, unknown>[] = [];
  return {sent, post: async (review: Record<string, unknown>) => {
    sent.push(review);
    return respond(review);
  }};
}

function webhook(post: (r: Record<string, unknown>) => Promise<unknown>, clock = {now: 0}, version: 'v1' | 'v1beta1' = 'v1') {
  const sleeps: number[] = [];
  const authorizer = new WebhookAuthorizer({
    version, authorizedTtlMs: 300_000, unauthorizedTtlMs: 30_000, post,
    now: () => clock.now,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  return {authorizer, sleeps};
}

describe('SubjectAccessReview sent to the webhook', () => {
  it('carries resource attributes and the user, with `groups` in v1 and `group` in v1beta1', () => {
    expect(subjectAccessReview(getPod, 'v1')).toEqual({
      apiVersion: 'authorization.orch.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        resourceAttributes: {namespace: 'team', verb: 'get', group: '', version: 'v1', resource: 'pods', subresource: '', name: 'web'},
        user: 'jane', groups: ['dev', 'system:authenticated'], extra: {scopes: ['a']}, uid: '42',
      },
    });
    const beta = subjectAccessReview(getMetrics, 'v1beta1');
    expect(beta.apiVersion).toBe('authorization.orch.io/v1beta1');
    expect(beta.spec).toEqual({nonResourceAttributes: {path: '/metrics', verb: 'get'}, user: 'jane', group: ['dev', 'system:authenticated'], extra: {scopes: ['a']}, uid: '42'});
  });
});

describe('WebhookAuthorizer decisions', () => {
  it.each([
    ['allowed', {allowed: true}, {decision: 'Allow', reason: ''}],
    ['denied', {allowed: false, denied: true, reason: 'no pods for you'}, {decision: 'Deny', reason: 'no pods for you'}],
    ['no opinion', {allowed: false, reason: 'not mine'}, {decision: 'NoOpinion', reason: 'not mine'}],
  ])('%s', async (_case, status, expected) => {
    const {authorizer} = webhook(scripted(() => answer(status)).post);
    expect(await authorizer.authorize(getPod)).toEqual(expected);
  });

  it('turns an evaluation error into an error (never an Allow)', async () => {
    const {authorizer} = webhook(scripted(() => answer({allowed: false, evaluationError: 'policy engine down'})).post);
    const result = await authorizer.authorize(getPod);
    expect(result.decision).toBe('NoOpinion');
    expect(result.error?.message).toBe('policy engine down');
  });

  it.each([
    ['garbage', 'not json at all'],
    ['no status', {apiVersion: 'authorization.orch.io/v1', kind: 'SubjectAccessReview'}],
    ['allowed not a boolean', answer({allowed: 'yes'})],
    ['another kind', {apiVersion: 'authorization.orch.io/v1', kind: 'TokenReview', status: {allowed: true}}],
    ['another version', answer({allowed: true}, 'v1beta1')],
  ])('a malformed answer (%s) is retried with back-off, then no opinion with the error', async (_case, body) => {
    const hook = scripted(() => body);
    const {authorizer, sleeps} = webhook(hook.post);
    const result = await authorizer.authorize(getPod);
    expect(result.decision).toBe('NoOpinion');
    expect(result.error).toBeInstanceOf(Error);
    expect(hook.sent).toHaveLength(5);
    expect(sleeps).toEqual([500, 750, 1125, 1687.5]);
  });

  it('recovers when the webhook comes back within the retries', async () => {
    let calls = 0;
    const {authorizer} = webhook(async () => {
      if (++calls < 3) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
      return answer({allowed: true});
    });
    expect((await authorizer.authorize(getPod)).decision).toBe('Allow');
    expect(calls).toBe(3);
  });
});

describe('WebhookAuthorizer caches', () => {
  it('keeps allowed answers for the authorized TTL and the others for the unauthorized TTL', async () => {
    const clock = {now: 1_000};
    const hook = scripted((review) => answer({allowed: (review.spec as {resourceAttributes?: {resource: string}}).resourceAttributes?.resource === 'pods'}));
    const {authorizer} = webhook(hook.post, clock);
    await authorizer.authorize(getPod);
    await authorizer.authorize(listDeployments);
    expect(hook.sent).toHaveLength(2);
    clock.now += 29_999;
    await authorizer.authorize(getPod);
    await authorizer.authorize(listDeployments);
    expect(hook.sent).toHaveLength(2);
    clock.now += 2; // past the unauthorized TTL only
    await authorizer.authorize(getPod);
    await authorizer.authorize(listDeployments);
    expect(hook.sent).toHaveLength(3);
    clock.now += 300_000; // past the authorized TTL too
    await authorizer.authorize(getPod);
    expect(hook.sent).toHaveLength(4);
  });

  it('does not cache errors', async () => {
    let up = false;
    const {authorizer} = webhook(async () => {
      if (!up) throw new Error('down');
      return answer({allowed: true});
    });
    expect((await authorizer.authorize(getPod)).error?.message).toBe('down');
    up = true;
    expect((await authorizer.authorize(getPod)).decision).toBe('Allow');
  });

  it('keys the cache by the whole review: another user is asked again', async () => {
    const hook = scripted(() => answer({allowed: true}));
    const {authorizer} = webhook(hook.post);
    await authorizer.authorize(getPod);
    await authorizer.authorize({...getPod, user: {name: 'joe', groups: []}});
    expect(hook.sent).toHaveLength(2);
  });
});

describe('the chain with a webhook', () => {
  const failing: Authorizer = {authorize: () => ({decision: 'NoOpinion', reason: '', error: new Error('webhook down')})};
  const allowAll: Authorizer = {authorize: () => ({decision: 'Allow', reason: ''})};
  const denyAll: Authorizer = {authorize: () => ({decision: 'Deny', reason: 'nope'})};

  it('carries a failing webhook\'s error when nobody else decides (the server answers 500)', async () => {
    const chain = createAuthorizer(['Webhook', 'AlwaysDeny'], {webhook: failing});
    const result = await chain.authorize(getPod);
    expect(result).toMatchObject({decision: 'NoOpinion', reason: 'Everything is forbidden.'});
    expect(result.error?.message).toBe('webhook down');
  });

  it('lets a later authorizer allow past a failing webhook', async () => {
    const chain = createAuthorizer(['Webhook', 'ABAC'], {webhook: failing, abac: allowAll});
    expect(await chain.authorize(getPod)).toEqual({decision: 'Allow', reason: ''});
  });

  it('stops at the first Deny', async () => {
    const chain = createAuthorizer(['Webhook', 'ABAC'], {webhook: denyAll, abac: allowAll});
    expect(await chain.authorize(getPod)).toEqual({decision: 'Deny', reason: 'nope'});
  });

  it('refuses to build ABAC or Webhook without their authorizer', () => {
    expect(() => createAuthorizer(['ABAC'])).toThrow(/--authorization-policy-file/);
    expect(() => createAuthorizer(['Webhook'])).toThrow(/--authorization-webhook-config-file/);
  });
});
