/**
 * The simulated nodes of `orch fleet`, as pure functions: their names, addresses, the Node object each
 * registers (the agent's labels, capacity = allocatable, conditions through the agent's own setters),
 * the health a user asked for through the state annotation, and when each node's periodic work falls
 * within its period (spread evenly, so 5,000 nodes do not all write in the same millisecond).
 */
import { names } from '../../api/names.js';
import { updateConditions, type NodeConditionEvent } from '../agent/node/conditions.js';
import { nodeStatusHasChanged } from '../agent/node/status.js';
import { registrationLabels } from '../agent/node/node-object.js';
import { formatRfc3339 } from '../agent/node/time.js';
import type { NodeCondition, NodeObject, ResourceList, Taint } from '../agent/node/types.js';

export interface FleetSettings {
  /** The fleet's name: label value on its nodes and the default name prefix. */
  name: string;
  /** How many nodes. */
  nodes: number;
  /** Node names are `<prefix>-<index>`. */
  prefix: string;
  /** Capacity (and allocatable) of every node. */
  capacity: ResourceList;
  nodeLabels: Record<string, string>;
  taints: Taint[];
  /** Reported as nodeInfo.kubeletVersion (`v<version>`). */
  version: string;
  /** Ready status is posted this often; the Lease is renewed every leaseDurationSeconds / 4. */
  nodeStatusUpdateFrequencyMs: number;
  /** An unchanged status is still posted this often (nodeStatusReportFrequency). */
  nodeStatusReportFrequencyMs: number;
  nodeLeaseDurationSeconds: number;
}

/** What a user asked of a node through the state annotation. */
export type NodeHealth = 'Ready' | 'NotReady' | 'Silent';

export const NOT_READY_MESSAGE = 'simulated failure: node set NotReady by orch fleet';

export function nodeName(settings: Pick<FleetSettings, 'prefix'>, index: number): string {
  return `${settings.prefix}-${index}`;
}

/** The index of a fleet node's name, or undefined for a name not of this fleet. */
export function nodeIndex(settings: Pick<FleetSettings, 'prefix' | 'nodes'>, name: string): number | undefined {
  if (!name.startsWith(`${settings.prefix}-`)) return undefined;
  const digits = name.slice(settings.prefix.length + 1);
  if (!/^(0|[1-9][0-9]*)$/.test(digits)) return undefined;
  const index = Number(digits);
  return index < settings.nodes ? index : undefined;
}

function ipv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
}

/** Node i's InternalIP: 10.0.0.0/9 from 10.0.0.1 on (8 million nodes before it wraps). */
export function nodeIP(index: number): string {
  return ipv4(((10 << 24) >>> 0) + 1 + index);
}

/**
 * A pod IP on node i: each node owns a /24 of 10.128.0.0/9 (32,768 nodes) and hands out .1-.254 in
 * turn. Addresses are reused after 254 pods on one node, far past any node's pod capacity.
 */
export function podIP(nodeIndex: number, sequence: number): string {
  return ipv4(((10 << 24) >>> 0) + (128 << 16) + (nodeIndex % 32768) * 256 + 1 + (sequence % 254));
}

/** What a user asked of the node: the state annotation (case-insensitive), Ready when absent or unknown. */
export function requestedHealth(annotations: Readonly<Record<string, string>> | undefined): NodeHealth {
  const value = annotations?.[names().fleet.nodeState]?.trim().toLowerCase();
  if (value === 'notready') return 'NotReady';
  if (value === 'silent') return 'Silent';
  return 'Ready';
}

/** The conditions to post at `now` over those the node has, and the events upstream would record. */
export function nodeConditions(existing: readonly NodeCondition[] | undefined, health: NodeHealth, now: number): { conditions: NodeCondition[]; events: NodeConditionEvent[] } {
  return updateConditions(
    existing,
    { pressure: { MemoryPressure: false, DiskPressure: false, PIDPressure: false }, notReadyReasons: health === 'NotReady' ? [NOT_READY_MESSAGE] : [] },
    formatRfc3339(now),
  );
}

/** Whether the node's status must be posted now: it changed (heartbeats aside), or the report is due. */
export function statusPostDue(existing: readonly NodeCondition[] | undefined, computed: readonly NodeCondition[], lastReportAt: number | undefined, now: number, reportFrequencyMs: number): boolean {
  if (nodeStatusHasChanged({ conditions: [...(existing ?? [])] }, { conditions: [...computed] })) return true;
  return lastReportAt === undefined || now - lastReportAt >= reportFrequencyMs;
}

/** The Node node i registers, with its first status. */
export function fleetNode(settings: FleetSettings, index: number, now: number): NodeObject {
  const name = nodeName(settings, index);
  const node: NodeObject = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { ...registrationLabels(name, settings.nodeLabels, 'amd64'), [names().fleet.nodeLabel]: settings.name },
    },
    spec: settings.taints.length > 0 ? { taints: settings.taints.map((t) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect })) } : {},
    status: {
      capacity: { ...settings.capacity },
      allocatable: { ...settings.capacity },
      conditions: nodeConditions(undefined, 'Ready', now).conditions,
      addresses: [
        { type: 'InternalIP', address: nodeIP(index) },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: '',
        systemUUID: '',
        bootID: '',
        kernelVersion: '',
        osImage: 'orch fleet (simulated)',
        containerRuntimeVersion: 'fleet://simulated',
        kubeletVersion: `v${settings.version}`,
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  };
  return node;
}

/**
 * When, within a period, node i does its periodic work: i / n of the way, so the writes of n nodes
 * arrive at an even rate instead of in one burst per period.
 */
export function spreadOffset(index: number, count: number, periodMs: number): number {
  return count <= 0 ? 0 : Math.floor((index * periodMs) / count);
}
