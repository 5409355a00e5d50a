import { describe, expect, it } from '@jest/globals';
import { parseQuantity } from '../../src/options/quantity.js';
import type { EvictionThreshold } from '../../src/options/value-eviction.js';
import {
  type AllocatableSettings,
  type MachineFacts,
  type MachineSources,
  type NodeObject,
  type NodeSettings,
  computeNodeStatus,
  defaultLabelsPatch,
  formatAmount,
  initialNode,
  nodeAddresses,
  nodeAllocatable,
  nodeCapacity,
  nodeSettingsFromConfig,
  nodeStatusHasChanged,
  nodeStatusPatch,
  parseAmount,
  podCapacity,
  prettyName,
  readMachineFacts,
  resolveNodeName,
  updateConditions,
} from '../../src/daemons/agent/node/index.js';
import { DEFAULT_EVICTION_HARD } from '../../src/daemons/agent/eviction/thresholds.js';
import { agentOptions } from '../../src/options/agent.js';
import { resolveOptions } from '../../src/options/resolve.js';
import { loadAgentConfiguration } from '../../src/daemons/agent/config/index.js';

const GiB = 2 ** 30;
const MEMORY = 16316412 * 1024;

export const FACTS: MachineFacts = {
  hostname: 'Worker-1.Example',
  resources: { cpuCores: 4, memoryBytes: MEMORY, rootfsBytes: 100 * GiB },
  interfaces: [
    { address: '127.0.0.1', family: 'IPv4', internal: true },
    { address: '::1', family: 'IPv6', internal: true },
    { address: 'fe80::1', family: 'IPv6', internal: false },
    { address: 'fd00::5', family: 'IPv6', internal: false },
    { address: '10.0.0.5', family: 'IPv4', internal: false },
    { address: '10.0.1.5', family: 'IPv4', internal: false },
  ],
  identity: { machineID: 'abc123', systemUUID: '', bootID: 'boot-1', kernelVersion: '6.1.0-test', osImage: 'Debian GNU/Linux 12 (bookworm)' },
};

export function settings(overrides: Partial<NodeSettings> = {}): NodeSettings {
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

const NO_PRESSURE = { MemoryPressure: false, DiskPressure: false, PIDPressure: false };
const T0 = Date.parse('2024-05-01T10:00:00Z');

describe('node name', () => {
  it.each([
    [undefined, 'Worker-1.Example', 'worker-1.example'],
    ['  My-Node ', 'host', 'my-node'],
    ['', 'HOST', 'host'],
  ])('override %p, hostname %p -> %p', (override, hostname, expected) => {
    expect(resolveNodeName(override, hostname)).toBe(expected);
  });

  it('refuses an empty name', () => {
    expect(() => resolveNodeName(undefined, '  ')).toThrow('empty hostname is invalid');
  });
});

describe('pods capacity', () => {
  it.each([
    // maxPods, podsPerCore, cores, expected
    [110, 0, 4, 110],
    [110, 10, 4, 40],
    [110, 50, 4, 110],
    [20, 10, 2, 20],
    [30, 10, 2, 20],
  ])('max-pods %p, pods-per-core %p, %p cores -> %p', (maxPods, podsPerCore, cores, expected) => {
    expect(podCapacity({ maxPods, podsPerCore }, cores)).toBe(expected);
  });
});

describe('quantities', () => {
  it.each([
    [{ milli: BigInt(MEMORY) * 1000n, format: 'BinarySI' as const }, '16316412Ki'],
    [{ milli: 7800n, format: 'DecimalSI' as const }, '7800m'],
    [{ milli: 4000n, format: 'DecimalSI' as const }, '4'],
    [{ milli: 1000000n * 1000n, format: 'BinarySI' as const }, '1000000'],
    [{ milli: 1000000n * 1000n, format: 'DecimalSI' as const }, '1M'],
    [{ milli: 512n * 1000n, format: 'BinarySI' as const }, '512'],
    [{ milli: BigInt(GiB) * 1000n, format: 'BinarySI' as const }, '1Gi'],
  ])('%p prints as %p', (amount, text) => {
    expect(formatAmount(amount)).toBe(text);
  });

  it('parses suffixes exactly', () => {
    expect(parseAmount('100m').milli).toBe(100n);
    expect(parseAmount('1.5Gi')).toEqual({ milli: 1536n * 2n ** 20n * 1000n, format: 'BinarySI' });
  });
});

describe('capacity and allocatable', () => {
  const thresholds = (spec: Record<string, string>): EvictionThreshold[] =>
    Object.entries(spec).map(([signal, value]) => ({
      signal: signal as EvictionThreshold['signal'],
      operator: 'LessThan',
      value: value.endsWith('%') ? { percentage: Number(value.slice(0, -1)) } : { quantity: parseQuantity(value) },
    }));

  it('measures cpu, memory, pods and the root filesystem', () => {
    const capacity = nodeCapacity(FACTS.resources, settings());
    expect(Object.fromEntries(Object.entries(capacity).map(([k, v]) => [k, formatAmount(v)]))).toEqual({
      cpu: '4',
      memory: '16316412Ki',
      pods: '110',
      'ephemeral-storage': '100Gi',
    });
  });

  it('leaves ephemeral-storage out without local storage isolation', () => {
    expect(nodeCapacity(FACTS.resources, settings({ localStorageCapacityIsolation: false }))).not.toHaveProperty('ephemeral-storage');
  });

  it.each<{ name: string; input: AllocatableSettings; expected: Record<string, string> }>([
    {
      name: 'default hard thresholds only',
      input: {},
      expected: { cpu: '4', memory: '16214012Ki', pods: '110', 'ephemeral-storage': '96636764000' },
    },
    {
      name: 'orch-reserved and system-reserved add up',
      input: { orchReserved: { cpu: '200m', memory: '500Mi' }, systemReserved: { cpu: '300m', memory: '1Gi', 'ephemeral-storage': '10Gi' } },
      // memory: 16316412Ki - 500Mi - 1Gi - 100Mi; storage: 100Gi - 10Gi - 10% of 100Gi (as float32: 10737418400)
      expected: { cpu: '3500m', memory: '14653436Ki', pods: '110', 'ephemeral-storage': '85899345760' },
    },
    {
      name: 'eviction ignored (--experimental-allocatable-ignore-eviction)',
      input: { orchReserved: { memory: '1Gi' }, ignoreEviction: true },
      expected: { cpu: '4', memory: '15267836Ki', pods: '110', 'ephemeral-storage': '100Gi' },
    },
    {
      name: 'absolute nodefs threshold and a percentage memory threshold',
      input: { hardEvictionThresholds: thresholds({ 'memory.available': '10%', 'nodefs.available': '5Gi', 'pid.available': '1000' }) },
      // 10% of 16708005888 bytes with upstream's float32 fraction is 1670800613 (not 1670800588)
      expected: { cpu: '4', memory: '15037205275', pods: '110', 'ephemeral-storage': '95Gi' },
    },
    {
      name: '0% switches a default off',
      input: { hardEvictionThresholds: thresholds({ 'memory.available': '0%', 'nodefs.available': '0%' }) },
      expected: { cpu: '4', memory: '16316412Ki', pods: '110', 'ephemeral-storage': '100Gi' },
    },
    {
      name: 'reservations above capacity give zero, never negative; pods are not reserved',
      input: { systemReserved: { cpu: '8', pods: '10', pid: '1000' }, hardEvictionThresholds: [] },
      expected: { cpu: '0', memory: '16316412Ki', pods: '110', 'ephemeral-storage': '100Gi' },
    },
  ])('$name', ({ input, expected }) => {
    const capacity = nodeCapacity(FACTS.resources, settings());
    const allocatable = nodeAllocatable(capacity, { hardEvictionThresholds: DEFAULT_EVICTION_HARD, ...input });
    expect(Object.fromEntries(Object.entries(allocatable).map(([k, v]) => [k, formatAmount(v)]))).toEqual(expected);
  });

  it('names the option of an invalid reservation', () => {
    const capacity = nodeCapacity(FACTS.resources, settings());
    expect(() => nodeAllocatable(capacity, { orchReserved: { memory: 'lots' } })).toThrow(/--orch-reserved: invalid quantity for memory/);
  });
});

describe('addresses', () => {
  const interfaces = FACTS.interfaces;
  it.each([
    { name: 'first non-loopback IPv4 by default', nodeIPs: undefined, hostname: 'w1', expected: ['InternalIP=10.0.0.5', 'Hostname=w1'] },
    { name: '--node-ip', nodeIPs: ['10.0.1.5'], hostname: 'w1', expected: ['InternalIP=10.0.1.5', 'Hostname=w1'] },
    { name: 'dual stack: the second one last', nodeIPs: ['10.0.1.5', 'fd00::5'], hostname: 'w1', expected: ['InternalIP=10.0.1.5', 'Hostname=w1', 'InternalIP=fd00::5'] },
    { name: ':: prefers IPv6 (not link-local)', nodeIPs: ['::'], hostname: 'w1', expected: ['InternalIP=fd00::5', 'Hostname=w1'] },
    { name: '0.0.0.0 detects', nodeIPs: ['0.0.0.0'], hostname: 'w1', expected: ['InternalIP=10.0.0.5', 'Hostname=w1'] },
    { name: 'a hostname override that is an IP', nodeIPs: undefined, hostname: '192.168.7.7', expected: ['InternalIP=192.168.7.7', 'Hostname=192.168.7.7'] },
  ])('$name', ({ nodeIPs, hostname, expected }) => {
    expect(nodeAddresses({ hostname, nodeIPs, interfaces }).map((a) => `${a.type}=${a.address}`)).toEqual(expected);
  });

  it('falls back to IPv6 when the host has no IPv4 address', () => {
    const v6only = interfaces.filter((i) => i.family === 'IPv6');
    expect(nodeAddresses({ hostname: 'w1', interfaces: v6only })[0]).toEqual({ type: 'InternalIP', address: 'fd00::5' });
  });

  it.each([
    [['10.9.9.9'], `node IP: "10.9.9.9" not found in the host's network interfaces`],
    [['127.0.0.1'], "nodeIP can't be loopback address"],
    [['10.0.0.5', 'fd00::99'], `node IP: "fd00::99" not found in the host's network interfaces`],
  ])('refuses --node-ip %p', (nodeIPs, message) => {
    expect(() => nodeAddresses({ hostname: 'w1', nodeIPs, interfaces })).toThrow(message);
  });

  it('says so when there is no address at all', () => {
    expect(() => nodeAddresses({ hostname: 'w1', interfaces: interfaces.filter((i) => i.internal) })).toThrow("can't get ip address of node w1");
  });
});

describe('the registered Node', () => {
  const build = (overrides: Partial<NodeSettings> = {}, arch = 'amd64') =>
    initialNode({ settings: settings(overrides), facts: FACTS, nodeName: 'worker-1', pressure: NO_PRESSURE, notReadyReasons: [], now: T0, arch }).node;

  it('carries the well-known labels, then --node-labels', () => {
    expect(build({ nodeLabels: { 'node.orch.io/instance-type': 'big', [`orch.io/os`]: 'custom', team: 'a' } }).metadata.labels).toEqual({
      'orch.io/hostname': 'worker-1',
      'orch.io/os': 'custom',
      'orch.io/arch': 'amd64',
      'node.orch.io/instance-type': 'big',
      team: 'a',
    });
    expect(build({}, 'arm64').metadata.labels?.['orch.io/arch']).toBe('arm64');
  });

  it('carries taints and the provider id in its spec', () => {
    const node = build({ registerWithTaints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }, { key: 'gpu', effect: 'NoExecute' }], providerID: 'orch://rack1/w1' });
    expect(node.spec).toEqual({
      taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }, { key: 'gpu', effect: 'NoExecute' }],
      providerID: 'orch://rack1/w1',
    });
    expect(build().spec).toEqual({});
  });

  it('registers with its whole status', () => {
    const status = build({ port: 10333 }).status!;
    expect(status.capacity).toEqual({ cpu: '4', memory: '16316412Ki', pods: '110', 'ephemeral-storage': '100Gi' });
    expect(status.allocatable).toEqual({ cpu: '4', memory: '16214012Ki', pods: '110', 'ephemeral-storage': '96636764000' });
    expect(status.addresses).toEqual([
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'Hostname', address: 'worker-1' },
    ]);
    expect(status.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 10333 } });
    expect(status.nodeInfo).toEqual({
      machineID: 'abc123',
      systemUUID: '',
      bootID: 'boot-1',
      kernelVersion: '6.1.0-test',
      osImage: 'Debian GNU/Linux 12 (bookworm)',
      containerRuntimeVersion: `process://${process.versions.node}`,
      kubeletVersion: 'v1.2.3',
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: 'amd64',
    });
    expect(status.conditions!.map((c) => [c.type, c.status, c.reason, c.message, c.lastTransitionTime])).toEqual([
      ['MemoryPressure', 'False', 'AgentHasSufficientMemory', 'agent has sufficient memory available', '2024-05-01T10:00:00Z'],
      ['DiskPressure', 'False', 'AgentHasNoDiskPressure', 'agent has no disk pressure', '2024-05-01T10:00:00Z'],
      ['PIDPressure', 'False', 'AgentHasSufficientPID', 'agent has sufficient PID available', '2024-05-01T10:00:00Z'],
      ['Ready', 'True', 'AgentReady', 'agent is posting ready status', '2024-05-01T10:00:00Z'],
    ]);
  });

  it('is not ready without the root filesystem measured', () => {
    const node = initialNode({
      settings: settings(),
      facts: { ...FACTS, resources: { ...FACTS.resources, rootfsBytes: undefined } },
      nodeName: 'w',
      pressure: NO_PRESSURE,
      notReadyReasons: ['container runtime is down'],
      now: T0,
    }).node;
    expect(node.status!.conditions!.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'AgentNotReady',
      message: '[container runtime is down, missing node capacity for resources: ephemeral-storage]',
    });
  });

  it('reconciles only the labels the agent owns', () => {
    const wanted = build({ nodeLabels: { team: 'b' } });
    const existing: NodeObject = { ...wanted, metadata: { name: 'worker-1', labels: { 'orch.io/hostname': 'old', 'orch.io/arch': 'amd64', team: 'a', extra: 'x' } } };
    expect(defaultLabelsPatch(wanted, existing)).toEqual({ 'orch.io/hostname': 'worker-1', 'orch.io/os': 'linux' });
    expect(defaultLabelsPatch(wanted, wanted)).toBeUndefined();
  });
});

describe('conditions over time', () => {
  const at = (s: number) => new Date(T0 + s * 1000).toISOString().replace('.000Z', 'Z');
  it('moves the transition time only when the status changes, the heartbeat every time', () => {
    const first = updateConditions(undefined, { pressure: NO_PRESSURE, notReadyReasons: [] }, at(0));
    expect(first.events).toEqual(['NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID']);

    const second = updateConditions(first.conditions, { pressure: { ...NO_PRESSURE, MemoryPressure: true }, notReadyReasons: [] }, at(10));
    const memory = second.conditions.find((c) => c.type === 'MemoryPressure')!;
    expect(memory).toEqual({
      type: 'MemoryPressure',
      status: 'True',
      reason: 'AgentHasInsufficientMemory',
      message: 'agent has insufficient memory available',
      lastHeartbeatTime: at(10),
      lastTransitionTime: at(10),
    });
    expect(second.conditions.find((c) => c.type === 'Ready')).toMatchObject({ lastHeartbeatTime: at(10), lastTransitionTime: at(0) });
    expect(second.events).toEqual(['NodeHasInsufficientMemory']);

    const third = updateConditions(second.conditions, { pressure: NO_PRESSURE, notReadyReasons: ['PLEG is not healthy'] }, at(20));
    expect(third.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'AgentNotReady', message: 'PLEG is not healthy', lastTransitionTime: at(20) });
    expect(third.events).toEqual(['NodeHasSufficientMemory', 'NodeNotReady']);
  });

  it('keeps conditions it does not own, and takes over an Unknown Ready', () => {
    const existing = [
      { type: 'NetworkUnavailable', status: 'False' as const, reason: 'RouteCreated' },
      { type: 'Ready', status: 'Unknown' as const, reason: 'NodeStatusUnknown', lastTransitionTime: at(-100) },
    ];
    const { conditions, events } = updateConditions(existing, { pressure: NO_PRESSURE, notReadyReasons: [] }, at(0));
    expect(conditions.map((c) => c.type)).toEqual(['NetworkUnavailable', 'Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']);
    expect(conditions[1]).toMatchObject({ status: 'True', reason: 'AgentReady', lastTransitionTime: at(0) });
    expect(events).toContain('NodeReady');
  });
});

describe('posting decisions', () => {
  const base = () => initialNode({ settings: settings(), facts: FACTS, nodeName: 'w', pressure: NO_PRESSURE, notReadyReasons: [], now: T0 }).node;
  const recompute = (node: NodeObject, seconds: number, facts = FACTS, pressure = NO_PRESSURE) =>
    computeNodeStatus(node, { settings: settings(), facts, nodeName: 'w', pressure, notReadyReasons: [], now: T0 + seconds * 1000 }).node;

  it('ignores heartbeats and quantity spelling, sees everything else', () => {
    const node = base();
    expect(nodeStatusHasChanged(node.status, recompute(node, 10).status)).toBe(false);
    const respelled = structuredClone(node);
    respelled.status!.capacity!.memory = `${MEMORY}`;
    expect(nodeStatusHasChanged(respelled.status, node.status)).toBe(false);
    expect(nodeStatusHasChanged(node.status, recompute(node, 10, FACTS, { ...NO_PRESSURE, DiskPressure: true }).status)).toBe(true);
    const moreMemory = { ...FACTS, resources: { ...FACTS.resources, memoryBytes: MEMORY * 2 } };
    expect(nodeStatusHasChanged(node.status, recompute(node, 10, moreMemory).status)).toBe(true);
    const moved = { ...FACTS, interfaces: FACTS.interfaces.filter((i) => i.address !== '10.0.0.5') };
    expect(nodeStatusHasChanged(node.status, recompute(node, 10, moved).status)).toBe(true);
  });

  it('patches addresses whole and removes resources that went away', () => {
    const node = base();
    node.status!.capacity!['hugepages-2Mi'] = '0';
    const patch = nodeStatusPatch(node, recompute(node, 10));
    expect(patch.status.addresses).toEqual([{ $patch: 'replace' }, { type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'w' }]);
    expect(patch.status.capacity).toMatchObject({ cpu: '4', 'hugepages-2Mi': null });
  });
});

describe('machine facts', () => {
  const files: Record<string, string> = {
    '/proc/meminfo': 'MemTotal:       16316412 kB\nMemFree:         1000000 kB\n',
    '/etc/machine-id': 'f00dfeed\n',
    '/proc/sys/kernel/random/boot_id': 'b007-1d\n',
    '/etc/os-release': 'NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 24.04 LTS"\n',
  };
  const sources: MachineSources = {
    readFile: async (path) => {
      if (path in files) return files[path];
      throw new Error(`ENOENT ${path}`);
    },
    statfs: async (path) => {
      if (path !== '/data/agent') throw new Error('ENOENT');
      return { blocks: 1000, bsize: 4096 };
    },
    cpuCount: () => 8,
    hostname: () => 'Box',
    kernelRelease: () => '6.8.0',
    networkInterfaces: () => [],
  };

  it('reads memory, the root filesystem and the identity files', async () => {
    expect(await readMachineFacts('/data/agent', sources)).toEqual({
      hostname: 'Box',
      resources: { cpuCores: 8, memoryBytes: MEMORY, rootfsBytes: 4096000 },
      interfaces: [],
      identity: { machineID: 'f00dfeed', systemUUID: '', bootID: 'b007-1d', kernelVersion: '6.8.0', osImage: 'Ubuntu 24.04 LTS' },
    });
  });

  it('has no root filesystem size when statfs fails', async () => {
    expect((await readMachineFacts('/missing', sources)).resources.rootfsBytes).toBeUndefined();
  });

  it.each([
    ['PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"', 'Debian GNU/Linux 12 (bookworm)'],
    ["PRETTY_NAME='Alpine'", 'Alpine'],
    ['PRETTY_NAME=Plain', 'Plain'],
    ['NAME=x', 'Linux'],
  ])('os-release %p -> %p', (text, expected) => {
    expect(prettyName(text)).toBe(expected);
  });

  it('reads this machine', async () => {
    const facts = await readMachineFacts(process.cwd());
    expect(facts.resources.cpuCores).toBeGreaterThan(0);
    expect(facts.resources.memoryBytes).toBeGreaterThan(0);
    expect(facts.resources.rootfsBytes).toBeGreaterThan(0);
  });
});

describe('settings from the loaded configuration', () => {
  it('maps the options and config-only fields', async () => {
    const flags = resolveOptions('agent', agentOptions, {
      'hostname-override': ['Node-A'],
      'node-ip': ['10.0.0.5,fd00::5'],
      'node-labels': ['team=a'],
      'register-with-taints': ['k=v:NoSchedule'],
      'max-pods': ['50'],
      'pods-per-core': ['5'],
      'orch-reserved': ['cpu=100m'],
      'node-status-update-frequency': ['20s'],
      port: ['10333'],
    } as never);
    const loaded = await loadAgentConfiguration({ flags });
    const s = nodeSettingsFromConfig(loaded, '9.9.9');
    expect(s).toMatchObject({
      hostnameOverride: 'Node-A',
      nodeIPs: ['10.0.0.5', 'fd00::5'],
      nodeLabels: { team: 'a' },
      registerWithTaints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }],
      maxPods: 50,
      podsPerCore: 5,
      orchReserved: { cpu: '100m' },
      port: 10333,
      nodeStatusUpdateFrequencyMs: 20_000,
      // set explicitly, so the report frequency follows it (agent-config.md §2)
      nodeStatusReportFrequencyMs: 20_000,
      nodeLeaseDurationSeconds: 40,
      registerNode: true,
      version: '9.9.9',
    });
    expect(s.hardEvictionThresholds.map((t) => t.signal)).toContain('memory.available');
  });
});
