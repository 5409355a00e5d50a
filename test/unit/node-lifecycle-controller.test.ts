/**
 * The node lifecycle controller against a simulated cluster on a fake clock: nodes, leases and
 * pods live in memory, simulated agents renew their leases every 10 s, and the controller runs its
 * own timers (monitor every 5 s, queues every 100 ms).
 */
import {afterEach, describe, expect, it} from '@jest/globals';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import {
  NodeLifecycleController,
  formatTime,
  type ControllerEvent,
  type Lease,
  type Node,
  type NodeLifecycleOptions,
  type Pod,
  type Taint,
} from '../../src/daemons/controller-manager/node-lifecycle/index.js';
import type {Logger} from '../../src/lib/klog.js';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const LEASE_RENEW_MS = 10_000;

const silent: Logger = {info() {}, warning() {}, error() {}, v: () => ({enabled: false, info() {}})};
const microTime = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

interface Eviction {
  at: number;
  pod: string;
  node: string;
}

class SimulatedCluster {
  readonly clock = new FakeClock(T0);
  readonly nodes = new Map<string, Node>();
  readonly leases = new Map<string, Lease>();
  readonly pods = new Map<string, Pod>();
  readonly alive = new Set<string>();
  readonly evictions: Eviction[] = [];
  readonly statusWrites: Array<{at: number; node: string; ready: string}> = [];
  readonly events: ControllerEvent[] = [];
  private revision = 1;
  controller!: NodeLifecycleController;

  constructor(zones: Record<string, number>, podsPerNode: (node: string) => Pod[]) {
    for (const [zone, count] of Object.entries(zones)) {
      for (let i = 0; i < count; i++) {
        const name = `${zone}${i}`;
        this.nodes.set(name, {
          metadata: {name, uid: `uid-${name}`, resourceVersion: String(this.revision++), creationTimestamp: formatTime(T0), labels: {'topology.orch.io/region': 'r1', 'topology.orch.io/zone': zone}},
          spec: {},
          status: {conditions: [{type: 'Ready', status: 'True', reason: 'AgentReady', lastHeartbeatTime: formatTime(T0), lastTransitionTime: formatTime(T0)}]},
        });
        this.alive.add(name);
        this.renewLease(name);
        for (const pod of podsPerNode(name)) this.pods.set(`${pod.metadata.namespace}/${pod.metadata.name}`, pod);
      }
    }
    this.scheduleAgents();
  }

  start(options: Partial<NodeLifecycleOptions> = {}): NodeLifecycleController {
    const bump = (node: Node) => {
      node.metadata = {...node.metadata, resourceVersion: String(this.revision++)};
      return structuredClone(node);
    };
    this.controller = new NodeLifecycleController({
      nodes: {list: () => [...this.nodes.values()].map((n) => structuredClone(n))},
      leases: {get: (name) => this.leases.get(name)},
      pods: {listOnNode: (name) => [...this.pods.values()].filter((p) => p.spec?.nodeName === name)},
      client: {
        updateNodeStatus: async (node) => {
          const stored = this.nodes.get(node.metadata.name)!;
          stored.status = structuredClone(node.status);
          this.statusWrites.push({at: this.clock.now(), node: node.metadata.name, ready: node.status!.conditions!.find((c) => c.type === 'Ready')!.status});
          return bump(stored);
        },
        setTaints: async (name, taints) => {
          const stored = this.nodes.get(name)!;
          stored.spec = {...stored.spec, taints: structuredClone(taints)};
          return bump(stored);
        },
        evictPod: async (namespace, name) => {
          const pod = this.pods.get(`${namespace}/${name}`)!;
          this.pods.delete(`${namespace}/${name}`);
          this.evictions.push({at: this.clock.now(), pod: name, node: pod.spec!.nodeName!});
        },
        updatePodStatus: async (pod) => {
          this.pods.set(`${pod.metadata.namespace}/${pod.metadata.name}`, structuredClone(pod));
        },
        recordEvent: (event) => this.events.push(event),
      },
      clock: this.clock,
      options,
      logger: silent,
    });
    this.controller.start();
    return this.controller;
  }

  /** Seconds since T0. */
  t(seconds: number): number {
    return T0 + seconds * 1000;
  }

  async runUntil(seconds: number): Promise<void> {
    await this.clock.advance(this.t(seconds) - this.clock.now());
  }

  kill(...names: string[]): void {
    for (const name of names) this.alive.delete(name);
  }

  /** The agent comes back: posts Ready=True with a fresh heartbeat and renews its lease. */
  revive(...names: string[]): void {
    const now = formatTime(this.clock.now());
    for (const name of names) {
      this.alive.add(name);
      const node = this.nodes.get(name)!;
      node.status = {conditions: [{type: 'Ready', status: 'True', reason: 'AgentReady', lastHeartbeatTime: now, lastTransitionTime: now}]};
      node.metadata.resourceVersion = String(this.revision++);
      this.renewLease(name);
    }
  }

  ready(name: string): string | undefined {
    return this.nodes.get(name)!.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  }

  taint(name: string, key: string, effect: Taint['effect'] = 'NoExecute'): Taint | undefined {
    return this.nodes.get(name)!.spec?.taints?.find((t) => t.key === key && t.effect === effect);
  }

  podsOn(name: string): string[] {
    return [...this.pods.values()].filter((p) => p.spec?.nodeName === name).map((p) => p.metadata.name);
  }

  /** When the pods of `node` were evicted (distinct times). */
  evictionTimes(node: string): number[] {
    return [...new Set(this.evictions.filter((e) => e.node === node).map((e) => (e.at - T0) / 1000))];
  }

  zone(zone: string) {
    return this.controller.snapshot().zones.find((z) => z.displayName === `r1/${zone}`);
  }

  private renewLease(name: string): void {
    this.leases.set(name, {metadata: {name, namespace: 'orch-node-lease'}, spec: {holderIdentity: name, leaseDurationSeconds: 40, renewTime: microTime(this.clock.now())}});
  }

  private scheduleAgents(): void {
    this.clock.setTimeout(() => {
      for (const name of this.alive) this.renewLease(name);
      this.scheduleAgents();
    }, LEASE_RENEW_MS);
  }
}

const plainPods = (node: string): Pod[] =>
  ['p1', 'p2'].map((p) => ({metadata: {name: `${node}-${p}`, namespace: 'default', uid: `${node}-${p}`}, spec: {nodeName: node}, status: {conditions: [{type: 'Ready', status: 'True'}]}}));

let cluster: SimulatedCluster | undefined;
afterEach(async () => {
  await cluster?.controller?.stop();
  cluster = undefined;
});

describe('node lifecycle controller on simulated nodes (10 nodes, zones a and b)', () => {
  it('nodes that stop renewing become Unknown after the grace period, get tainted, and lose their pods at the zone rate', async () => {
    cluster = new SimulatedCluster({a: 5, b: 5}, plainPods);
    const controller = cluster.start();
    await cluster.runUntil(100);
    expect([...cluster.nodes.keys()].every((n) => cluster!.ready(n) === 'True')).toBe(true);
    expect(cluster.zone('a')).toMatchObject({state: 'Normal', nodesReady: 5, nodesNotReady: 0, evictionRate: 0.1});

    // Last lease renewals at 100 s; then a0, a1 and b0 go silent.
    cluster.kill('a0', 'a1', 'b0');
    await cluster.runUntil(400);

    // Ready -> Unknown more than 50 s (the grace period) after the last renewal, at the first
    // monitor pass after it (every 5 s).
    for (const name of ['a0', 'a1', 'b0']) {
      const write = cluster.statusWrites.find((w) => w.node === name)!;
      expect(write.ready).toBe('Unknown');
      expect((write.at - cluster.t(100)) / 1000).toBeGreaterThan(50);
      expect((write.at - cluster.t(100)) / 1000).toBeLessThanOrEqual(55);
      expect(cluster.ready(name)).toBe('Unknown');
      expect(cluster.taint(name, 'node.orch.io/unreachable', 'NoSchedule')).toBeDefined();
      expect(cluster.taint(name, 'node.orch.io/unreachable', 'NoExecute')).toBeDefined();
      expect(cluster.podsOn(name)).toEqual([]);
    }
    expect(cluster.events).toContainEqual(expect.objectContaining({reason: 'NodeNotReady', message: 'Node a0 status is now: NodeNotReady'}));

    // One node per 10 s per zone: the two nodes of zone a 10 s apart, zone b in parallel.
    const [a0] = cluster.evictionTimes('a0');
    const [a1] = cluster.evictionTimes('a1');
    const [b0] = cluster.evictionTimes('b0');
    expect(Math.abs(a1 - a0)).toBe(10);
    expect(b0).toBe(Math.min(a0, a1));
    expect(cluster.evictions).toHaveLength(6);
    expect(Math.min(a0, a1) - 100).toBeLessThanOrEqual(65); // Unknown by 155 s, queued on the next pass

    // Healthy nodes are untouched.
    for (const name of ['a2', 'a3', 'a4', 'b1', 'b4']) {
      expect(cluster.ready(name)).toBe('True');
      expect(cluster.nodes.get(name)!.spec?.taints ?? []).toEqual([]);
      expect(cluster.podsOn(name)).toHaveLength(2);
    }

    // 2 of 5 not ready in zone a: fewer than 3, so the zone stays Normal.
    expect(cluster.zone('a')).toMatchObject({state: 'Normal', nodesReady: 3, nodesNotReady: 2, evictionRate: 0.1});
    expect(cluster.zone('b')).toMatchObject({state: 'Normal', nodesReady: 4, nodesNotReady: 1});
    const snapshotA0 = controller.snapshot().nodes.find((n) => n.name === 'a0')!;
    expect(snapshotA0).toMatchObject({ready: 'Unknown', pendingEvictions: 0, queuedForTainting: false});
    expect(snapshotA0.taints).toEqual(expect.arrayContaining(['node.orch.io/unreachable:NoExecute', 'node.orch.io/unreachable:NoSchedule']));
    expect(snapshotA0.lastHeartbeatAgeMs).toBeGreaterThanOrEqual(300_000);
    expect(controller.snapshot().nodes.find((n) => n.name === 'a2')!.lastHeartbeatAgeMs).toBeLessThanOrEqual(10_000);
  });

  it('pods with tolerationSeconds leave after them; a node that comes back keeps them and loses its taints', async () => {
    cluster = new SimulatedCluster({a: 5, b: 5}, (node) => [
      {metadata: {name: `${node}-tolerant`, namespace: 'default'}, spec: {nodeName: node, tolerations: [{key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120}]}},
    ]);
    cluster.start();
    await cluster.runUntil(20);
    cluster.kill('a0', 'b0');
    await cluster.runUntil(100);
    const tainted = Date.parse(cluster.taint('a0', 'node.orch.io/unreachable')!.timeAdded!);
    await cluster.runUntil(400);
    // a0 stays down: its pod goes 120 s after the taint.
    expect(cluster.evictionTimes('a0')).toEqual([(tainted - T0) / 1000 + 120]);

    // a1 goes down, is tainted, and comes back before its pod's time.
    cluster.kill('a1');
    await cluster.runUntil(480);
    expect(cluster.taint('a1', 'node.orch.io/unreachable')).toBeDefined();
    cluster.revive('a1');
    await cluster.runUntil(700);
    expect(cluster.ready('a1')).toBe('True');
    expect(cluster.nodes.get('a1')!.spec?.taints ?? []).toEqual([]);
    expect(cluster.podsOn('a1')).toEqual(['a1-tolerant']);
    expect(cluster.events).toContainEqual(expect.objectContaining({reason: 'TaintManagerEviction', message: 'Cancelling deletion of Pod default/a1-tolerant'}));
  });

  it('zone states follow the unhealthy-zone threshold; a small zone stops evicting (large-cluster override)', async () => {
    cluster = new SimulatedCluster({a: 5, b: 5}, plainPods);
    cluster.start();
    await cluster.runUntil(20);
    // 4 of 5 not ready in zone a (80% >= 55%, at least 3): PartialDisruption. Zone size 5 is at
    // most --large-cluster-size-threshold (50), so the secondary rate is overridden to 0.
    cluster.kill('a0', 'a1', 'a2', 'a3');
    await cluster.runUntil(600);
    expect(cluster.zone('a')).toMatchObject({state: 'PartialDisruption', nodesReady: 1, nodesNotReady: 4, evictionRate: 0});
    for (const name of ['a0', 'a1', 'a2', 'a3']) {
      expect(cluster.ready(name)).toBe('Unknown');
      expect(cluster.taint(name, 'node.orch.io/unreachable', 'NoSchedule')).toBeDefined();
      expect(cluster.taint(name, 'node.orch.io/unreachable', 'NoExecute')).toBeUndefined();
      expect(cluster.podsOn(name)).toHaveLength(2);
    }
    expect(cluster.zone('a')!.queuedNodes).toBe(4);
    expect(cluster.zone('b')).toMatchObject({state: 'Normal', evictionRate: 0.1});

    // Zone a recovers: back to Normal and the primary rate; nothing was evicted meanwhile.
    cluster.revive('a0', 'a1', 'a2', 'a3');
    await cluster.runUntil(620);
    expect(cluster.zone('a')).toMatchObject({state: 'Normal', nodesReady: 5, evictionRate: 0.1, queuedNodes: 0});
    expect(cluster.evictions).toEqual([]);
  });

  it('a partially disrupted zone larger than the threshold evicts at the secondary rate', async () => {
    cluster = new SimulatedCluster({a: 5, b: 5}, plainPods);
    cluster.start({largeClusterSizeThreshold: 4, secondaryNodeEvictionRate: 0.05});
    await cluster.runUntil(20);
    cluster.kill('a0', 'a1', 'a2', 'a3');
    await cluster.runUntil(400);
    expect(cluster.zone('a')).toMatchObject({state: 'PartialDisruption', evictionRate: 0.05});
    const times = ['a0', 'a1', 'a2', 'a3'].map((n) => cluster!.evictionTimes(n)[0]).sort((x, y) => x - y);
    // One node every 20 s (0.05/s).
    expect(times.slice(1).map((t, i) => t - times[i])).toEqual([20, 20, 20]);
  });

  it('a fully disrupted zone next to a healthy one is evicted at the primary rate', async () => {
    cluster = new SimulatedCluster({a: 5, b: 5}, plainPods);
    cluster.start();
    await cluster.runUntil(20);
    cluster.kill('b0', 'b1', 'b2', 'b3', 'b4');
    await cluster.runUntil(300);
    expect(cluster.zone('b')).toMatchObject({state: 'FullDisruption', nodesReady: 0, nodesNotReady: 5, evictionRate: 0.1});
    const times = ['b0', 'b1', 'b2', 'b3', 'b4'].map((n) => cluster!.evictionTimes(n)[0]).sort((x, y) => x - y);
    expect(times.slice(1).map((t, i) => t - times[i])).toEqual([10, 10, 10, 10]);
  });

  it('when every zone is fully disrupted evictions stop everywhere, and resume with fresh grace periods', async () => {
    cluster = new SimulatedCluster({a: 5, b: 5}, plainPods);
    cluster.start();
    await cluster.runUntil(20);
    cluster.kill(...cluster.nodes.keys());
    await cluster.runUntil(400);
    const snapshot = cluster.controller.snapshot();
    expect(snapshot.allZonesFullyDisrupted).toBe(true);
    expect(snapshot.zones.map((z) => [z.state, z.evictionRate])).toEqual([['FullDisruption', 0], ['FullDisruption', 0]]);
    expect(cluster.evictions).toEqual([]);
    for (const name of cluster.nodes.keys()) expect(cluster.taint(name, 'node.orch.io/unreachable')).toBeUndefined();

    // One node is back: the mode ends, every node's last sign of life is reset to now (a fresh
    // grace period), and each zone gets the rate of its own state, starting with an empty bucket.
    cluster.revive('a0');
    await cluster.runUntil(406);
    const snapshot2 = cluster.controller.snapshot();
    expect(snapshot2.allZonesFullyDisrupted).toBe(false);
    expect(snapshot2.nodes.find((n) => n.name === 'b0')!.lastHeartbeatAgeMs).toBeLessThanOrEqual(5_000);
    expect(cluster.zone('a')).toMatchObject({state: 'PartialDisruption', evictionRate: 0});
    expect(cluster.zone('b')).toMatchObject({state: 'FullDisruption', evictionRate: 0.1});
    await cluster.runUntil(700);
    // Zone a (4 of 5 down, small zone) evicts nothing; zone b's nodes, already Unknown, are tainted
    // one per 10 s, the first a full token period after the mode ended.
    expect(cluster.evictions.filter((e) => e.node.startsWith('a'))).toEqual([]);
    const bTimes = ['b0', 'b1', 'b2', 'b3', 'b4'].map((n) => cluster!.evictionTimes(n)[0]).sort((x, y) => x - y);
    expect(bTimes[0]).toBeGreaterThanOrEqual(410);
    expect(bTimes[0]).toBeLessThanOrEqual(416);
    expect(bTimes.slice(1).map((t, i) => t - bTimes[i])).toEqual([10, 10, 10, 10]);
  });

  it('a registered node that never posts status becomes Unknown after the startup grace period', async () => {
    cluster = new SimulatedCluster({a: 3}, () => []);
    cluster.start();
    await cluster.runUntil(30);
    cluster.nodes.set('fresh', {metadata: {name: 'fresh', resourceVersion: '999', creationTimestamp: formatTime(cluster.t(30)), labels: {'topology.orch.io/zone': 'a', 'topology.orch.io/region': 'r1'}}, spec: {}, status: {}});
    await cluster.runUntil(90);
    expect(cluster.ready('fresh')).toBeUndefined();
    await cluster.runUntil(100);
    expect(cluster.ready('fresh')).toBe('Unknown');
    const write = cluster.statusWrites.find((w) => w.node === 'fresh')!;
    expect((write.at - cluster.t(30)) / 1000).toBeGreaterThan(60);
    expect((write.at - cluster.t(30)) / 1000).toBeLessThanOrEqual(65);
    expect(cluster.events).toContainEqual(expect.objectContaining({reason: 'RegisteredNode', message: 'Registered Node fresh in Controller'}));
  });

  it('marks the pods of a node that stops being ready not ready', async () => {
    cluster = new SimulatedCluster({a: 1, b: 1}, plainPods);
    cluster.start();
    await cluster.runUntil(20);
    cluster.kill('a0');
    // Stop before the taint (queued only on the pass after Ready went Unknown).
    await cluster.runUntil(75);
    expect(cluster.ready('a0')).toBe('Unknown');
    const pod = cluster.pods.get('default/a0-p1');
    expect(pod?.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    expect(cluster.pods.get('default/b0-p1')?.status?.conditions?.[0].status).toBe('True');
  });
});

describe('node lifecycle controller with an informer cache that lags behind its writes', () => {
  it('builds each taint write on its own earlier writes, not on the stale cached list', async () => {
    const clock = new FakeClock(T0);
    let revision = 10;
    /** Every version of every node: the cache shows the newest one at or below `synced`. */
    const history: Node[] = [];
    let synced = 0;
    const latest = (name: string) => history.filter((n) => n.metadata.name === name).at(-1)!;
    const write = (node: Node) => {
      const stored = structuredClone(node);
      stored.metadata.resourceVersion = String(++revision);
      history.push(stored);
      return structuredClone(stored);
    };
    const sync = () => (synced = revision);
    const leases = new Map<string, Lease>();
    const renew = (name: string) => leases.set(name, {metadata: {name}, spec: {renewTime: microTime(clock.now())}});
    for (const name of ['dead', 'ok1', 'ok2']) {
      write({metadata: {name, creationTimestamp: formatTime(T0)}, spec: {}, status: {conditions: [{type: 'Ready', status: 'True', lastHeartbeatTime: formatTime(T0), lastTransitionTime: formatTime(T0)}]}});
      renew(name);
    }
    sync();
    const taintWrites: Taint[][] = [];
    const controller = new NodeLifecycleController({
      nodes: {
        list: () => {
          const names = [...new Set(history.map((n) => n.metadata.name))];
          return names.map((name) => structuredClone(history.filter((n) => n.metadata.name === name && Number(n.metadata.resourceVersion) <= synced).at(-1)!));
        },
      },
      leases: {get: (name) => leases.get(name)},
      pods: {listOnNode: () => []},
      client: {
        updateNodeStatus: async (node) => write({...latest(node.metadata.name), status: node.status}),
        setTaints: async (name, taints) => {
          taintWrites.push(taints);
          return write({...latest(name), spec: {taints}});
        },
        evictPod: async () => undefined,
      },
      clock,
      logger: silent,
    });

    await controller.tick();
    await clock.advance(60_000);
    renew('ok1');
    renew('ok2');
    sync();
    await controller.tick(); // dead -> Unknown (status write), unreachable:NoSchedule (taint write)
    expect(latest('dead').status?.conditions?.[0].status).toBe('Unknown');

    // The informer has delivered the status update but not yet the taint write.
    synced = revision - 1;
    await clock.advance(5_000);
    await controller.tick(); // observed Unknown: queued and tainted unreachable:NoExecute at once

    const keys = (taints: Taint[] | null | undefined) => (taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();
    expect(keys(latest('dead').spec?.taints)).toEqual(['node.orch.io/unreachable:NoExecute', 'node.orch.io/unreachable:NoSchedule']);
    expect(taintWrites).toHaveLength(2); // nothing written twice
    expect(keys(latest('ok1').spec?.taints)).toEqual([]);
  });
});
