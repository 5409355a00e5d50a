/**
 * The process runtime with real processes (tiny `sh -c` and `node -e` commands): pods run, init
 * containers run in order, restart policies and back-off, probes, graceful termination that reaches
 * child processes, env, logs. Every test stops what it started (afterEach).
 */
import {spawn as nodeSpawn, type ChildProcess} from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {afterEach, describe, expect, it} from '@jest/globals';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import type {Logger} from '../../src/lib/klog.js';
import {ProcessRuntime, type ProcessRuntimeOptions, type RuntimeEvent} from '../../src/daemons/agent/runtime/index.js';
import type {Container, Pod, PodSpec, PodStatus} from '../../src/daemons/agent/runtime/index.js';
import {defaultSpawn, type SpawnFn} from '../../src/daemons/agent/runtime/process.js';

const silent: Logger = {info() {}, warning() {}, error() {}, v: () => ({enabled: false, info() {}})};
const runtimes: ProcessRuntime[] = [];
const dirs: string[] = [];
const strays: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((rt) => rt.shutdown(0)));
  for (const child of strays.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) fs.rmSync(dir, {recursive: true, force: true});
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orch-rt-'));
  dirs.push(dir);
  return dir;
}

function makeRuntime(options: Partial<ProcessRuntimeOptions> = {}): ProcessRuntime {
  const rt = new ProcessRuntime({rootDir: tempDir(), nodeIP: '10.9.8.7', minGracePeriodSeconds: 0, cgroups: false, logger: silent, ...options});
  runtimes.push(rt);
  return rt;
}

let podCounter = 0;
function makePod(spec: Partial<PodSpec> & {containers: Container[]}, name = `pod${++podCounter}`): Pod {
  return {metadata: {name, namespace: 'default', uid: `uid-${name}-${Date.now()}`, labels: {app: 'demo'}}, spec: {nodeName: 'node-1', ...spec}};
}

async function waitFor<T>(probe: () => T | undefined | false | null, what: string, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const statusOf = (rt: ProcessRuntime, pod: Pod): PodStatus => rt.podStatus(pod.metadata.uid!)!;
const app = (rt: ProcessRuntime, pod: Pod, i = 0) => statusOf(rt, pod).containerStatuses[i];
const pidOf = (containerID: string | undefined): number => Number(containerID?.replace('process://', ''));

/** Alive and not a zombie (an orphan may linger unreaped in a container without an init). */
function isAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function logOf(rt: ProcessRuntime, pod: Pod, container = 'app', previous = false): string {
  const file = rt.logPath(pod.metadata.uid!, container, previous);
  return file && fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const sh = (script: string): Pick<Container, 'command'> => ({command: ['sh', '-c', script]});
const node = (script: string): Pick<Container, 'command'> => ({command: [process.execPath, '-e', script]});

describe('running pods', () => {
  it('runs a pod as a process group and reports it Running and Ready with the node IP', async () => {
    const spawned: {detached?: boolean}[] = [];
    const spy: SpawnFn = (command, args, options) => {
      spawned.push(options);
      return defaultSpawn(command, args, options);
    };
    const rt = makeRuntime({spawn: spy});
    const phases: string[] = [];
    rt.on('status', (_uid, status) => phases.push(status.phase));
    const pod = makePod({containers: [{name: 'app', image: 'busybox', ...sh('echo started; exec sleep 30')}]});
    await rt.syncPod(pod);
    const status = statusOf(rt, pod);
    expect(status.phase).toBe('Running');
    expect(status.podIP).toBe('10.9.8.7');
    expect(status.hostIP).toBe('10.9.8.7');
    expect(status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(app(rt, pod)).toMatchObject({name: 'app', ready: true, started: true, restartCount: 0, image: 'busybox'});
    const pid = pidOf(app(rt, pod).containerID);
    expect(isAlive(pid)).toBe(true);
    expect(spawned).toEqual([expect.objectContaining({detached: true})]);
    expect(rt.podPids(pod.metadata.uid!)).toEqual([pid]);
    await waitFor(() => logOf(rt, pod).includes('stdout F started'), 'the log line');

    await rt.killPod(pod, 5);
    expect(isAlive(pid)).toBe(false);
    expect(app(rt, pod).state.terminated).toMatchObject({exitCode: 143, reason: 'Error'});
    expect(statusOf(rt, pod).phase).toBe('Failed');
    expect(phases).toEqual(expect.arrayContaining(['Running', 'Failed']));
  });

  it('runs init containers in order, each to completion, before the app containers', async () => {
    const rt = makeRuntime();
    const trace = path.join(tempDir(), 'trace');
    const pod = makePod({
      restartPolicy: 'Never',
      initContainers: [
        {name: 'first', ...sh(`sleep 0.3; echo first >> ${trace}`)},
        {name: 'second', ...sh(`echo second >> ${trace}`)},
      ],
      containers: [{name: 'app', ...sh(`echo app >> ${trace}`)}],
    });
    await rt.syncPod(pod);
    const early = statusOf(rt, pod);
    expect(early.phase).toBe('Pending');
    expect(early.initContainerStatuses?.map((s) => Object.keys(s.state)[0])).toEqual(['running', 'waiting']);
    expect(early.containerStatuses[0].state.waiting?.reason).toBe('PodInitializing');
    expect(early.conditions.find((c) => c.type === 'Initialized')?.message).toBe('containers with incomplete status: [first second]');
    await waitFor(() => statusOf(rt, pod).phase === 'Succeeded', 'Succeeded');
    expect(fs.readFileSync(trace, 'utf8')).toBe('first\nsecond\napp\n');
    expect(statusOf(rt, pod).initContainerStatuses?.map((s) => s.state.terminated?.reason)).toEqual(['Completed', 'Completed']);
  });

  it('fails the pod when an init container fails under restartPolicy Never, and never starts the app', async () => {
    const rt = makeRuntime();
    const pod = makePod({restartPolicy: 'Never', initContainers: [{name: 'init', ...sh('exit 7')}], containers: [{name: 'app', ...sh('sleep 30')}]});
    await rt.syncPod(pod);
    await waitFor(() => statusOf(rt, pod).phase === 'Failed', 'Failed');
    expect(statusOf(rt, pod).initContainerStatuses?.[0].state.terminated).toMatchObject({exitCode: 7, reason: 'Error'});
    expect(app(rt, pod).state.waiting?.reason).toBe('PodInitializing');
  });

  it.each([
    ['Never', 'exit 3', 'Failed', 3, 'Error'],
    ['Never', 'exit 0', 'Succeeded', 0, 'Completed'],
    ['OnFailure', 'exit 0', 'Succeeded', 0, 'Completed'],
    // $$ would be the Kubernetes escape of $ (the command is expanded), so $$$$ is the shell's $$.
    ['Never', 'kill -9 $$$$', 'Failed', 137, 'Error'],
  ] as const)('restartPolicy %s with `%s` ends %s with exit code %i (%s)', async (restartPolicy, script, phase, exitCode, reason) => {
    const rt = makeRuntime();
    const pod = makePod({restartPolicy, containers: [{name: 'app', ...sh(script)}]});
    await rt.syncPod(pod);
    await waitFor(() => statusOf(rt, pod).phase === phase, phase);
    expect(app(rt, pod)).toMatchObject({restartCount: 0, ready: false, state: {terminated: {exitCode, reason}}});
  });

  it.each([['Always', 'exit 0'], ['OnFailure', 'exit 1'], ['Always', 'exit 2']] as const)(
    'restartPolicy %s restarts a container that ran `%s`, keeping its last state', async (restartPolicy, script) => {
      const rt = makeRuntime();
      const pod = makePod({restartPolicy, containers: [{name: 'app', ...sh(`echo run; ${script}`)}]});
      await rt.syncPod(pod);
      await waitFor(() => app(rt, pod).restartCount >= 1 && app(rt, pod).lastState.terminated, 'a restart');
      expect(statusOf(rt, pod).phase).toBe('Running');
      expect(app(rt, pod).lastState.terminated?.exitCode).toBe(Number(script.slice(5)));
      // Each instance has its own log file.
      await waitFor(() => logOf(rt, pod, 'app', true).includes('stdout F run'), 'the previous instance log');
    },
  );
});

describe('crash-loop back-off (fake clock)', () => {
  it('restarts at once, then waits 10s, then 20s, in CrashLoopBackOff', async () => {
    const clock = new FakeClock(Date.parse('2024-05-01T10:00:00Z'));
    const rt = makeRuntime({clock});
    const events: RuntimeEvent[] = [];
    rt.on('event', (e) => events.push(e));
    const pod = makePod({restartPolicy: 'Always', containers: [{name: 'app', ...sh('exit 1')}]}, 'crash');
    await rt.syncPod(pod);
    // The first crash restarts at once; the second waits.
    await waitFor(() => app(rt, pod).restartCount === 1 && app(rt, pod).state.waiting, 'the second crash');
    const uid = pod.metadata.uid!;
    expect(app(rt, pod).state.waiting).toEqual({reason: 'CrashLoopBackOff', message: `back-off 10s restarting failed container=app pod=crash_default(${uid})`});
    expect(app(rt, pod).lastState.terminated).toMatchObject({exitCode: 1, reason: 'Error'});
    expect(statusOf(rt, pod).phase).toBe('Running');
    expect(events.map((e) => e.reason)).toContain('BackOff');

    await clock.advance(9_000);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(app(rt, pod).restartCount).toBe(1);
    await clock.advance(1_000);
    await waitFor(() => app(rt, pod).restartCount === 2 && app(rt, pod).state.waiting, 'the third crash');
    expect(app(rt, pod).state.waiting?.message).toContain('back-off 20s');
    await clock.advance(19_000);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(app(rt, pod).restartCount).toBe(2);
    await clock.advance(1_000);
    await waitFor(() => app(rt, pod).restartCount === 3, 'the fourth start');
  });
});

describe('probes', () => {
  it('restarts a container whose exec liveness probe fails, running the probe in the container environment', async () => {
    const rt = makeRuntime();
    const marker = path.join(tempDir(), 'alive');
    const events: RuntimeEvent[] = [];
    rt.on('event', (e) => events.push(e));
    const pod = makePod({containers: [{
      name: 'app', ...sh('exec sleep 30'), env: [{name: 'MARKER', value: marker}],
      livenessProbe: {exec: {command: ['sh', '-c', 'test -f "$MARKER"']}, periodSeconds: 0.05, failureThreshold: 2},
    }]});
    fs.writeFileSync(marker, '');
    await rt.syncPod(pod);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(app(rt, pod).restartCount).toBe(0);
    fs.rmSync(marker);
    await waitFor(() => app(rt, pod).restartCount === 1, 'a liveness restart');
    expect(app(rt, pod).lastState.terminated?.exitCode).toBe(143);
    expect(events.map((e) => e.message)).toContain('Container app failed liveness probe, will be restarted');
  });

  it('is ready once an httpGet readiness probe succeeds against the container server', async () => {
    const rt = makeRuntime();
    const port = await freePort();
    const pod = makePod({containers: [{
      name: 'app', ...node(`setTimeout(() => require('http').createServer((q, r) => { r.statusCode = q.url === '/bad' ? 500 : 200; r.end('ok'); }).listen(${port}), 200)`),
      ports: [{name: 'http', containerPort: port}],
      readinessProbe: {httpGet: {path: '/', port: 'http'}, periodSeconds: 0.05},
    }, {
      name: 'bad', ...sh('exec sleep 30'),
      readinessProbe: {httpGet: {path: '/bad', port}, periodSeconds: 0.05, timeoutSeconds: 0.5},
    }]});
    await rt.syncPod(pod);
    expect(app(rt, pod).ready).toBe(false);
    await waitFor(() => app(rt, pod).ready, 'app ready');
    await waitFor(() => rt.snapshot()[0].containers[1].probes.readiness?.message?.includes('500'), 'the 500');
    expect(rt.snapshot()[0].containers[1].probes.readiness).toEqual({result: 'failure', message: 'HTTP probe failed with statuscode: 500'});
    const ready = statusOf(rt, pod).conditions.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [bad]'});
  });

  it('is ready once a tcpSocket probe connects', async () => {
    const rt = makeRuntime();
    const port = await freePort();
    const pod = makePod({containers: [{
      name: 'app', ...node(`setTimeout(() => require('net').createServer(() => {}).listen(${port}), 200)`),
      readinessProbe: {tcpSocket: {port}, periodSeconds: 0.05},
    }]});
    await rt.syncPod(pod);
    expect(app(rt, pod).ready).toBe(false);
    await waitFor(() => app(rt, pod).ready, 'ready');
  });

  it('holds liveness back until the startup probe succeeds', async () => {
    const rt = makeRuntime();
    const started = path.join(tempDir(), 'started');
    const pod = makePod({containers: [{
      name: 'app', ...sh('exec sleep 30'),
      startupProbe: {exec: {command: ['test', '-f', started]}, periodSeconds: 0.05, failureThreshold: 1000},
      livenessProbe: {exec: {command: ['false']}, periodSeconds: 0.05, failureThreshold: 1},
    }]});
    await rt.syncPod(pod);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(app(rt, pod)).toMatchObject({started: false, ready: false, restartCount: 0});
    fs.writeFileSync(started, '');
    await waitFor(() => app(rt, pod).restartCount === 1, 'the liveness restart after startup');
  });
});

describe('graceful termination', () => {
  it('gives SIGTERM to a process that handles it, within the grace period', async () => {
    const rt = makeRuntime();
    const pod = makePod({containers: [{name: 'app', ...sh('trap "echo bye; exit 0" TERM; echo ready; while true; do sleep 0.05; done')}]});
    await rt.syncPod(pod);
    await waitFor(() => logOf(rt, pod).includes('ready'), 'ready');
    const t0 = Date.now();
    await rt.killPod(pod, 10);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(app(rt, pod).state.terminated).toMatchObject({exitCode: 0, reason: 'Completed'});
    expect(logOf(rt, pod)).toContain('stdout F bye');
  });

  it('sends SIGKILL after the grace period to a process that ignores SIGTERM', async () => {
    const rt = makeRuntime();
    const pod = makePod({terminationGracePeriodSeconds: 0.4, containers: [{name: 'app', ...node("process.on('SIGTERM', () => console.log('ignored')); console.log('ready'); setInterval(() => {}, 1000)")}]});
    await rt.syncPod(pod);
    await waitFor(() => logOf(rt, pod).includes('ready'), 'ready');
    const t0 = Date.now();
    await rt.killPod(pod);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(380);
    expect(app(rt, pod).state.terminated).toMatchObject({exitCode: 137, reason: 'Error'});
    expect(logOf(rt, pod)).toContain('stdout F ignored');
  });

  it('terminates the children of a container with it', async () => {
    const rt = makeRuntime();
    const pidFile = path.join(tempDir(), 'child');
    const pod = makePod({containers: [{name: 'app', ...sh(`sleep 30 & echo $! > ${pidFile}; wait`)}]});
    await rt.syncPod(pod);
    const child = Number(await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim(), 'the child pid'));
    expect(isAlive(child)).toBe(true);
    await rt.killPod(pod, 5);
    await waitFor(() => !isAlive(child), 'the child to die', 2000);
  });

  it('leaves nothing of a container behind when its main process exits, and touches no other process', async () => {
    const rt = makeRuntime();
    const stranger = nodeSpawn('sleep', ['30'], {stdio: 'ignore'});
    strays.push(stranger);
    const pidFile = path.join(tempDir(), 'child');
    const pod = makePod({restartPolicy: 'Never', containers: [{name: 'app', ...sh(`sleep 30 & echo $! > ${pidFile}; exit 0`)}]});
    await rt.syncPod(pod);
    await waitFor(() => statusOf(rt, pod).phase === 'Succeeded', 'Succeeded');
    const child = Number(fs.readFileSync(pidFile, 'utf8').trim());
    await waitFor(() => !isAlive(child), 'the orphan to die', 2000);
    await rt.shutdown(0);
    expect(isAlive(stranger.pid!)).toBe(true);
  });
});

describe('container setup', () => {
  it('passes env from fieldRef and values, expanded in args', async () => {
    const rt = makeRuntime();
    const pod = makePod({restartPolicy: 'Never', containers: [{
      name: 'app', command: ['sh', '-c'], args: ['echo "$(GREETING) $NS $POD_UID $APP $IP $NODE"'],
      env: [
        {name: 'NAME', valueFrom: {fieldRef: {fieldPath: 'metadata.name'}}},
        {name: 'GREETING', value: 'hello $(NAME)'},
        {name: 'NS', valueFrom: {fieldRef: {fieldPath: 'metadata.namespace'}}},
        {name: 'POD_UID', valueFrom: {fieldRef: {fieldPath: 'metadata.uid'}}},
        {name: 'APP', valueFrom: {fieldRef: {fieldPath: "metadata.labels['app']"}}},
        {name: 'IP', valueFrom: {fieldRef: {fieldPath: 'status.podIP'}}},
        {name: 'NODE', valueFrom: {fieldRef: {fieldPath: 'spec.nodeName'}}},
      ],
    }]}, 'envpod');
    await rt.syncPod(pod);
    await waitFor(() => statusOf(rt, pod).phase === 'Succeeded', 'Succeeded');
    expect(logOf(rt, pod)).toMatch(new RegExp(`^\\S+ stdout F hello envpod default ${pod.metadata.uid} demo 10.9.8.7 node-1\\n$`));
  });

  it('waits with CreateContainerConfigError for a ConfigMap that does not exist, and starts once it does', async () => {
    const data: Record<string, string> = {};
    let exists = false;
    const rt = makeRuntime({resolveEnv: {configMap: async () => (exists ? data : undefined), secret: async () => undefined}, backoff: {initialMs: 50, maxMs: 100}});
    const pod = makePod({restartPolicy: 'Never', containers: [{name: 'app', ...sh('echo $MODE'), env: [{name: 'MODE', valueFrom: {configMapKeyRef: {name: 'cfg', key: 'mode'}}}]}]});
    await rt.syncPod(pod);
    expect(app(rt, pod).state.waiting).toEqual({reason: 'CreateContainerConfigError', message: 'configmap "cfg" not found'});
    data.mode = 'fast';
    exists = true;
    await waitFor(() => statusOf(rt, pod).phase === 'Succeeded', 'Succeeded');
    expect(logOf(rt, pod)).toContain('stdout F fast');
  });

  it('fails a pod with a container without command, starting nothing', async () => {
    const spawned: string[] = [];
    const rt = makeRuntime({spawn: (c, a, o) => (spawned.push(c), defaultSpawn(c, a, o))});
    const pod = makePod({containers: [{name: 'web', image: 'nginx'}, {name: 'side', ...sh('sleep 30')}]});
    await rt.syncPod(pod);
    const status = statusOf(rt, pod);
    expect(status.phase).toBe('Failed');
    expect(status.reason).toBe('CommandRequired');
    expect(status.message).toContain('cannot run the entrypoint of image "nginx"; set command (and args)');
    expect(status.containerStatuses[0].state.waiting?.reason).toBe('CommandRequired');
    expect(spawned).toEqual([]);
  });

  it.each([
    [{command: ['no-such-binary-xyz']}, 'exec: "no-such-binary-xyz": executable file not found in $PATH'],
    [{command: ['true'], workingDir: '/no/such/dir'}, 'working directory "/no/such/dir" does not exist (the process runtime does not create it)'],
  ])('reports StartError for %j', async (container, message) => {
    const rt = makeRuntime();
    const pod = makePod({restartPolicy: 'Never', containers: [{name: 'app', ...container}]});
    await rt.syncPod(pod);
    await waitFor(() => statusOf(rt, pod).phase === 'Failed', 'Failed');
    expect(app(rt, pod).state.terminated).toMatchObject({exitCode: 128, reason: 'StartError', message});
  });

  it('restarts a running container whose spec changed', async () => {
    const rt = makeRuntime();
    const pod = makePod({containers: [{name: 'app', ...sh('echo one; exec sleep 30')}]});
    await rt.syncPod(pod);
    await waitFor(() => logOf(rt, pod).includes('one'), 'the first instance');
    await rt.syncPod({...pod, spec: {...pod.spec, containers: [{name: 'app', ...sh('echo two; exec sleep 30')}]}});
    await waitFor(() => app(rt, pod).restartCount === 1 && logOf(rt, pod).includes('two'), 'the second instance');
    expect(app(rt, pod).state.running).toBeDefined();
    expect(app(rt, pod).lastState.terminated?.exitCode).toBe(143);
  });

  it('runs in workingDir', async () => {
    const rt = makeRuntime();
    const dir = fs.realpathSync(tempDir());
    const pod = makePod({restartPolicy: 'Never', containers: [{name: 'app', ...sh('pwd'), workingDir: dir}]});
    await rt.syncPod(pod);
    await waitFor(() => statusOf(rt, pod).phase === 'Succeeded', 'Succeeded');
    expect(logOf(rt, pod)).toContain(`stdout F ${dir}\n`);
  });

  const asRoot = process.getuid?.() === 0 ? it : it.skip;
  asRoot('runs as securityContext.runAsUser and runAsGroup (the agent is root)', async () => {
    const rt = makeRuntime();
    const pod = makePod({restartPolicy: 'Never', securityContext: {runAsGroup: 65534}, containers: [{name: 'app', ...sh('echo "$(id -u):$(id -g)"'), securityContext: {runAsUser: 65534}}]});
    await rt.syncPod(pod);
    await waitFor(() => statusOf(rt, pod).phase === 'Succeeded', 'Succeeded');
    expect(logOf(rt, pod)).toContain('stdout F 65534:65534');
  });

  it('rotates a chatty container log by size, keeping logMaxFiles files', async () => {
    const rt = makeRuntime({logMaxSize: 2000, logMaxFiles: 3});
    const pod = makePod({restartPolicy: 'Never', containers: [{name: 'app', ...sh('i=0; while [ $i -lt 300 ]; do echo "line $i"; i=$((i+1)); done; echo err >&2')}]});
    await rt.syncPod(pod);
    await waitFor(() => statusOf(rt, pod).phase === 'Succeeded', 'Succeeded');
    const dir = path.dirname(rt.logPath(pod.metadata.uid!, 'app')!);
    const files = fs.readdirSync(dir).sort();
    expect(files).toHaveLength(3);
    expect(files.filter((f) => f.startsWith('0.log.'))).toHaveLength(2);
    for (const f of files) expect(fs.statSync(path.join(dir, f)).size).toBeLessThanOrEqual(2000);
    const current = logOf(rt, pod);
    expect(current).toContain('stdout F line 299\n');
    expect(current).toContain('stderr F err\n');
  });
});
