/**
 * `orch fleet`'s simulated nodes against the real API server (`orch apiserver` as a child process):
 * 50 nodes registered as the agent registers, their Leases renewed at a spread pace, pods bound to
 * them run (Running/Ready with addresses and container statuses) or fail (--fail-pods-matching),
 * deletion honoring the grace period, and the state annotation driving the node lifecycle
 * controller (`orch controller-manager --controllers=nodelifecycle`, a child process too): NotReady
 * gets the not-ready NoExecute taint, Silent (no more renewals) gets Unknown, the unreachable taint
 * and its pod evicted. The fleet itself runs in this process, as the command builds it.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {spawn} from 'node:child_process';
import {join} from 'node:path';
import {startApiServerProcess, sleep, type ServerProcess} from '../helpers/apiserver.js';
import {startControllerManager, timedWatch, type ControllerManagerProcess, type TimedWatch} from '../helpers/controller-manager.js';
import {names} from '../../src/api/names.js';
import {parseLabelSelector} from '../../src/api/selectors.js';
import {resolveClientConfig} from '../../src/client/orchconfig.js';
import {RestClient} from '../../src/client/rest-client.js';
import {Fleet} from '../../src/daemons/fleet/fleet.js';
import {fleetSettings} from '../../src/cmd/fleet/run.js';
import {parseOptionValue} from '../../src/options/types.js';
import {fleetOptions} from '../../src/options/fleet.js';

const NODES = 50;
const LEASE_SECONDS = 2; // renewed every 500 ms
const RENEW_MS = (LEASE_SECONDS * 1000) / 4;
const GRACE_MS = 4000;
const COMPLETE_MS = 1500; // --complete-pods-after

let server: ServerProcess;
let client: RestClient;
let fleet: Fleet;
let cm: ControllerManagerProcess | undefined;
let nodeWatch: TimedWatch;

/** The option values as `orch fleet` would resolve them from these flags (defaults for the rest). */
function optionValues(flags: Record<string, string>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const spec of fleetOptions) {
    const raw = flags[spec.name] ?? spec.default;
    if (raw !== undefined) values[spec.name] = parseOptionValue(spec, raw);
  }
  return values;
}

async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${cm?.output().slice(-3000) ?? ''}`);
    await sleep(100);
  }
}

const podPath = (name: string) => `/api/v1/namespaces/default/pods/${name}`;
const leasePath = (name: string) => `/apis/${names().groups.coordination}/v1/namespaces/${names().namespaces.nodeLease}/leases/${name}`;
const readyOf = (node: any) => node?.status?.conditions?.find((c: any) => c.type === 'Ready');

async function createPod(name: string, nodeName: string, extra: {labels?: Record<string, string>; grace?: number; tolerations?: unknown[]} = {}): Promise<void> {
  const r = await server.client.post('/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name, ...(extra.labels ? {labels: extra.labels} : {})},
    spec: {
      nodeName,
      terminationGracePeriodSeconds: extra.grace ?? 30,
      ...(extra.tolerations ? {tolerations: extra.tolerations} : {}),
      initContainers: [{name: 'init', image: 'busybox:1.36'}],
      containers: [{name: 'app', image: 'nginx:1.27'}, {name: 'sidecar', image: 'envoy:1.30'}],
    },
  });
  if (r.status !== 201) throw new Error(`create pod ${name}: ${r.status} ${r.text}`);
}

beforeAll(async () => {
  server = await startApiServerProcess({engine: 'sqlite'});
  client = new RestClient({config: await resolveClientConfig({orchconfig: server.orchconfigPath})});
  const {settings, failPods, completeAfterMs} = fleetSettings(
    optionValues({
      'complete-pods-after': `${COMPLETE_MS}ms`,
      nodes: String(NODES),
      name: 'sim',
      'node-lease-duration-seconds': String(LEASE_SECONDS),
      'node-status-update-frequency': '1s',
      'fail-pods-matching': 'app=flaky',
      'node-labels': 'topology.orch.io/zone=zone-a',
    }),
    '1.32.0',
  );
  fleet = new Fleet({client, settings, failPods, completeAfterMs, workers: 16});
  await fleet.start();
  nodeWatch = timedWatch(server.client, '/api/v1/nodes?watch=1');
}, 60_000);

afterAll(async () => {
  nodeWatch?.close();
  await cm?.stop();
  await fleet?.stop();
  client?.close();
  await server?.stop();
}, 30_000);

describe('orch fleet: simulated nodes against the API server', () => {
  it('registers every node as the agent would: labels, capacity, addresses, Ready, and an owned Lease', async () => {
    const list = await server.client.get(`/api/v1/nodes?labelSelector=${encodeURIComponent(`${names().fleet.nodeLabel}=sim`)}`);
    const nodes: any[] = list.body.items;
    expect(nodes.map((n) => n.metadata.name).sort()).toEqual(Array.from({length: NODES}, (_, i) => `sim-${i}`).sort());
    const node = nodes.find((n) => n.metadata.name === 'sim-7');
    expect(node.metadata.labels).toMatchObject({[names().labels.hostname]: 'sim-7', [names().labels.os]: 'linux', 'topology.orch.io/zone': 'zone-a'});
    expect(node.status.capacity).toEqual({cpu: '32', memory: '256Gi', pods: '110'});
    expect(node.status.allocatable).toEqual(node.status.capacity);
    expect(node.status.addresses).toEqual([{type: 'InternalIP', address: '10.0.0.8'}, {type: 'Hostname', address: 'sim-7'}]);
    expect(readyOf(node)).toMatchObject({status: 'True', reason: 'AgentReady'});
    expect(node.status.conditions.map((c: any) => c.type)).toEqual(['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready']);

    const leaseResponse = await server.client.get(leasePath('sim-7'));
    expect(leaseResponse.status).toBe(200);
    const lease = leaseResponse.body;
    expect(lease.spec).toMatchObject({holderIdentity: 'sim-7', leaseDurationSeconds: LEASE_SECONDS});
    expect(lease.metadata.ownerReferences).toEqual([{apiVersion: 'v1', kind: 'Node', name: 'sim-7', uid: node.metadata.uid}]);
  });

  it('renews every Lease each interval, the nodes spread over it rather than in one burst', async () => {
    const renewTimes = async () =>
      Promise.all(Array.from({length: NODES}, async (_, i) => Date.parse((await server.client.get(leasePath(`sim-${i}`))).body.spec.renewTime)));
    const before = await renewTimes();
    await sleep(RENEW_MS * 3);
    const after = await renewTimes();
    // Every node renewed (several times) meanwhile.
    expect(after.every((t, i) => t - before[i]! >= RENEW_MS)).toBe(true);
    // Spread: the renewals' phases in the interval cover most of it (one burst would cover a few ms).
    const phases = after.map((t) => t % RENEW_MS).sort((a, b) => a - b);
    const largestGap = Math.max(...phases.map((p, i) => (i === 0 ? p + RENEW_MS - phases.at(-1)! : p - phases[i - 1]!)));
    expect(largestGap).toBeLessThan(RENEW_MS / 2);
    expect(fleet.snapshot().leaseRenewals).toBeGreaterThanOrEqual(NODES * 3);
  });

  it('runs the pods bound to its nodes: Running and Ready with IPs, start time and container statuses', async () => {
    await Promise.all([createPod('web-0', 'sim-3'), createPod('web-1', 'sim-3'), createPod('web-2', 'sim-40')]);
    const running = async (name: string) => {
      const pod = (await server.client.get(podPath(name))).body;
      return pod.status?.phase === 'Running' ? pod : undefined;
    };
    const [a, b, c] = await Promise.all(['web-0', 'web-1', 'web-2'].map((n) => until(`${n} Running`, () => running(n))));
    for (const pod of [a, b, c]) {
      const ready = Object.fromEntries(pod.status.conditions.map((x: any) => [x.type, x.status]));
      expect(ready).toMatchObject({PodReadyToStartContainers: 'True', Initialized: 'True', Ready: 'True', ContainersReady: 'True'});
      expect(pod.status.containerStatuses.map((s: any) => [s.name, s.image, s.ready, Boolean(s.state.running?.startedAt)])).toEqual([
        ['app', 'nginx:1.27', true, true],
        ['sidecar', 'envoy:1.30', true, true],
      ]);
      expect(pod.status.initContainerStatuses[0].state.terminated).toMatchObject({exitCode: 0, reason: 'Completed'});
      expect(pod.status.startTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    expect(a.status.hostIP).toBe('10.0.0.4');
    expect(c.status.hostIP).toBe('10.0.0.41');
    // Distinct pod IPs from the node's own range.
    expect(a.status.podIP).toMatch(/^10\.128\.3\.\d+$/);
    expect(new Set([a.status.podIP, b.status.podIP]).size).toBe(2);
    expect(c.status.podIPs).toEqual([{ip: c.status.podIP}]);
  });

  it('fails the pods matching --fail-pods-matching, and leaves pods of other nodes alone', async () => {
    await createPod('flaky-0', 'sim-5', {labels: {app: 'flaky'}});
    await createPod('elsewhere', 'not-a-fleet-node');
    const failed = await until('flaky-0 Failed', async () => {
      const pod = (await server.client.get(podPath('flaky-0'))).body;
      return pod.status?.phase === 'Failed' ? pod : undefined;
    });
    expect(failed.status.containerStatuses[0].state.terminated).toMatchObject({exitCode: 1, reason: 'Error'});
    expect(failed.status.conditions.find((c: any) => c.type === 'Ready')).toMatchObject({status: 'False', reason: 'PodFailed'});
    await sleep(500);
    expect((await server.client.get(podPath('elsewhere'))).body.status?.phase).toBe('Pending');
  });

  it('a Job finishes: its pods (restartPolicy Never) succeed --complete-pods-after from their start', async () => {
    const jobs = await startControllerManager({name: 'jobs', orchconfigPath: server.orchconfigPath, args: ['--controllers=job']});
    try {
      const r = await server.client.post('/apis/batch/v1/namespaces/default/jobs', {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {name: 'batch'},
        spec: {
          completions: 3,
          parallelism: 3,
          template: {spec: {nodeName: 'sim-11', restartPolicy: 'Never', containers: [{name: 'work', image: 'busybox:1.36'}]}},
        },
      });
      expect(r.status).toBe(201);
      const job = await until('Job batch Complete', async () => {
        const j = (await server.client.get('/apis/batch/v1/namespaces/default/jobs/batch')).body;
        return j.status?.conditions?.some((c: any) => c.type === 'Complete' && c.status === 'True') ? j : undefined;
      }, 30_000);
      expect(job.status.succeeded).toBe(3);
      const pods = (await server.client.get(`/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent('job-name=batch')}`)).body.items;
      expect(pods).toHaveLength(3);
      for (const pod of pods) {
        expect(pod.status.phase).toBe('Succeeded');
        expect(pod.status.containerStatuses[0].state.terminated).toMatchObject({exitCode: 0, reason: 'Completed'});
        expect(pod.status.conditions.find((c: any) => c.type === 'Ready')).toMatchObject({status: 'False', reason: 'PodCompleted'});
        const ran = Date.parse(pod.status.containerStatuses[0].state.terminated.finishedAt) - Date.parse(pod.status.startTime);
        // RFC 3339 seconds: the run time shows within a second of COMPLETE_MS.
        expect(ran).toBeGreaterThanOrEqual(COMPLETE_MS - 1000);
        expect(ran).toBeLessThanOrEqual(COMPLETE_MS + 3000);
      }
    } finally {
      await jobs.stop();
    }
  }, 60_000);

  it('fails a pod past its activeDeadlineSeconds with DeadlineExceeded; a pod that restarts Always keeps running', async () => {
    const r = await server.client.post('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'deadline'},
      spec: {nodeName: 'sim-12', activeDeadlineSeconds: 1, containers: [{name: 'app', image: 'nginx:1.27'}]},
    });
    expect(r.status).toBe(201);
    await createPod('forever', 'sim-12');
    const failed = await until('deadline Failed', async () => {
      const pod = (await server.client.get(podPath('deadline'))).body;
      return pod.status?.phase === 'Failed' ? pod : undefined;
    });
    expect(failed.status).toMatchObject({reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline'});
    await sleep(COMPLETE_MS + 500);
    expect((await server.client.get(podPath('forever'))).body.status.phase).toBe('Running');
  });

  it('deletes a pod object only once its grace period is over', async () => {
    await createPod('graceful', 'sim-9', {grace: 2});
    await until('graceful Running', async () => (await server.client.get(podPath('graceful'))).body.status?.phase === 'Running' || undefined);
    const deletedAt = Date.now();
    const r = await server.client.delete(podPath('graceful'));
    expect(r.status).toBe(200);
    await sleep(1000);
    // Still there, terminating, during the grace period.
    const during = await server.client.get(podPath('graceful'));
    expect(during.status).toBe(200);
    expect(during.body.metadata.deletionTimestamp).toBeDefined();
    await until('graceful gone', async () => (await server.client.get(podPath('graceful'))).status === 404 || undefined, 10_000);
    const after = Date.now() - deletedAt;
    expect(after).toBeGreaterThanOrEqual(1900);
    expect(after).toBeLessThan(6000);
  });

  it('NotReady and Silent nodes drive the node lifecycle controller to taint them and evict from the silent one', async () => {
    // DefaultTolerationSeconds would let it stay 300 s on an unreachable node; this one goes at once.
    await createPod('victim', 'sim-2', {grace: 1, tolerations: [{key: names().taints.unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0}]});
    await until('victim Running', async () => (await server.client.get(podPath('victim'))).body.status?.phase === 'Running' || undefined);
    cm = await startControllerManager({
      name: 'cm',
      orchconfigPath: server.orchconfigPath,
      args: ['--no-leader-elect', '--controllers=nodelifecycle', '--node-monitor-period=1s', `--node-monitor-grace-period=${GRACE_MS / 1000}s`, '--node-eviction-rate=10'],
    });
    await cm.waitForLine(/"Starting controller" name="nodelifecycle"/, 15_000);
    const annotate = (node: string, state: string) =>
      server.client.patch(`/api/v1/nodes/${node}`, {metadata: {annotations: {[names().fleet.nodeState]: state}}}, 'application/merge-patch+json');
    expect((await annotate('sim-1', 'NotReady')).status).toBe(200);
    expect((await annotate('sim-2', 'Silent')).status).toBe(200);

    const taintOf = (name: string, key: string) =>
      nodeWatch.events.find((e) => e.object?.metadata?.name === name && (e.object.spec?.taints ?? []).some((t: any) => t.key === key && t.effect === 'NoExecute'));
    const notReady = await until('sim-1 tainted not-ready', () => taintOf('sim-1', names().taints.notReady), 20_000);
    expect(readyOf(notReady.object)).toMatchObject({status: 'False', reason: 'AgentNotReady'});
    const unreachable = await until('sim-2 tainted unreachable', () => taintOf('sim-2', names().taints.unreachable), 20_000);
    expect(readyOf(unreachable.object)?.status).toBe('Unknown');
    // The silent node's pod is evicted by the controller, and stays Terminating: an unreachable node
    // cannot confirm that its containers stopped.
    await until('victim evicted', async () => Boolean((await server.client.get(podPath('victim'))).body.metadata?.deletionTimestamp) || undefined, 20_000);
    await sleep(2000);
    expect((await server.client.get(podPath('victim'))).status).toBe(200);
    // Healthy nodes stay untainted.
    const healthy = (await server.client.get('/api/v1/nodes/sim-3')).body;
    expect(healthy.spec.taints ?? []).toEqual([]);

    // Back to Ready: the not-ready taint goes.
    const rs = await server.client.patch(`/api/v1/nodes/sim-1`, {metadata: {annotations: {[names().fleet.nodeState]: null}}}, 'application/merge-patch+json');
    expect(rs.status).toBe(200);
    await until('sim-1 untainted', async () => ((await server.client.get('/api/v1/nodes/sim-1')).body.spec.taints ?? []).length === 0 || undefined, 20_000);
    // The silent node comes back: it renews again, and finishes the eviction it missed (grace 1 s).
    const back = await server.client.patch(`/api/v1/nodes/sim-2`, {metadata: {annotations: {[names().fleet.nodeState]: null}}}, 'application/merge-patch+json');
    expect(back.status).toBe(200);
    await until('victim removed', async () => (await server.client.get(podPath('victim'))).status === 404 || undefined, 10_000);
    await until('sim-2 Ready again', async () => readyOf((await server.client.get('/api/v1/nodes/sim-2')).body)?.status === 'True' || undefined, 20_000);
  }, 90_000);

  it('orch fleet runs as a command: registers its nodes and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [join(process.cwd(), 'bin', 'run.js'), 'fleet', '--orchconfig', server.orchconfigPath, '--nodes', '3', '--name', 'cli'], {stdio: ['ignore', 'pipe', 'pipe']});
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    try {
      await until('the cli fleet registered', async () => {
        const r = await server.client.get(`/api/v1/nodes?labelSelector=${encodeURIComponent(`${names().fleet.nodeLabel}=cli`)}`);
        return r.body.items?.length === 3 || undefined;
      }, 20_000);
    } finally {
      child.kill('SIGTERM');
    }
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    expect(output).toMatch(/Nodes registered/);
  }, 30_000);

  it('rejects bad options with the option named', () => {
    expect(() => fleetSettings(optionValues({name: 'Bad_Name'}), '1.32.0')).toThrow(/--name=Bad_Name/);
    expect(() => fleetSettings(optionValues({'fail-pods-matching': 'app in (('}), '1.32.0')).toThrow(/--fail-pods-matching=app in \(\(/);
    expect(fleetSettings(optionValues({'complete-pods-after': '0s'}), '1.32.0').completeAfterMs).toBeUndefined();
    expect(fleetSettings(optionValues({}), '1.32.0').completeAfterMs).toBe(10_000);
    expect(parseLabelSelector('app=flaky')).toHaveLength(1);
  });
});
