/**
 * CEL admission policies on a real server (SQLite), driven with kubectl: a
 * ValidatingAdmissionPolicy whose ConfigMap param caps a Deployment's replicas, Warn and Audit
 * bindings (the Warning header kubectl prints, the audit log's annotation), a policy that does not
 * compile (refused with the compiler's error, the server still serving) and one with a field its
 * kind does not declare (a type-checking warning in its status, written by the controller
 * manager's status controller, run as the CLI), and a MutatingAdmissionPolicy
 * adding a label. Both plugins are in the default set.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {stringify} from 'yaml';
import {betaApisConfig, kubectl, sleep, startApiServer, type InProcessServer} from '../helpers/apiserver.js';
import {SHORT_LEASE_ARGS, startControllerManager, type ControllerManagerProcess} from '../helpers/controller-manager.js';
import {names} from '../../src/api/names.js';
import {auditConfig} from '../../src/daemons/apiserver/config.js';

const AR = () => names().groups.admissionregistration;

const deployment = (name: string, replicas: number) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: {name, namespace: 'shop'},
  spec: {replicas, selector: {matchLabels: {app: name}}, template: {metadata: {labels: {app: name}}, spec: {containers: [{name: 'web', image: 'nginx:1.27'}]}}},
});

const replicaPolicy = (name: string, expression = 'object.spec.replicas <= int(params.data.maxReplicas)') => ({
  apiVersion: `${AR()}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: {name},
  spec: {
    failurePolicy: 'Fail',
    paramKind: {apiVersion: 'v1', kind: 'ConfigMap'},
    matchConstraints: {resourceRules: [{apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments']}]},
    validations: [{expression, messageExpression: "'replicas must be at most ' + params.data.maxReplicas", reason: 'Invalid'}],
  },
});

const binding = (name: string, policyName: string, actions: string[], namespaceLabel: string) => ({
  apiVersion: `${AR()}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: {name},
  spec: {
    policyName, validationActions: actions,
    paramRef: {name: 'replica-limits', parameterNotFoundAction: 'Deny'},
    matchResources: {namespaceSelector: {matchLabels: {policy: namespaceLabel}}},
  },
});

describe('admission policies through kubectl', () => {
  let dir: string;
  let api: InProcessServer;
  let cm: ControllerManagerProcess | undefined;
  const k = (args: string[]) => kubectl(api.orchconfigPath, args);
  const apply = async (name: string, ...objects: object[]) => {
    const path = join(dir, `${name}.yaml`);
    writeFileSync(path, objects.map((o) => stringify(o)).join('---\n'));
    return k(['apply', '-f', path]);
  };
  const ok = async (p: Promise<{stdout: string; stderr: string; code: number}>) => {
    const r = await p;
    if (r.code !== 0) throw new Error(`kubectl failed (${r.code}): ${r.stderr}`);
    return r;
  };
  /** Retries until the policy view has caught up with a just-created binding (a watch event away). */
  const eventually = async <T>(attempt: () => Promise<T>, done: (t: T) => boolean, tries = 50): Promise<T> => {
    let last = await attempt();
    for (let i = 0; i < tries && !done(last); i++) {
      await sleep(100);
      last = await attempt();
    }
    return last;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-policies-'));
    writeFileSync(join(dir, 'audit-policy.yaml'), `apiVersion: audit.${names().domain}/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n  - level: Metadata\n    resources: [{group: apps, resources: [deployments]}]\n  - level: None\n`);
    api = await startApiServer({
      engine: 'sqlite',
      config: {...betaApisConfig(), audit: auditConfig({'audit-policy-file': join(dir, 'audit-policy.yaml'), 'audit-log-path': join(dir, 'audit.log')})},
    });
    for (const [ns, label] of [['shop', 'deny'], ['warned', 'warn'], ['audited', 'audit']]) {
      await ok(k(['create', 'namespace', ns]));
      await ok(k(['label', 'namespace', ns, `policy=${label}`]));
      await ok(k(['create', 'configmap', 'replica-limits', '-n', ns, '--from-literal=maxReplicas=3']));
    }
    await ok(apply('policy', replicaPolicy('replica-limit'), binding('replica-limit-deny', 'replica-limit', ['Deny'], 'deny'),
      binding('replica-limit-warn', 'replica-limit', ['Warn'], 'warn'), binding('replica-limit-audit', 'replica-limit', ['Audit'], 'audit')));
  }, 60_000);

  afterAll(async () => {
    await cm?.stop();
    await api?.stop();
    if (dir) rmSync(dir, {recursive: true, force: true});
  });

  it('denies a deployment with more replicas than the param allows, with upstream message, and admits one within', async () => {
    const denied = await eventually(() => apply('too-many', deployment('big', 5)), (r) => r.code !== 0);
    expect(denied.code).not.toBe(0);
    // kubectl renders a 422 from its cause, as with upstream's server (the documented output).
    expect(denied.stderr).toContain(
      `The deployments "big" is invalid: : ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-deny' denied request: replicas must be at most 3`,
    );
    expect((await k(['get', 'deployment', 'big', '-n', 'shop'])).code).not.toBe(0);
    await ok(apply('fine', deployment('small', 2)));
    // An update over the cap is refused too, and the stored object is unchanged. (The scale
    // subresource is another resource, `deployments/scale`, that these rules do not name, as upstream.)
    const patched = await k(['patch', 'deployment', 'small', '-n', 'shop', '--type=merge', '-p', '{"spec":{"replicas":7}}']);
    expect(patched.stderr).toContain('replicas must be at most 3');
    expect((await ok(k(['get', 'deployment', 'small', '-n', 'shop', '-o', 'jsonpath={.spec.replicas}']))).stdout).toBe('2');
  });

  it('a raised param lets the same deployment through', async () => {
    await ok(k(['create', 'configmap', 'replica-limits', '-n', 'shop', '--from-literal=maxReplicas=10', '--dry-run=client', '-o', 'yaml']).then(async (r) => {
      writeFileSync(join(dir, 'raised.yaml'), r.stdout);
      return k(['apply', '-f', join(dir, 'raised.yaml')]);
    }));
    await ok(apply('raised-deploy', deployment('medium', 6)));
  });

  it('Warn admits with the warning kubectl prints', async () => {
    const r = await ok(apply('warned', {...deployment('warned-big', 5), metadata: {name: 'warned-big', namespace: 'warned'}}));
    expect(r.stderr).toContain("Warning: Validation failed for ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-warn': replicas must be at most 3");
  });

  it('Audit admits and annotates the audit event', async () => {
    await ok(apply('audited', {...deployment('audited-big', 5), metadata: {name: 'audited-big', namespace: 'audited'}}));
    const key = `validation.policy.admission.${names().domain}/validation_failure`;
    const events = await eventually(async () => readFileSync(join(dir, 'audit.log'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)),
      (es) => es.some((e) => e.objectRef?.name === 'audited-big' && e.annotations?.[key]));
    const event = events.find((e) => e.objectRef?.name === 'audited-big' && e.annotations?.[key]);
    expect(JSON.parse(event.annotations[key])).toEqual([{
      message: 'replicas must be at most 3', policy: 'replica-limit', binding: 'replica-limit-audit', expressionIndex: 0, validationActions: ['Audit'],
    }]);
  });

  it('refuses a policy whose expression does not compile, and keeps serving', async () => {
    const r = await apply('broken', replicaPolicy('broken', 'object.spec.replicas <= '));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`The ValidatingAdmissionPolicy "broken" is invalid: spec.validations[0].expression: Invalid value: "object.spec.replicas <= ": compilation failed: ERROR: <input>:1:`);
    await ok(k(['get', 'namespaces']));
    await ok(apply('still-fine', deployment('after-broken', 1)));
  });

  it("reports a field the matched kind does not declare in the policy status (the controller manager's status controller)", async () => {
    cm = await startControllerManager({
      name: 'cm-policies', orchconfigPath: api.orchconfigPath,
      args: [...SHORT_LEASE_ARGS, '--controllers=validatingadmissionpolicy-status-controller', '--concurrent-validating-admission-policy-status-syncs=1'],
    });
    await ok(apply('typo', replicaPolicy('typo', 'object.spec.replicaz <= int(params.data.maxReplicas)')));
    const status = await eventually(
      async () => (await k(['get', 'validatingadmissionpolicy', 'typo', '-o', 'jsonpath={.status}'])).stdout,
      (s) => s.includes('expressionWarnings'),
      200,
    );
    const parsed = JSON.parse(status);
    expect(parsed.observedGeneration).toBe(1);
    expect(parsed.typeChecking.expressionWarnings).toEqual([{
      fieldRef: 'spec.validations[0].expression',
      warning: expect.stringContaining("apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'"),
    }]);
  }, 40_000);

  it('a MutatingAdmissionPolicy adds a label', async () => {
    await ok(apply('label-policy', {
      apiVersion: `${AR()}/v1beta1`, kind: 'MutatingAdmissionPolicy', metadata: {name: 'team-label'},
      spec: {
        matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps']}]},
        matchConditions: [{name: 'not-params', expression: "object.metadata.name != 'replica-limits'"}],
        mutations: [{patchType: 'ApplyConfiguration', applyConfiguration: {expression: 'Object{metadata: Object.metadata{labels: {"team": namespaceObject.metadata.name}}}'}}],
      },
    }, {apiVersion: `${AR()}/v1beta1`, kind: 'MutatingAdmissionPolicyBinding', metadata: {name: 'team-label'}, spec: {policyName: 'team-label'}}));
    const labels = await eventually(async () => {
      await k(['delete', 'configmap', 'labelled', '-n', 'shop', '--ignore-not-found']);
      await ok(k(['create', 'configmap', 'labelled', '-n', 'shop', '--from-literal=a=b']));
      return (await ok(k(['get', 'configmap', 'labelled', '-n', 'shop', '-o', 'jsonpath={.metadata.labels}']))).stdout;
    }, (s) => s.includes('team'));
    expect(JSON.parse(labels)).toEqual({team: 'shop'});
  });
});
