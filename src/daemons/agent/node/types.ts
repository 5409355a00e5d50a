/**
 * The JSON shapes of the core/v1 Node and coordination.orch.io/v1 Lease that the agent writes, reduced
 * to the fields it reads or sets. Times are RFC 3339 strings, as on the wire.
 */
import type { Taint } from '../../../options/value-labels.js';
import type {OwnerReference} from '../../../api/meta.js';

export type { Taint };

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface NodeCondition {
  type: string;
  status: ConditionStatus;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export type NodeAddressType = 'InternalIP' | 'ExternalIP' | 'Hostname' | 'InternalDNS' | 'ExternalDNS';

export interface NodeAddress {
  type: NodeAddressType;
  address: string;
}

/** Resource name -> quantity text (`cpu: "8"`, `memory: "16316412Ki"`). */
export type ResourceList = Record<string, string>;

export interface NodeSystemInfo {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  containerRuntimeVersion: string;
  /** Upstream's field name, kept so tools that read it work; it carries orch's version. */
  kubeletVersion: string;
  kubeProxyVersion: string;
  operatingSystem: string;
  architecture: string;
}

export interface NodeStatus {
  capacity?: ResourceList;
  allocatable?: ResourceList;
  conditions?: NodeCondition[];
  addresses?: NodeAddress[];
  daemonEndpoints?: { kubeletEndpoint?: { Port: number } };
  nodeInfo?: NodeSystemInfo;
  [field: string]: unknown;
}

export interface ObjectMeta {
  name: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  [field: string]: unknown;
}

export type {OwnerReference};

export interface NodeObject {
  apiVersion: 'v1';
  kind: 'Node';
  metadata: ObjectMeta;
  spec: { providerID?: string; taints?: Taint[]; unschedulable?: boolean; [field: string]: unknown };
  status?: NodeStatus;
}

export interface LeaseObject {
  apiVersion: string;
  kind: 'Lease';
  metadata: ObjectMeta & { namespace: string };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    /** metav1.MicroTime: six fractional digits. */
    renewTime?: string;
    acquireTime?: string;
    leaseTransitions?: number;
    [field: string]: unknown;
  };
}
