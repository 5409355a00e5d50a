/**
 * The pure decisions of the admission webhook plugins (src/daemons/apiserver/admission/plugins/webhook/),
 * table-driven against upstream's behavior: which rules select a request, which webhooks apply
 * (selectors, equivalent versions, match conditions), how an answer is checked, how a denial
 * reads, which kubeconfig user a host gets, and the plugin configuration's errors.
 */
import {describe, expect, it} from '@jest/globals';
import {builtinResources, type ResourceInfo} from '../../src/api/resources.js';
import {names} from '../../src/api/names.js';
import {ApiError, fieldErrorText} from '../../src/api/status.js';
import {parseOrchConfig} from '../../src/client/orchconfig.js';
import type {AdmissionAttributes} from '../../src/daemons/apiserver/admission/interfaces.js';
import {webhookAccessors} from '../../src/daemons/apiserver/admission/plugins/webhook/accessors.js';
import {parseWebhookAdmissionConfiguration, userForTarget} from '../../src/daemons/apiserver/admission/plugins/webhook/authentication.js';
import {equivalentResources, WebhookDispatcher} from '../../src/daemons/apiserver/admission/plugins/webhook/dispatcher.js';
import {rejection} from '../../src/daemons/apiserver/admission/plugins/webhook/errors.js';
import {compileMatchConditions} from '../../src/daemons/apiserver/admission/plugins/webhook/match-conditions.js';
import {chooseReviewVersion, reviewApiVersion, verifyAdmissionResponse} from '../../src/daemons/apiserver/admission/plugins/webhook/review.js';
import {WebhookSource} from '../../src/daemons/apiserver/admission/plugins/webhook/source.js';
import {validateWebhookConfiguration} from '../../src/daemons/apiserver/admission/plugins/webhook/validation.js';
import {isExemptConfigurationKind, ruleMatches, type RuleAttributes, type WebhookRule} from '../../src/daemons/apiserver/admission/plugins/webhook/rules.js';
import type {JsonObject} from '../../src/patch/types.js';

const find = (group: string, version: string, plural: string) => builtinResources().find((r) => r.group === group && r.version === version && r.plural === plural) as ResourceInfo;

describe('rules', () => {
  const rule = (resources: string[], more: Partial<WebhookRule> = {}): WebhookRule => ({operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources, scope: '*', ...more});
  const pod: RuleAttributes = {operation: 'CREATE', group: '', version: 'v1', resource: 'pods', subresource: '', namespace: 'default'};
  const podStatus: RuleAttributes = {...pod, operation: 'UPDATE', subresource: 'status'};
  const namespace: RuleAttributes = {operation: 'CREATE', group: '', version: 'v1', resource: 'namespaces', subresource: '', namespace: 'team-a'};
  const node: RuleAttributes = {operation: 'CREATE', group: '', version: 'v1', resource: 'nodes', subresource: '', namespace: ''};
  const update = {operations: ['UPDATE']};
  it.each<[string, WebhookRule, RuleAttributes, boolean]>([
    ['the resource itself', rule(['pods']), pod, true],
    ['another resource', rule(['services']), pod, false],
    ['another operation', rule(['pods'], update), pod, false],
    ['"*" operation', rule(['pods'], {operations: ['*']}), pod, true],
    ['CONNECT only when named', rule(['pods/exec'], {operations: ['CREATE', 'UPDATE', 'DELETE']}), {...pod, operation: 'CONNECT', subresource: 'exec'}, false],
    ['another group', rule(['pods'], {apiGroups: ['apps']}), pod, false],
    ['another version', rule(['pods'], {apiVersions: ['v2']}), pod, false],
    ['"pods" leaves out pods/status', rule(['pods'], update), podStatus, false],
    ['"*" leaves out subresources', rule(['*'], update), podStatus, false],
    ['"*/*" takes subresources', rule(['*/*'], update), podStatus, true],
    ['"pods/*" takes pods/status', rule(['pods/*'], update), podStatus, true],
    ['"pods/status"', rule(['pods/status'], update), podStatus, true],
    ['"*/status"', rule(['*/status'], update), podStatus, true],
    // Upstream's matcher: a "*" subresource also matches the empty one.
    ['"pods/*" takes the main resource too', rule(['pods/*']), pod, true],
    ['Namespaced takes a pod', rule(['*'], {scope: 'Namespaced'}), pod, true],
    ['Namespaced leaves out a namespace', rule(['*'], {scope: 'Namespaced'}), namespace, false],
    ['Namespaced leaves out a node', rule(['*'], {scope: 'Namespaced'}), node, false],
    ['Cluster takes a namespace', rule(['*'], {scope: 'Cluster'}), namespace, true],
    ['Cluster takes a node', rule(['*'], {scope: 'Cluster'}), node, true],
    ['Cluster leaves out a pod', rule(['*'], {scope: 'Cluster'}), pod, false],
  ])('%s', (_name, r, attributes, expected) => {
    expect(ruleMatches(r, attributes)).toBe(expected);
  });

  it('never sends writes of webhook configurations or validating policies', () => {
    const group = names().groups.admissionregistration;
    expect(isExemptConfigurationKind(group, 'ValidatingWebhookConfiguration')).toBe(true);
    expect(isExemptConfigurationKind(group, 'MutatingWebhookConfiguration')).toBe(true);
    expect(isExemptConfigurationKind(group, 'ValidatingAdmissionPolicyBinding')).toBe(true);
    expect(isExemptConfigurationKind('', 'Pod')).toBe(false);
  });
});

describe('which webhooks apply', () => {
  const pods = find('', 'v1', 'pods');
  const hpaV1 = find('autoscaling', 'v1', 'horizontalpodautoscalers');
  const namespaces: Record<string, Record<string, string>> = {default: {env: 'prod'}, dev: {env: 'dev'}};
  const dispatcher = new WebhookDispatcher({
    caller: {call: () => Promise.reject(new Error('not called in these tests'))},
    namespaceLabels: async (name) => namespaces[name],
    resources: () => builtinResources(),
    convert: (object, _from, to) => ({...object, apiVersion: `${to.group}/${to.version}`}),
    log: () => {},
  });
  const hook = (extra: JsonObject) =>
    webhookAccessors({metadata: {name: 'config'}, webhooks: [{name: 'hook.example.com', sideEffects: 'None', admissionReviewVersions: ['v1'], clientConfig: {url: 'https://127.0.0.1:1/'}, ...extra}]}, true)[0]!;
  const podRule = {rules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods']}]};
  const attributes = (namespace: string, labels: Record<string, string> = {}): AdmissionAttributes => ({
    operation: 'CREATE', resource: pods, subresource: '', namespace, name: 'p', user: {name: 'alice', groups: []}, dryRun: false,
    object: {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'p', namespace, labels}},
  });

  it.each<[string, JsonObject, AdmissionAttributes, boolean]>([
    ['a matching rule', podRule, attributes('default'), true],
    ['namespace selector matching', {...podRule, namespaceSelector: {matchLabels: {env: 'prod'}}}, attributes('default'), true],
    ['namespace selector not matching', {...podRule, namespaceSelector: {matchLabels: {env: 'prod'}}}, attributes('dev'), false],
    ['namespace selector with an expression', {...podRule, namespaceSelector: {matchExpressions: [{key: 'env', operator: 'NotIn', values: ['prod']}]}}, attributes('dev'), true],
    ['object selector matching', {...podRule, objectSelector: {matchLabels: {app: 'web'}}}, attributes('default', {app: 'web'}), true],
    ['object selector not matching', {...podRule, objectSelector: {matchLabels: {app: 'web'}}}, attributes('default', {app: 'db'}), false],
    ['match condition true', {...podRule, matchConditions: [{name: 'ns', expression: "request.namespace == 'default'"}]}, attributes('default'), true],
    ['match condition false', {...podRule, matchConditions: [{name: 'ns', expression: "object.metadata.name == 'other'"}]}, attributes('default'), false],
    ['match condition reading the user', {...podRule, matchConditions: [{name: 'u', expression: "request.userInfo.username != 'alice'"}]}, attributes('default'), false],
  ])('%s', async (_name, extra, a, expected) => {
    expect((await dispatcher.shouldCall(hook(extra), a)) !== undefined).toBe(expected);
  });

  it('a namespace being created is matched on its own labels', async () => {
    const namespaceInfo = find('', 'v1', 'namespaces');
    const selected = hook({rules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces']}], namespaceSelector: {matchLabels: {team: 'a'}}});
    const creating = (labels: Record<string, string>): AdmissionAttributes => ({
      operation: 'CREATE', resource: namespaceInfo, subresource: '', namespace: '', name: 'new-ns', user: {name: 'alice', groups: []}, dryRun: false,
      object: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'new-ns', labels}},
    });
    expect(await dispatcher.shouldCall(selected, creating({team: 'a'}))).toBeDefined();
    expect(await dispatcher.shouldCall(selected, creating({team: 'b'}))).toBeUndefined();
  });

  it('a namespace selector on a namespace that does not exist answers 404 (only when a rule matches)', async () => {
    const selected = hook({...podRule, namespaceSelector: {matchLabels: {env: 'prod'}}});
    await expect(dispatcher.shouldCall(selected, attributes('gone'))).rejects.toMatchObject({status: {code: 404, message: 'namespaces "gone" not found'}});
    const other = hook({rules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['services']}], namespaceSelector: {matchLabels: {env: 'prod'}}});
    expect(await dispatcher.shouldCall(other, attributes('gone'))).toBeUndefined();
  });

  it('a match condition that fails refuses under Fail and skips under Ignore', async () => {
    const failing = {...podRule, matchConditions: [{name: 'bad', expression: 'object.metadata.labels.missing == "x"'}]};
    await expect(dispatcher.shouldCall(hook(failing), attributes('default'))).rejects.toMatchObject({
      status: {code: 403, message: expect.stringContaining(`pods "p" is forbidden: expression 'object.metadata.labels.missing == "x"' resulted in error`)},
    });
    expect(await dispatcher.shouldCall(hook({...failing, failurePolicy: 'Ignore'}), attributes('default'))).toBeUndefined();
  });

  it('matchPolicy Equivalent calls a webhook of autoscaling/v2 for an autoscaling/v1 request, with the v2 resource and kind; Exact does not', async () => {
    const v2Rule = {rules: [{operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v2'], resources: ['horizontalpodautoscalers']}]};
    const a: AdmissionAttributes = {
      operation: 'CREATE', resource: hpaV1, subresource: '', namespace: 'default', name: 'h', user: {name: 'alice', groups: []}, dryRun: false,
      object: {apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: {name: 'h'}},
    };
    const invocation = await dispatcher.shouldCall(hook(v2Rule), a);
    expect(invocation?.resource).toEqual({group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers'});
    expect(invocation?.kind).toEqual({group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler'});
    expect(await dispatcher.shouldCall(hook({...v2Rule, matchPolicy: 'Exact'}), a)).toBeUndefined();
    expect(equivalentResources(pods, builtinResources())).toEqual([]);
  });
});

describe('match conditions', () => {
  const request = {operation: 'CREATE', namespace: 'default'};
  it.each<[string, string[], 'Fail' | 'Ignore', {matches: boolean; error?: unknown}]>([
    ['all true', ["request.operation == 'CREATE'", 'object != null'], 'Fail', {matches: true}],
    ['one false', ["request.operation == 'CREATE'", "request.namespace == 'kube'"], 'Fail', {matches: false}],
    ['false wins over an error', ['object.nope == 1', 'false'], 'Fail', {matches: false}],
    ['an error under Fail', ['object.nope == 1'], 'Fail', {matches: false, error: expect.stringContaining("expression 'object.nope == 1' resulted in error")}],
    ['an error under Ignore', ['object.nope == 1'], 'Ignore', {matches: false}],
    ['a compile error under Fail', ['object.'], 'Fail', {matches: false, error: expect.stringContaining('compilation error: ')}],
  ])('%s', (_name, expressions, policy, expected) => {
    const matcher = compileMatchConditions(expressions.map((expression, i) => ({name: `c${i}`, expression})), policy);
    expect(matcher({object: {metadata: {name: 'x'}}, request})).toMatchObject(expected);
  });
});

describe('the answer of a webhook', () => {
  const uid = '0f1e';
  const v1 = (response: JsonObject, extra: JsonObject = {}) => ({apiVersion: reviewApiVersion('v1'), kind: 'AdmissionReview', response: {uid, ...response}, ...extra});
  const patch = Buffer.from('[{"op":"add","path":"/metadata/labels/x","value":"y"}]').toString('base64');
  it.each<[string, boolean, 'v1' | 'v1beta1', unknown, string]>([
    ['no response', true, 'v1', {apiVersion: reviewApiVersion('v1'), kind: 'AdmissionReview'}, 'webhook response was absent'],
    ['not an object', true, 'v1', 'nonsense', 'webhook response was absent'],
    ['another uid', true, 'v1', v1({allowed: true, uid: 'other'}), `expected response.uid="${uid}", got "other"`],
    ['another kind', true, 'v1', v1({allowed: true}, {kind: 'ConversionReview'}), `expected webhook response of ${reviewApiVersion('v1')}, Kind=AdmissionReview, got ${reviewApiVersion('v1')}, Kind=ConversionReview`],
    ['a patch without its type', true, 'v1', v1({allowed: true, patch}), 'webhook returned response.patch but not response.patchType'],
    ['a type without a patch', true, 'v1', v1({allowed: true, patchType: 'JSONPatch'}), 'webhook returned response.patchType but not response.patch'],
    ['a validating webhook patching', false, 'v1', v1({allowed: true, patch, patchType: 'JSONPatch'}), 'validating webhook may not return response.patch'],
    ['a patch that is not base64', true, 'v1', v1({allowed: true, patch: 'not base64!', patchType: 'JSONPatch'}), 'illegal base64 data at input byte 3'],
  ])('%s', (_name, mutating, version, review, message) => {
    expect(() => verifyAdmissionResponse(uid, mutating, version, review)).toThrow(message);
  });

  it('takes v1beta1 answers as they come (no uid or kind check; a patch is a JSON patch)', () => {
    const result = verifyAdmissionResponse(uid, true, 'v1beta1', {response: {allowed: true, patch, warnings: ['careful'], auditAnnotations: {k: 'v'}}});
    expect(result).toMatchObject({allowed: true, patchType: 'JSONPatch', warnings: ['careful'], auditAnnotations: {k: 'v'}});
    expect(result.patch?.toString()).toContain('"op":"add"');
  });

  it('chooses the first review version the webhook accepts', () => {
    expect(chooseReviewVersion(['v1beta1', 'v1'])).toBe('v1beta1');
    expect(chooseReviewVersion(['v2', 'v1'])).toBe('v1');
    expect(chooseReviewVersion(['v2'])).toBeUndefined();
  });

  it.each<[string, JsonObject | undefined, number, string]>([
    ['a message and a code', {code: 403, message: 'no privileged pods'}, 403, 'admission webhook "deny.example.com" denied the request: no privileged pods'],
    ['only a reason', {code: 422, reason: 'Invalid'}, 422, 'admission webhook "deny.example.com" denied the request: Invalid'],
    ['nothing (a Failure without code is a 500)', undefined, 500, 'admission webhook "deny.example.com" denied the request without explanation'],
  ])('a denial with %s', (_name, result, code, message) => {
    const error = rejection('deny.example.com', result);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toMatchObject({code, message, status: 'Failure'});
  });
});

describe('webhook credentials from the kubeconfig', () => {
  const config = parseOrchConfig(
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: ctx',
      'contexts: [{name: ctx, context: {user: fallback}}]',
      'users:',
      '- {name: "exact.example.com:8443", user: {token: a}}',
      '- {name: "*.example.com:8443", user: {token: b}}',
      '- {name: "webhook.team.svc", user: {token: c}}',
      '- {name: "*.svc", user: {token: d}}',
      '- {name: fallback, user: {token: e}}',
    ].join('\n'),
    '/etc/webhooks/kubeconfig',
  );
  it.each<[string, string | undefined]>([
    ['exact.example.com:8443', 'exact.example.com:8443'],
    ['other.example.com:8443', '*.example.com:8443'],
    ['webhook.team.svc:443', 'webhook.team.svc'],
    ['other.team.svc:443', '*.svc'],
    // The port is part of the name unless it is 443.
    ['other.team.svc:8443', 'fallback'],
    ['elsewhere.org', 'fallback'],
  ])('%s uses %s', (target, user) => {
    expect(userForTarget(config, target)).toBe(user);
  });
  it('the user "*" comes before the current context', () => {
    const star = parseOrchConfig('users: [{name: "*", user: {token: s}}, {name: ctx-user, user: {token: t}}]\ncurrent-context: c\ncontexts: [{name: c, context: {user: ctx-user}}]', '/k');
    expect(userForTarget(star, 'anything:443')).toBe('*');
  });
});

describe('the plugin configuration', () => {
  const group = `apiserver.config.${names().domain}`;
  it('accepts an absolute kubeConfigFile (v1 and v1alpha1) and no configuration', () => {
    expect(parseWebhookAdmissionConfiguration({apiVersion: `${group}/v1`, kind: 'WebhookAdmissionConfiguration', kubeConfigFile: '/etc/k'})).toEqual({kubeConfigFile: '/etc/k'});
    expect(parseWebhookAdmissionConfiguration({apiVersion: `${group}/v1alpha1`, kind: 'WebhookAdmission', kubeConfigFile: '/etc/k'})).toEqual({kubeConfigFile: '/etc/k'});
    expect(parseWebhookAdmissionConfiguration(undefined)).toEqual({});
  });
  it.each<[string, JsonObject, string]>([
    ['a relative path', {kubeConfigFile: 'relative/kubeconfig'}, 'kubeConfigFile: Invalid value: "relative/kubeconfig": must be an absolute file path'],
    ['no path', {apiVersion: `${group}/v1`, kind: 'WebhookAdmissionConfiguration'}, 'kubeConfigFile: Invalid value: "": must be an absolute file path'],
    ['another kind', {apiVersion: `${group}/v1`, kind: 'Other', kubeConfigFile: '/k'}, 'no kind "Other" is registered for version'],
  ])('refuses %s', (_name, configuration, message) => {
    expect(() => parseWebhookAdmissionConfiguration(configuration)).toThrow(message);
  });
});

describe('the API validation of webhook configurations', () => {
  const valid = {
    name: 'check.example.com', sideEffects: 'None', admissionReviewVersions: ['v1'], clientConfig: {url: 'https://hooks.example.com/check'},
    rules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods']}],
  };
  const validate = (hooks: JsonObject[], mutating = true) => validateWebhookConfiguration({metadata: {name: 'c'}, webhooks: hooks}, mutating).map(fieldErrorText);
  it('accepts a valid configuration', () => {
    expect(validate([valid, {...valid, name: 'other.example.com', matchConditions: [{name: 'ns', expression: "request.namespace != 'kube'"}]}])).toEqual([]);
  });
  it.each<[string, Record<string, unknown>, string]>([
    ['a duplicate name', {}, 'webhooks[1].name: Duplicate value: "check.example.com"'],
    ['a name of two segments', {name: 'example.com'}, 'webhooks[1].name: Invalid value: "example.com": should be a domain with at least three segments separated by dots'],
    ['no side effects', {name: 'b.example.com', sideEffects: undefined}, 'webhooks[1].sideEffects: Required value: must specify one of None, NoneOnDryRun'],
    ['side effects Some', {name: 'b.example.com', sideEffects: 'Some'}, 'webhooks[1].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'],
    ['a timeout of 31 s', {name: 'b.example.com', timeoutSeconds: 31}, 'webhooks[1].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds'],
    ['an http URL', {name: 'b.example.com', clientConfig: {url: 'http://hooks.example.com/'}}, `webhooks[1].clientConfig.url: Invalid value: "http://hooks.example.com/": 'https' is the only allowed URL scheme`],
    ['both url and service', {name: 'b.example.com', clientConfig: {url: 'https://a.example.com/', service: {name: 's', namespace: 'n'}}}, 'webhooks[1].clientConfig: Required value: exactly one of url or service is required'],
    ['an unknown review version only', {name: 'b.example.com', admissionReviewVersions: ['v2']}, 'webhooks[1].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1'],
    ['an unknown operation', {name: 'b.example.com', rules: [{operations: ['PATCH'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods']}]}, 'webhooks[1].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"'],
    ['a reinvocation policy of another name', {name: 'b.example.com', reinvocationPolicy: 'Always'}, 'webhooks[1].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"'],
    ['a match condition that does not compile', {name: 'b.example.com', matchConditions: [{name: 'broken', expression: 'object.metadata.name =='}]}, 'webhooks[1].matchConditions[0].expression: Invalid value: "object.metadata.name ==": compilation failed: '],
    ['two match conditions of one name', {name: 'b.example.com', matchConditions: [{name: 'x', expression: 'true'}, {name: 'x', expression: 'true'}]}, 'webhooks[1].matchConditions[1].name: Duplicate value: "x"'],
  ])('refuses %s', (_name, change, message) => {
    const errors = validate([valid, {...valid, ...change} as JsonObject]);
    expect(errors.join('\n')).toContain(message);
  });
});

describe('the configurations in effect', () => {
  const configuration = (name: string, hooks: string[]): JsonObject => ({
    metadata: {name}, webhooks: hooks.map((h) => ({name: h, sideEffects: 'None', admissionReviewVersions: ['v1'], clientConfig: {url: 'https://127.0.0.1:1/'}})),
  });
  it('orders webhooks by configuration name, then their order; a deleted configuration goes', () => {
    const source = new WebhookSource(false);
    source.apply(configuration('b-config', ['b1.example.com', 'b2.example.com']));
    source.apply(configuration('a-config', ['a1.example.com']));
    expect(source.webhooks().map((h) => h.uid)).toEqual(['a-config/a1.example.com/0', 'b-config/b1.example.com/0', 'b-config/b2.example.com/1']);
    source.remove(configuration('b-config', []));
    expect(source.webhooks().map((h) => h.name)).toEqual(['a1.example.com']);
  });
});
