/**
 * Post-start objects: the system namespaces, the default service (`orch`, or `kubernetes` with
 * upstream's names) and its endpoints in `default`,
 * and the system priority classes. Idempotent: objects that exist are left as they are.
 */
import { names } from '../../../api/names.js';
import { builtinResources, type ResourceInfo } from '../../../api/resources.js';
import { ApiError } from '../../../api/status.js';
import type { JsonObject } from '../../../patch/types.js';
import type { Store } from '../storage/store.js';
import { AdmissionChain } from '../admission/chain.js';
import { RegistryStore, type WriteAllocation, type WriteContext } from './registry-store.js';
import { firstAddress } from '../services/ip-range.js';
import { isJsonObject } from '../../../patch/types.js';

export { firstAddress };
import { systemClock, type Clock } from './types.js';

/** `default` and the name set's system, public and node-lease namespaces. */
export function systemNamespaces(): string[] {
  const {system, public: publicNs, nodeLease} = names().namespaces;
  return ['default', system, publicNs, nodeLease];
}

export interface BootstrapOptions {
  clock?: Clock;
  keyPrefix?: string;
  /** `--service-cluster-ip-range` (first range when dual-stack); the service gets its first address. Default 10.0.0.0/24. */
  serviceClusterIPRange?: string | string[];
  /** `--secure-port`, the service's target port. Default 6443. */
  securePort?: number;
  /** The advertised address; when given, the default service's endpoints point at it. */
  advertiseAddress?: string;
  /** `--orch-service-node-port`: when non-zero the default service is of type NodePort on this port. */
  serviceNodePort?: number;
  /** The service allocators: the default service's cluster IP (and node port) are taken from them as any service's. */
  serviceAllocation?: WriteAllocation;
  /** Whether the endpoint reconciler keeps the default service's endpoints (then bootstrap leaves them alone). */
  endpointsReconciled?: boolean;
}

const SYSTEM_WRITE: WriteContext = { user: { name: 'system:apiserver', groups: ['system:masters'] }, dryRun: false, fieldManager: 'orch-apiserver' };

function registry(store: Store, plural: string, options: BootstrapOptions, allocation?: WriteAllocation): RegistryStore {
  const info = builtinResources().find((r) => r.plural === plural) as ResourceInfo;
  return new RegistryStore(info, {
    store, clock: options.clock ?? systemClock, keyPrefix: (options.keyPrefix ?? '/registry').replace(/\/+$/, ''), admission: new AdmissionChain([]), allocation,
  });
}

/** Creates unless it exists; returns whether it was created. */
async function ensure(target: RegistryStore, namespace: string, object: JsonObject): Promise<boolean> {
  try {
    await target.create(namespace, object, SYSTEM_WRITE);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status.reason === 'AlreadyExists') return false;
    throw error;
  }
}

export async function bootstrapNamespaces(store: Store, options: BootstrapOptions = {}): Promise<void> {
  const namespaces = registry(store, 'namespaces', options);
  for (const name of systemNamespaces()) {
    await ensure(namespaces, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  const range = Array.isArray(options.serviceClusterIPRange) ? options.serviceClusterIPRange[0] : options.serviceClusterIPRange;
  const clusterIP = firstAddress(range || '10.0.0.0/24');
  const securePort = options.securePort ?? 6443;
  const nodePort = options.serviceNodePort || undefined;
  const services = registry(store, 'services', options, options.serviceAllocation);
  const port = { name: 'https', port: 443, protocol: 'TCP', targetPort: securePort, ...(nodePort ? { nodePort } : {}) };
  // Read first: a create of an existing service would fail on its taken cluster IP before the key clash.
  const existing = await store.get(services.key('default', names().defaultService));
  const created = !existing && await ensure(services, 'default', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: names().defaultService, namespace: 'default', labels: { component: 'apiserver', provider: names().defaultService } },
    spec: {
      type: nodePort ? 'NodePort' : 'ClusterIP',
      clusterIP,
      clusterIPs: [clusterIP],
      ports: [port],
      sessionAffinity: 'None',
      ipFamilies: [clusterIP.includes(':') ? 'IPv6' : 'IPv4'],
      ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster',
    },
  });
  if (!created) {
    // Upstream's bootstrap controller reconciles the service's type and ports with the options.
    await services.update('default', names().defaultService, SYSTEM_WRITE, (current) => {
      const spec = isJsonObject(current.spec) ? current.spec : (current.spec = {});
      const ports = Array.isArray(spec.ports) ? spec.ports.filter(isJsonObject) : [];
      const https = ports.find((p) => p.name === 'https');
      const wantType = nodePort ? 'NodePort' : 'ClusterIP';
      if (spec.type === wantType && https && https.targetPort === securePort && (https.nodePort ?? undefined) === nodePort) return current;
      spec.type = wantType;
      if (!nodePort) delete spec.externalTrafficPolicy;
      spec.ports = [port];
      return current;
    });
  }
  if (options.advertiseAddress && !options.endpointsReconciled) {
    await ensure(registry(store, 'endpoints', options), 'default', {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: names().defaultService, namespace: 'default', labels: { [names().labels.endpointSliceSkipMirror]: 'true' } },
      subsets: [{ addresses: [{ ip: options.advertiseAddress }], ports: [{ name: 'https', port: securePort, protocol: 'TCP' }] }],
    });
  }
}

export const SYSTEM_PRIORITY_CLASSES = [
  { name: 'system-node-critical', value: 2000001000, description: 'Used for system critical pods that must not be moved from their current node.' },
  {
    name: 'system-cluster-critical', value: 2000000000,
    description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
  },
];

export async function bootstrapPriorityClasses(store: Store, options: BootstrapOptions = {}): Promise<void> {
  const classes = registry(store, 'priorityclasses', options);
  for (const pc of SYSTEM_PRIORITY_CLASSES) {
    await ensure(classes, '', {
      apiVersion: `${names().groups.scheduling}/v1`,
      kind: 'PriorityClass',
      metadata: { name: pc.name },
      value: pc.value,
      description: pc.description,
      preemptionPolicy: 'PreemptLowerPriority',
    });
  }
}
