/**
 * Memory eviction as it happens on a real machine: `orch apiserver` and `orch agent` as child
 * processes, the hard threshold set relative to this machine's memory.available (computed from
 * /proc/meminfo with the agent's own formula, so the test works on any machine), and a pod that
 * allocates enough memory to cross it.
 *
 * - "quiet" (priority 0, a sleeping shell) and "hog" (priority 100, HOG_BYTES of touched memory):
 *   once the hog runs, memory.available is HOG_BYTES/2 below the threshold, so the node reports
 *   MemoryPressure=True;
 * - the lower priority goes first although it uses almost nothing (upstream's memory ranking:
 *   exceeds requests, then priority, then usage): "quiet" is evicted (Failed, reason Evicted,
 *   upstream's message), one pod per 10 s monitoring cycle, then "hog";
 * - with the hog gone memory.available is HOG_BYTES/2 above the threshold again, and MemoryPressure
 *   clears once --eviction-pressure-transition-period (5 s) has passed since it was last observed.
 * A static pod (priority 0 as well) runs throughout: static pods are critical, never evicted.
 * The halves of HOG_BYTES are the margin for other processes on the machine changing memory use.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {readFileSync} from 'node:fs';
import {startApiServerProcess, type ServerProcess} from '../helpers/apiserver.js';
import {names} from '../../src/api/names.js';
import {eventually, killGroupIfLeader, processAlive, runningPid, shellPod, startAgent, writeManifest, type AgentProcess} from '../helpers/agent.js';
import {memoryFromMeminfo} from '../../src/daemons/agent/eviction/observations.js';

const NODE = 'evict-node';
const Mi = 1024 * 1024;
const TRANSITION_MS = 5000;
/** The eviction manager's fixed monitoring period (upstream's evictionMonitoringPeriod). */
const MONITORING_MS = 10_000;

const availableNow = () => memoryFromMeminfo(readFileSync('/proc/meminfo', 'utf8')).available;
/** A quarter of what is free, at most 3 GiB and at least 512 MiB: noticeable, never dangerous. */
const HOG_BYTES = Math.max(512 * Mi, Math.min(3 * 1024 * Mi, Math.floor(availableNow() / 4 / Mi) * Mi));
const HOG_CHUNK = 128 * Mi;

let server: ServerProcess;
let agent: AgentProcess;
let thresholdMi: number;
const pids = new Set<number>();
/** When each pod was first seen Evicted in the API server. */
const evictedAt = new Map<string, number>();

async function apiPod(name: string): Promise<any> {
  const r = await server.client.get(`/api/v1/namespaces/default/pods/${name}`);
  if (r.status !== 200) throw new Error(`GET pod ${name}: HTTP ${r.status}`);
  const pid = runningPid(r.body);
  if (pid !== undefined) pids.add(pid);
  return r.body;
}

async function memoryPressure(): Promise<any> {
  const r = await server.client.get(`/api/v1/nodes/${NODE}`);
  return r.body?.status?.conditions?.find((c: any) => c.type === 'MemoryPressure');
}

async function createPod(manifest: Record<string, any>): Promise<void> {
  manifest.metadata.namespace = 'default';
  manifest.spec.nodeName = NODE;
  const r = await server.client.post('/api/v1/namespaces/default/pods', manifest);
  if (r.status !== 201) throw new Error(`create pod ${manifest.metadata.name}: HTTP ${r.status} ${r.text}`);
}

function rssBytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? 0) * 1024;
}

/** Waits until the pod is Failed with reason Evicted, and records when that was seen. */
async function waitEvicted(name: string, timeoutMs: number): Promise<any> {
  const pod = await eventually(async () => {
    const p = await apiPod(name);
    return p.status?.reason === 'Evicted' ? p : undefined;
  }, `pod ${name} to be evicted`, timeoutMs, 100);
  evictedAt.set(name, Date.now());
  return pod;
}

beforeAll(async () => {
  server = await startApiServerProcess({engine: 'sqlite'});
  // Pods take their priority from a class (the Priority admission plugin refuses a bare spec.priority).
  const high = await server.client.post(`/apis/${names().groups.scheduling}/v1/priorityclasses`, {
    apiVersion: `${names().groups.scheduling}/v1`, kind: 'PriorityClass', metadata: {name: 'hog-priority'}, value: 100,
  });
  if (high.status !== 201) throw new Error(`create priority class: HTTP ${high.status} ${high.text}`);
  thresholdMi = Math.floor((availableNow() - HOG_BYTES / 2) / Mi);
  agent = await startAgent({
    nodeName: NODE,
    orchconfigPath: server.orchconfigPath,
    manifests: true,
    args: [`--eviction-hard=memory.available<${thresholdMi}Mi`, `--eviction-pressure-transition-period=${TRANSITION_MS / 1000}s`, '--node-status-update-frequency=1s'],
  });
}, 60_000);

afterAll(async () => {
  await agent?.dispose();
  for (const pid of pids) killGroupIfLeader(pid);
  await server?.stop();
});

describe('memory eviction', () => {
  it('reports no MemoryPressure while memory.available is above the threshold', async () => {
    const condition = await eventually(memoryPressure, 'the node with its MemoryPressure condition', 20_000, 200);
    expect(condition).toMatchObject({status: 'False', reason: 'AgentHasSufficientMemory'});
  });

  it('reports MemoryPressure=True once a pod pushes memory.available below the threshold', async () => {
    // A static pod with priority 0 too: static pods are critical, never evicted.
    writeManifest(agent.manifestDir!, 'static.yaml', shellPod('static', 'sleep 600'));
    await eventually(async () => runningPid(await apiPod(`static-${NODE}`)), 'the static pod\'s mirror to show it running', 15_000);
    await createPod(shellPod('quiet', 'sleep 600', {priority: 0, terminationGracePeriodSeconds: 1}));
    await eventually(async () => runningPid(await apiPod('quiet')), 'quiet to run');
    const hogScript = `const keep = []; for (let i = 0; i < ${HOG_BYTES / HOG_CHUNK}; i++) keep.push(Buffer.alloc(${HOG_CHUNK}, i + 1)); setInterval(() => keep.length, 1e6);`;
    await createPod({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'hog'},
      spec: {priorityClassName: 'hog-priority', terminationGracePeriodSeconds: 1, containers: [{name: 'main', image: 'node', command: [process.execPath, '-e', hogScript]}]},
    });
    const hogPid = await eventually(async () => runningPid(await apiPod('hog')), 'hog to run');
    await eventually(() => rssBytes(hogPid) >= HOG_BYTES * 0.9, 'hog to hold its memory', 20_000, 200);
    // Within a monitoring cycle plus a node status update.
    const condition = await eventually(async () => {
      const c = await memoryPressure();
      return c?.status === 'True' ? c : undefined;
    }, 'MemoryPressure=True', MONITORING_MS + 5000, 200);
    expect(condition).toMatchObject({reason: 'AgentHasInsufficientMemory', message: 'agent has insufficient memory available'});
  }, 60_000);

  it('evicts the lowest-ranked pod (lower priority, though it uses less) with upstream\'s status and message', async () => {
    const quiet = await waitEvicted('quiet', MONITORING_MS * 2 + 5000);
    expect(quiet.status.phase).toBe('Failed');
    expect(quiet.status.message).toMatch(
      new RegExp(`^The node was low on resource: memory\\. Threshold quantity: ${thresholdMi}Mi, available: \\d+(Ki|Mi)\\. Container main was using \\d+(Ki|Mi), request is 0, has larger consumption of memory\\. $`),
    );
    const hog = await apiPod('hog');
    expect(hog.status.phase).toBe('Running');
    const quietPid = Number(/\d+$/.exec(quiet.status.containerStatuses[0].containerID)![0]);
    await eventually(() => !processAlive(quietPid), 'the evicted pod\'s process to exit', 5000);
    // kubectl describe shows why: an Evicted event on the pod, and EvictionThresholdMet on the node.
    const eventsAbout = async (kind: string, name: string) => {
      const r = await server.client.get(`/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`involvedObject.kind=${kind},involvedObject.name=${name}`)}`);
      return r.body.items as any[];
    };
    const evicted = await eventually(async () => (await eventsAbout('Pod', 'quiet')).find((e) => e.reason === 'Evicted'), 'an Evicted event', 5000);
    expect(evicted).toMatchObject({type: 'Warning', message: quiet.status.message, source: {component: 'agent', host: NODE}});
    const threshold = await eventually(async () => (await eventsAbout('Node', NODE)).find((e) => e.reason === 'EvictionThresholdMet'), 'an EvictionThresholdMet event', 5000);
    expect(threshold).toMatchObject({type: 'Warning', message: 'Attempting to reclaim memory'});
  }, 40_000);

  it('evicts one pod per monitoring cycle: the next pod a cycle later', async () => {
    const hog = await waitEvicted('hog', MONITORING_MS * 2 + 5000);
    expect(hog.status).toMatchObject({phase: 'Failed', reason: 'Evicted'});
    // When each container was stopped, in whole seconds: a monitoring cycle apart, give or take the rounding.
    const finished = (pod: any) => Date.parse(pod.status.containerStatuses[0].state.terminated.finishedAt);
    expect(finished(hog) - finished(await apiPod('quiet'))).toBeGreaterThanOrEqual(MONITORING_MS - 2000);
  }, 40_000);

  it('clears MemoryPressure once the transition period has passed without pressure', async () => {
    const condition = await eventually(async () => {
      const c = await memoryPressure();
      return c?.status === 'False' ? c : undefined;
    }, 'MemoryPressure=False', MONITORING_MS * 3, 200);
    expect(condition.reason).toBe('AgentHasSufficientMemory');
    const staticPod = await apiPod(`static-${NODE}`);
    expect(staticPod.status.phase).toBe('Running');
    expect(processAlive(runningPid(staticPod)!)).toBe(true);
    // The pressure was last observed no earlier than the hog's eviction; the condition held at least the transition period after it.
    expect(Date.now() - evictedAt.get('hog')!).toBeGreaterThanOrEqual(TRANSITION_MS);
  }, 40_000);
});
