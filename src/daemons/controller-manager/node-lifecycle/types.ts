/**
 * The parts of the API objects the node lifecycle controller reads and writes, and the well-known
 * names it uses. Structural and partial on purpose: the informers hand over full objects and the
 * controller only needs these fields (wire field names as in core/v1 and coordination/v1).
 *
 * Names follow upstream with the project's mapping: `node.kubernetes.io/*` taints become
 * `node.orch.io/*`, `topology.kubernetes.io/*` labels become `topology.orch.io/*`,
 * `kube-node-lease` becomes `orch-node-lease`, kubelet becomes agent.
 */
import { names } from '../../../api/names.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';
export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  /** RFC 3339 (seconds). */
  lastHeartbeatTime?: string | null;
  lastTransitionTime?: string | null;
}

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect;
  /** RFC 3339; set by the controller on the taints it adds. */
  timeAdded?: string | null;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string | null;
  labels?: Record<string, string>;
}

export interface Node {
  metadata: ObjectMeta;
  spec?: {taints?: Taint[] | null; unschedulable?: boolean};
  status?: {conditions?: NodeCondition[] | null};
}

export interface Lease {
  metadata: ObjectMeta;
  spec?: {holderIdentity?: string | null; leaseDurationSeconds?: number | null; renewTime?: string | null};
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal' | string;
  value?: string;
  effect?: TaintEffect | '';
  tolerationSeconds?: number | null;
}

export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
}

export interface Pod {
  metadata: ObjectMeta;
  spec?: {nodeName?: string; tolerations?: Toleration[] | null};
  status?: {conditions?: PodCondition[] | null};
}

/** Namespace of the agents' heartbeat leases (upstream `kube-node-lease`). */
export const nodeLeaseNamespace = (): string => names().namespaces.nodeLease;

export const taintNotReady = (): string => names().taints.notReady;
export const taintUnreachable = (): string => names().taints.unreachable;
export const taintMemoryPressure = (): string => names().taints.memoryPressure;
export const taintDiskPressure = (): string => names().taints.diskPressure;
export const taintPidPressure = (): string => names().taints.pidPressure;
export const taintNetworkUnavailable = (): string => names().taints.networkUnavailable;
export const taintUnschedulable = (): string => names().taints.unschedulable;

export const labelTopologyRegion = (): string => names().labels.region;
export const labelTopologyZone = (): string => names().labels.zone;
/** The deprecated beta labels, still preferred when present, as upstream's GetZoneKey does. */
export const labelFailureDomainBetaRegion = (): string => names().labels.failureDomainRegion;
export const labelFailureDomainBetaZone = (): string => names().labels.failureDomainZone;
/** Nodes carrying this label (any value) do not count in their zone's state. */
export const labelExcludeDisruption = (): string => names().labels.excludeDisruption;

/** Node conditions the controller turns Unknown when the agent goes silent (not NetworkUnavailable). */
export const MONITORED_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;

export const REASON_NODE_STATUS_UNKNOWN = 'NodeStatusUnknown';
export const MESSAGE_NODE_STATUS_UNKNOWN = 'Agent stopped posting node status.';
export const REASON_NODE_STATUS_NEVER_UPDATED = 'NodeStatusNeverUpdated';
export const MESSAGE_NODE_STATUS_NEVER_UPDATED = 'Agent never posted node status.';

/** The pod condition a client's evictPod should set before deleting (upstream taint manager). */
export const DISRUPTION_TARGET_CONDITION: Readonly<PodCondition> = {
  type: 'DisruptionTarget',
  status: 'True',
  reason: 'DeletionByTaintManager',
  message: 'Taint manager: deleting due to NoExecute taint',
};

/** Kubernetes serializes metav1.Time with second precision. */
export function formatTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export function findCondition<C extends {type: string}>(conditions: readonly C[] | null | undefined, type: string): C | undefined {
  return conditions?.find((c) => c.type === type);
}
