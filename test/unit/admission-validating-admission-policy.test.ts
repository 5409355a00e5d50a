/**
 * ValidatingAdmissionPolicy's decisions, table-driven on an in-memory object store: matching,
 * params, validations and messages, the three validation actions, failure policies, the API's
 * validation of policies and bindings, and the type-checking warnings of the status.
 */
import {describe, expect, it} from '@jest/globals';
import {names} from '../../src/api/names.js';
import {builtinResource} from '../../src/api/resources.js';
import {ApiError} from '../../src/api/status.js';
import type {AdmissionAttributes, AdmissionObjects} from '../../src/daemons/apiserver/admission/interfaces.js';
import {ValidatingAdmissionPolicyPlugin} from '../../src/daemons/apiserver/admission/plugins/validating-admission-policy.js';
import {compilePolicy, validateBinding} from '../../src/daemons/apiserver/admission/plugins/policy/compile.js';
import {typeCheckPolicy} from '../../src/api/cel/policy-typecheck.js';
import type {JsonObject} from '../../src/patch/types.js';

const AR = () => names().groups.admissionregistration;

/** Objects by `<group>/<resource>/<namespace>/<name>`. */
function memoryObjects(initial: Array<[string, string, string, JsonObject]>): AdmissionObjects {
  const store = new Map<string, JsonObject>();
  const key = (g: string, r: string, ns: string, n: string) => `${g}/${r}/${ns}/${n}`;
  for (const [g, r, ns, o] of initial) store.set(key(g, r, ns, (o.metadata as JsonObject).name as string), o);
  return {
    get: async (g, r, ns, n) => store.get(key(g, r, ns, n)),
    list: async (g, r, ns = '') => [...store.entries()].filter(([k]) => k.startsWith(`${g}/${r}/${ns ? `${ns}/` : ''}`)).map(([, v]) => v),
    create: async (g, r, ns, o) => (store.set(key(g, r, ns, (o.metadata as JsonObject).name as string), o), o),
    update: async (g, r, ns, o) => (store.set(key(g, r, ns, (o.metadata as JsonObject).name as string), o), o),
  };
}

const policy = (spec: JsonObject, name = 'max-replicas'): JsonObject => ({
  apiVersion: `${AR()}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: {name, generation: 1},
  spec: {failurePolicy: 'Fail', matchConstraints: {resourceRules: [{apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments']}]}, ...spec},
});
const binding = (spec: JsonObject, name = 'max-replicas-binding'): JsonObject => ({
  apiVersion: `${AR()}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: {name}, spec: {policyName: 'max-replicas', validationActions: ['Deny'], ...spec},
});
const deployment = (replicas: number, labels: Record<string, string> = {}): JsonObject => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: {name: 'web', namespace: 'team-a', labels}, spec: {replicas},
});
const configMap = (name: string, data: Record<string, string>, labels: Record<string, string> = {}): JsonObject => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, namespace: 'team-a', labels}, data,
});

interface Outcome {
  error?: ApiError;
  warnings: string[];
  annotations: Record<string, string>;
}

async function admit(objects: Array<[string, string, string, JsonObject]>, object: JsonObject, operation: 'CREATE' | 'UPDATE' = 'CREATE', authorize?: AdmissionAttributes['authorize']): Promise<Outcome> {
  const store = memoryObjects([['', 'namespaces', '', {metadata: {name: 'team-a', labels: {env: 'prod'}}}], ...objects]);
  const plugin = new ValidatingAdmissionPolicyPlugin({objects: store});
  const warnings: string[] = [];
  const annotations: Record<string, string> = {};
  const attributes: AdmissionAttributes = {
    operation, resource: builtinResource('apps', 'deployments')!, subresource: '', namespace: 'team-a', name: 'web',
    object, oldObject: operation === 'UPDATE' ? deployment(1) : undefined, user: {name: 'alice', groups: ['dev']}, dryRun: false,
    addWarning: (w) => warnings.push(w), addAnnotation: (k, v) => (annotations[k] = v), authorize,
  };
  try {
    await plugin.validate(attributes);
    return {warnings, annotations};
  } catch (error) {
    return {error: error as ApiError, warnings, annotations};
  } finally {
    plugin.close();
  }
}

const P = (o: JsonObject): [string, string, string, JsonObject] => [AR(), 'validatingadmissionpolicies', '', o];
const B = (o: JsonObject): [string, string, string, JsonObject] => [AR(), 'validatingadmissionpolicybindings', '', o];
const CM = (o: JsonObject): [string, string, string, JsonObject] => ['', 'configmaps', 'team-a', o];

const withParam = policy({
  paramKind: {apiVersion: 'v1', kind: 'ConfigMap'},
  validations: [{expression: 'object.spec.replicas <= int(params.data.maxReplicas)', messageExpression: "'replicas must be at most ' + params.data.maxReplicas"}],
});

describe('ValidatingAdmissionPolicy decisions', () => {
  const cases: Array<[string, Array<[string, string, string, JsonObject]>, JsonObject, (o: Outcome) => void]> = [
    ['a param caps replicas: over the cap is denied with the messageExpression', [P(withParam), B(binding({paramRef: {name: 'limits', parameterNotFoundAction: 'Deny'}})), CM(configMap('limits', {maxReplicas: '3'}))], deployment(5), (o) => {
      expect(o.error?.code).toBe(422);
      expect(o.error?.reason).toBe('Invalid');
      expect(o.error?.message).toBe(`deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: replicas must be at most 3`);
    }],
    ['a param caps replicas: within the cap is admitted', [P(withParam), B(binding({paramRef: {name: 'limits', parameterNotFoundAction: 'Deny'}})), CM(configMap('limits', {maxReplicas: '3'}))], deployment(2), (o) => expect(o.error).toBeUndefined()],
    ['a missing param with Deny refuses', [P(withParam), B(binding({paramRef: {name: 'absent', parameterNotFoundAction: 'Deny'}}))], deployment(1), (o) => {
      expect(o.error?.message).toContain("with binding 'max-replicas-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction");
    }],
    ['a missing param with Allow skips the binding', [P(withParam), B(binding({paramRef: {name: 'absent', parameterNotFoundAction: 'Allow'}}))], deployment(9), (o) => expect(o.error).toBeUndefined()],
    ['params by selector: each selected param must pass', [P(withParam), B(binding({paramRef: {selector: {matchLabels: {tier: 'web'}}, parameterNotFoundAction: 'Deny'}})), CM(configMap('a', {maxReplicas: '10'}, {tier: 'web'})), CM(configMap('b', {maxReplicas: '4'}, {tier: 'web'})), CM(configMap('c', {maxReplicas: '1'}))], deployment(5), (o) => {
      expect(o.error?.message).toContain('replicas must be at most 4');
    }],
    ['message, then the failed expression, when there is no messageExpression', [P(policy({validations: [{expression: 'object.spec.replicas < 2'}, {expression: 'object.spec.replicas < 3', message: 'too many', reason: 'Forbidden'}]})), B(binding({}))], deployment(5), (o) => {
      expect(o.error?.message).toMatch(/denied request: failed expression: object.spec.replicas < 2$/);
      expect(o.error?.code).toBe(422);
    }],
    ['the reason of the first denial sets the code', [P(policy({validations: [{expression: 'object.spec.replicas < 3', message: 'too many', reason: 'Forbidden'}]})), B(binding({}))], deployment(5), (o) => {
      expect(o.error?.code).toBe(403);
      expect(o.error?.reason).toBe('Forbidden');
    }],
    ['Warn adds a warning and admits', [P(policy({validations: [{expression: 'object.spec.replicas < 3', message: 'too many'}]})), B(binding({validationActions: ['Warn']}))], deployment(5), (o) => {
      expect(o.error).toBeUndefined();
      expect(o.warnings).toEqual(["Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding': too many"]);
    }],
    ['Audit adds the validation_failure annotation and admits', [P(policy({validations: [{expression: 'object.spec.replicas < 3', message: 'too many'}]})), B(binding({validationActions: ['Audit']}))], deployment(5), (o) => {
      expect(o.error).toBeUndefined();
      expect(JSON.parse(o.annotations[`validation.policy.admission.${names().domain}/validation_failure`]!)).toEqual([
        {message: 'too many', policy: 'max-replicas', binding: 'max-replicas-binding', expressionIndex: 0, validationActions: ['Audit']},
      ]);
    }],
    ['auditAnnotations are published under the policy name', [P(policy({validations: [{expression: 'true'}], auditAnnotations: [{key: 'replicas', valueExpression: "'asked for ' + string(object.spec.replicas)"}]})), B(binding({}))], deployment(5), (o) => {
      expect(o.annotations['max-replicas/replicas']).toBe('asked for 5');
    }],
    ['a runtime error under Fail denies with the expression and cause', [P(policy({validations: [{expression: 'object.spec.missing > 1'}]})), B(binding({}))], deployment(5), (o) => {
      expect(o.error?.message).toContain("denied request: expression 'object.spec.missing > 1' resulted in error: no such key: missing");
    }],
    ['a runtime error under Ignore admits', [P(policy({failurePolicy: 'Ignore', validations: [{expression: 'object.spec.missing > 1'}]})), B(binding({}))], deployment(5), (o) => expect(o.error).toBeUndefined()],
    ['a false match condition skips the policy', [P(policy({matchConditions: [{name: 'only-labelled', expression: "has(object.metadata.labels) && 'checked' in object.metadata.labels"}], validations: [{expression: 'false'}]})), B(binding({}))], deployment(5), (o) => expect(o.error).toBeUndefined()],
    ['variables compose', [P(policy({variables: [{name: 'doubled', expression: 'object.spec.replicas * 2'}], validations: [{expression: 'variables.doubled <= 6', messageExpression: "'doubled is ' + string(variables.doubled)"}]})), B(binding({}))], deployment(4), (o) => {
      expect(o.error?.message).toContain('denied request: doubled is 8');
    }],
    ['the binding matchResources narrows by namespace labels', [P(policy({validations: [{expression: 'false'}]})), B(binding({matchResources: {namespaceSelector: {matchLabels: {env: 'dev'}}}}))], deployment(4), (o) => expect(o.error).toBeUndefined()],
    ['an object selector the object does not match skips the policy', [P(policy({validations: [{expression: 'false'}], matchConstraints: {objectSelector: {matchLabels: {app: 'db'}}, resourceRules: [{apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*']}]}})), B(binding({}))], deployment(4, {app: 'web'}), (o) => expect(o.error).toBeUndefined()],
    ['excludeResourceRules win over resourceRules', [P(policy({validations: [{expression: 'false'}], matchConstraints: {resourceRules: [{apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*']}], excludeResourceRules: [{apiGroups: ['apps'], apiVersions: ['v1'], operations: ['*'], resources: ['deployments']}]}})), B(binding({}))], deployment(4), (o) => expect(o.error).toBeUndefined()],
    ['a policy without a binding does nothing', [P(policy({validations: [{expression: 'false'}]}))], deployment(4), (o) => expect(o.error).toBeUndefined()],
    ['an expression over the per-call cost limit (sized from the object) is cancelled and denies under Fail', [P(policy({validations: [{expression: 'object.metadata.labels.all(a, object.metadata.labels.all(b, a == b || a != b))'}]})), B(binding({}))],
      deployment(1, Object.fromEntries(Array.from({length: 400}, (_, i) => [`k${i}`, 'v']))), (o) => {
        expect(o.error?.message).toContain('resulted in error: operation cancelled: actual cost limit exceeded');
      }],
    ['the same expression on a small object is within the limit and admitted', [P(policy({validations: [{expression: 'object.metadata.labels.all(a, object.metadata.labels.all(b, a == b || a != b))'}]})), B(binding({}))],
      deployment(1, {a: 'x', b: 'y'}), (o) => expect(o.error).toBeUndefined()],
    ['oldObject and request are there on update', [P(policy({validations: [{expression: "request.operation == 'UPDATE' && object.spec.replicas >= oldObject.spec.replicas && request.userInfo.username == 'alice'"}]})), B(binding({}))], deployment(4), (o) => expect(o.error).toBeUndefined()],
  ];
  it.each(cases)('%s', async (_title, objects, object, check) => {
    const operation = _title.includes('on update') ? 'UPDATE' : 'CREATE';
    check(await admit(objects, object, operation));
  });
});

describe('matchPolicy Equivalent', () => {
  it('a policy on autoscaling/v2 sees an autoscaling/v1 request converted to v2', async () => {
    const hpaV1 = builtinResource('autoscaling', 'horizontalpodautoscalers')!;
    const v1 = {...hpaV1, ...(hpaV1.version === 'v1' ? {} : {version: 'v1', storageVersion: {group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler'}})};
    const store = memoryObjects([['', 'namespaces', '', {metadata: {name: 'team-a'}}],
      P(policy({
        matchConstraints: {matchPolicy: 'Equivalent', resourceRules: [{apiGroups: ['autoscaling'], apiVersions: ['v2'], operations: ['CREATE'], resources: ['horizontalpodautoscalers']}]},
        validations: [{expression: "request.kind.version == 'v2' && object.spec.metrics.all(m, m.resource.target.averageUtilization <= 50)", message: 'utilization targets above 50% are not allowed'}],
      })), B(binding({}))]);
    const plugin = new ValidatingAdmissionPolicyPlugin({objects: store});
    const hpa = {apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: {name: 'web', namespace: 'team-a'},
      spec: {scaleTargetRef: {apiVersion: 'apps/v1', kind: 'Deployment', name: 'web'}, maxReplicas: 5, targetCPUUtilizationPercentage: 80}};
    const attributes: AdmissionAttributes = {operation: 'CREATE', resource: v1, subresource: '', namespace: 'team-a', name: 'web', object: hpa, user: {name: 'u', groups: []}, dryRun: false};
    await expect(plugin.validate(attributes)).rejects.toThrow('denied request: utilization targets above 50% are not allowed');
    await expect(plugin.validate({...attributes, object: {...hpa, spec: {...hpa.spec, targetCPUUtilizationPercentage: 40}}})).resolves.toBeUndefined();
    plugin.close();
  });
});

describe('the authorizer variable', () => {
  const checks: string[] = [];
  const authorize: AdmissionAttributes['authorize'] = async (a) => {
    checks.push(`${a.user?.name ?? 'request user'} ${a.verb} ${a.apiGroup}/${a.resource} ${a.namespace}/${a.name ?? ''}`);
    return {allowed: a.verb === 'delete' && a.namespace === 'team-a'};
  };
  it('asks the server authorizer, as the request user or a service account', async () => {
    const objects = [P(policy({validations: [
      {expression: "authorizer.group('apps').resource('deployments').namespace('team-a').check('delete').allowed()", message: 'needs delete'},
      {expression: "!authorizer.serviceAccount('team-a', 'deployer').requestResource.check('create').allowed()", message: 'the deployer could do it'},
    ]})), B(binding({}))];
    expect((await admit(objects, deployment(1), 'CREATE', authorize)).error).toBeUndefined();
    expect(checks).toEqual(['request user delete apps/deployments team-a/', 'system:serviceaccount:team-a:deployer create apps/deployments team-a/web']);
    const denied = [P(policy({validations: [{expression: "authorizer.group('').resource('secrets').namespace('other').check('delete').allowed()", message: 'needs delete on secrets'}]})), B(binding({}))];
    expect((await admit(denied, deployment(1), 'CREATE', authorize)).error?.message).toContain('denied request: needs delete on secrets');
  });
  it('a variable may hold a check (evaluated ahead, awaited), and another variable may use it', async () => {
    const objects = [P(policy({
      variables: [
        {name: 'mayDelete', expression: "authorizer.group('apps').resource('deployments').namespace(object.metadata.namespace).check('delete').allowed()"},
        {name: 'big', expression: 'object.spec.replicas > 3'},
        {name: 'allowedBig', expression: 'variables.mayDelete || !variables.big'},
      ],
      validations: [{expression: 'variables.allowedBig', messageExpression: "'big deployments need delete rights, have ' + string(variables.mayDelete)"}],
    })), B(binding({}))];
    expect((await admit(objects, deployment(5), 'CREATE', authorize)).error).toBeUndefined();
    const elsewhere = {...deployment(5), metadata: {name: 'web', namespace: 'team-b'}};
    expect((await admit(objects, elsewhere, 'CREATE', authorize)).error?.message).toContain('denied request: big deployments need delete rights, have false');
  });
});

describe('the API validation of policies and bindings', () => {
  it('refuses an expression that does not compile, naming the field and the compiler error', () => {
    const errors = compilePolicy(policy({validations: [{expression: 'object.spec.replicas <'}]}), false).errors;
    expect(errors).toHaveLength(1);
    expect(errors[0]!.field).toBe('spec.validations[0].expression');
    expect(errors[0]!.detail).toMatch(/^compilation failed: ERROR: <input>:1:\d+: /);
  });
  it('refuses params in a policy without paramKind, and a non-bool validation', () => {
    const errors = compilePolicy(policy({validations: [{expression: 'params.x == 1'}, {expression: "'yes'"}]}), false).errors;
    expect(errors.map((e) => e.field)).toEqual(['spec.validations[0].expression', 'spec.validations[1].expression']);
    expect(errors[1]!.detail).toBe('must evaluate to bool');
  });
  it('accepts a valid policy', () => expect(compilePolicy(withParam, false).errors).toEqual([]));
  it('refuses bindings with unknown actions, Deny with Warn, or a paramRef without action', () => {
    expect(validateBinding(binding({validationActions: ['Block']}), true).map((e) => e.type)).toEqual(['FieldValueNotSupported']);
    expect(validateBinding(binding({validationActions: ['Deny', 'Warn']}), true).map((e) => e.field)).toEqual(['spec.validationActions']);
    expect(validateBinding(binding({paramRef: {name: 'x'}}), true).map((e) => e.field)).toEqual(['spec.paramRef.parameterNotFoundAction']);
  });
});

describe('type checking for the status', () => {
  it('warns of a field the matched kind does not declare', () => {
    const warnings = typeCheckPolicy(policy({validations: [{expression: 'object.spec.replicaz <= 5'}, {expression: 'object.spec.replicas <= 5'}]}));
    expect(warnings).toEqual([{
      fieldRef: 'spec.validations[0].expression',
      warning: `apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz <= 5\n | ...........^`,
    }]);
  });
});
