/**
 * Node lifecycle as users run it: `orch apiserver` and `orch controller-manager
 * --controllers=nodelifecycle` as child processes, and simulated nodes written by this test
 * through the API: Node objects with Ready=True and a `topology.orch.io/zone` label, their Leases in
 * `orch-node-lease` renewed every 500 ms, and pods bound to them with spec.nodeName.
 *
 * Three zones, with --node-monitor-grace-period=4s, --node-eviction-rate=1,
 * --secondary-node-eviction-rate=0.2, --unhealthy-zone-threshold=0.55 and
 * --large-cluster-size-threshold=10:
 *   zone-a: 10 nodes, 3 stop renewing while the controller watches. 30% not ready: Normal, so
 *           they are tainted `node.orch.io/unreachable:NoExecute` and their pods evicted one node
 *           per second (the primary rate).
 *   zone-c: 12 nodes, 7 silent. 58% >= 55%: PartialDisruption in a zone larger than the
 *           threshold, so the secondary rate: one node per 5 s.
 *   zone-b: 4 nodes, 3 silent. 75%: PartialDisruption in a zone no larger than the threshold,
 *           where the large-cluster override sets the rate to 0: no evictions at all.
 * The silent nodes of zone-b and zone-c stop renewing before the controller starts, so it sees all
 * of them go silent in the same monitor pass: a zone becomes PartialDisruption only once its third
 * node is not ready, and a node that went Unknown a pass earlier would be evicted at the
 * primary rate while its zone still counted as Normal.
 *
 * The zone states themselves are read from the controller manager's log ("Controller detected that
 * zone is now in new state"); its dashboard snapshot lives in its own process.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {TEST_SERVER_DISABLED_ADMISSION, startApiServerProcess, sleep, type ApiClient, type ServerProcess} from '../helpers/apiserver.js';
import {startControllerManager, timedWatch, type ControllerManagerProcess, type TimedEvent, type TimedWatch} from '../helpers/controller-manager.js';

const GRACE_MS = 4000;
const MONITOR_PERIOD_MS = 1000;
const PRIMARY_RATE = 1;
const SECONDARY_RATE = 0.2;
const RENEW_EVERY_MS = 500;
/** Process scheduling, watch delivery and HTTP round trips on a busy CI machine. */
const ALLOWANCE_MS = 500;
/** The tainting queue is worked every 100 ms, so a taint lands up to that much after its token. */
const TAINTING_PERIOD_MS = 100;

const ZONE_LABEL = 'topology.orch.io/zone';
const UNREACHABLE = 'node.orch.io/unreachable';

interface SimNode {
  name: string;
  zone: string;
  /** Stops renewing its Lease during the test. */
  silent: boolean;
}

function zone(zoneName: string, size: number, silent: number): SimNode[] {
  return Array.from({length: size}, (_, i) => ({name: `${zoneName}-${i}`, zone: zoneName, silent: i < silent}));
}

const NODES = [...zone('zone-a', 10, 3), ...zone('zone-b', 4, 3), ...zone('zone-c', 12, 7)];
const silentIn = (z: string) => NODES.filter((n) => n.zone === z && n.silent);

let server: ServerProcess;
let cm: ControllerManagerProcess | undefined;
let nodeWatch: TimedWatch | undefined;
let podWatch: TimedWatch | undefined;
const renewing = new Set<string>();
/** When each Lease's last renewal was answered. */
const lastRenewed = new Map<string, number>();
let renewer: Promise<void> | undefined;
let stopRenewer = false;

/** Kubernetes MicroTime: RFC 3339 with six fraction digits. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/Z$/, '000Z');
/** metav1.Time: whole seconds. */
const seconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

async function ok(what: string, response: Promise<{status: number; text: string}>): Promise<any> {
  const r = await response;
  if (r.status >= 300) throw new Error(`${what}: HTTP ${r.status} ${r.text}`);
  return JSON.parse(r.text);
}

async function createNode(client: ApiClient, node: SimNode): Promise<void> {
  const now = seconds(Date.now());
  const status = {conditions: [{type: 'Ready', status: 'True', reason: 'AgentReady', message: 'agent is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now}]};
  const created = await ok(
    `create node ${node.name}`,
    client.post('/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: node.name, labels: {[ZONE_LABEL]: node.zone}}, status}),
  );
  // A server that drops status on create gets it through the status subresource, as an agent would.
  if (!created.status?.conditions?.length) {
    await ok(`status of node ${node.name}`, client.put(`/api/v1/nodes/${node.name}/status`, {...created, status}));
  }
  await ok(
    `lease of ${node.name}`,
    client.post('/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases', {
      apiVersion: 'coordination.orch.io/v1',
      kind: 'Lease',
      metadata: {name: node.name, namespace: 'orch-node-lease'},
      spec: {holderIdentity: node.name, leaseDurationSeconds: 40, renewTime: microTime(Date.now())},
    }),
  );
}

async function createPod(client: ApiClient, name: string, nodeName: string, tolerateForever = false): Promise<void> {
  await ok(
    `create pod ${name}`,
    client.post('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name},
      spec: {
        nodeName,
        // Deleted at once, as no agent is there to confirm a graceful termination.
        terminationGracePeriodSeconds: 0,
        containers: [{name: 'app', image: 'nginx:1.27'}],
        // Without tolerationSeconds the pod tolerates the taint for good and must stay.
        ...(tolerateForever ? {tolerations: [{key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute'}]} : {}),
      },
    }),
  );
}

/** Renews every Lease in `renewing`, all at once, every RENEW_EVERY_MS. */
async function renewLeases(client: ApiClient): Promise<void> {
  while (!stopRenewer) {
    const renewTime = microTime(Date.now());
    await Promise.all(
      [...renewing].map((name) =>
        client
          .patch(`/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases/${name}`, {spec: {renewTime}}, 'application/merge-patch+json', {timeoutMs: 2000})
          .then((r) => {
            if (r.status === 200) lastRenewed.set(name, Date.now());
          })
          .catch(() => undefined),
      ),
    );
    await sleep(RENEW_EVERY_MS);
  }
}

/** Drops these nodes from the renewer; their last renewal is behind us on return. */
async function stopRenewing(names: string[]): Promise<void> {
  for (const name of names) renewing.delete(name);
  // Wait out a renewal batch that may have started with them still in the set.
  await sleep(RENEW_EVERY_MS + 200);
}

// ---- reading the watches ----

const readyOf = (node: any) => node?.status?.conditions?.find((c: any) => c.type === 'Ready')?.status;
const hasNoExecuteUnreachable = (node: any) => (node?.spec?.taints ?? []).some((t: any) => t.key === UNREACHABLE && t.effect === 'NoExecute');

/** Arrival time of the first event about object `name` that satisfies `test`. */
function firstTime(events: readonly TimedEvent[], name: string, test: (e: TimedEvent) => boolean): number | undefined {
  return events.find((e) => e.object?.metadata?.name === name && test(e))?.at;
}

const unknownAt = (name: string) => firstTime(nodeWatch!.events, name, (e) => readyOf(e.object) === 'Unknown');
const taintedAt = (name: string) => firstTime(nodeWatch!.events, name, (e) => hasNoExecuteUnreachable(e.object));
const evictedAt = (pod: string) => firstTime(podWatch!.events, pod, (e) => e.type === 'DELETED' || Boolean(e.object?.metadata?.deletionTimestamp));

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]);

async function until(check: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}\n${cm?.output() ?? ''}`);
    await sleep(50);
  }
}

// ---- the scenario ----

let controllerStartedAt = 0;
const figures: Record<string, string> = {};

beforeAll(async () => {
  // The pods here set no tolerations and must go at the eviction rate: DefaultTolerationSeconds would
  // give them five minutes of tolerating unreachable nodes.
  server = await startApiServerProcess({engine: 'sqlite', args: ['--disable-admission-plugins', [...TEST_SERVER_DISABLED_ADMISSION, 'DefaultTolerationSeconds'].join(',')]});
  const client = server.client;
  const ns = await client.post('/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'orch-node-lease'}});
  if (ns.status >= 300 && ns.status !== 409) throw new Error(`namespace orch-node-lease: ${ns.status} ${ns.text}`);
  await Promise.all(NODES.map((n) => createNode(client, n)));
  for (const n of NODES) renewing.add(n.name);
  // One pod per silent node, one on a healthy node, and one on zone-a-0 that tolerates the taint.
  await Promise.all([
    ...NODES.filter((n) => n.silent).map((n) => createPod(client, `pod-${n.name}`, n.name)),
    createPod(client, 'pod-zone-a-9', 'zone-a-9'),
    createPod(client, 'tolerant-zone-a-0', 'zone-a-0', true),
  ]);
  renewer = renewLeases(client);
  nodeWatch = timedWatch(client, '/api/v1/nodes?watch=1');
  podWatch = timedWatch(client, '/api/v1/namespaces/default/pods?watch=1');

  await stopRenewing([...silentIn('zone-b'), ...silentIn('zone-c')].map((n) => n.name));
  cm = await startControllerManager({
    name: 'cm',
    orchconfigPath: server.orchconfigPath,
    args: [
      '--no-leader-elect',
      '--controllers=nodelifecycle',
      `--node-monitor-period=${MONITOR_PERIOD_MS / 1000}s`,
      `--node-monitor-grace-period=${GRACE_MS / 1000}s`,
      `--node-eviction-rate=${PRIMARY_RATE}`,
      `--secondary-node-eviction-rate=${SECONDARY_RATE}`,
      '--unhealthy-zone-threshold=0.55',
      '--large-cluster-size-threshold=10',
    ],
  });
  controllerStartedAt = (await cm.waitForLine(/"Starting controller" name="nodelifecycle"/, 10_000)).at;
  // Let it see zone-a renew for a while before its three go silent.
  await sleep(1500);
  await stopRenewing(silentIn('zone-a').map((n) => n.name));

  // Everything the assertions look at: zone-a's three taints, zone-c's second one, then a margin
  // in which nothing more may happen in zone-b.
  await until(() => silentIn('zone-a').every((n) => evictedAt(`pod-${n.name}`) !== undefined), 'the pods of zone-a evicted', 20_000);
  await until(() => silentIn('zone-c').filter((n) => taintedAt(n.name) !== undefined).length >= 2, 'two zone-c nodes tainted', 20_000);
  await sleep(1000);
}, 90_000);

afterAll(async () => {
  stopRenewer = true;
  await renewer;
  nodeWatch?.close();
  podWatch?.close();
  await cm?.stop();
  await server?.stop();
}, 30_000);

describe('node lifecycle with simulated nodes (orch controller-manager --controllers=nodelifecycle)', () => {
  it('turns Ready to Unknown once a node has not renewed its Lease for the grace period, and only then', () => {
    for (const n of silentIn('zone-a')) {
      const after = unknownAt(n.name)! - lastRenewed.get(n.name)!;
      figures[`${n.name} last renewal -> Ready=Unknown`] = `${after} ms`;
      // The controller notices the last renewal on a monitor pass (up to a period later) and the
      // expiry on another; never before the grace period (less the renewal's own round trip).
      expect({node: n.name, after: after >= GRACE_MS - 100 && after <= GRACE_MS + 2 * MONITOR_PERIOD_MS + ALLOWANCE_MS}).toEqual({node: n.name, after: true});
    }
    // Silent since before the controller started: grace counted from its first look at them.
    for (const n of [...silentIn('zone-b'), ...silentIn('zone-c')]) {
      const after = unknownAt(n.name)! - controllerStartedAt;
      expect({node: n.name, after: after >= GRACE_MS && after <= GRACE_MS + 2 * MONITOR_PERIOD_MS + ALLOWANCE_MS + 1000}).toEqual({node: n.name, after: true});
    }
    // Nodes that kept renewing stayed Ready, untainted.
    for (const n of NODES.filter((x) => !x.silent)) {
      expect({node: n.name, unknown: unknownAt(n.name), tainted: taintedAt(n.name)}).toEqual({node: n.name, unknown: undefined, tainted: undefined});
    }
  });

  it.each([
    {zone: 'zone-a', states: ['Normal']},
    {zone: 'zone-b', states: ['Normal', 'PartialDisruption']},
    {zone: 'zone-c', states: ['Normal', 'PartialDisruption']},
  ])('logs the zone states of $zone as the threshold decides: $states', ({zone, states}) => {
    const pattern = new RegExp(`"Controller detected that zone is now in new state" zone="?${zone}"? newState="?(\\w+)`);
    const logged = cm!.lines.map((l) => pattern.exec(l.text)?.[1]).filter((state): state is string => state !== undefined);
    expect(logged).toEqual(states);
  });

  it('in a Normal zone, taints silent nodes unreachable:NoExecute and evicts their pods at --node-eviction-rate', () => {
    const names = silentIn('zone-a').map((n) => n.name);
    const taints = names.map((n) => taintedAt(n)!).sort((a, b) => a - b);
    const evictions = names.map((n) => evictedAt(`pod-${n}`)!).sort((a, b) => a - b);
    figures['zone-a taint gaps'] = gaps(taints).join(', ') + ' ms';
    figures['zone-a eviction gaps'] = gaps(evictions).join(', ') + ' ms';
    const period = 1000 / PRIMARY_RATE;
    // Never faster than the rate; slower only by pass granularity and scheduling (half the rate would be 2 s).
    for (const gap of [...gaps(taints), ...gaps(evictions)]) {
      expect(gap).toBeGreaterThanOrEqual(period - 2 * TAINTING_PERIOD_MS);
      expect(gap).toBeLessThanOrEqual(1.5 * period);
    }
    // Each pod goes right after its node's taint: the taint drives the eviction.
    for (const n of names) expect(evictedAt(`pod-${n}`)! - taintedAt(n)!).toBeLessThanOrEqual(ALLOWANCE_MS);
    // A pod tolerating the taint without tolerationSeconds stays; so does a pod on a healthy node.
    expect(evictedAt('tolerant-zone-a-0')).toBeUndefined();
    expect(evictedAt('pod-zone-a-9')).toBeUndefined();
  });

  it('in a partially disrupted zone larger than --large-cluster-size-threshold, evicts at --secondary-node-eviction-rate', () => {
    const names = silentIn('zone-c').map((n) => n.name);
    const taints = names.map((n) => taintedAt(n)).filter((t): t is number => t !== undefined).sort((a, b) => a - b);
    figures['zone-c taint gaps'] = gaps(taints).join(', ') + ' ms';
    const period = 1000 / SECONDARY_RATE;
    // 7 of 12 not ready (>= 0.55): one node per 5 s, not one per second.
    expect(taints.length).toBeGreaterThanOrEqual(2);
    expect(taints[1] - taints[0]).toBeGreaterThanOrEqual(period - 2 * TAINTING_PERIOD_MS);
    expect(taints[1] - taints[0]).toBeLessThanOrEqual(1.5 * period);
    const tainted = names.filter((n) => taintedAt(n) !== undefined);
    for (const n of tainted) expect(evictedAt(`pod-${n}`)! - taintedAt(n)!).toBeLessThanOrEqual(ALLOWANCE_MS);
    for (const n of names.filter((x) => !tainted.includes(x))) expect(evictedAt(`pod-${n}`)).toBeUndefined();
  });

  it('in a partially disrupted zone no larger than the threshold, evicts nothing (the large-cluster override sets the rate to 0)', () => {
    const sinceUnknown = Date.now() - Math.max(...silentIn('zone-b').map((n) => unknownAt(n.name)!));
    // Long enough for the primary rate to have tainted all three.
    expect(sinceUnknown).toBeGreaterThan(3 * (1000 / PRIMARY_RATE));
    for (const n of silentIn('zone-b')) {
      expect({node: n.name, tainted: taintedAt(n.name), evicted: evictedAt(`pod-${n.name}`)}).toEqual({node: n.name, tainted: undefined, evicted: undefined});
    }
    console.log(`node lifecycle figures:\n${Object.entries(figures).map(([k, v]) => `  ${k}: ${v}`).join('\n')}`);
  });
});
