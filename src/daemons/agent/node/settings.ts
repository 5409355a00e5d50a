/**
 * The agent options the node part runs on, and their mapping from the loaded configuration
 * (../config: `options` keyed by option name, `fields` by config field path).
 */
import type { DurationValue } from '../../../options/duration.js';
import type { EvictionThreshold } from '../../../options/value-eviction.js';
import type { Taint } from '../../../options/value-labels.js';
import { DEFAULT_EVICTION_HARD } from '../eviction/thresholds.js';

export interface NodeSettings {
  /** --hostname-override. */
  hostnameOverride?: string;
  /** --node-ip, split at the comma. */
  nodeIPs?: string[];
  /** --node-labels (already checked against the reserved-domain rules by the config loader). */
  nodeLabels?: Record<string, string>;
  /** --register-with-taints. */
  registerWithTaints?: Taint[];
  /** --provider-id. */
  providerID?: string;
  /** --register-node. */
  registerNode: boolean;
  /** --max-pods. */
  maxPods: number;
  /** --pods-per-core. */
  podsPerCore: number;
  /** --local-storage-capacity-isolation. */
  localStorageCapacityIsolation: boolean;
  /** --orch-reserved. */
  orchReserved?: Record<string, string>;
  /** --system-reserved. */
  systemReserved?: Record<string, string>;
  /** --eviction-hard as the agent applies it (defaults included). */
  hardEvictionThresholds: readonly EvictionThreshold[];
  /** --experimental-allocatable-ignore-eviction. */
  ignoreEvictionInAllocatable: boolean;
  /** --root-dir: its filesystem is the ephemeral-storage capacity. */
  rootDir: string;
  /** --port: status.daemonEndpoints.kubeletEndpoint.Port. */
  port: number;
  /** --node-status-update-frequency. */
  nodeStatusUpdateFrequencyMs: number;
  /** nodeStatusReportFrequency: unchanged status is still posted this often. */
  nodeStatusReportFrequencyMs: number;
  /** nodeLeaseDurationSeconds. */
  nodeLeaseDurationSeconds: number;
  /** orch's version, without the `v` (status.nodeInfo.kubeletVersion gets `v<version>`). */
  version: string;
}

export const DEFAULT_NODE_LEASE_DURATION_SECONDS = 40;

/** The settings from loadAgentConfiguration's result. */
export function nodeSettingsFromConfig(
  loaded: { options: Readonly<Record<string, unknown>>; fields: Readonly<Record<string, unknown>> },
  version: string,
): NodeSettings {
  const o = loaded.options;
  const ms = (value: unknown, fallback: number) => (value as DurationValue | undefined)?.ms ?? fallback;
  const updateMs = ms(o['node-status-update-frequency'], 10_000);
  const override = o['hostname-override'] as string | undefined;
  return {
    hostnameOverride: override?.trim() ? override : undefined,
    nodeIPs: o['node-ip'] as string[] | undefined,
    nodeLabels: o['node-labels'] as Record<string, string> | undefined,
    registerWithTaints: o['register-with-taints'] as Taint[] | undefined,
    providerID: (o['provider-id'] as string | undefined) || undefined,
    registerNode: (o['register-node'] as boolean | undefined) ?? true,
    maxPods: (o['max-pods'] as number | undefined) ?? 110,
    podsPerCore: (o['pods-per-core'] as number | undefined) ?? 0,
    localStorageCapacityIsolation: (o['local-storage-capacity-isolation'] as boolean | undefined) ?? true,
    orchReserved: o['orch-reserved'] as Record<string, string> | undefined,
    systemReserved: o['system-reserved'] as Record<string, string> | undefined,
    hardEvictionThresholds: (o['eviction-hard'] as EvictionThreshold[] | undefined) ?? DEFAULT_EVICTION_HARD,
    ignoreEvictionInAllocatable: (o['experimental-allocatable-ignore-eviction'] as boolean | undefined) ?? false,
    rootDir: (o['root-dir'] as string | undefined) ?? '/var/lib/agent',
    port: (o.port as number | undefined) ?? 10250,
    nodeStatusUpdateFrequencyMs: updateMs,
    nodeStatusReportFrequencyMs: ms(loaded.fields.nodeStatusReportFrequency, 5 * 60_000),
    nodeLeaseDurationSeconds: (loaded.fields.nodeLeaseDurationSeconds as number | undefined) ?? DEFAULT_NODE_LEASE_DURATION_SECONDS,
    version,
  };
}
