/**
 * Pods from the API server, as users run them: `orch apiserver` and `orch agent --orchconfig` as
 * child processes, pods created and deleted with kubectl. No scheduler runs, so each pod names the
 * agent's node in spec.nodeName. The containers are tiny shell or node commands; what the test
 * checks is what kubectl users see (phase, container statuses, restart counts, Ready) and the
 * processes themselves (their pids, from containerID `process://<pid>`).
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {freePort, kubectl, sleep, startApiServerProcess, type ServerProcess} from '../helpers/apiserver.js';
import {eventually, killGroupIfLeader, processAlive, runningPid, shellPod, startAgent, type AgentProcess} from '../helpers/agent.js';

const NODE = 'pods-node';
const SMALL_NODE = 'small-node';

let server: ServerProcess;
let agent: AgentProcess;
let small: AgentProcess;
/** Marker files the containers write, and the readiness switch. */
let work: string;
const pids = new Set<number>();

const kc = (args: string[], input?: string) => kubectl(server.orchconfigPath, args, {input});

async function create(manifest: Record<string, any>, nodeName = NODE): Promise<void> {
  manifest.metadata.namespace ??= 'default';
  manifest.spec.nodeName = nodeName;
  const r = await kc(['create', '-f', '-'], JSON.stringify(manifest));
  if (r.code !== 0) throw new Error(`kubectl create ${manifest.metadata.name}: ${r.stderr}`);
}

/** The pod as the API server has it (undefined once it is gone). */
async function apiPod(name: string): Promise<any> {
  const r = await server.client.get(`/api/v1/namespaces/default/pods/${name}`);
  if (r.status === 404) return undefined;
  if (r.status !== 200) throw new Error(`GET pod ${name}: HTTP ${r.status} ${r.text}`);
  const pid = runningPid(r.body);
  if (pid !== undefined) pids.add(pid);
  return r.body;
}

/** The pod once `test` holds for it (bounded). */
function podWhen(name: string, test: (pod: any) => boolean, what: string, timeoutMs = 10_000): Promise<any> {
  return eventually(async () => {
    const pod = await apiPod(name);
    return pod && test(pod) ? pod : undefined;
  }, `pod ${name}: ${what}`, timeoutMs, 100);
}

/** The events the API server holds about an object, through the field selector kubectl describe uses. */
async function eventsAbout(kind: string, name: string, namespace = 'default'): Promise<any[]> {
  const selector = encodeURIComponent(`involvedObject.kind=${kind},involvedObject.name=${name}`);
  const r = await server.client.get(`/api/v1/namespaces/${namespace}/events?fieldSelector=${selector}`);
  if (r.status !== 200) throw new Error(`GET events: HTTP ${r.status} ${r.text}`);
  return r.body.items;
}

const condition = (pod: any, type: string) => pod.status?.conditions?.find((c: any) => c.type === type)?.status;
const mainStatus = (pod: any) => pod.status?.containerStatuses?.[0];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'orch-agent-pods-'));
  server = await startApiServerProcess({engine: 'sqlite'});
  [agent, small] = await Promise.all([
    startAgent({nodeName: NODE, orchconfigPath: server.orchconfigPath}),
    startAgent({nodeName: SMALL_NODE, orchconfigPath: server.orchconfigPath, args: ['--max-pods=1']}),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([agent?.dispose(), small?.dispose()]);
  // Belt and braces: any container process the agents did not stop.
  for (const pid of pids) killGroupIfLeader(pid);
  await server?.stop();
  if (work) rmSync(work, {recursive: true, force: true});
});

describe('a pod created through kubectl on the agent\'s node', () => {
  it('runs as a process, and its status (Running, containerStatuses) reaches the API server', async () => {
    await create(shellPod('sleeper', 'sleep 600'));
    const pod = await podWhen('sleeper', (p) => p.status?.phase === 'Running' && runningPid(p) !== undefined, 'Running');
    expect(processAlive(runningPid(pod)!)).toBe(true);
    expect(mainStatus(pod)).toMatchObject({name: 'main', ready: true, restartCount: 0, started: true, state: {running: {}}});
    expect(condition(pod, 'Ready')).toBe('True');
    expect(pod.status.hostIP).toBeTruthy();
    const table = await kc(['get', 'pods', '-o', 'wide']);
    expect(table.stdout).toMatch(new RegExp(`^sleeper\\s+1/1\\s+Running\\s+0\\s.*\\s${NODE}\\s`, 'm'));
  });

  it('records the container start as an event that kubectl describe shows', async () => {
    const started = await eventually(async () => (await eventsAbout('Pod', 'sleeper')).find((e) => e.reason === 'Started'), 'a Started event', 10_000, 100);
    expect(started).toMatchObject({
      type: 'Normal', message: 'Started container main', count: 1,
      involvedObject: {kind: 'Pod', name: 'sleeper', namespace: 'default', fieldPath: 'spec.containers{main}'},
      source: {component: 'agent', host: NODE},
    });
    const described = await kc(['describe', 'pod', 'sleeper']);
    expect(described.stdout).toMatch(/Normal\s+Started\s+\S+\s+agent\s+Started container main/);
  });

  it('records its start and the node\'s first conditions as events about the node', async () => {
    const reasons = await eventually(async () => {
      const seen = (await eventsAbout('Node', NODE)).map((e) => e.reason);
      return seen.includes('NodeHasSufficientPID') ? seen : undefined;
    }, 'the node condition events', 15_000, 200);
    expect(reasons).toEqual(expect.arrayContaining(['Starting', 'NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID']));
  });

  it('restarts a failing container under OnFailure: restartCount grows', async () => {
    await create(shellPod('crasher', 'sleep 0.2; exit 3', {restartPolicy: 'OnFailure'}));
    // The first restart is immediate, the second after the 10 s back-off.
    const pod = await podWhen('crasher', (p) => mainStatus(p)?.restartCount >= 2, 'restartCount >= 2', 25_000);
    expect(pod.status.phase).toBe('Running');
    expect(mainStatus(pod).lastState.terminated).toMatchObject({exitCode: 3, reason: 'Error'});
    // Each back-off adds to the count of one BackOff event rather than writing another.
    const backOffs = (await eventsAbout('Pod', 'crasher')).filter((e) => e.reason === 'BackOff');
    expect(backOffs).toEqual([expect.objectContaining({type: 'Warning', involvedObject: expect.objectContaining({fieldPath: 'spec.containers{main}'})})]);
  }, 35_000);

  it('fails the pod under Never: phase Failed, the exit code kept', async () => {
    await create(shellPod('once', 'exit 4', {restartPolicy: 'Never'}));
    const pod = await podWhen('once', (p) => p.status?.phase === 'Failed', 'phase Failed');
    expect(mainStatus(pod).restartCount).toBe(0);
    expect(mainStatus(pod).state.terminated).toMatchObject({exitCode: 4, reason: 'Error'});
    const table = await kc(['get', 'pod', 'once']);
    expect(table.stdout).toMatch(/^once\s+0\/1\s+Error\s+0\s/m);
  });

  it('flips Ready with an httpGet readiness probe', async () => {
    const port = await freePort();
    const flag = join(work, 'ready');
    // Answers 200 while the flag file exists, 503 otherwise.
    const serverScript = `require('http').createServer((q, s) => { s.statusCode = require('fs').existsSync(${JSON.stringify(flag)}) ? 200 : 503; s.end(); }).listen(${port}, '127.0.0.1')`;
    await create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'web'},
      spec: {
        containers: [{
          name: 'main',
          image: 'node',
          command: [process.execPath, '-e', serverScript],
          readinessProbe: {httpGet: {path: '/', port}, periodSeconds: 1, failureThreshold: 1, successThreshold: 1},
        }],
      },
    });
    const notReady = await podWhen('web', (p) => p.status?.phase === 'Running' && mainStatus(p)?.state?.running && condition(p, 'Ready') === 'False', 'Running, not Ready');
    expect(mainStatus(notReady).ready).toBe(false);
    writeFileSync(flag, '');
    const ready = await podWhen('web', (p) => condition(p, 'Ready') === 'True', 'Ready');
    expect(mainStatus(ready).ready).toBe(true);
    rmSync(flag);
    await podWhen('web', (p) => condition(p, 'Ready') === 'False' && mainStatus(p).ready === false, 'not Ready again');
  });

  it('terminates gracefully on kubectl delete: SIGTERM handled within the grace period, then the pod is gone', async () => {
    const marker = join(work, 'terminated');
    // The trap runs between two short sleeps; it writes the marker and exits 0.
    const script = `trap 'echo sigterm > ${marker}; exit 0' TERM; while true; do sleep 0.1; done`;
    await create(shellPod('graceful', script, {terminationGracePeriodSeconds: 20}));
    const running = await podWhen('graceful', (p) => runningPid(p) !== undefined, 'Running');
    const pid = runningPid(running)!;
    const started = Date.now();
    const deleted = await kc(['delete', 'pod', 'graceful', '--wait=true', '--timeout=30s']);
    expect(deleted.code).toBe(0);
    expect(await apiPod('graceful')).toBeUndefined();
    // Well within the 20 s grace period: the process handled SIGTERM itself, it was not SIGKILLed at the end.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(processAlive(pid)).toBe(false);
    expect(existsSync(marker) && readFileSync(marker, 'utf8').trim()).toBe('sigterm');
  }, 40_000);
});

describe('--max-pods', () => {
  it('rejects a pod over the node\'s capacity with reason OutOfpods', async () => {
    await create(shellPod('first', 'sleep 600'), SMALL_NODE);
    await podWhen('first', (p) => p.status?.phase === 'Running', 'Running');
    await create(shellPod('second', 'sleep 600'), SMALL_NODE);
    const rejected = await podWhen('second', (p) => p.status?.phase === 'Failed', 'Failed');
    expect(rejected.status.reason).toBe('OutOfpods');
    expect(rejected.status.message).toMatch(/pods/);
    // It stays rejected: its own Failed status coming back from the API server does not start it.
    await sleep(1500);
    expect((await apiPod('second')).status).toMatchObject({phase: 'Failed', reason: 'OutOfpods'});
    expect((await small.pods()).map((p) => p.metadata.name)).toEqual(['first']);
    // Deleting it needs no agent work: the pod is gone at once.
    expect((await kc(['delete', 'pod', 'second', '--wait=true', '--timeout=10s'])).code).toBe(0);
    expect(await apiPod('second')).toBeUndefined();
  });
});
