/**
 * `orch apiserver --names kubernetes`: upstream's names, so that what is written for Kubernetes
 * works unchanged: kubectl's RBAC generators (`kubectl create role|rolebinding|clusterrole|
 * clusterrolebinding`, protobuf bodies in `rbac.authorization.k8s.io/v1`), `kubectl create token`,
 * the typed JavaScript client (@kubernetes/client-node's CoordinationV1Api and
 * RbacAuthorizationV1Api), upstream's system namespaces, default service and bootstrap policy, and
 * /version reporting the emulated release. The server runs as the CLI, on SQLite.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {spawn} from 'node:child_process';
import {CoordinationV1Api, KubeConfig, RbacAuthorizationV1Api, type V1Lease} from '@kubernetes/client-node';
import {type ServerProcess, freePort, kubectl, startApiServerProcess} from '../helpers/apiserver.js';
import {discoverNameSet} from '../../src/lib/select-names.js';
import {SHORT_LEASE_ARGS, startControllerManager} from '../helpers/controller-manager.js';
import {orchBin, repoRoot} from '../helpers/run-orch.js';
import {nameSet} from '../../src/api/names.js';
import {EMULATED_KUBERNETES} from '../../src/lib/version.js';

/** The CLI as a child process, asynchronously (the server under test is another process). */
function runOrchAsync(args: string[], options: {timeoutMs: number}): Promise<{code: number; stderr: string}> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [orchBin, ...args], {cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe']});
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({code: code ?? -1, stderr});
    });
  });
}

const upstream = nameSet('kubernetes');
const orch = nameSet('orch');

describe('orch apiserver --names kubernetes', () => {
  let server: ServerProcess;
  let orchconfig: string;
  const k = (...args: string[]) => kubectl(orchconfig, args);
  let kubeConfig: KubeConfig;

  beforeAll(async () => {
    server = await startApiServerProcess({engine: 'sqlite', args: ['--names', 'kubernetes']});
    orchconfig = server.orchconfigPath;
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(orchconfig);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('serves upstream\'s groups and none of orch\'s', async () => {
    const groups = JSON.parse((await k('get', '--raw', '/apis')).stdout).groups.map((g: {name: string}) => g.name);
    expect(groups).toEqual(expect.arrayContaining(['coordination.k8s.io', 'rbac.authorization.k8s.io', 'apiextensions.k8s.io', 'discovery.k8s.io', 'scheduling.k8s.io']));
    expect(groups.filter((g: string) => g.endsWith(`.${orch.domain}`))).toEqual([]);
    const resources = await k('api-resources', '--api-group', 'rbac.authorization.k8s.io', '-o', 'name');
    expect(resources.stdout.split('\n').filter(Boolean).sort()).toEqual([
      'clusterrolebindings.rbac.authorization.k8s.io', 'clusterroles.rbac.authorization.k8s.io',
      'rolebindings.rbac.authorization.k8s.io', 'roles.rbac.authorization.k8s.io',
    ]);
  });

  it('creates upstream\'s system namespaces and the kubernetes service', async () => {
    const ns = await k('get', 'ns', '-o', 'name');
    expect(ns.stdout.split('\n')).toEqual(expect.arrayContaining(['namespace/kube-system', 'namespace/kube-public', 'namespace/kube-node-lease']));
    expect((await k('get', 'svc', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.ports[0].port}')).stdout).toBe('443');
    // Upstream's namespaces are as immortal as orch's are under its names.
    const deleted = await k('delete', 'ns', 'kube-system');
    expect(deleted.code).toBe(1);
    expect(deleted.stderr).toContain('this namespace may not be deleted');
  });

  it('bootstraps the default RBAC policy under upstream\'s names', async () => {
    const role = JSON.parse((await k('get', 'clusterrole', 'system:kube-controller-manager', '-o', 'json')).stdout);
    expect(role.apiVersion).toBe('rbac.authorization.k8s.io/v1');
    expect(role.metadata.labels).toEqual({'kubernetes.io/bootstrapping': 'rbac-defaults'});
    expect(role.metadata.annotations).toEqual({'rbac.authorization.kubernetes.io/autoupdate': 'true'});
    expect(role.rules).toEqual(expect.arrayContaining([{verbs: ['get', 'update'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['kube-controller-manager']}]));
    const binding = JSON.parse((await k('get', 'clusterrolebinding', 'system:kube-scheduler', '-o', 'json')).stdout);
    expect(binding.subjects).toEqual([{kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'system:kube-scheduler'}]);
  });

  it('runs kubectl\'s RBAC generators, which send protobuf bodies in rbac.authorization.k8s.io/v1', async () => {
    expect(await k('create', 'role', 'pod-reader', '--verb=get,list', '--resource=pods')).toMatchObject({code: 0, stdout: 'role.rbac.authorization.k8s.io/pod-reader created\n'});
    expect(await k('create', 'rolebinding', 'read-pods', '--role=pod-reader', '--user=alice')).toMatchObject({code: 0, stdout: 'rolebinding.rbac.authorization.k8s.io/read-pods created\n'});
    expect(await k('create', 'clusterrole', 'node-reader', '--verb=get', '--resource=nodes')).toMatchObject({code: 0, stdout: 'clusterrole.rbac.authorization.k8s.io/node-reader created\n'});
    expect(await k('create', 'clusterrolebinding', 'read-nodes', '--clusterrole=node-reader', '--group=readers')).toMatchObject({
      code: 0, stdout: 'clusterrolebinding.rbac.authorization.k8s.io/read-nodes created\n',
    });
    const role = JSON.parse((await k('get', 'role', 'pod-reader', '-o', 'json')).stdout);
    expect(role.rules).toEqual([{verbs: ['get', 'list'], apiGroups: [''], resources: ['pods']}]);
    const binding = JSON.parse((await k('get', 'rolebinding', 'read-pods', '-o', 'json')).stdout);
    expect(binding.roleRef).toEqual({apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader'});
    expect(binding.subjects).toEqual([{kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice'}]);
  });

  it('kubectl create token reaches the service account (no 404 for a group; the token subresource is the next piece)', async () => {
    expect((await k('create', 'serviceaccount', 'robot')).code).toBe(0);
    const core = JSON.parse((await k('get', '--raw', '/api/v1')).stdout);
    const tokenServed = core.resources.some((r: {name: string}) => r.name === 'serviceaccounts/token');
    const r = await k('create', 'token', 'robot');
    if (tokenServed && r.code === 0) {
      // Tokens exist: a JWT comes back.
      expect(r.stdout.trim().split('.')).toHaveLength(3);
    } else if (tokenServed) {
      // The subresource is routed (no 404); issuing is the piece still missing, and it says so.
      expect(r.stderr).toContain('failed to create token: serviceaccounts "robot" token: ');
      expect(r.stderr).not.toContain('could not find the requested resource');
    } else {
      // The service account is found (kubectl names what is missing: the subresource, not the group).
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('failed to create token: the server could not find the requested resource');
      expect((await k('get', 'sa', 'robot', '-o', 'name')).stdout).toBe('serviceaccount/robot\n');
    }
  });

  it('serves leases to client-node\'s CoordinationV1Api in kube-node-lease', async () => {
    const api = kubeConfig.makeApiClient(CoordinationV1Api);
    const namespace = upstream.namespaces.nodeLease;
    const body: V1Lease = {metadata: {name: 'node-a'}, spec: {holderIdentity: 'node-a', leaseDurationSeconds: 40}};
    const created = await api.createNamespacedLease({namespace, body});
    expect(created.metadata?.resourceVersion).toBeTruthy();
    const read = await api.readNamespacedLease({name: 'node-a', namespace});
    expect(read.spec?.holderIdentity).toBe('node-a');
    read.spec = {...read.spec, leaseDurationSeconds: 20};
    const replaced = await api.replaceNamespacedLease({name: 'node-a', namespace, body: read});
    expect(replaced.spec?.leaseDurationSeconds).toBe(20);
    const list = await api.listNamespacedLease({namespace});
    expect(list.items.map((l) => l.metadata?.name)).toEqual(['node-a']);
    await api.deleteNamespacedLease({name: 'node-a', namespace});
    expect((await api.listNamespacedLease({namespace})).items).toEqual([]);
  });

  it('serves roles and bindings to client-node\'s RbacAuthorizationV1Api', async () => {
    const api = kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    await api.createNamespacedRole({
      namespace: 'default',
      body: {metadata: {name: 'lease-editor'}, rules: [{apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update']}]},
    });
    await api.createNamespacedRoleBinding({
      namespace: 'default',
      body: {metadata: {name: 'lease-editor'}, roleRef: {apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'lease-editor'}, subjects: [{kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bob'}]},
    });
    const roles = await api.listNamespacedRole({namespace: 'default'});
    expect(roles.items.map((r) => r.metadata?.name)).toEqual(expect.arrayContaining(['lease-editor', 'pod-reader']));
    const admin = await api.readClusterRole({name: 'cluster-admin'});
    expect(admin.metadata?.labels?.['kubernetes.io/bootstrapping']).toBe('rbac-defaults');
    const bindings = await api.listClusterRoleBinding();
    expect(bindings.items.map((b) => b.metadata?.name)).toEqual(expect.arrayContaining(['cluster-admin', 'system:kube-controller-manager', 'read-nodes']));
  });

  it('tells a controller manager or agent started without --names which set it serves', async () => {
    expect(await discoverNameSet({orchconfig, timeoutMs: 10_000})).toBe('kubernetes');
    // A server that does not answer: bounded retries, then nothing learned (the daemon falls back to orch's).
    const closed = await freePort();
    expect(await discoverNameSet({orchconfig, server: `https://127.0.0.1:${closed}`, timeoutMs: 1_500, sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 200)))})).toBeUndefined();
  });

  it('a controller manager started without --names follows the server: it leads through kube-system/kube-controller-manager', async () => {
    const cm = await startControllerManager({name: 'cm-names', orchconfigPath: orchconfig, args: [...SHORT_LEASE_ARGS, '--controllers=namespace']});
    try {
      await cm.waitForLine(/Using the name set the API server serves.*kubernetes/, 10_000);
      const deadline = Date.now() + 20_000;
      let holder = '';
      while (Date.now() < deadline && holder === '') {
        const r = await k('get', 'lease', 'kube-controller-manager', '-n', 'kube-system', '-o', 'jsonpath={.spec.holderIdentity}');
        holder = r.code === 0 ? r.stdout : '';
        if (holder === '') await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(holder).toBe(cm.identity);
    } finally {
      await cm.stop();
    }
  }, 40_000);

  it('refuses to serve its store under orch\'s names, saying how to get going', async () => {
    // A second server on the same data directory, with the other names: it must stop before writing.
    const r = await runOrchAsync(['apiserver', '--data-dir', server.dataDir, '--secure-port', String(await freePort()), '--bind-address', '127.0.0.1', '--names', 'orch'], {timeoutMs: 20_000});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: this store was created with --names kubernetes (its default ClusterRole cluster-admin is rbac.authorization.k8s.io/v1), but the server was started with --names orch: start it with --names kubernetes, or give a new --data-dir');
    // Nothing of orch's names was written.
    expect((await k('get', 'ns', 'orch-system')).code).toBe(1);
  }, 30_000);

  it('reports the emulated upstream release on /version, with orch\'s version as build metadata', async () => {
    const {major, minor} = EMULATED_KUBERNETES;
    const version = JSON.parse((await k('version', '-o', 'json')).stdout).serverVersion;
    expect(version).toMatchObject({major: String(major), minor: String(minor)});
    expect(version.gitVersion).toMatch(new RegExp(`^v${major}\\.${minor}\\.0\\+orch\\.\\d+\\.\\d+\\.\\d+`));
    // The fields upstream added for emulation (kubectl 1.32 does not print them; the raw answer has them).
    const raw = JSON.parse((await k('get', '--raw', '/version')).stdout);
    expect(raw).toMatchObject({emulationMajor: String(major), emulationMinor: String(minor), minCompatibilityMajor: String(major), minCompatibilityMinor: String(minor - 1)});
  });
});
