import {describe, expect, it} from '@jest/globals';
import {compileMatchConditions, parseAuthorizationConfig} from '../../src/daemons/apiserver/authorization/authorization-config.js';

const webhook = (extra: Record<string, unknown> = {}) => ({
  timeout: '3s', subjectAccessReviewVersion: 'v1', failurePolicy: 'NoOpinion',
  connectionInfo: {type: 'KubeConfigFile', kubeConfigFile: '/etc/authz.orchconfig'}, ...extra,
});
const config = (authorizers: unknown[]) => JSON.stringify({apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthorizationConfiguration', authorizers});

describe('AuthorizationConfiguration', () => {
  it('reads the authorizers in order with the webhook settings and defaults', () => {
    const parsed = parseAuthorizationConfig(
      `apiVersion: apiserver.config.orch.io/v1beta1
kind: AuthorizationConfiguration
authorizers:
- type: Node
  name: node
- type: Webhook
  name: policy
  webhook:
    timeout: 2s
    subjectAccessReviewVersion: v1beta1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    authorizedTTL: 1m
    cacheUnauthorizedRequests: false
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: /etc/policy.orchconfig}
    matchConditions:
    - expression: has(request.resourceAttributes)
- type: RBAC
  name: rbac
`,
      'authz.yaml',
    );
    expect(parsed.map((a) => `${a.type}/${a.name}`)).toEqual(['Node/node', 'Webhook/policy', 'RBAC/rbac']);
    expect(parsed[1]!.webhook).toEqual({
      timeoutMs: 2000, subjectAccessReviewVersion: 'v1beta1', failurePolicy: 'Deny', authorizedTtlMs: 60_000, unauthorizedTtlMs: 30_000,
      cacheAuthorizedRequests: true, cacheUnauthorizedRequests: false, kubeConfigFile: '/etc/policy.orchconfig', matchConditions: ['has(request.resourceAttributes)'],
    });
  });

  it.each([
    ['no authorizers', config([]), 'authorizers: Required value: at least one authorizer is required'],
    ['ABAC', config([{type: 'ABAC', name: 'a'}]), 'authorizers[0].type: Unsupported value: "ABAC"'],
    ['RBAC twice', config([{type: 'RBAC', name: 'a'}, {type: 'RBAC', name: 'b'}]), 'authorizers[1].type: Duplicate value: "RBAC"'],
    ['a name twice', config([{type: 'Webhook', name: 'w', webhook: webhook()}, {type: 'Webhook', name: 'w', webhook: webhook()}]), 'authorizers[1].name: Duplicate value: "w"'],
    ['no name', config([{type: 'RBAC'}]), 'authorizers[0].name: Required value'],
    ['a webhook without its settings', config([{type: 'Webhook', name: 'w'}]), 'authorizers[0].webhook: Required value: required when type=Webhook'],
    ['settings on RBAC', config([{type: 'RBAC', name: 'r', webhook: webhook()}]), 'authorizers[0].webhook: Invalid value: non-null webhook config is only allowed when type=Webhook'],
    ['a 31 s timeout', config([{type: 'Webhook', name: 'w', webhook: webhook({timeout: '31s'})}]), 'authorizers[0].webhook.timeout: Invalid value: "31s": must be > 0s and <= 30s'],
    ['a bad failure policy', config([{type: 'Webhook', name: 'w', webhook: webhook({failurePolicy: 'Allow'})}]), 'authorizers[0].webhook.failurePolicy: Unsupported value: "Allow"'],
    ['a relative kubeconfig', config([{type: 'Webhook', name: 'w', webhook: webhook({connectionInfo: {type: 'KubeConfigFile', kubeConfigFile: 'x.yaml'}})}]), 'must be an absolute path'],
    ['conditions without their version', config([{type: 'Webhook', name: 'w', webhook: webhook({matchConditions: [{expression: 'true'}]})}]), 'authorizers[0].webhook.matchConditionSubjectAccessReviewVersion: Required value'],
    ['a condition that does not compile', config([{type: 'Webhook', name: 'w', webhook: webhook({matchConditionSubjectAccessReviewVersion: 'v1', matchConditions: [{expression: 'request.user ==='}]})}]), 'authorizers[0].webhook.matchConditions[0].expression: Invalid value: "request.user ===": compilation failed'],
    ['a condition that is not a bool', config([{type: 'Webhook', name: 'w', webhook: webhook({matchConditionSubjectAccessReviewVersion: 'v1', matchConditions: [{expression: '1 + 1'}]})}]), 'must evaluate to bool'],
    ['another kind', JSON.stringify({apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthenticationConfiguration', authorizers: [{type: 'RBAC', name: 'r'}]}), 'kind: Unsupported value: "AuthenticationConfiguration"'],
  ])('refuses %s, naming the field', (_case, text, message) => {
    expect(() => parseAuthorizationConfig(text, '/etc/authz.yaml')).toThrow(message);
    expect(() => parseAuthorizationConfig(text, '/etc/authz.yaml')).toThrow(/^--authorization-config \/etc\/authz\.yaml: /);
  });
});

describe('match conditions', () => {
  const matches = compileMatchConditions(["has(request.resourceAttributes)", "request.resourceAttributes.namespace == 'team'", "!('system:masters' in request.groups)"])!;
  it('hold only when every condition holds', () => {
    expect(matches({user: 'jane', groups: ['dev'], resourceAttributes: {namespace: 'team', verb: 'get'}})).toBe(true);
    expect(matches({user: 'jane', groups: ['dev'], resourceAttributes: {namespace: 'other'}})).toBe(false);
    expect(matches({user: 'jane', groups: ['dev'], nonResourceAttributes: {path: '/metrics'}})).toBe(false);
    expect(matches({user: 'root', groups: ['system:masters'], resourceAttributes: {namespace: 'team'}})).toBe(false);
  });
  it('are absent when there are none', () => {
    expect(compileMatchConditions([])).toBeUndefined();
  });
});
