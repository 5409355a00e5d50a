import {describe, expect, it} from '@jest/globals';
import {evaluatePolicy, parsePolicy, PolicyError, type AuditAttributes} from '../../src/daemons/apiserver/audit/policy.js';
import {legacyLine, microTime, truncateEvent, type AuditEvent} from '../../src/daemons/apiserver/audit/event.js';
import {names} from '../../src/api/names.js';

const header = () => `apiVersion: ${names().groups.audit}/v1\nkind: Policy\n`;

const policy = () =>
  parsePolicy(`${header()}omitStages: [RequestReceived]
rules:
  - level: None
    users: ["system:kube-proxy"]
    verbs: [watch]
  - level: None
    nonResourceURLs: ["/healthz*", /version]
  - level: RequestResponse
    resources:
      - group: ""
        resources: ["pods/log", "*/status"]
  - level: Metadata
    resources:
      - group: ""
        resources: [secrets, configmaps]
        resourceNames: [special]
  - level: Request
    userGroups: [devs]
    namespaces: [dev]
    omitStages: [ResponseStarted]
    omitManagedFields: true
  - level: Request
    resources:
      - group: apps
        resources: ["deployments/*"]
  - level: Metadata
    verbs: [get]
    nonResourceURLs: ["*"]
`);

const user = (name: string, groups: string[] = []) => ({name, groups});
const res = (over: Partial<AuditAttributes>): AuditAttributes => ({user: user('alice'), verb: 'get', isResourceRequest: true, apiGroup: '', resource: 'pods', namespace: 'default', path: '/api/v1/namespaces/default/pods', ...over});

describe('audit policy: first matching rule wins', () => {
  it.each<[string, AuditAttributes, string]>([
    ['a user and verb rule', res({user: user('system:kube-proxy'), verb: 'watch'}), 'None'],
    ['the same user with another verb falls through', res({user: user('system:kube-proxy'), verb: 'list'}), 'None'],
    ['a non-resource URL with a * suffix', {user: user('bob'), verb: 'get', isResourceRequest: false, path: '/healthz/etcd'}, 'None'],
    ['an exact non-resource URL', {user: user('bob'), verb: 'get', isResourceRequest: false, path: '/version'}, 'None'],
    ['an exact URL does not match a longer path', {user: user('bob'), verb: 'get', isResourceRequest: false, path: '/version/x'}, 'Metadata'],
    ['a non-resource rule does not match resources', res({verb: 'list'}), 'None'],
    ['a subresource as resource/subresource', res({resource: 'pods', subresource: 'log', name: 'p'}), 'RequestResponse'],
    ['*/status matches any status subresource', res({resource: 'nodes', subresource: 'status', namespace: ''}), 'RequestResponse'],
    ['the parent resource is not a subresource rule', res({resource: 'pods', name: 'p', verb: 'update'}), 'None'],
    ['resourceNames restrict a rule', res({resource: 'secrets', name: 'special'}), 'Metadata'],
    ['another name falls through to no rule', res({resource: 'secrets', name: 'other'}), 'None'],
    ['a group and namespace rule', res({user: user('carol', ['devs']), namespace: 'dev', verb: 'create', resource: 'secrets', name: 'other'}), 'Request'],
    ['the namespace must match', res({user: user('carol', ['devs']), namespace: 'prod', verb: 'create'}), 'None'],
    ['resource/* matches its subresources', res({apiGroup: 'apps', resource: 'deployments', subresource: 'scale', verb: 'update'}), 'Request'],
    ['resource/* matches the resource itself', res({apiGroup: 'apps', resource: 'deployments', verb: 'create'}), 'Request'],
    ['the group must match', res({apiGroup: 'batch', resource: 'deployments', verb: 'create'}), 'None'],
  ])('%s', (_case, attrs, level) => {
    expect(evaluatePolicy(policy(), attrs).level).toBe(level);
  });

  it('joins the policy and rule omitStages and takes the rule omitManagedFields', () => {
    const out = evaluatePolicy(policy(), res({user: user('carol', ['devs']), namespace: 'dev', verb: 'create'}));
    expect(out.omitStages.sort()).toEqual(['RequestReceived', 'ResponseStarted']);
    expect(out.omitManagedFields).toBe(true);
  });
});

describe('audit policy: a bad policy names the rule and the problem', () => {
  it.each([
    ['an unknown level', 'rules:\n  - level: Everything\n', /rules\[0\]\.level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"/],
    ['a missing level', 'rules:\n  - level: None\n  - verbs: [get]\n', /rules\[1\]\.level: Required value/],
    ['an unknown stage', 'rules:\n  - level: None\n    omitStages: [Done]\n', /rules\[0\]\.omitStages\[0\]: Unsupported value: "Done"/],
    ['a wildcard inside a URL', 'rules:\n  - level: None\n    nonResourceURLs: ["/a*b"]\n', /rules\[0\]\.nonResourceURLs\[0\].*'\*' must be the final character/],
    ['a URL without a slash', 'rules:\n  - level: None\n    nonResourceURLs: [healthz]\n', /must begin with a '\/'/],
    ['resources with URLs', 'rules:\n  - level: None\n    namespaces: [a]\n    nonResourceURLs: [/x]\n', /rules\[0\]\.nonResourceURLs.*both regular resources and non-resource URLs/],
    ['resourceNames without resources', 'rules:\n  - level: None\n  - level: None\n    resources: [{group: "", resourceNames: [x]}]\n', /rules\[1\]\.resources\[0\]\.resourceNames.*requires at least one resource/],
    ['no rules', 'rules: []\n', /rules: Required value/],
    ['an unknown field', 'rules:\n  - level: None\n    user: [x]\n', /rules\[0\]: unknown field "user"/],
  ])('%s', (_case, body, message) => {
    expect(() => parsePolicy(`${header()}${body}`, 'policy.yaml')).toThrow(message);
    expect(() => parsePolicy(`${header()}${body}`, 'policy.yaml')).toThrow(PolicyError);
  });

  it('refuses another group or kind', () => {
    expect(() => parsePolicy('apiVersion: audit.example/v1\nkind: Policy\nrules: [{level: None}]\n')).toThrow(/apiVersion: Unsupported value: "audit.example\/v1"/);
  });
});

describe('audit events', () => {
  const event: AuditEvent = {
    kind: 'Event', apiVersion: 'audit.orch.io/v1', level: 'Metadata', auditID: 'id-1', stage: 'ResponseComplete', requestURI: '/api/v1/namespaces/ns/pods', verb: 'list',
    user: {username: 'alice', groups: ['devs', 'system:authenticated']}, sourceIPs: ['127.0.0.1'], userAgent: 'kubectl/v1.32',
    objectRef: {resource: 'pods', namespace: 'ns', apiVersion: 'v1'}, responseStatus: {metadata: {}, code: 200},
    requestReceivedTimestamp: '2026-01-02T03:04:05.123456Z', stageTimestamp: '2026-01-02T03:04:05.223456Z', requestObject: {data: 'x'.repeat(500)},
  };

  it('writes upstream legacy lines', () => {
    expect(legacyLine(event)).toBe('2026-01-02T03:04:05.123456Z AUDIT: id="id-1" stage="ResponseComplete" ip="127.0.0.1" method="list" user="alice" groups="\\"devs\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="kubectl/v1.32" namespace="ns" uri="/api/v1/namespaces/ns/pods" response="200"');
    expect(legacyLine({...event, responseStatus: undefined, impersonatedUser: {username: 'bob', groups: ['g']}})).toMatch(/as="bob" asgroups="\\"g\\"".*response="<deferred>"$/);
  });

  it('formats MicroTime with six digits', () => {
    expect(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 123), 456.7)).toBe('2026-01-02T03:04:05.123456Z');
  });

  it('truncates bodies first, then drops', () => {
    const small = truncateEvent(event, 700, 'audit.orch.io/truncated');
    expect(small?.requestObject).toBeUndefined();
    expect(small?.annotations).toEqual({'audit.orch.io/truncated': 'true'});
    expect(truncateEvent(event, 5000, 'x')).toBe(event);
    expect(truncateEvent(event, 100, 'x')).toBeUndefined();
  });
});
