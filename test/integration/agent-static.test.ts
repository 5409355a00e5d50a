/**
 * Static pods as users run them: `orch agent --pod-manifest-path DIR` as a child process, and pod
 * files written, edited and deleted in DIR. --file-check-frequency is 60 s, so only the file-system
 * event can make the agent notice a change within the test's one-second budget.
 *
 * First standalone (no API server): the agent's read-only /pods shows the pod running, and the
 * container's pid (its containerID) is a live process. Then with `orch apiserver` (child process):
 * the same pod gets a mirror pod that kubectl lists, the node registers Ready and renews its Lease.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {rmSync} from 'node:fs';
import {kubectl, startApiServerProcess, type ServerProcess} from '../helpers/apiserver.js';
import {eventually, processAlive, runningPid, shellPod, startAgent, writeManifest, type AgentProcess} from '../helpers/agent.js';

/** The budget from writing the file to a running process. */
const FILE_EVENT_BUDGET_MS = 1000;
const SLOW_CHECKS = ['--file-check-frequency=60s'];

/** The running pid of static pod `name` (its name on the node is `<name>-<node>`), or undefined. */
async function staticPid(agent: AgentProcess, name: string): Promise<number | undefined> {
  const pod = (await agent.pods()).find((p) => p.metadata.name === `${name}-${agent.nodeName}`);
  const pid = runningPid(pod);
  return pid !== undefined && processAlive(pid) ? pid : undefined;
}

/** Write, edit, delete: the processes follow the file, each step noticed through the fs event. */
function lifecycleTests(get: () => AgentProcess) {
  let firstPid: number;
  let secondPid: number;

  it('runs a new pod file as a process within a second', async () => {
    const agent = get();
    const written = Date.now();
    writeManifest(agent.manifestDir!, 'sleeper.yaml', shellPod('sleeper', 'sleep 600'));
    firstPid = await eventually(() => staticPid(agent, 'sleeper'), 'the static pod to run', 5000, 20);
    expect(Date.now() - written).toBeLessThan(FILE_EVENT_BUDGET_MS);
    expect(processAlive(firstPid)).toBe(true);
  });

  it('restarts the pod as a new process when its file changes', async () => {
    const agent = get();
    const edited = Date.now();
    writeManifest(agent.manifestDir!, 'sleeper.yaml', shellPod('sleeper', 'sleep 601'));
    secondPid = await eventually(async () => {
      const pid = await staticPid(agent, 'sleeper');
      return pid !== undefined && pid !== firstPid ? pid : undefined;
    }, 'a new process for the edited pod', 8000, 20);
    // Replaced, not added: the old process is gone (it gets the default 2 s minimum grace at most).
    await eventually(() => !processAlive(firstPid), 'the old process to exit', 5000);
    expect(Date.now() - edited).toBeLessThan(FILE_EVENT_BUDGET_MS + 5000);
    expect(processAlive(secondPid)).toBe(true);
    // /stats/summary reports this machine's memory and filesystem, and the pod's processes.
    const summary = JSON.parse(await (await fetch(`${agent.readOnlyUrl}/stats/summary`)).text());
    expect(summary.node.memory.availableBytes).toBeGreaterThan(0);
    expect(summary.node.fs.capacityBytes).toBeGreaterThan(summary.node.fs.availableBytes);
    const stats = summary.pods.find((p: {podRef: {name: string}}) => p.podRef.name === `sleeper-${agent.nodeName}`);
    expect(stats.process_stats.process_count).toBeGreaterThanOrEqual(1);
    expect(stats.memory.rssBytes).toBeGreaterThan(0);
    const pods = await agent.pods();
    expect(pods.filter((p) => p.metadata.name === `sleeper-${agent.nodeName}`)).toHaveLength(1);
    expect(pods[0].spec.containers[0].command).toEqual(['sh', '-c', 'sleep 601']);
  });

  it('stops the process when its file is deleted', async () => {
    const agent = get();
    rmSync(`${agent.manifestDir}/sleeper.yaml`);
    await eventually(() => !processAlive(secondPid), `pid ${secondPid} to exit`, 5000);
    await eventually(async () => (await agent.pods()).length === 0, 'the pod to leave /pods', 5000);
  });
}

describe('static pods, standalone agent', () => {
  let agent: AgentProcess;
  beforeAll(async () => {
    agent = await startAgent({nodeName: 'static-standalone', manifests: true, args: SLOW_CHECKS});
  });
  afterAll(async () => {
    await agent?.dispose();
  });

  lifecycleTests(() => agent);

  it('starts in standalone mode: no API server, file source only', () => {
    expect(agent.output()).toMatch(/"Agent started" node="static-standalone" mode="standalone" sources="file"/);
  });
});

describe('static pods with an API server', () => {
  let server: ServerProcess;
  let agent: AgentProcess;
  const node = 'static-node';
  const kc = (...args: string[]) => kubectl(server.orchconfigPath, args);

  beforeAll(async () => {
    server = await startApiServerProcess({engine: 'sqlite'});
    agent = await startAgent({nodeName: node, manifests: true, orchconfigPath: server.orchconfigPath, args: [...SLOW_CHECKS, '--node-status-update-frequency=2s']});
  }, 60_000);
  afterAll(async () => {
    await agent?.dispose();
    await server?.stop();
  });

  it('registers the node, Ready, with the orch.io labels', async () => {
    const nodeObject = await eventually(async () => {
      const r = await kc('get', 'node', node, '-o', 'json');
      if (r.code !== 0) return undefined;
      const n = JSON.parse(r.stdout);
      return n.status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True' ? n : undefined;
    }, 'the node to be Ready', 20_000, 250);
    expect(nodeObject.metadata.labels).toMatchObject({'orch.io/hostname': node, 'orch.io/os': 'linux'});
    const table = await kc('get', 'nodes');
    expect(table.stdout).toMatch(new RegExp(`^${node}\\s+Ready\\s`, 'm'));
  });

  it('keeps its Lease in orch-node-lease', async () => {
    // As upstream, the Lease is created only with its owner reference, so after the Node: when the
    // first try raced the registration, on the next renewal (a quarter of the 40 s lease duration).
    const lease = await eventually(async () => {
      const r = await kc('get', 'lease', node, '-n', 'orch-node-lease', '-o', 'json');
      return r.code === 0 ? JSON.parse(r.stdout) : undefined;
    }, 'the node lease', 15_000, 250);
    expect(lease.spec.holderIdentity).toBe(node);
    expect(lease.metadata.ownerReferences?.[0]).toMatchObject({kind: 'Node', name: node});
  });

  lifecycleTests(() => agent);

  it('gives a static pod a mirror pod that kubectl lists, and removes it with the file', async () => {
    writeManifest(agent.manifestDir!, 'web.yaml', shellPod('web', 'sleep 600'));
    const mirrorName = `web-${node}`;
    const mirror = await eventually(async () => {
      const r = await kc('get', 'pod', mirrorName, '-n', 'default', '-o', 'json');
      if (r.code !== 0) return undefined;
      const p = JSON.parse(r.stdout);
      return p.status?.phase === 'Running' ? p : undefined;
    }, 'the mirror pod to show Running', 15_000, 250);
    expect(mirror.metadata.annotations['orch.io/config.mirror']).toBe(mirror.metadata.annotations['orch.io/config.hash']);
    expect(mirror.spec.nodeName).toBe(node);
    expect(mirror.metadata.ownerReferences?.[0]).toMatchObject({kind: 'Node', name: node, controller: true});
    const table = await kc('get', 'pods', '-A');
    expect(table.stdout).toMatch(new RegExp(`^default\\s+${mirrorName}\\s+1/1\\s+Running\\s`, 'm'));

    rmSync(`${agent.manifestDir}/web.yaml`);
    await eventually(async () => (await kc('get', 'pod', mirrorName, '-n', 'default')).code !== 0, 'the mirror pod to go', 15_000, 250);
  });
});
