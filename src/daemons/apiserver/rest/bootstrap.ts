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
import { RegistryStore, type WriteContext } from './registry-store.js';
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
}

const SYSTEM_WRITE: WriteContext = { user: { name: 'system:apiserver', groups: ['system:masters'] }, dryRun: false, fieldManager: 'orch-apiserver' };

function registry(store: Store, plural: string, options: BootstrapOptions): RegistryStore {
  const info = builtinResources().find((r) => r.plural === plural) as ResourceInfo;
  return new RegistryStore(info, { store, clock: options.clock ?? systemClock, keyPrefix: (options.keyPrefix ?? '/registry').replace(/\/+$/, ''), admission: new AdmissionChain([]) });
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

/** The first usable address of a CIDR (network address + 1), IPv4 or IPv6. */
export function firstAddress(cidr: string): string {
  const [address = '', bitsText = ''] = cidr.trim().split('/');
  const bits = Number(bitsText);
  if (address.includes(':')) {
    const full = expandIPv6(address);
    const width = 128n;
    const value = BigInt('0x' + full.join(''));
    const mask = ((1n << width) - 1n) ^ ((1n << (width - BigInt(bits))) - 1n);
    const first = (value & mask) + 1n;
    const hex = first.toString(16).padStart(32, '0');
    const groups = hex.match(/.{4}/g)!.map((g) => g.replace(/^0+(?=.)/, ''));
    return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
  }
  const value = address.split('.').reduce((n, octet) => (n << 8) + Number(octet), 0) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  const first = ((value & mask) >>> 0) + 1;
  return [24, 16, 8, 0].map((shift) => (first >>> shift) & 255).join('.');
}

function expandIPv6(address: string): string[] {
  const [head = '', tail = ''] = address.split('::');
  const h = head ? head.split(':') : [];
  const t = address.includes('::') ? (tail ? tail.split(':') : []) : [];
  const missing = 8 - h.length - t.length;
  return [...h, ...Array(Math.max(0, missing)).fill('0'), ...t].map((g) => g.padStart(4, '0'));
}

export async function bootstrapNamespaces(store: Store, options: BootstrapOptions = {}): Promise<void> {
  const namespaces = registry(store, 'namespaces', options);
  for (const name of systemNamespaces()) {
    await ensure(namespaces, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  const range = Array.isArray(options.serviceClusterIPRange) ? options.serviceClusterIPRange[0] : options.serviceClusterIPRange;
  const clusterIP = firstAddress(range || '10.0.0.0/24');
  const securePort = options.securePort ?? 6443;
  await ensure(registry(store, 'services', options), 'default', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: names().defaultService, namespace: 'default', labels: { component: 'apiserver', provider: names().defaultService } },
    spec: {
      type: 'ClusterIP',
      clusterIP,
      clusterIPs: [clusterIP],
      ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: securePort }],
      sessionAffinity: 'None',
      ipFamilies: [clusterIP.includes(':') ? 'IPv6' : 'IPv4'],
      ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster',
    },
  });
  if (options.advertiseAddress) {
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
