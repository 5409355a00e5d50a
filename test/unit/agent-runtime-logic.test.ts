/** The pure parts of the process runtime: back-off, expansion, env, probe thresholds, status, cgroup limits, log files. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {Backoff, formatDuration} from '../../src/daemons/agent/runtime/backoff.js';
import {expand} from '../../src/daemons/agent/runtime/expansion.js';
import {buildEnvironment, expandCommand, fieldRefValue} from '../../src/daemons/agent/runtime/env.js';
import {ProbeTracker} from '../../src/daemons/agent/runtime/probe-tracker.js';
import {podPhase, buildPodStatus, qosClass} from '../../src/daemons/agent/runtime/pod-status.js';
import {PodCgroups, cpuMax, podLimits} from '../../src/daemons/agent/runtime/cgroup.js';
import {commandRequiredFailure, identityProblem} from '../../src/daemons/agent/runtime/preflight.js';
import {RotatingLogWriter, criTimestamp} from '../../src/daemons/agent/runtime/log-writer.js';
import type {ContainerStatus, Pod} from '../../src/daemons/agent/runtime/types.js';

describe('crash-loop back-off', () => {
  it('restarts at once the first time, then waits 10s doubling to 5m', () => {
    const b = new Backoff();
    let now = 0;
    const waits: number[] = [];
    for (let crash = 0; crash < 8; crash++) {
      const wait = b.remaining('c', now, now); // the container crashed right now
      waits.push(wait);
      now += wait;
      b.next('c', now); // restarted
    }
    expect(waits).toEqual([0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });

  it('forgets the back-off of a container that ran more than 10 minutes', () => {
    const b = new Backoff();
    b.next('c', 0);
    b.next('c', 10_000); // back-off now 20s, counted from the next crash
    expect(b.remaining('c', 20_000, 25_000)).toBe(15_000);
    expect(b.remaining('c', 10_000 + 600_001, 10_000 + 600_001)).toBe(0);
    b.next('c', 10_000 + 600_001);
    expect(b.current('c')).toBe(10_000);
  });

  it.each([[10_000, '10s'], [160_000, '2m40s'], [300_000, '5m0s']])('formats %i ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('$(VAR) expansion', () => {
  const vars: Record<string, string> = {A: 'a', EMPTY: ''};
  it.each([
    ['$(A)-x', 'a-x'],
    ['$(MISSING)', '$(MISSING)'],
    ['$$(A)', '$(A)'],
    ['$(EMPTY)z', 'z'],
    ['cost $5', 'cost $5'],
    ['$(A', '$(A'],
    ['$', '$'],
  ])('%s -> %s', (input, output) => {
    expect(expand(input, (n) => vars[n])).toBe(output);
  });
});

const basePod: Pod = {
  metadata: {name: 'web', namespace: 'shop', uid: 'uid-1', labels: {app: 'web', 'orch.io/x': 'y'}, annotations: {note: 'n'}},
  spec: {nodeName: 'node-a', serviceAccountName: 'sa', containers: [{name: 'app', command: ['sh'], resources: {limits: {cpu: '500m', memory: '64Mi'}}}]},
};

describe('environment', () => {
  it.each([
    ['metadata.name', 'web'],
    ['metadata.namespace', 'shop'],
    ['metadata.uid', 'uid-1'],
    ["metadata.labels['app']", 'web'],
    ["metadata.labels['orch.io/x']", 'y'],
    ["metadata.annotations['note']", 'n'],
    ["metadata.labels['absent']", ''],
    ['spec.nodeName', 'node-a'],
    ['spec.serviceAccountName', 'sa'],
    ['status.podIP', '10.0.0.5'],
    ['status.hostIP', '10.0.0.5'],
  ])('fieldRef %s is %s', (fieldPath, value) => {
    expect(fieldRefValue(basePod, {fieldPath}, '10.0.0.5')).toBe(value);
  });

  const resolver = {
    configMap: async (ns: string, name: string) => (ns === 'shop' && name === 'cfg' ? {MODE: 'fast', 'bad key': 'x'} : undefined),
    secret: async (ns: string, name: string) => (ns === 'shop' && name === 'creds' ? {password: 's3cret'} : undefined),
  };
  const ctx = {nodeIP: '10.0.0.5', resolver, base: {PATH: '/bin'}};

  it('builds envFrom, then env in order with $(VAR) references, fieldRef, configMap and secret keys', async () => {
    const container = {
      name: 'app', command: ['echo', '$(GREETING)'], args: ['$(POD_NAME)'], resources: {limits: {cpu: '500m'}},
      envFrom: [{configMapRef: {name: 'cfg'}, prefix: 'CFG_'}],
      env: [
        {name: 'POD_NAME', valueFrom: {fieldRef: {fieldPath: 'metadata.name'}}},
        {name: 'GREETING', value: 'hello $(POD_NAME) in $(CFG_MODE) $(LATER)'},
        {name: 'LATER', value: 'l'},
        {name: 'PASSWORD', valueFrom: {secretKeyRef: {name: 'creds', key: 'password'}}},
        {name: 'CPU', valueFrom: {resourceFieldRef: {resource: 'limits.cpu', divisor: '1m'}}},
        {name: 'OPTIONAL', valueFrom: {configMapKeyRef: {name: 'nope', key: 'k', optional: true}}},
      ],
    };
    const env = await buildEnvironment(basePod, container, ctx);
    expect(env).toEqual({
      PATH: '/bin', CFG_MODE: 'fast', POD_NAME: 'web', GREETING: 'hello web in fast $(LATER)', LATER: 'l',
      PASSWORD: 's3cret', CPU: '500',
    });
    expect(expandCommand(container, env)).toEqual(['echo', 'hello web in fast $(LATER)', 'web']);
  });

  it.each([
    [{configMapKeyRef: {name: 'nope', key: 'k'}}, 'configmap "nope" not found'],
    [{configMapKeyRef: {name: 'cfg', key: 'k'}}, "couldn't find key k in ConfigMap shop/cfg"],
    [{secretKeyRef: {name: 'creds', key: 'user'}}, "couldn't find key user in Secret shop/creds"],
  ])('refuses a missing reference %j', async (valueFrom, message) => {
    await expect(buildEnvironment(basePod, {name: 'app', env: [{name: 'X', valueFrom}]}, ctx)).rejects.toThrow(message);
  });
});

describe('probe thresholds', () => {
  it.each([
    ['liveness' as const, 3, 1, ['failure', 'failure', 'failure'], ['success', 'success', 'failure']],
    ['liveness' as const, 3, 1, ['failure', 'success', 'failure', 'failure'], ['success', 'success', 'success', 'success']],
    ['readiness' as const, 3, 2, ['success', 'success', 'failure'], ['failure', 'success', 'success']],
    ['readiness' as const, 1, 1, ['success', 'failure'], ['success', 'failure']],
    ['startup' as const, 2, 1, ['failure', 'failure'], ['unknown', 'failure']],
  ])('%s failureThreshold=%i successThreshold=%i: %j reports %j', (kind, failureThreshold, successThreshold, outcomes, reported) => {
    const t = new ProbeTracker(kind, {failureThreshold, successThreshold});
    expect(outcomes.map((o) => (t.observe(o as 'success' | 'failure'), t.result))).toEqual(reported);
  });
});

const running = (name: string): ContainerStatus => ({name, state: {running: {startedAt: 't'}}, lastState: {}, ready: true, restartCount: 0, image: '', imageID: '', started: true});
const exited = (name: string, exitCode: number): ContainerStatus => ({...running(name), ready: false, started: false, state: {terminated: {exitCode}}});
const waiting = (name: string, afterExit?: number): ContainerStatus => ({...running(name), ready: false, started: false, state: {waiting: {reason: 'x'}}, lastState: afterExit === undefined ? {} : {terminated: {exitCode: afterExit}}});

describe('pod phase', () => {
  const pod = (restartPolicy: 'Always' | 'OnFailure' | 'Never', init = false): Pod => ({
    metadata: {uid: 'u'},
    spec: {restartPolicy, containers: [{name: 'a'}, {name: 'b'}], ...(init ? {initContainers: [{name: 'i'}]} : {})},
  });
  it.each([
    ['Always', [running('a'), running('b')], [], false, 'Running'],
    ['Never', [waiting('a'), running('b')], [], false, 'Pending'],
    ['Never', [exited('a', 0), exited('b', 0)], [], false, 'Succeeded'],
    ['Never', [exited('a', 0), exited('b', 1)], [], false, 'Failed'],
    ['OnFailure', [exited('a', 0), exited('b', 1)], [], false, 'Running'],
    ['OnFailure', [exited('a', 0), exited('b', 0)], [], false, 'Succeeded'],
    ['Always', [exited('a', 0), exited('b', 0)], [], false, 'Running'],
    ['Always', [exited('a', 0), waiting('b', 1)], [], false, 'Running'],
    ['Always', [exited('a', 143), exited('b', 0)], [], true, 'Failed'],
    ['Always', [exited('a', 0), exited('b', 0)], [], true, 'Succeeded'],
    ['Never', [waiting('a'), waiting('b')], [running('i')], false, 'Pending'],
    ['Never', [waiting('a'), waiting('b')], [exited('i', 2)], false, 'Failed'],
    ['OnFailure', [waiting('a'), waiting('b')], [waiting('i', 2)], false, 'Pending'],
  ] as const)('%s with %j (init %j, killed %s) is %s', (policy, app, init, terminal, phase) => {
    expect(podPhase(pod(policy, init.length > 0), [...init], [...app], terminal)).toBe(phase);
  });

  it('reports unready containers and keeps transition times while a condition holds', () => {
    const input = {pod: pod('Always', true), nodeIP: '10.1.1.1', startTime: 't0', now: 't1', initContainers: [running('i')], containers: [waiting('a'), waiting('b')], terminal: false};
    const first = buildPodStatus(input);
    expect(first.phase).toBe('Pending');
    expect(first.conditions.map((c) => [c.type, c.status, c.reason ?? '', c.message ?? ''])).toEqual([
      ['PodReadyToStartContainers', 'True', '', ''],
      ['Initialized', 'False', 'ContainersNotInitialized', 'containers with incomplete status: [i]'],
      ['Ready', 'False', 'ContainersNotReady', 'containers with unready status: [a b]'],
      ['ContainersReady', 'False', 'ContainersNotReady', 'containers with unready status: [a b]'],
      ['PodScheduled', 'True', '', ''],
    ]);
    const later = buildPodStatus({...input, now: 't2', initContainers: [exited('i', 0)], containers: [running('a'), running('b')], previousConditions: first.conditions});
    expect(later.phase).toBe('Running');
    expect(later.podIP).toBe('10.1.1.1');
    expect(later.conditions.map((c) => [c.type, c.status, c.lastTransitionTime])).toEqual([
      ['PodReadyToStartContainers', 'True', 't1'], ['Initialized', 'True', 't2'], ['Ready', 'True', 't2'], ['ContainersReady', 'True', 't2'], ['PodScheduled', 'True', 't1'],
    ]);
  });

  it.each([
    [{}, 'BestEffort'],
    [{limits: {cpu: '1', memory: '1Gi'}}, 'Guaranteed'],
    [{limits: {cpu: '1', memory: '1Gi'}, requests: {cpu: '500m'}}, 'Burstable'],
    [{requests: {memory: '10Mi'}}, 'Burstable'],
  ])('QoS of resources %j is %s', (resources, qos) => {
    expect(qosClass({metadata: {}, spec: {containers: [{name: 'a', resources}]}})).toBe(qos);
  });
});

describe('preflight', () => {
  it('fails a pod whose container has no command, naming it and its image', () => {
    const failure = commandRequiredFailure({metadata: {}, spec: {containers: [{name: 'ok', command: ['true']}, {name: 'web', image: 'nginx:1.27'}]}});
    expect(failure?.reason).toBe('CommandRequired');
    expect(failure?.message).toBe('container "web" has no command: the process runtime runs commands on this host and cannot run the entrypoint of image "nginx:1.27"; set command (and args)');
    expect(commandRequiredFailure(basePod)).toBeUndefined();
  });

  it.each([
    [{uid: 1000}, 0, undefined],
    [{uid: 1000}, 1000, undefined],
    [{uid: 0}, 1000, 'runAsUser 0 needs the agent to run as root (it runs as uid 1000): the process runtime starts processes with setuid'],
    [{gid: 5}, 1000, 'runAsGroup 5 needs the agent to run as root (it runs as gid 1000): the process runtime starts processes with setgid'],
  ])('identity %j as uid %i: %s', (identity, agentId, problem) => {
    expect(identityProblem(identity, agentId, agentId)).toBe(problem);
  });
});

describe('pod cgroups', () => {
  it.each([
    [[{cpu: '500m', memory: '64Mi'}, {cpu: '250m', memory: '32Mi'}], [], {cpu: 0.75, memory: 96 * 1024 * 1024}],
    [[{cpu: '500m'}, {cpu: '1'}], [], {cpu: 1.5, memory: undefined}],
    [[{cpu: '500m', memory: '64Mi'}], [{cpu: '2', memory: '16Mi'}], {cpu: 2, memory: 64 * 1024 * 1024}],
    [[{cpu: '500m'}, {}], [], {cpu: undefined, memory: undefined}],
  ] as [Record<string, string>[], Record<string, string>[], object][])('limits of containers %j with init %j are %j', (apps, inits, limits) => {
    const c = (l: Record<string, string>, i: number) => ({name: `c${i}`, resources: {limits: l}});
    expect(podLimits({metadata: {}, spec: {containers: apps.map(c), initContainers: inits.map(c)}})).toEqual(limits);
  });

  it.each([[undefined, 'max 100000'], [0.5, '50000 100000'], [0.001, '1000 100000'], [2, '200000 100000']])('cpu.max for %s cores is %s', (cores, text) => {
    expect(cpuMax(cores)).toBe(text);
  });

  it('writes the limits into a pod cgroup of a cgroup v2 hierarchy, and refuses a v1 one', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-'));
    const cgroups = new PodCgroups(root);
    expect(cgroups.check()).toEqual({available: false, reason: `no cgroup v2 hierarchy at ${root}`});
    fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    fs.writeFileSync(path.join(root, 'cgroup.subtree_control'), '');
    expect(cgroups.check()).toEqual({available: true});
    cgroups.prepare();
    expect(fs.readFileSync(path.join(root, 'orch-pods', 'cgroup.subtree_control'), 'utf8')).toBe('+cpu +memory');
    const dir = cgroups.ensurePod('u1', {cpu: 0.25, memory: 1048576});
    expect(fs.readFileSync(path.join(dir, 'cpu.max'), 'utf8')).toBe('25000 100000');
    expect(fs.readFileSync(path.join(dir, 'memory.max'), 'utf8')).toBe('1048576');
    cgroups.addProcess('u1', 4242);
    expect(fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8')).toBe('4242\n');
    fs.writeFileSync(path.join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
    expect(cgroups.oomKills('u1')).toBe(1);
    fs.rmSync(root, {recursive: true});
  });
});

describe('container log files', () => {
  it('writes CRI lines, joins chunks into lines, and rotates keeping maxFiles files', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logs-'));
    let now = Date.parse('2024-05-01T10:00:00.123Z');
    const file = path.join(dir, '0.log');
    const writer = new RotatingLogWriter(file, {maxSize: 200, maxFiles: 3, now: () => now});
    writer.write('stdout', 'hel');
    writer.write('stdout', 'lo\nwor');
    writer.write('stderr', 'oops\n');
    writer.end('stdout');
    expect(fs.readFileSync(file, 'utf8')).toBe(
      '2024-05-01T10:00:00.123000000Z stdout F hello\n' +
      '2024-05-01T10:00:00.123000000Z stderr F oops\n' +
      '2024-05-01T10:00:00.123000000Z stdout F wor\n',
    );
    for (let i = 0; i < 20; i++) {
      now += 1000;
      writer.write('stdout', `line ${i} ${'x'.repeat(40)}\n`);
    }
    writer.close();
    const files = fs.readdirSync(dir).sort();
    expect(files).toHaveLength(3);
    expect(files).toContain('0.log');
    for (const f of files) expect(fs.statSync(path.join(dir, f)).size).toBeLessThanOrEqual(200);
    expect(files.filter((f) => /^0\.log\.\d{8}-\d{6}$/.test(f))).toHaveLength(2);
    expect(fs.readFileSync(file, 'utf8')).toContain('line 19');
    fs.rmSync(dir, {recursive: true});
  });

  it('stamps records with nine fractional digits', () => {
    expect(criTimestamp(Date.parse('2024-01-02T03:04:05.006Z'))).toBe('2024-01-02T03:04:05.006000000Z');
  });
});
