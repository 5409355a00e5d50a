/**
 * `orch up` end to end: the whole control plane in one process; a pod created through kubectl is
 * scheduled to this node and runs as a process; `orch status -o json` reports everything ready;
 * SIGTERM stops it cleanly. A second part runs it in tmux and checks the combined dashboard.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {spawn, spawnSync, execFileSync, type ChildProcess} from 'node:child_process';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {orchBin, repoRoot} from '../helpers/run-orch.js';
import {kubectl} from '../helpers/apiserver.js';
import {ports, status, until, upArgs, type Ports} from '../helpers/up.js';
import {waitForBuild} from '../helpers/controller-manager.js';
import {requireTool} from '../helpers/tools.js';

describe('orch up', () => {
  let dir: string;
  let child: ChildProcess;
  let log = '';
  let p: Ports;
  let orchconfig: string;

  beforeAll(async () => {
    await waitForBuild();
    dir = mkdtempSync(join(tmpdir(), 'orch-up-'));
    p = await ports();
    child = spawn(process.execPath, [orchBin, ...upArgs(join(dir, 'data'), p)], {cwd: repoRoot, env: {...process.env, NO_COLOR: '1'}});
    child.stderr?.on('data', (d) => (log += d));
    child.stdout?.on('data', (d) => (log += d));
    orchconfig = join(dir, 'data', 'apiserver', 'admin.orchconfig');
    await until('orch up to say it is up', () => log.includes('orch is up') || undefined, 60_000);
  }, 90_000);

  afterAll(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, {recursive: true, force: true});
  });

  it('registers this machine as a Ready node', async () => {
    const ready = await until('the node to be Ready', async () => {
      const r = await kubectl(orchconfig, ['get', 'nodes', '-o', 'jsonpath={.items[0].status.conditions[?(@.type=="Ready")].status}']);
      return r.stdout === 'True' ? r.stdout : undefined;
    });
    expect(ready).toBe('True');
  }, 40_000);

  it('schedules a pod created through kubectl to this node and runs it as a process', async () => {
    const marker = `orch-up-e2e-${process.pid}`;
    const pod = {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'hello'}, spec: {containers: [{name: 'hello', image: 'busybox', command: ['sh', '-c', `echo ${marker}; sleep 300`]}]}};
    writeFileSync(join(dir, 'pod.json'), JSON.stringify(pod));
    const created = await kubectl(orchconfig, ['create', '-f', join(dir, 'pod.json')]);
    expect(created).toMatchObject({code: 0, stderr: ''});
    const phase = await until('the pod to run', async () => {
      const r = await kubectl(orchconfig, ['get', 'pod', 'hello', '-o', 'jsonpath={.spec.nodeName} {.status.phase}']);
      return r.stdout.endsWith(' Running') ? r.stdout : undefined;
    });
    expect(phase.split(' ')[0]).not.toBe('');
    // The process is really there, in this machine's process table.
    expect(spawnSync('pgrep', ['-f', marker]).status).toBe(0);
    // kubectl describe tells the story: scheduled by the scheduler, started by the agent.
    const described = await until('the pod\'s events', async () => {
      const r = await kubectl(orchconfig, ['describe', 'pod', 'hello']);
      return /Normal\s+Started\s/.test(r.stdout) && /Normal\s+Scheduled\s/.test(r.stdout) ? r.stdout : undefined;
    });
    expect(described).toMatch(/Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned default\/hello to /);
    expect(described).toMatch(/Normal\s+Started\s+\S+\s+agent\s+Started container hello/);
  }, 40_000);

  it('records the node\'s story as events: the agent starting, the node controller registering it', async () => {
    const reasons = await until('the node events', async () => {
      const r = await kubectl(orchconfig, ['get', 'events', '--field-selector', 'involvedObject.kind=Node', '-o', 'jsonpath={.items[*].reason}']);
      const found = r.stdout.split(' ');
      return found.includes('RegisteredNode') && found.includes('Starting') ? found : undefined;
    });
    expect(reasons).toEqual(expect.arrayContaining(['Starting', 'NodeHasSufficientMemory', 'RegisteredNode']));
  }, 40_000);

  it('runs a Job created with kubectl create job to completion', async () => {
    const created = await kubectl(orchconfig, ['create', 'job', 'once', '--image=busybox', '--', 'sh', '-c', 'echo job-ran']);
    expect(created).toMatchObject({code: 0, stdout: 'job.batch/once created\n'});
    const waited = await kubectl(orchconfig, ['wait', '--for=condition=complete', 'job/once', '--timeout=30s']);
    expect(waited).toMatchObject({code: 0, stdout: 'job.batch/once condition met\n'});
    // (kubectl logs is not checked here: this agent serves on 127.0.0.1 only, which the API server's
    // log proxy does not reach through the node's address; test/integration/apiserver-pod-logs covers it.)
    const table = await kubectl(orchconfig, ['get', 'job', 'once']);
    expect(table.stdout).toMatch(/^once\s+Complete\s+1\/1\s+\d+s\s+\d+s$/m);
  }, 40_000);

  it('rolls a deployment out and back with kubectl rollout history and undo', async () => {
    const k = (...args: string[]) => kubectl(orchconfig, args, {timeoutMs: 40_000});
    expect((await k('create', 'deployment', 'roll', '--image=busybox', '--', 'sh', '-c', 'sleep 300')).code).toBe(0);
    expect((await k('rollout', 'status', 'deployment/roll', '--timeout=30s')).code).toBe(0);
    expect((await k('set', 'env', 'deployment/roll', 'STAGE=two')).code).toBe(0);
    expect((await k('rollout', 'status', 'deployment/roll', '--timeout=30s')).code).toBe(0);
    const revisions = (text: string) => [...text.matchAll(/^(\d+)\s+<none>$/gm)].map((m) => m[1]);
    expect(revisions((await k('rollout', 'history', 'deployment/roll')).stdout)).toEqual(['1', '2']);
    expect((await k('rollout', 'undo', 'deployment/roll')).stdout).toBe('deployment.apps/roll rolled back\n');
    expect((await k('rollout', 'status', 'deployment/roll', '--timeout=30s')).code).toBe(0);
    // The first replica set is reused (revision 1 becomes 3), as upstream: no third one.
    expect(revisions((await k('rollout', 'history', 'deployment/roll')).stdout)).toEqual(['2', '3']);
    expect((await k('get', 'deployment', 'roll', '-o', 'jsonpath={.spec.template.spec.containers[0].env}')).stdout).toBe('');
  }, 90_000);

  it('runs a StatefulSet\'s pods under stable names, in order, and a DaemonSet\'s pod on this node', async () => {
    const template = (app: string) => ({metadata: {labels: {app}}, spec: {containers: [{name: app, image: 'busybox', command: ['sh', '-c', 'sleep 300']}]}});
    const sts = {apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'db'}, spec: {replicas: 2, serviceName: 'db', selector: {matchLabels: {app: 'db'}}, template: template('db')}};
    const ds = {apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: {name: 'agentd'}, spec: {selector: {matchLabels: {app: 'agentd'}}, template: template('agentd')}};
    writeFileSync(join(dir, 'sts.json'), JSON.stringify(sts));
    writeFileSync(join(dir, 'ds.json'), JSON.stringify(ds));
    expect((await kubectl(orchconfig, ['create', '-f', join(dir, 'sts.json'), '-f', join(dir, 'ds.json')])).code).toBe(0);
    const rolled = await kubectl(orchconfig, ['rollout', 'status', 'statefulset/db', '--timeout=40s'], {timeoutMs: 45_000});
    expect(rolled.stdout).toContain('partitioned roll out complete: 2 new pods have been updated...');
    const pods = await kubectl(orchconfig, ['get', 'pods', '-l', 'app=db', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.spec.hostname}{"\\n"}{end}']);
    expect(pods.stdout).toBe('db-0 Running db-0\ndb-1 Running db-1\n');
    const daemon = await until('the daemon pod to run', async () => {
      const r = await kubectl(orchconfig, ['get', 'daemonset', 'agentd', '-o', 'jsonpath={.status.desiredNumberScheduled} {.status.numberReady}']);
      return r.stdout === '1 1' ? r.stdout : undefined;
    }, 40_000);
    expect(daemon).toBe('1 1');
  }, 90_000);

  it('is reported ready by orch status -o json', async () => {
    const r = await until('orch status to be ready', async () => {
      const s = await status(orchconfig, p);
      return s.code === 0 ? s : undefined;
    });
    expect(r.json.ready).toBe(true);
    expect(r.json.components.map((c: {name: string; ready: boolean}) => [c.name, c.ready])).toEqual([
      ['apiserver', true],
      ['controller-manager', true],
      ['agent', true],
    ]);
    expect(r.json.leader.holder).toMatch(/_/);
  }, 40_000);

  it('stops cleanly on SIGTERM: agent, controller manager, then the API server', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const order = ['Stopped controller', 'shutdown event" name="ShutdownInitiated', '"Stopped"'].map((s) => log.indexOf(s));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(spawnSync('pgrep', ['-f', `orch-up-e2e-${process.pid}`]).status).not.toBe(0);
  }, 30_000);
});

describe('orch up dashboard on a terminal', () => {
  const socket = `orch-up-${process.pid}`;
  let dir: string;
  afterAll(() => {
    spawnSync('tmux', ['-L', socket, 'kill-server']);
    rmSync(dir, {recursive: true, force: true});
  });

  it('shows the readyz checks and the leader state', async () => {
    requireTool('tmux', 'tmux');
    await waitForBuild();
    dir = mkdtempSync(join(tmpdir(), 'orch-up-tty-'));
    const p = await ports();
    // CI set as on a CI runner: on a terminal the dashboard is drawn all the same.
    const cmd = ['env', 'CI=true', process.execPath, orchBin, ...upArgs(join(dir, 'data'), p)].map((a) => `'${a}'`).join(' ');
    // Tall enough for the log lines above the dashboard (every controller's start line) and its readyz checks.
    execFileSync('tmux', ['-L', socket, 'new-session', '-d', '-x', '200', '-y', '250', '-s', 'main', cmd]);
    const screen = await until(
      'the dashboard to show the leader',
      () => {
        const text = execFileSync('tmux', ['-L', socket, 'capture-pane', '-p', '-t', 'main'], {encoding: 'utf8'});
        // The readyz list fills in as the post-start hooks register: wait for the one checked below.
        return /readyz ok/.test(text) && /✓ poststarthook\/rbac\/bootstrap-roles/.test(text) && /leader/i.test(text) && /this process/.test(text) ? text : undefined;
      },
      60_000,
    );
    expect(screen).toContain('orch apiserver');
    expect(screen).toMatch(/✓ poststarthook\/rbac\/bootstrap-roles/);
    expect(screen).toContain('orch controller-manager');
    execFileSync('tmux', ['-L', socket, 'send-keys', '-t', 'main', 'C-c']);
  }, 90_000);
});
