/**
 * One node status computation (upstream setNodeStatus with its setters in order: addresses, machine
 * info, version info, daemon endpoints, the pressure conditions, Ready), the "has it changed" test that
 * decides whether to post (heartbeats ignored), and the strategic merge patch that posts it.
 */
import { formatRfc3339 } from './time.js';
import { nodeAddresses } from './addresses.js';
import { nodeAllocatable, nodeCapacity } from './capacity.js';
import { missingCapacity, updateConditions, type NodeConditionEvent } from './conditions.js';
import { goArch, type MachineFacts } from './machine.js';
import { formatResources, sameQuantity } from '../../../api/quantities.js';
import type { NodeSettings } from './settings.js';
import type { PressureCondition } from '../eviction/signals.js';
import type { NodeCondition, NodeObject, NodeStatus, NodeSystemInfo, ResourceList } from './types.js';

export interface StatusInput {
  settings: NodeSettings;
  facts: MachineFacts;
  nodeName: string;
  pressure: Readonly<Record<PressureCondition, boolean>>;
  /** Errors of the runtime, network... that make the node not ready. */
  notReadyReasons: readonly string[];
  /** Epoch milliseconds. */
  now: number;
  arch?: string;
}

export interface StatusComputation {
  node: NodeObject;
  events: NodeConditionEvent[];
  /** Parts that could not be computed (their previous value is kept, as upstream's failing setter leaves it). */
  errors: string[];
}

/** `process://<Node.js version>`: the `<runtime>://<version>` form of containerRuntimeVersion. */
export function runtimeVersion(nodeVersion: string = process.versions.node): string {
  return `process://${nodeVersion}`;
}

function systemInfo(input: StatusInput): NodeSystemInfo {
  const { identity } = input.facts;
  return {
    machineID: identity.machineID,
    systemUUID: identity.systemUUID,
    bootID: identity.bootID,
    kernelVersion: identity.kernelVersion,
    osImage: identity.osImage,
    containerRuntimeVersion: runtimeVersion(),
    kubeletVersion: `v${input.settings.version}`,
    kubeProxyVersion: '',
    operatingSystem: 'linux',
    architecture: input.arch ?? goArch(),
  };
}

/** A copy of `original` with the status the agent computes now. */
export function computeNodeStatus(original: NodeObject, input: StatusInput): StatusComputation {
  const { settings, facts } = input;
  const node: NodeObject = structuredClone(original);
  const status: NodeStatus = (node.status ??= {});
  const errors: string[] = [];

  try {
    status.addresses = nodeAddresses({ hostname: input.nodeName, nodeIPs: settings.nodeIPs, interfaces: facts.interfaces });
  } catch (error) {
    errors.push((error as Error).message);
  }

  const capacity = nodeCapacity(facts.resources, settings);
  status.capacity = formatResources(capacity);
  try {
    status.allocatable = formatResources(
      nodeAllocatable(capacity, {
        orchReserved: settings.orchReserved,
        systemReserved: settings.systemReserved,
        hardEvictionThresholds: settings.hardEvictionThresholds,
        ignoreEviction: settings.ignoreEvictionInAllocatable,
      }),
    );
  } catch (error) {
    errors.push((error as Error).message);
  }
  status.nodeInfo = systemInfo(input);
  status.daemonEndpoints = { kubeletEndpoint: { Port: settings.port } };

  const missing = missingCapacity(status.capacity, settings.localStorageCapacityIsolation);
  const { conditions, events } = updateConditions(
    status.conditions,
    { pressure: input.pressure, notReadyReasons: [...input.notReadyReasons, ...(missing ? [missing] : [])] },
    formatRfc3339(input.now),
  );
  status.conditions = conditions;
  return { node, events, errors };
}

function sameResources(a: ResourceList | undefined, b: ResourceList | undefined): boolean {
  const left = a ?? {};
  const right = b ?? {};
  const names = new Set([...Object.keys(left), ...Object.keys(right)]);
  return [...names].every((name) => left[name] !== undefined && right[name] !== undefined && sameQuantity(left[name], right[name]));
}

function withoutHeartbeats(conditions: readonly NodeCondition[]): string[] {
  return conditions.map(({ lastHeartbeatTime: _ignored, ...rest }) => JSON.stringify(rest, Object.keys(rest).sort())).sort();
}

/**
 * Upstream's nodeStatusHasChanged: anything but the conditions' heartbeat times differs. Quantities are
 * compared by amount, not spelling (`1Gi` equals `1024Mi`).
 */
export function nodeStatusHasChanged(original: NodeStatus | undefined, updated: NodeStatus | undefined): boolean {
  if (original === undefined || updated === undefined) return original !== updated;
  const before = withoutHeartbeats(original.conditions ?? []);
  const after = withoutHeartbeats(updated.conditions ?? []);
  if (before.length !== after.length || before.some((c, i) => c !== after[i])) return true;
  if (!sameResources(original.capacity, updated.capacity) || !sameResources(original.allocatable, updated.allocatable)) return true;
  const rest = (s: NodeStatus) => {
    const { conditions: _c, capacity: _cap, allocatable: _alloc, ...others } = s;
    return JSON.stringify(others, (_key, value: unknown) =>
      value && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1))) : value,
    );
  };
  return rest(original) !== rest(updated);
}

/** A resource list as a merge patch: every current value, and null for each name that went away. */
function resourcesPatch(before: ResourceList | undefined, after: ResourceList | undefined): Record<string, string | null> | undefined {
  if (after === undefined) return undefined;
  const patch: Record<string, string | null> = { ...after };
  for (const name of Object.keys(before ?? {})) if (!(name in after)) patch[name] = null;
  return patch;
}

/**
 * The strategic merge patch for PATCH nodes/<name>/status: the fields the agent owns, whole.
 * Conditions merge by type, so conditions other components own are kept. Addresses carry
 * `$patch: replace` because their merge key (type) is wrong for two InternalIPs: upstream's
 * PatchNodeStatus works around the same annotation the same way.
 */
export function nodeStatusPatch(original: NodeObject, updated: NodeObject): { status: Record<string, unknown> } {
  const before = original.status ?? {};
  const after = updated.status ?? {};
  const status: Record<string, unknown> = {};
  if (after.conditions) status.conditions = after.conditions;
  if (after.addresses) status.addresses = [{ $patch: 'replace' }, ...after.addresses];
  const capacity = resourcesPatch(before.capacity, after.capacity);
  if (capacity) status.capacity = capacity;
  const allocatable = resourcesPatch(before.allocatable, after.allocatable);
  if (allocatable) status.allocatable = allocatable;
  if (after.nodeInfo) status.nodeInfo = after.nodeInfo;
  if (after.daemonEndpoints) status.daemonEndpoints = after.daemonEndpoints;
  return { status };
}
