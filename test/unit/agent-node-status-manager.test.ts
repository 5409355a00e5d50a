import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { RestClient } from '../../src/client/rest-client.js';
import { FakeClock } from '../../src/daemons/shared/clock.js';
import { DEFAULT_EVICTION_HARD } from '../../src/daemons/agent/eviction/thresholds.js';
import {
  type MachineFacts,
  type NodeObject,
  type NodeSettings,
  type NodeStatusSnapshot,
  type LeaseObject,
  NodeStatusManager,
  restNodeClient,
} from '../../src/daemons/agent/node/index.js';
import { REGISTRATION_INITIAL_BACKOFF_MS } from '../../src/daemons/agent/node/status-manager.js';
import { names } from '../../src/api/names.js';
import { startTestApi, type TestApi } from '../helpers/memory-store.js';

const GiB = 2 ** 30;
const FACTS: MachineFacts = {
  hostname: 'Worker-1',
  resources: { cpuCores: 4, memoryBytes: 8 * GiB, rootfsBytes: 100 * GiB },
  interfaces: [
    { address: '127.0.0.1', family: 'IPv4', internal: true },
    { address: '10.0.0.5', family: 'IPv4', internal: false },
  ],
  identity: { machineID: 'm1', systemUUID: '', bootID: 'b1', kernelVersion: '6.1.0', osImage: 'Test OS' },
};

function settings(overrides: Partial<NodeSettings> = {}): NodeSettings {
  return {
    registerNode: true,
    maxPods: 110,
    podsPerCore: 0,
    localStorageCapacityIsolation: true,
    hardEvictionThresholds: DEFAULT_EVICTION_HARD,
    ignoreEvictionInAllocatable: false,
    rootDir: '/var/lib/agent',
    port: 10250,
    nodeStatusUpdateFrequencyMs: 10_000,
    nodeStatusReportFrequencyMs: 300_000,
    nodeLeaseDurationSeconds: 40,
    version: '1.2.3',
    ...overrides,
  };
}

const T0 = Date.parse('2024-05-01T10:00:00Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString().replace('.000Z', 'Z');

let api: TestApi;
let rest: RestClient;

beforeEach(async () => {
  api = await startTestApi();
  rest = new RestClient({ config: { server: api.url, insecure: false } });
});

afterEach(async () => {
  rest.close();
  await api.close();
});

function manager(options: { settings?: Partial<NodeSettings>; facts?: MachineFacts; clock?: FakeClock; pressure?: () => Record<string, boolean> } = {}) {
  const snapshots: NodeStatusSnapshot[] = [];
  const events: string[] = [];
  const m = new NodeStatusManager({
    client: restNodeClient(rest),
    settings: settings(options.settings),
    hostname: 'Worker-1',
    clock: options.clock ?? new FakeClock(T0),
    readMachine: async () => options.facts ?? FACTS,
    pressure: options.pressure as never,
    random: () => 0,
    recordEvent: (e) => events.push(e.message),
    onSnapshot: (s) => snapshots.push(s),
  });
  return { m, snapshots, events };
}

const getNode = () => rest.get<NodeObject>('/api/v1/nodes/worker-1');
const condition = (node: NodeObject, type: string) => node.status?.conditions?.find((c) => c.type === type);

describe('registration against the API server', () => {
  it('creates the Node with labels, taints, provider id and status, and records its first conditions as events', async () => {
    const { m, events } = manager({
      settings: { nodeLabels: { team: 'a' }, registerWithTaints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }], providerID: 'orch://w1' },
    });
    await m.syncNodeStatus();
    const node = await getNode();
    expect(node.metadata.labels).toEqual({ 'orch.io/hostname': 'worker-1', 'orch.io/os': 'linux', 'orch.io/arch': expect.any(String), team: 'a' });
    expect(node.spec).toMatchObject({ taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }], providerID: 'orch://w1' });
    expect(node.status?.capacity).toEqual({ cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '100Gi' });
    expect(node.status?.allocatable).toMatchObject({ memory: '8092Mi' });
    expect(node.status?.addresses).toEqual([
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'Hostname', address: 'worker-1' },
    ]);
    expect(condition(node, 'Ready')).toMatchObject({ status: 'True', reason: 'AgentReady', lastHeartbeatTime: at(0) });
    expect(m.snapshot()).toMatchObject({ nodeName: 'worker-1', registerNode: true, registered: true, connected: true, lastStatusAt: T0 });
    expect(m.snapshot().lastError).toBeUndefined();
    expect(events).toEqual(['NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID'].map((r) => `Node worker-1 status is now: ${r}`));
  });

  it('a second run reconciles the existing Node instead of failing', async () => {
    await manager({ settings: { nodeLabels: { team: 'a' }, registerWithTaints: [{ key: 'old', effect: 'NoSchedule' }] } }).m.syncNodeStatus();
    // Someone edits the agent's own labels.
    await rest.patch('/api/v1/nodes/worker-1', 'application/merge-patch+json', { metadata: { labels: { 'orch.io/os': 'windows', 'orch.io/arch': null, extra: 'kept' } } });

    const bigger: MachineFacts = { ...FACTS, resources: { ...FACTS.resources, memoryBytes: 16 * GiB } };
    const { m } = manager({ facts: bigger, settings: { nodeLabels: { team: 'b' }, registerWithTaints: [{ key: 'new', effect: 'NoExecute' }] } });
    await m.syncNodeStatus();

    const node = await getNode();
    expect(node.metadata.labels).toEqual({ 'orch.io/hostname': 'worker-1', 'orch.io/os': 'linux', 'orch.io/arch': expect.any(String), team: 'a', extra: 'kept' });
    // Taints and user labels are registration-time only, as upstream.
    expect(node.spec.taints).toEqual([{ key: 'old', effect: 'NoSchedule' }]);
    expect(node.status?.capacity?.memory).toBe('16Gi');
    expect(m.snapshot().registered).toBe(true);
  });

  it('reports the API server unreachable and keeps trying with back-off', async () => {
    const clock = new FakeClock(T0);
    const dead = new RestClient({ config: { server: 'http://127.0.0.1:1', insecure: false } });
    const logs: string[] = [];
    const m = new NodeStatusManager({
      client: restNodeClient(dead),
      settings: settings({ nodeLeaseDurationSeconds: 40 }),
      hostname: 'w',
      clock,
      readMachine: async () => FACTS,
      random: () => 0,
      log: (line) => logs.push(line),
    });
    const attempts = () => logs.filter((l) => l.startsWith('Attempting to register')).length;
    const failures = () => logs.filter((l) => l.startsWith('Unable to register')).length;
    m.start();
    // Waits of 100, 200, 400, 800 ms between attempts (doubling, at most 7 s).
    for (const [count, wait] of [[1, 100], [2, 200], [3, 400], [4, 800]]) {
      await clock.advance(wait - 1);
      expect(attempts()).toBe(count - 1);
      await clock.advance(1);
      await waitFor(() => failures() >= count);
    }
    expect(m.snapshot()).toMatchObject({ registered: false, connected: false, lastError: expect.stringContaining('127.0.0.1:1') });
    await m.stop();
    dead.close();
  });
});

describe('status posts', () => {
  it('posts on change, skips unchanged status until the report frequency passes', async () => {
    const clock = new FakeClock(T0);
    const pressure = { MemoryPressure: false, DiskPressure: false, PIDPressure: false };
    const { m, events } = manager({ clock, pressure: () => pressure });
    await m.syncNodeStatus();
    const first = await getNode();

    await clock.advance(10_000);
    await m.syncNodeStatus();
    const unchanged = await getNode();
    expect(unchanged.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    expect(m.snapshot().lastStatusAt).toBe(T0);

    await clock.advance(10_000);
    pressure.MemoryPressure = true;
    await m.syncNodeStatus();
    const pressured = await getNode();
    expect(condition(pressured, 'MemoryPressure')).toEqual({
      type: 'MemoryPressure',
      status: 'True',
      reason: 'AgentHasInsufficientMemory',
      message: 'agent has insufficient memory available',
      lastHeartbeatTime: at(20),
      lastTransitionTime: at(20),
    });
    expect(condition(pressured, 'Ready')).toMatchObject({ status: 'True', lastHeartbeatTime: at(20), lastTransitionTime: at(0) });
    expect(condition(pressured, 'DiskPressure')).toMatchObject({ status: 'False', lastTransitionTime: at(0) });
    expect(events).toContain('Node worker-1 status is now: NodeHasInsufficientMemory');
    expect(m.snapshot().conditions.find((c) => c.type === 'MemoryPressure')?.status).toBe('True');

    // Nothing changes, but nodeStatusReportFrequency (5m) since the last post: a heartbeat is posted.
    await clock.advance(300_000);
    await m.syncNodeStatus();
    const reported = await getNode();
    expect(condition(reported, 'Ready')).toMatchObject({ lastHeartbeatTime: at(320), lastTransitionTime: at(0) });
    expect(condition(reported, 'MemoryPressure')).toMatchObject({ lastHeartbeatTime: at(320), lastTransitionTime: at(20) });
  });

  it('runs on its period once started, and at once on requestStatusUpdate', async () => {
    const clock = new FakeClock(T0);
    const pressure = { MemoryPressure: false, DiskPressure: false, PIDPressure: false };
    const { m } = manager({ clock, pressure: () => pressure });
    m.start();
    try {
      await clock.advance(100);
      await waitFor(() => m.snapshot().lastStatusAt === T0 + 100);
      pressure.DiskPressure = true;
      m.requestStatusUpdate();
      await waitFor(async () => condition(await getNode(), 'DiskPressure')?.status === 'True');
      expect(condition(await getNode(), 'DiskPressure')?.lastTransitionTime).toBe(at(0)); // T0+100ms, whole seconds
      pressure.DiskPressure = false;
      await clock.advance(9_999);
      expect(condition(await getNode(), 'DiskPressure')?.status).toBe('True');
      await clock.advance(1);
      await waitFor(async () => condition(await getNode(), 'DiskPressure')?.status === 'False');
    } finally {
      await m.stop();
    }
  });

  it('keeps conditions it does not own and replaces addresses whole', async () => {
    const { m } = manager({ settings: { nodeIPs: ['10.0.0.5'] } });
    await m.syncNodeStatus();
    await rest.patch('/api/v1/nodes/worker-1/status', 'application/strategic-merge-patch+json', {
      status: { conditions: [{ type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated' }] },
    });
    const twoIPs: MachineFacts = { ...FACTS, interfaces: [...FACTS.interfaces, { address: '10.0.0.6', family: 'IPv4', internal: false }] };
    const second = manager({ facts: twoIPs, settings: { nodeIPs: ['10.0.0.6'] } });
    await second.m.syncNodeStatus();
    const node = await getNode();
    expect(condition(node, 'NetworkUnavailable')).toMatchObject({ status: 'False', reason: 'RouteCreated' });
    expect(node.status?.addresses).toEqual([
      { type: 'InternalIP', address: '10.0.0.6' },
      { type: 'Hostname', address: 'worker-1' },
    ]);
  });

  it('with --register-node=false updates an existing Node and never creates one', async () => {
    const { m } = manager({ settings: { registerNode: false } });
    await m.syncNodeStatus();
    await expect(getNode()).rejects.toMatchObject({ reason: 'NotFound' });
    expect(m.snapshot()).toMatchObject({ registerNode: false, registered: false });
  });
});

describe('the lease timing (fake clock)', () => {
  it('is created right when the Node is registered, owned by it, with no wait for a renew interval', async () => {
    const clock = new FakeClock(T0);
    const { m } = manager({ clock });
    m.start();
    try {
      const leasePath = `/apis/${names().groups.coordination}/v1/namespaces/${names().namespaces.nodeLease}/leases/worker-1`;
      // Registration waits its first back-off (100 ms), as upstream; the clock goes no further.
      await clock.advance(REGISTRATION_INITIAL_BACKOFF_MS);
      await waitFor(async () => (await rest.get<LeaseObject>(leasePath).catch(() => undefined)) !== undefined);
      const lease = await rest.get<LeaseObject>(leasePath);
      expect(lease.spec.renewTime).toBe(new Date(T0 + REGISTRATION_INITIAL_BACKOFF_MS).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'));
      expect(lease.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Node', name: 'worker-1', uid: (await getNode()).metadata.uid }]);
    } finally {
      await m.stop();
    }
  });
});

describe('the lease against the API server (real timers)', () => {
  it('is created after registration, owned by the Node, and renewed', async () => {
    const m = new NodeStatusManager({
      client: restNodeClient(rest),
      // 1 s lease: renewed every 250 ms.
      settings: settings({ nodeLeaseDurationSeconds: 1 }),
      hostname: 'Worker-1',
      readMachine: async () => FACTS,
    });
    m.start();
    try {
      const leasePath = '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases/worker-1';
      await waitFor(async () => (await rest.get<LeaseObject>(leasePath).catch(() => undefined)) !== undefined, 5_000);
      const node = await getNode();
      const first = await rest.get<LeaseObject>(leasePath);
      expect(first.spec).toMatchObject({ holderIdentity: 'worker-1', leaseDurationSeconds: 1, renewTime: expect.stringMatching(/\.\d{6}Z$/) });
      expect(first.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Node', name: 'worker-1', uid: node.metadata.uid }]);
      await waitFor(async () => (await rest.get<LeaseObject>(leasePath)).spec.renewTime !== first.spec.renewTime, 3_000);
      expect(m.snapshot().lastLeaseRenewAt).toBeGreaterThan(0);
    } finally {
      await m.stop();
    }
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
