/**
 * PodSecurity against `orch apiserver` (the CLI, on SQLite) as a user meets it with kubectl: a
 * namespace labelled enforce=restricted refuses a privileged pod with the list of violations, warn
 * prints kubectl warnings, a deployment is warned and created, a label change warns about the pods
 * already there, audit annotations reach the audit log, the configuration file's exemptions apply,
 * and a bad configuration stops the start with an error naming the plugin. Under both name sets:
 * with `--names kubernetes` the labels are upstream's `pod-security.kubernetes.io/...`.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {nameSet, type NameSet, type NameSetId} from '../../src/api/names.js';
import {kubectl, startApiServerProcess, type ServerProcess} from '../helpers/apiserver.js';

const admissionConfig = (n: NameSet, podSecurity: Record<string, unknown>) =>
  JSON.stringify({
    apiVersion: `apiserver.config.${n.domain}/v1`,
    kind: 'AdmissionConfiguration',
    plugins: [{name: 'PodSecurity', configuration: {apiVersion: `pod-security.admission.config.${n.domain}/v1`, kind: 'PodSecurityConfiguration', ...podSecurity}}],
  });

const privilegedPod = (name: string) =>
  JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name}, spec: {containers: [{name: 'c', image: 'busybox', securityContext: {privileged: true}}]}});

const restrictedPod = (name: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name},
    spec: {
      securityContext: {runAsNonRoot: true, seccompProfile: {type: 'RuntimeDefault'}},
      containers: [{name: 'c', image: 'busybox', securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: ['ALL']}}}],
    },
  });

describe.each<[NameSetId]>([['orch'], ['kubernetes']])('PodSecurity with kubectl against orch apiserver (%s names)', (namesId) => {
  const n = nameSet(namesId);
  const PREFIX = `pod-security.${n.labelDomain}`;
  let dir: string;
  let server: ServerProcess;
  const k = (args: string[], input?: string) => kubectl(server.orchconfigPath, args, {input});

  /** A namespace with PodSecurity labels (and its default service account, which pods need). */
  async function namespace(name: string, labels: Record<string, string>): Promise<void> {
    expect((await k(['create', 'namespace', name])).code).toBe(0);
    await k(['create', 'serviceaccount', 'default', '-n', name]);
    const args = Object.entries(labels).map(([key, value]) => `${PREFIX}/${key}=${value}`);
    if (args.length) expect((await k(['label', 'namespace', name, ...args])).code).toBe(0);
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-pod-security-'));
    writeFileSync(join(dir, 'admission.json'), admissionConfig(n, {exemptions: {namespaces: ['ops'], usernames: ['ci-bot'], runtimeClasses: ['kata']}}));
    writeFileSync(join(dir, 'audit-policy.yaml'), `apiVersion: ${n.groups.audit}/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: "", resources: [pods]}]\n`);
    server = await startApiServerProcess({
      engine: 'sqlite',
      args: [
        '--names', namesId,
        // PodSecurity judges privileged pods; without this they are invalid before admission sees them.
        '--allow-privileged',
        '--admission-control-config-file', join(dir, 'admission.json'),
        '--audit-policy-file', join(dir, 'audit-policy.yaml'),
        '--audit-log-path', join(dir, 'audit.log'),
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, {recursive: true, force: true});
  });

  it('enforce=restricted refuses a privileged pod with the list of violations, and admits a restricted one', async () => {
    await namespace('secure', {enforce: 'restricted'});
    const refused = await k(['apply', '-n', 'secure', '-f', '-'], privilegedPod('priv'));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'pods "priv" is forbidden: violates PodSecurity "restricted:latest": ' +
        'privileged (container "c" must not set securityContext.privileged=true), ' +
        'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
        'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
        'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
    expect((await k(['get', 'pod', 'priv', '-n', 'secure'])).stderr).toContain('NotFound');
    const admitted = await k(['apply', '-n', 'secure', '-f', '-'], restrictedPod('fine'));
    expect(admitted).toMatchObject({code: 0, stderr: ''});
  });

  it('enforce-version pins the checks of a policy version: runAsUser=0 passes restricted v1.22, not latest', async () => {
    const rootPod = JSON.parse(restrictedPod('root'));
    rootPod.spec.securityContext.runAsUser = 0;
    await namespace('pinned', {enforce: 'restricted', 'enforce-version': 'v1.22'});
    expect(await k(['apply', '-n', 'pinned', '-f', '-'], JSON.stringify(rootPod))).toMatchObject({code: 0, stderr: ''});
    await namespace('current', {enforce: 'restricted'});
    const refused = await k(['apply', '-n', 'current', '-f', '-'], JSON.stringify(rootPod));
    expect(refused.stderr).toContain('pods "root" is forbidden: violates PodSecurity "restricted:latest": runAsUser=0 (pod must not set runAsUser=0)');
  });

  it('warn=baseline admits the pod and kubectl prints the warning', async () => {
    await namespace('warned', {warn: 'baseline'});
    const created = await k(['apply', '-n', 'warned', '-f', '-'], privilegedPod('priv'));
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('pod/priv created');
    expect(created.stderr).toContain('Warning: would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)');
  });

  it('a deployment with a privileged template is warned, not refused, under enforce=restricted', async () => {
    await namespace('apps', {enforce: 'restricted', warn: 'restricted'});
    const deployment = JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {name: 'web'},
      spec: {
        replicas: 1,
        selector: {matchLabels: {app: 'web'}},
        template: {metadata: {labels: {app: 'web'}}, spec: {containers: [{name: 'c', image: 'busybox', securityContext: {privileged: true}}]}},
      },
    });
    const created = await k(['apply', '-n', 'apps', '-f', '-'], deployment);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('deployment.apps/web created');
    expect(created.stderr).toContain('Warning: would violate PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false');
    expect((await k(['get', 'deployment', 'web', '-n', 'apps', '-o', 'name'])).stdout.trim()).toBe('deployment.apps/web');
  });

  it('labelling a namespace warns about its existing pods; a bad label is refused', async () => {
    await namespace('existing', {});
    expect((await k(['apply', '-n', 'existing', '-f', '-'], privilegedPod('old'))).code).toBe(0);
    const labelled = await k(['label', 'namespace', 'existing', `${PREFIX}/enforce=baseline`]);
    expect(labelled.code).toBe(0);
    expect(labelled.stderr).toContain('Warning: existing pods in namespace "existing" violate the new PodSecurity enforce level "baseline:latest"');
    expect(labelled.stderr).toContain('Warning: old: privileged');
    const bad = await k(['label', 'namespace', 'existing', `${PREFIX}/enforce=strict`, '--overwrite']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain(
      `The Namespace "existing" is invalid: metadata.labels[${PREFIX}/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted`,
    );
  });

  it('an exempt namespace admits the privileged pod, and is told its labels are ignored', async () => {
    expect((await k(['create', 'namespace', 'ops'])).code).toBe(0);
    await k(['create', 'serviceaccount', 'default', '-n', 'ops']);
    const labelled = await k(['label', 'namespace', 'ops', `${PREFIX}/enforce=restricted`]);
    expect(labelled.stderr).toContain('Warning: namespace "ops" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored');
    const created = await k(['apply', '-n', 'ops', '-f', '-'], privilegedPod('priv'));
    expect(created).toMatchObject({code: 0, stderr: ''});
  });

  it('an exempt user and an exempt runtime class get the privileged pod in an enforce=restricted namespace', async () => {
    await namespace('strict', {enforce: 'restricted'});
    expect((await k(['apply', '-n', 'strict', '-f', '-'], privilegedPod('by-alice'))).code).not.toBe(0);
    // The admin may impersonate (authorization AlwaysAllow): the request is ci-bot's.
    expect(await k(['apply', '--as', 'ci-bot', '-n', 'strict', '-f', '-'], privilegedPod('by-ci-bot'))).toMatchObject({code: 0, stderr: ''});
    const runtimeClass = JSON.stringify({apiVersion: `${n.groups.node}/v1`, kind: 'RuntimeClass', metadata: {name: 'kata'}, handler: 'kata'});
    expect((await k(['apply', '-f', '-'], runtimeClass)).code).toBe(0);
    const kataPod = JSON.parse(privilegedPod('in-kata'));
    kataPod.spec.runtimeClassName = 'kata';
    expect(await k(['apply', '-n', 'strict', '-f', '-'], JSON.stringify(kataPod))).toMatchObject({code: 0, stderr: ''});
  });

  it('audit=baseline records the violation in the audit event of the create', async () => {
    await namespace('audited', {audit: 'baseline'});
    expect((await k(['apply', '-n', 'audited', '-f', '-'], privilegedPod('priv')))).toMatchObject({code: 0, stderr: ''});
    const log = join(dir, 'audit.log');
    let event: {annotations?: Record<string, string>} | undefined;
    for (const deadline = Date.now() + 10_000; !event && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const lines = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
      event = lines
        .map((l) => JSON.parse(l) as {verb: string; stage: string; objectRef?: {namespace?: string; name?: string}; annotations?: Record<string, string>})
        .find((e) => e.verb === 'create' && e.stage === 'ResponseComplete' && e.objectRef?.namespace === 'audited' && e.objectRef.name === 'priv');
    }
    expect(event?.annotations).toMatchObject({
      [`${PREFIX}/enforce-policy`]: 'privileged:latest',
      [`${PREFIX}/audit-violations`]: 'would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)',
    });
  });
});

describe('PodSecurity configuration errors', () => {
  it('an unknown level in the defaults stops the start with an error naming the plugin and the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-pod-security-bad-'));
    try {
      writeFileSync(join(dir, 'admission.json'), admissionConfig(nameSet('orch'), {defaults: {enforce: 'strict'}}));
      await expect(startApiServerProcess({engine: 'sqlite', args: ['--admission-control-config-file', join(dir, 'admission.json')]})).rejects.toThrow(
        /PodSecurity.*defaults\.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted/,
      );
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
  }, 60_000);
});
