/**
 * The `endpoints` controller (upstream pkg/controller/endpoint): every Service with a selector gets
 * an Endpoints object of the same name listing its pods — ready ones under `addresses`, the others
 * under `notReadyAddresses` — with the service's ports resolved against each pod's containers.
 * Services without a selector (and ExternalName services) are left alone: their Endpoints are
 * written by hand. Endpoints whose service is gone are deleted.
 *
 * The first half of this module is pure (pods and a service in, subsets out) and is shared with the
 * endpointslice controller; the second half is the controller: informers, a work queue of service
 * keys and the REST writes.
 */
import { names } from '../../../api/names.js';
import {ApiStatusError} from '../../../client/errors.js';
import {
  deletedObject,
  metaNamespaceKey,
  NAMESPACE_INDEX,
  processNextItem,
  RateLimitingQueue,
  splitMetaNamespaceKey,
  type DeletedFinalStateUnknown,
  type SharedIndexInformer,
} from '../../../client/informers/index.js';
import type {ControllerContext, ControllerDescriptor, RunningController} from './types.js';

// ---------------------------------------------------------------------------------------------
// The shapes read and written (only the fields these controllers use).

export interface ObjectMetaLike {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMetaLike;
  spec?: {
    nodeName?: string;
    hostname?: string;
    subdomain?: string;
    containers?: {name?: string; ports?: ContainerPort[]}[];
  };
  status?: {
    phase?: string;
    podIP?: string;
    podIPs?: {ip: string}[];
    conditions?: {type: string; status: string}[];
  };
}

export interface ServicePort {
  name?: string;
  port: number;
  protocol?: string;
  appProtocol?: string;
  /** A port number, or the name of a container port. */
  targetPort?: number | string;
}

export interface Service {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMetaLike;
  spec?: {
    type?: string;
    selector?: Record<string, string> | null;
    ports?: ServicePort[];
    clusterIP?: string;
    ipFamilies?: string[];
    publishNotReadyAddresses?: boolean;
  };
}

export interface ObjectReference {
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
}

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

export interface EndpointPort {
  name?: string;
  port: number;
  protocol?: string;
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

export interface Endpoints {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMetaLike;
  subsets?: EndpointSubset[];
}

/** The label that marks the Endpoints and slices of a headless service (upstream's service.kubernetes.io/headless). */
export const headlessLabel = (): string => names().labels.headlessService;
/** Set when more than MAX_ENDPOINTS_CAPACITY addresses had to be dropped (upstream's endpoints.kubernetes.io/over-capacity). */
export const overCapacityAnnotation = (): string => names().annotations.endpointsOverCapacity;
/** Endpoints carrying this annotation are leader-election locks, never this controller's (upstream's control-plane.alpha.kubernetes.io/leader). */
export const leaderAnnotation = (): string => names().annotations.leaderElectionLock;
/** Upstream's maxCapacity: an Endpoints object holds at most this many addresses. */
export const MAX_ENDPOINTS_CAPACITY = 1000;

// ---------------------------------------------------------------------------------------------
// Pod rules shared with the endpointslice controller (upstream's endpointslice util and podutil).

export function isPodReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Succeeded or Failed: the pod will never serve again. */
export function isPodTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** Upstream's ShouldPodBeInEndpoints: not terminal, has an IP, and not terminating unless asked. */
export function shouldPodBeInEndpoints(pod: Pod, includeTerminating: boolean): boolean {
  if (isPodTerminal(pod)) return false;
  if (podIPs(pod).length === 0) return false;
  return includeTerminating || !pod.metadata?.deletionTimestamp;
}

/** status.podIPs, or status.podIP alone when only that was written. */
export function podIPs(pod: Pod): string[] {
  const listed = (pod.status?.podIPs ?? []).map((p) => p.ip).filter((ip) => ip);
  if (listed.length > 0) return listed;
  return pod.status?.podIP ? [pod.status.podIP] : [];
}

export const isIPv6 = (ip: string): boolean => ip.includes(':');

/** A service selects pods only through a non-empty selector in its own namespace. */
export function serviceSelectsPod(service: Service, pod: Pod): boolean {
  const selector = service.spec?.selector;
  if (!selector || Object.keys(selector).length === 0) return false;
  if ((service.metadata?.namespace ?? '') !== (pod.metadata?.namespace ?? '')) return false;
  const labels = pod.metadata?.labels ?? {};
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

export function hasSelector(service: Service): boolean {
  const selector = service.spec?.selector;
  return !!selector && Object.keys(selector).length > 0;
}

export const isHeadless = (service: Service): boolean => service.spec?.clusterIP === 'None';

/**
 * Upstream's FindPort: a numeric targetPort as is; a named one resolved against the pod's
 * container ports of the same protocol. Undefined when the pod has no such port.
 */
export function findPort(pod: Pod, servicePort: ServicePort): number | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  const protocol = servicePort.protocol ?? 'TCP';
  for (const container of pod.spec?.containers ?? []) {
    for (const port of container.ports ?? []) {
      if (port.name === target && (port.protocol ?? 'TCP') === protocol) return port.containerPort;
    }
  }
  return undefined;
}

/** A pod's hostname is published when its subdomain names the service (headless DNS). */
export function shouldSetHostname(pod: Pod, service: Service): boolean {
  return !!pod.spec?.hostname && pod.spec.subdomain === service.metadata?.name && pod.metadata?.namespace === service.metadata?.namespace;
}

export function endpointPortFor(servicePort: ServicePort, port: number): EndpointPort {
  return {
    ...(servicePort.name ? {name: servicePort.name} : {}),
    port,
    protocol: servicePort.protocol ?? 'TCP',
    ...(servicePort.appProtocol ? {appProtocol: servicePort.appProtocol} : {}),
  };
}

export function podReference(pod: Pod): ObjectReference {
  return {kind: 'Pod', namespace: pod.metadata?.namespace, name: pod.metadata?.name ?? '', uid: pod.metadata?.uid};
}

// ---------------------------------------------------------------------------------------------
// Endpoints subsets (pure).

/**
 * The IP an Endpoints address uses (upstream's podToEndpointAddressForService): the family of the
 * service's first ipFamily, else of its cluster IP, else (headless) of the pod's first IP.
 */
export function endpointIPFor(service: Service, pod: Pod): string | undefined {
  const ips = podIPs(pod);
  let wantV6: boolean;
  if (service.spec?.ipFamilies?.length) wantV6 = service.spec.ipFamilies[0] === 'IPv6';
  else if (service.spec?.clusterIP && service.spec.clusterIP !== 'None') wantV6 = isIPv6(service.spec.clusterIP);
  else wantV6 = ips.length > 0 && isIPv6(ips[0]!);
  return ips.find((ip) => isIPv6(ip) === wantV6);
}

/** One pod address offering one port (or no port: a headless service without ports). */
interface AddressPort {
  address: EndpointAddress;
  ready: boolean;
  port?: EndpointPort;
}

const addressKey = (a: EndpointAddress) => `${a.ip}/${a.targetRef?.uid ?? ''}`;
const portKey = (p: EndpointPort) => JSON.stringify([p.name ?? '', p.port, p.protocol ?? '', p.appProtocol ?? '']);
const compareAddresses = (a: EndpointAddress, b: EndpointAddress) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : (a.targetRef?.uid ?? '').localeCompare(b.targetRef?.uid ?? ''));
const comparePorts = (a: EndpointPort, b: EndpointPort) => (portKey(a) < portKey(b) ? -1 : portKey(a) > portKey(b) ? 1 : 0);

/**
 * Upstream's RepackSubsets: addresses that offer the same set of ports share one subset. An
 * address not ready on any port is not ready in its subset ("not ready trumps ready"). The result
 * is sorted so that equal content always serializes the same (upstream sorts by hashes instead).
 */
export function repackSubsets(entries: AddressPort[]): EndpointSubset[] {
  const addresses = new Map<string, EndpointAddress>();
  // port key ('' for "no port") -> address key -> ready
  const byPort = new Map<string, {port?: EndpointPort; ready: Map<string, boolean>}>();
  for (const entry of entries) {
    const aKey = addressKey(entry.address);
    if (!addresses.has(aKey)) addresses.set(aKey, entry.address);
    const pKey = entry.port ? portKey(entry.port) : '';
    let slot = byPort.get(pKey);
    if (!slot) byPort.set(pKey, (slot = {port: entry.port, ready: new Map()}));
    if (slot.ready.get(aKey) !== false) slot.ready.set(aKey, entry.ready);
  }
  // Group the ports by the exact set of (address, readiness) that offers them.
  const groups = new Map<string, {ready: Map<string, boolean>; ports: EndpointPort[]}>();
  for (const slot of byPort.values()) {
    const key = [...slot.ready].map(([a, r]) => `${a}=${r}`).sort().join(',');
    let group = groups.get(key);
    if (!group) groups.set(key, (group = {ready: slot.ready, ports: []}));
    if (slot.port) group.ports.push(slot.port);
  }
  const subsets = [...groups.values()].map(({ready, ports}) => {
    const subset: EndpointSubset = {};
    const readyAddresses = [...ready].filter(([, r]) => r).map(([a]) => addresses.get(a)!).sort(compareAddresses);
    const notReady = [...ready].filter(([, r]) => !r).map(([a]) => addresses.get(a)!).sort(compareAddresses);
    if (readyAddresses.length) subset.addresses = readyAddresses;
    if (notReady.length) subset.notReadyAddresses = notReady;
    if (ports.length) subset.ports = [...ports].sort(comparePorts);
    return subset;
  });
  return subsets.sort((a, b) => {
    const ka = JSON.stringify([a.ports ?? [], a.addresses ?? [], a.notReadyAddresses ?? []]);
    const kb = JSON.stringify([b.ports ?? [], b.addresses ?? [], b.notReadyAddresses ?? []]);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
}

/** The subsets of a service with a selector, from the pods it selects (upstream's syncService loop). */
export function subsetsFor(service: Service, pods: readonly Pod[]): EndpointSubset[] {
  const tolerateUnready = service.spec?.publishNotReadyAddresses === true;
  const servicePorts = service.spec?.ports ?? [];
  const entries: AddressPort[] = [];
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, tolerateUnready)) continue;
    const ip = endpointIPFor(service, pod);
    if (!ip) continue;
    const address: EndpointAddress = {ip};
    if (shouldSetHostname(pod, service)) address.hostname = pod.spec!.hostname;
    if (pod.spec?.nodeName) address.nodeName = pod.spec.nodeName;
    address.targetRef = podReference(pod);
    const ready = tolerateUnready || isPodReady(pod);
    if (servicePorts.length === 0) {
      // Only a headless service may have no ports: its addresses are published without any.
      if (isHeadless(service)) entries.push({address, ready});
      continue;
    }
    for (const servicePort of servicePorts) {
      const port = findPort(pod, servicePort);
      if (port === undefined) continue;
      entries.push({address, ready, port: endpointPortFor(servicePort, port)});
    }
  }
  return repackSubsets(entries);
}

/**
 * Upstream's truncateEndpoints: beyond MAX_ENDPOINTS_CAPACITY addresses, not-ready ones go first;
 * each subset keeps a share proportional to its size. Returns whether anything was dropped.
 */
export function truncateSubsets(subsets: EndpointSubset[], capacity = MAX_ENDPOINTS_CAPACITY): boolean {
  let totalReady = 0;
  let totalNotReady = 0;
  for (const s of subsets) {
    totalReady += s.addresses?.length ?? 0;
    totalNotReady += s.notReadyAddresses?.length ?? 0;
  }
  if (totalReady + totalNotReady <= capacity) return false;
  const truncateReady = totalReady > capacity;
  const max = truncateReady ? capacity : capacity - totalReady;
  const numTotal = truncateReady ? totalReady : totalNotReady;
  let canBeAdded = max;
  for (const subset of subsets) {
    const inSubset = (truncateReady ? subset.addresses?.length : subset.notReadyAddresses?.length) ?? 0;
    const toBeAdded = Math.min(Math.ceil((inSubset / numTotal) * max), canBeAdded);
    if (truncateReady) {
      subset.addresses = (subset.addresses ?? []).slice(0, toBeAdded);
      delete subset.notReadyAddresses;
      canBeAdded -= subset.addresses.length;
    } else {
      subset.notReadyAddresses = (subset.notReadyAddresses ?? []).slice(0, toBeAdded);
      canBeAdded -= subset.notReadyAddresses.length;
    }
    if (subset.addresses?.length === 0) delete subset.addresses;
    if (subset.notReadyAddresses?.length === 0) delete subset.notReadyAddresses;
  }
  return true;
}

/** The labels of a service's Endpoints: the service's, plus the headless marker when it is headless. */
export function endpointsLabels(service: Service): Record<string, string> {
  const labels = {...(service.metadata?.labels ?? {})};
  // Upstream adds the marker when no cluster IP is set; orch's API server allocates none, so only
  // an explicit `None` means headless here.
  if (isHeadless(service)) labels[headlessLabel()] = '';
  else delete labels[headlessLabel()];
  return labels;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const sortedEntries = (record: Record<string, string> | undefined) => Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The Endpoints object to write for a service, or undefined when `current` already says it all.
 * `current` keeps its other metadata (annotations, resourceVersion for the conditional update).
 */
export function desiredEndpoints(service: Service, pods: readonly Pod[], current: Endpoints | undefined): Endpoints | undefined {
  const subsets = subsetsFor(service, pods);
  const truncated = truncateSubsets(subsets);
  const labels = endpointsLabels(service);
  const annotations = {...(current?.metadata?.annotations ?? {})};
  if (truncated) annotations[overCapacityAnnotation()] = 'truncated';
  else delete annotations[overCapacityAnnotation()];
  if (
    current &&
    sameJson(current.subsets ?? [], subsets) &&
    sameJson(sortedEntries(current.metadata?.labels), sortedEntries(labels)) &&
    sameJson(sortedEntries(current.metadata?.annotations), sortedEntries(annotations))
  ) {
    return undefined;
  }
  const metadata: ObjectMetaLike = {...(current?.metadata ?? {}), name: service.metadata?.name, namespace: service.metadata?.namespace, labels};
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  else delete metadata.annotations;
  const endpoints: Endpoints = {...(current ?? {}), apiVersion: 'v1', kind: 'Endpoints', metadata};
  if (subsets.length) endpoints.subsets = subsets;
  else delete endpoints.subsets;
  return endpoints;
}

// ---------------------------------------------------------------------------------------------
// Options and small controller plumbing shared by the endpoint controllers.

/** A number option, or the fallback when unset. */
export function intOption(options: Record<string, unknown>, name: string, fallback: number): number {
  const value = options[name];
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** A duration option's milliseconds ({ms, text}), 0 when unset. */
export function durationMsOption(options: Record<string, unknown>, name: string): number {
  const value = options[name];
  return value && typeof value === 'object' && typeof (value as {ms?: unknown}).ms === 'number' ? (value as {ms: number}).ms : 0;
}

export const isNotFound = (error: unknown) => error instanceof ApiStatusError && error.code === 404;

/** A live GET; undefined on 404. */
export async function getOrUndefined<T>(client: ControllerContext['client'], path: string): Promise<T | undefined> {
  try {
    return await client.get<T>(path);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Encodes a path segment of a REST path. */
export const seg = (s: string) => encodeURIComponent(s);

/** The services of the pod's namespace that select it. */
export function servicesForPod(services: SharedIndexInformer<Service>, pod: Pod): Service[] {
  return services.indexer.byIndex(NAMESPACE_INDEX, pod.metadata?.namespace ?? '').filter((s) => serviceSelectsPod(s, pod));
}

/** The pods of a service's namespace that its selector matches. */
export function podsForService(pods: SharedIndexInformer<Pod>, service: Service): Pod[] {
  return pods.indexer.byIndex(NAMESPACE_INDEX, service.metadata?.namespace ?? '').filter((p) => serviceSelectsPod(service, p));
}

/**
 * Pod handlers that enqueue the services a pod change concerns (old and new selectors both, as a
 * label change moves a pod between services), after `batchMs` so a burst of changes to one service
 * costs one sync (upstream's --endpoint-updates-batch-period).
 */
export function podEventHandler(services: SharedIndexInformer<Service>, enqueue: (key: string, delayMs: number) => void, batchMs: number) {
  const touch = (...pods: Pod[]) => {
    const keys = new Set<string>();
    for (const pod of pods) for (const service of servicesForPod(services, pod)) keys.add(metaNamespaceKey(service));
    for (const key of keys) enqueue(key, batchMs);
  };
  return {
    onAdd: (pod: Pod) => touch(pod),
    onUpdate: (old: Pod, pod: Pod) => {
      // A resync or relist of an unchanged pod changes no endpoints.
      if (old.metadata?.resourceVersion === pod.metadata?.resourceVersion) return;
      touch(old, pod);
    },
    onDelete: (pod: Pod | DeletedFinalStateUnknown<Pod>) => touch(deletedObject(pod)),
  };
}

/** Runs `count` workers over `queue` until it shuts down; failures are logged and retried with backoff. */
export function runWorkers<T>(count: number, queue: RateLimitingQueue<T>, sync: (item: T) => Promise<void>, onError: (item: T, error: unknown) => void): Promise<void> {
  return Promise.all(Array.from({length: Math.max(1, count)}, async () => {
    while (await processNextItem(queue, sync, onError));
  })).then(() => undefined);
}

// ---------------------------------------------------------------------------------------------
// The controller.

export const endpointsController: ControllerDescriptor = {
  name: 'endpoints',
  enabledByDefault: true,
  start(ctx: ControllerContext, signal: AbortSignal): RunningController {
    const workers = intOption(ctx.options, 'concurrent-endpoint-syncs', 5);
    const batchMs = durationMsOption(ctx.options, 'endpoint-updates-batch-period');
    const services = ctx.informers.informerFor<Service>({group: '', version: 'v1', resource: 'services'});
    const pods = ctx.informers.informerFor<Pod>({group: '', version: 'v1', resource: 'pods'});
    const endpoints = ctx.informers.informerFor<Endpoints>({group: '', version: 'v1', resource: 'endpoints'});
    const queue = new RateLimitingQueue<string>({name: 'endpoint', metrics: ctx.metrics});
    const enqueue = (key: string, delayMs = 0) => (delayMs > 0 ? queue.addAfter(key, delayMs) : queue.add(key));
    const serviceKey = (s: Service | DeletedFinalStateUnknown<Service>) => enqueue(metaNamespaceKey(deletedObject(s)));

    const registrations = [
      services.addEventHandler({onAdd: serviceKey, onUpdate: (_old, s) => serviceKey(s), onDelete: serviceKey}),
      pods.addEventHandler(podEventHandler(services, enqueue, batchMs)),
      // Endpoints deleted by someone else come back if their service still wants them.
      endpoints.addEventHandler({onDelete: (e) => enqueue(metaNamespaceKey(deletedObject(e)))}),
    ];

    const client = ctx.client;
    const path = (namespace: string, name?: string) => `/api/v1/namespaces/${seg(namespace)}/endpoints${name ? `/${seg(name)}` : ''}`;

    async function sync(key: string): Promise<void> {
      const {namespace, name} = splitMetaNamespaceKey(key);
      const service = services.indexer.getByKey(key);
      if (!service) {
        try {
          await client.request({method: 'DELETE', path: path(namespace, name)});
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
        return;
      }
      // ExternalName services get no endpoints; services without a selector get hand-written ones.
      if (service.spec?.type === 'ExternalName' || !hasSelector(service)) return;
      const selected = podsForService(pods, service);
      const write = async (current: Endpoints | undefined) => {
        const next = desiredEndpoints(service, selected, current);
        if (!next) return;
        // The resourceVersion in `next` makes the update conditional.
        if (current) await client.request({method: 'PUT', path: path(namespace, name), body: next});
        else await client.request({method: 'POST', path: path(namespace), body: next});
      };
      try {
        await write(endpoints.indexer.getByKey(key));
      } catch (error) {
        // The cache has not seen our previous write yet (409: exists, or changed): retry once on the
        // live object instead of failing the sync.
        if (!(error instanceof ApiStatusError && error.code === 409)) throw error;
        await write(await getOrUndefined<Endpoints>(client, path(namespace, name)));
      }
    }

    const done = (async () => {
      const synced = await Promise.all([services.waitForSync({signal}), pods.waitForSync({signal}), endpoints.waitForSync({signal})]);
      if (signal.aborted || synced.includes(false)) return;
      // Upstream's checkLeftoverEndpoints: Endpoints whose service is gone are found by syncing their key.
      for (const e of endpoints.indexer.list()) if (e.metadata?.annotations?.[leaderAnnotation()] === undefined) enqueue(metaNamespaceKey(e));
      const running = runWorkers(workers, queue, sync, (key, error) => ctx.logger.error('Error syncing endpoints, retrying', 'service', key, 'err', String(error)));
      await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), {once: true})));
      queue.shutDown();
      await running;
    })().finally(() => {
      queue.shutDown();
      for (const r of registrations) r.remove();
    });

    return {
      done,
      snapshot: () => ({name: 'endpoints', workers, queueDepth: queue.len(), details: {services: services.indexer.size, endpoints: endpoints.indexer.size}}),
    };
  },
};
