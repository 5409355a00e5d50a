/**
 * The kubectl workflow on a real `orch up`, as the README shows it: `kubectl top` showing a pod
 * running a busy loop (and the node), `kubectl logs -f` that follows a pod's output as it is
 * written, and an `orch up` that prints no warning of its own. It runs under upstream's names
 * (`--names kubernetes`), as kubectl top reads only the metrics.k8s.io group. The agent reports 127.0.0.1 as its
 * address (--hostname-override), so the API server reaches it on loopback. Its log lines name the
 * TypeScript source file and line.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {spawn, type ChildProcess} from 'node:child_process';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {orchBin, repoRoot, runOrch} from '../helpers/run-orch.js';
import {freePort, kubectl, kubectlStream} from '../helpers/apiserver.js';
import {waitForBuild} from '../helpers/controller-manager.js';
import {httpGet} from '../helpers/agent.js';
import {nameSet} from '../../src/api/names.js';

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A CPU quantity (`250m`, `1`, `1234n`) in millicores. */
function millicores(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(n|u|m)?$/.exec(text);
  if (!m) throw new Error(`not a CPU quantity: ${text}`);
  const scale = {n: 1e-6, u: 1e-3, m: 1}[m[2] as 'n' | 'u' | 'm'] ?? 1000;
  return Number(m[1]) * scale;
}

describe('kubectl on orch up', () => {
  let dir: string;
  let child: ChildProcess;
  let stderr = '';
  let orchconfig: string;
  let ports: Record<'api' | 'cm' | 'agent' | 'readOnly' | 'healthz', number>;
  const metricsGroup = nameSet('kubernetes').groups.metrics;
  const userArgs = (p: Record<string, number>) => [
    '--apiserver-arg', `secure-port=${p.api}`, '--apiserver-arg', 'bind-address=127.0.0.1',
    '--controller-manager-arg', `secure-port=${p.cm}`, '--controller-manager-arg', 'bind-address=127.0.0.1',
    '--agent-arg', `port=${p.agent}`, '--agent-arg', `read-only-port=${p.readOnly}`, '--agent-arg', `healthz-port=${p.healthz}`,
    '--agent-arg', 'address=127.0.0.1', '--agent-arg', 'hostname-override=127.0.0.1',
  ];
  const k = (...args: string[]) => kubectl(orchconfig, args);

  beforeAll(async () => {
    await waitForBuild();
    dir = mkdtempSync(join(tmpdir(), 'orch-up-kubectl-'));
    ports = {api: await freePort(), cm: await freePort(), agent: await freePort(), readOnly: await freePort(), healthz: await freePort()};
    child = spawn(process.execPath, [orchBin, 'up', '--names', 'kubernetes', '--data-dir', join(dir, 'data'), ...userArgs(ports)], {cwd: repoRoot, env: {...process.env, NO_COLOR: '1'}});
    child.stderr?.on('data', (d) => (stderr += d));
    child.stdout?.on('data', (d) => (stderr += d));
    orchconfig = join(dir, 'data', 'apiserver', 'admin.orchconfig');
    await until('orch up to say it is up', () => (stderr.includes('orch is up') ? true : undefined), 60_000);
    const pods = {
      apiVersion: 'v1', kind: 'List', items: [
        {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'busy', labels: {app: 'busy'}}, spec: {containers: [{name: 'spin', image: 'busybox', command: ['sh', '-c', 'while :; do :; done']}]}},
        {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'calm'}, spec: {containers: [{name: 'nap', image: 'busybox', command: ['sleep', '300']}]}},
        {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'ticker'}, spec: {containers: [{name: 'tick', image: 'busybox', command: ['sh', '-c', 'i=0; while :; do echo tick $i; i=$((i+1)); sleep 0.3; done']}]}},
      ],
    };
    writeFileSync(join(dir, 'pods.json'), JSON.stringify(pods));
    expect((await k('create', '-f', join(dir, 'pods.json'))).code).toBe(0);
    await until('the pods to run', async () => {
      const r = await k('get', 'pods', '-o', 'jsonpath={.items[*].status.phase}');
      return r.stdout === 'Running Running Running' ? true : undefined;
    });
  }, 120_000);

  afterAll(async () => {
    await k('delete', 'pods', '--all', '--grace-period=0', '--wait=false').catch(() => undefined);
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await until('orch up to stop', () => (child.exitCode !== null ? true : undefined), 30_000).catch(() => child.kill('SIGKILL'));
    }
    rmSync(dir, {recursive: true, force: true});
  }, 40_000);

  it('kubectl top pods shows the busy pod\'s CPU, more than an idle one\'s', async () => {
    const cpu = (table: string, pod: string) => {
      const cell = new RegExp(`^${pod}\\s+(\\S+)`, 'm').exec(table)?.[1];
      return cell === undefined ? undefined : millicores(cell);
    };
    // A busy loop takes a core when it can; other work on this machine may take much of it, so the
    // test waits (bounded) for a reading that shows it busy, with the idle pod below it.
    const table = await until('kubectl top pods to show the busy pod busy', async () => {
      const r = await k('top', 'pods');
      const busy = cpu(r.stdout, 'busy');
      const calm = cpu(r.stdout, 'calm');
      return r.code === 0 && busy !== undefined && calm !== undefined && busy >= 20 && calm < busy ? r.stdout : undefined;
    });
    expect(table.split('\n')[0]).toMatch(/^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)\s*$/);
    expect(table).toMatch(/^busy\s+\d+m\s+\d+Mi\s*$/m);
  }, 40_000);

  it('a user who may view a namespace may kubectl top it (the metrics reader role aggregated into view), and no other', async () => {
    expect((await k('create', 'rolebinding', 'jane-view', '--clusterrole=view', '--user=jane')).code).toBe(0);
    const asJane = await until('jane to read pod metrics', async () => {
      const r = await k('top', 'pods', '--as=jane');
      return r.code === 0 ? r.stdout : undefined;
    });
    expect(asJane).toMatch(/^busy\s/m);
    const elsewhere = await k('top', 'pods', '-n', 'kube-system', '--as=jane');
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain('is forbidden: User "jane" cannot list resource "pods" in API group "metrics.k8s.io" in the namespace "kube-system"');
  }, 40_000);

  it('kubectl top nodes shows this node\'s CPU and memory against its allocatable', async () => {
    const r = await k('top', 'nodes');
    expect(r).toMatchObject({code: 0, stderr: ''});
    expect(r.stdout).toMatch(/^NAME\s+CPU\(cores\)\s+CPU\(%\)\s+MEMORY\(bytes\)\s+MEMORY\(%\)\s*\n127\.0\.0\.1\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%\s*$/);
  }, 30_000);

  it('serves metrics-server\'s objects for the busy pod', async () => {
    const usage = await until('pod metrics', async () => {
      const r = await k('get', '--raw', `/apis/${metricsGroup}/v1beta1/namespaces/default/pods`);
      if (r.code !== 0) return undefined;
      const list = JSON.parse(r.stdout) as {items: {metadata: {name: string}; containers: {usage: {cpu: string; memory: string}}[]}[]};
      const of = (name: string) => list.items.find((i) => i.metadata.name === name)?.containers[0]?.usage;
      return of('busy') && of('calm') ? {busy: of('busy')!, calm: of('calm')!} : undefined;
    });
    expect(millicores(usage.busy.cpu)).toBeGreaterThan(0);
    expect(usage.busy.memory).toMatch(/^\d+(Ki|Mi)$/);
  }, 40_000);

  it('shows the node\'s CPU and memory in the node metrics, and the agent\'s /metrics/resource', async () => {
    const r = await k('get', '--raw', `/apis/${metricsGroup}/v1beta1/nodes/127.0.0.1`);
    expect(r.code).toBe(0);
    const node = JSON.parse(r.stdout);
    expect(node).toMatchObject({kind: 'NodeMetrics', metadata: {name: '127.0.0.1'}});
    expect(millicores(node.usage.cpu)).toBeGreaterThan(0);
    expect(node.usage.memory).toMatch(/^\d+(Ki|Mi|Gi)$/);
    // What metrics-server would scrape from the agent: upstream's resource metrics, the busy pod among them.
    const exposition = await httpGet(`http://127.0.0.1:${ports.readOnly}/metrics/resource`);
    expect(exposition).toMatch(/^container_cpu_usage_seconds_total\{container="spin",namespace="default",pod="busy"\} [\d.e+]+ \d+$/m);
    expect(exposition).toMatch(/^node_cpu_usage_seconds_total [\d.e+]+ \d+$/m);
    expect(exposition).toMatch(/^resource_scrape_error 0$/m);
  }, 30_000);

  it('kubectl logs -f follows: lines written after it started arrive', async () => {
    const follow = kubectlStream(orchconfig, ['logs', '-f', 'ticker']);
    try {
      const first = await follow.waitFor(/tick (\d+)\n/, 15_000);
      const seen = Number(/tick (\d+)\n/.exec(first)![1]);
      const later = new RegExp(`tick ${seen + 5}\\n`);
      await follow.waitFor(later, 15_000);
      expect(follow.output()).toMatch(later);
    } finally {
      await follow.stop();
    }
  }, 40_000);

  it('a pod calls the API server as its service account: token, CA and namespace from its volume, the address from its environment', async () => {
    const n = nameSet('kubernetes');
    // What a process in a pod does (the in-cluster configuration of client libraries), below the
    // pod root the agent names (there is no mount namespace): list pods (view allows it) and
    // secrets (view does not), printing the status codes.
    const script = [
      "const https = require('node:https'); const fs = require('node:fs');",
      `const dir = process.env.${n.podRootEnv} + '${n.serviceAccountMountPath}';`,
      "const token = fs.readFileSync(dir + '/token', 'utf8'); const ca = fs.readFileSync(dir + '/ca.crt');",
      "const ns = fs.readFileSync(dir + '/namespace', 'utf8');",
      "const get = (path) => new Promise((resolve, reject) => https.get({host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT, path, ca, headers: {authorization: 'Bearer ' + token}}, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); }).on('error', reject));",
      "(async () => { console.log('namespace ' + ns); console.log('pods ' + await get('/api/v1/namespaces/' + ns + '/pods')); console.log('secrets ' + await get('/api/v1/namespaces/' + ns + '/secrets')); })().catch((e) => { console.log('error ' + e.message); process.exit(1); });",
    ].join(' ');
    const manifest = {
      apiVersion: 'v1', kind: 'List', items: [
        {apiVersion: 'v1', kind: 'ServiceAccount', metadata: {name: 'reader'}},
        {apiVersion: `${n.groups.rbac}/v1`, kind: 'RoleBinding', metadata: {name: 'reader-view'}, roleRef: {apiGroup: n.groups.rbac, kind: 'ClusterRole', name: 'view'}, subjects: [{kind: 'ServiceAccount', name: 'reader', namespace: 'default'}]},
        {
          apiVersion: 'v1', kind: 'Pod', metadata: {name: 'identity'},
          spec: {
            serviceAccountName: 'reader', restartPolicy: 'Never',
            volumes: [{name: 'api-access', projected: {sources: [
              {serviceAccountToken: {expirationSeconds: 3607, path: 'token'}},
              {configMap: {name: n.rootCaConfigMap, items: [{key: 'ca.crt', path: 'ca.crt'}]}},
              {downwardAPI: {items: [{path: 'namespace', fieldRef: {apiVersion: 'v1', fieldPath: 'metadata.namespace'}}]}},
            ]}}],
            containers: [{name: 'client', image: 'node', command: [process.execPath, '-e', script], volumeMounts: [{name: 'api-access', mountPath: n.serviceAccountMountPath, readOnly: true}]}],
          },
        },
      ],
    };
    writeFileSync(join(dir, 'identity.json'), JSON.stringify(manifest));
    const created = await k('create', '-f', join(dir, 'identity.json'));
    expect(created.stderr).toBe('');
    await until('the identity pod to finish', async () => {
      const r = await k('get', 'pod', 'identity', '-o', 'jsonpath={.status.phase}');
      return r.stdout === 'Succeeded' || r.stdout === 'Failed' ? r.stdout : undefined;
    }, 45_000);
    const logs = await k('logs', 'identity');
    expect(logs.stdout).toBe('namespace default\npods 200\nsecrets 403\n');
  }, 60_000);

  it('orch patch, on the server and locally, prints no warning either', () => {
    const server = runOrch(['patch', 'pod', 'calm', '--orchconfig', orchconfig, '-p', '{"metadata":{"labels":{"patched":"yes"}}}']);
    expect(server).toMatchObject({code: 0, stderr: '', stdout: 'pod/calm patched\n'});
    writeFileSync(join(dir, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: "1"}\n');
    const local = runOrch(['patch', '--local', '-f', join(dir, 'cm.yaml'), '--type', 'merge', '-p', '{"data":{"b":"2"}}', '-o', 'json']);
    expect(local).toMatchObject({code: 0, stderr: ''});
  });

  it('names the TypeScript source file and line in each log line, as klog names Go files', () => {
    const headers = stderr.split('\n').flatMap((l) => /^[IWE]\d{4} \S+ +\d+ (\S+) /.exec(l)?.slice(1) ?? []);
    expect(headers.length).toBeGreaterThan(10);
    expect(headers.filter((h) => !/^[\w.-]+\.tsx?:\d+\]$/.test(h ?? ''))).toEqual([]);
    // The agent's start line comes from agent.ts, on the line that logs it.
    const agentLine = stderr.split('\n').find((l) => l.includes('"Agent started"'));
    expect(agentLine).toMatch(/ agent\.ts:\d+\] "Agent started"/);
  });

  it('prints no warning of its own: only the deprecations of the flags this test passed', () => {
    const warnings = stderr.split('\n').filter((l) => /warning/i.test(l) || /^W\d{4}/.test(l) || /^\(node:\d+\)/.test(l));
    const passed = ['address', 'port', 'read-only-port', 'healthz-port'];
    expect(warnings.filter((l) => !passed.some((f) => l === `Warning: Flag --${f} has been deprecated; set it in the --config file instead`))).toEqual([]);
  });
});
