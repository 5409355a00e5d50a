/**
 * The service allocators of one API server, from its options: cluster IPs from
 * `--service-cluster-ip-range` (IPAddress objects) and node ports from `--service-node-port-range`
 * (a RangeAllocation bitmap), both kept in the store so every API server on it shares them.
 */
import {builtinResources, type ResourceInfo} from '../../../api/resources.js';
import {names} from '../../../api/names.js';
import type {PortRange} from '../../../options/types.js';
import {AdmissionChain} from '../admission/chain.js';
import {RegistryStore} from '../rest/registry-store.js';
import type {Clock} from '../rest/types.js';
import type {Store} from '../storage/store.js';
import {ClusterIPAllocator} from './ip-allocator.js';
import {NodePortAllocator} from './port-allocator.js';
import {ServiceAllocation} from './service-allocation.js';

export {firstAddress} from './ip-range.js';
export {ServiceAllocation} from './service-allocation.js';

/** Upstream's defaults when the options are not given. */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24';
export const DEFAULT_NODE_PORT_RANGE: PortRange = {base: 30000, size: 2768};

export interface ServiceAllocatorOptions {
  store: Store;
  keyPrefix: string;
  clock: Clock;
  clusterIPRanges?: string[];
  nodePortRange?: PortRange;
}

export function serviceAllocation(o: ServiceAllocatorOptions): ServiceAllocation {
  const info = builtinResources().find((r) => r.group === names().groups.networking && r.version === 'v1' && r.plural === 'ipaddresses') as ResourceInfo;
  const addresses = new RegistryStore(info, {store: o.store, clock: o.clock, keyPrefix: o.keyPrefix, admission: new AdmissionChain([])});
  const ranges = o.clusterIPRanges?.length ? o.clusterIPRanges : [DEFAULT_SERVICE_CLUSTER_IP_RANGE];
  return new ServiceAllocation(new ClusterIPAllocator(o.store, addresses, ranges), new NodePortAllocator(o.store, o.keyPrefix, o.nodePortRange ?? DEFAULT_NODE_PORT_RANGE));
}

export {EndpointReconciler, type EndpointReconcilerType} from './endpoint-reconciler.js';

/** The service options of `orch apiserver` as the server reads them (config.ts). */
export interface ServicesConfig {
  nodePortRange?: PortRange;
  /** `--orch-service-node-port`: 0 keeps the default service ClusterIP. */
  orchServiceNodePort?: number;
  endpointReconcilerType?: import('./endpoint-reconciler.js').EndpointReconcilerType;
  /** How often the endpoint reconciler renews (upstream's 10 s; the lease TTL is 1.5 times it). */
  endpointReconcileIntervalMs?: number;
}
