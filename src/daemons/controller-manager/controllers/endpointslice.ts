/**
 * The `endpointslice` controller (upstream pkg/controller/endpointslice): every Service with a
 * selector gets EndpointSlices (discovery.orch.io/v1) holding its pods, one set per address type,
 * pods grouped by the ports they offer, at most --max-endpoints-per-slice endpoints per slice.
 *
 * Reconciling (planSlices, pure) follows upstream's reconciler to keep writes few: existing slices
 * keep the endpoints still wanted (updated in place), new endpoints fill slices already being
 * written, then new slices; a slice left empty is deleted or, when a new slice is needed anyway,
 * reused. A service without endpoints keeps one empty placeholder slice per address type.
 *
 * Slices are read live (a LIST by the service-name label) at each sync rather than from the
 * informer's cache: a sync then never works from a cache that has not seen the previous sync's
 * writes, which upstream needs an EndpointSliceTracker for. The informer only tells the controller
 * when a slice changes.
 */
import { names } from '../../../api/names.js';
import {
  deletedObject,
  metaNamespaceKey,
  RateLimitingQueue,
  splitMetaNamespaceKey,
  type DeletedFinalStateUnknown,
} from '../../../client/informers/index.js';
import {
  durationMsOption,
  hasSelector,
  headlessLabel,
  intOption,
  isHeadless,
  isIPv6,
  isNotFound,
  isPodReady,
  findPort,
  podIPs,
  podEventHandler,
  podReference,
  podsForService,
  runWorkers,
  seg,
  shouldPodBeInEndpoints,
  shouldSetHostname,
  type ObjectMetaLike,
  type ObjectReference,
  type Pod,
  type Service,
} from './endpoints.js';
import type {ControllerContext, ControllerDescriptor, RunningController} from './types.js';

export const sliceApiVersion = (): string => `${names().groups.discovery}/v1`;
/** Upstream's kubernetes.io/service-name. */
export const serviceNameLabel = (): string => names().labels.serviceName;
/** Upstream's endpointslice.kubernetes.io/managed-by. */
export const managedByLabel = (): string => names().labels.endpointSliceManagedBy;
export const controllerName = (): string => names().endpointSliceController;
/** Upstream's topology.kubernetes.io/zone: a node's zone, copied to its endpoints. */
export const zoneLabel = (): string => names().labels.zone;

export type AddressType = 'IPv4' | 'IPv6';

export interface SliceEndpointPort {
  name: string;
  protocol: string;
  port: number;
  appProtocol?: string;
}

export interface SliceEndpoint {
  addresses: string[];
  conditions: {ready: boolean; serving: boolean; terminating: boolean};
  hostname?: string;
  targetRef?: ObjectReference;
  nodeName?: string;
  zone?: string;
}

export interface EndpointSlice {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMetaLike & {generateName?: string; ownerReferences?: OwnerReference[]};
  addressType: AddressType | string;
  endpoints: SliceEndpoint[] | null;
  ports?: SliceEndpointPort[] | null;
}

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

interface Node {
  metadata?: ObjectMetaLike;
}

// ---------------------------------------------------------------------------------------------
// Desired endpoints (pure).

/**
 * Upstream's getAddressTypesForService: the service's ipFamilies, else its cluster IP's family.
 * Upstream falls back to both families for a headless service; its API server always sets
 * ipFamilies, while orch's sets none, so orch falls back to IPv4 (the family upstream defaults to).
 */
export function addressTypesFor(service: Service): AddressType[] {
  const families = (service.spec?.ipFamilies ?? []).filter((f): f is AddressType => f === 'IPv4' || f === 'IPv6');
  if (families.length) return [...new Set(families)];
  const clusterIP = service.spec?.clusterIP;
  if (clusterIP && clusterIP !== 'None') return [isIPv6(clusterIP) ? 'IPv6' : 'IPv4'];
  return ['IPv4'];
}

/** Upstream's getEndpointPorts: each service port the pod offers (a named port it lacks is left out). */
export function endpointPortsFor(service: Service, pod: Pod): SliceEndpointPort[] {
  const ports: SliceEndpointPort[] = [];
  for (const servicePort of service.spec?.ports ?? []) {
    const port = findPort(pod, servicePort);
    if (port === undefined) continue;
    ports.push({
      name: servicePort.name ?? '',
      protocol: servicePort.protocol ?? 'TCP',
      port,
      ...(servicePort.appProtocol ? {appProtocol: servicePort.appProtocol} : {}),
    });
  }
  return ports;
}

/** Upstream's podToEndpoint: a terminating pod is never ready unless the service publishes not-ready addresses. */
export function podToEndpoint(pod: Pod, service: Service, addressType: AddressType, zone?: string): SliceEndpoint {
  const serving = isPodReady(pod);
  const terminating = !!pod.metadata?.deletionTimestamp;
  const ready = service.spec?.publishNotReadyAddresses === true || (serving && !terminating);
  const endpoint: SliceEndpoint = {
    addresses: podIPs(pod).filter((ip) => isIPv6(ip) === (addressType === 'IPv6')),
    conditions: {ready, serving, terminating},
  };
  if (shouldSetHostname(pod, service)) endpoint.hostname = pod.spec!.hostname;
  endpoint.targetRef = podReference(pod);
  if (pod.spec?.nodeName) endpoint.nodeName = pod.spec.nodeName;
  if (zone) endpoint.zone = zone;
  return endpoint;
}

export const portsKey = (ports: readonly SliceEndpointPort[] | null | undefined) =>
  JSON.stringify([...(ports ?? [])].map((p) => [p.name, p.protocol, p.port, p.appProtocol ?? '']).sort());

export const endpointKey = (e: SliceEndpoint) => `${e.targetRef?.uid ?? ''}|${e.addresses.join(',')}`;

/** Endpoints wanted for one address type, grouped by the exact set of ports they offer. */
export interface DesiredGroup {
  ports: SliceEndpointPort[];
  endpoints: Map<string, SliceEndpoint>;
}

export function desiredGroups(service: Service, pods: readonly Pod[], addressType: AddressType, zoneOf: (nodeName: string) => string | undefined = () => undefined): Map<string, DesiredGroup> {
  const groups = new Map<string, DesiredGroup>();
  for (const pod of pods) {
    // Slices keep terminating pods (with terminating: true); Endpoints do not.
    if (!shouldPodBeInEndpoints(pod, true)) continue;
    const endpoint = podToEndpoint(pod, service, addressType, pod.spec?.nodeName ? zoneOf(pod.spec.nodeName) : undefined);
    if (endpoint.addresses.length === 0) continue;
    const ports = endpointPortsFor(service, pod);
    const key = portsKey(ports);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = {ports, endpoints: new Map()}));
    group.endpoints.set(endpointKey(endpoint), endpoint);
  }
  return groups;
}

/** The labels of a service's slices: the service's own, the headless marker, and the two that find them. */
export function sliceLabels(service: Service): Record<string, string> {
  const labels: Record<string, string> = {...(service.metadata?.labels ?? {})};
  if (isHeadless(service)) labels[headlessLabel()] = '';
  else delete labels[headlessLabel()];
  labels[serviceNameLabel()] = service.metadata?.name ?? '';
  labels[managedByLabel()] = controllerName();
  return labels;
}

export function ownedBy(slice: EndpointSlice, service: Service): boolean {
  return (slice.metadata?.ownerReferences ?? []).some((ref) => ref.kind === 'Service' && ref.uid === service.metadata?.uid);
}

// ---------------------------------------------------------------------------------------------
// Reconciling (pure): which slices to create, update and delete.

export interface SlicePlan {
  create: EndpointSlice[];
  update: EndpointSlice[];
  delete: EndpointSlice[];
}

const sortEndpoints = (endpoints: SliceEndpoint[]) => [...endpoints].sort((a, b) => (endpointKey(a) < endpointKey(b) ? -1 : endpointKey(a) > endpointKey(b) ? 1 : 0));
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const sortedLabels = (labels: Record<string, string> | undefined) => Object.entries(labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

function newSlice(service: Service, addressType: AddressType, ports: SliceEndpointPort[] | undefined, endpoints: SliceEndpoint[]): EndpointSlice {
  const name = service.metadata?.name ?? '';
  const slice: EndpointSlice = {
    apiVersion: sliceApiVersion(),
    kind: 'EndpointSlice',
    metadata: {
      // The server adds 5 random characters (upstream's getEndpointSlicePrefix, cut to fit a name).
      generateName: `${name.slice(0, 57)}-`,
      namespace: service.metadata?.namespace,
      labels: sliceLabels(service),
      ownerReferences: [{apiVersion: 'v1', kind: 'Service', name, uid: service.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true}],
    },
    addressType,
    endpoints: sortEndpoints(endpoints),
  };
  if (ports) slice.ports = ports;
  return slice;
}

/** A copy of an existing slice with new endpoints (and the service's current labels). */
function rewritten(slice: EndpointSlice, service: Service, endpoints: SliceEndpoint[], ports?: SliceEndpointPort[] | null): EndpointSlice {
  const next: EndpointSlice = {...slice, metadata: {...slice.metadata, labels: sliceLabels(service)}, endpoints: sortEndpoints(endpoints)};
  if (ports !== undefined) {
    if (ports === null) delete next.ports;
    else next.ports = ports;
  }
  return next;
}

const isPlaceholder = (slice: EndpointSlice) => (slice.endpoints ?? []).length === 0 && (slice.ports ?? []).length === 0;

/**
 * Upstream's reconcileByAddressType for one address type. `existing` are the service's slices of
 * that type; `desired` the wanted endpoints by port set.
 */
export function planAddressType(service: Service, addressType: AddressType, existing: readonly EndpointSlice[], desired: Map<string, DesiredGroup>, maxPerSlice: number): SlicePlan {
  const plan: SlicePlan = {create: [], update: [], delete: []};
  const labels = sortedLabels(sliceLabels(service));
  const byPorts = new Map<string, EndpointSlice[]>();
  for (const slice of [...existing].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))) {
    const key = portsKey(slice.ports);
    byPorts.set(key, [...(byPorts.get(key) ?? []), slice]);
  }
  const keys = new Set([...byPorts.keys(), ...desired.keys()]);
  for (const key of keys) {
    const slices = byPorts.get(key) ?? [];
    const group = desired.get(key);
    const wanted = group?.endpoints ?? new Map<string, SliceEndpoint>();
    const placed = new Set<string>();
    const updating: {slice: EndpointSlice; endpoints: SliceEndpoint[]}[] = [];
    const unchanged: EndpointSlice[] = [];
    // 1. Existing slices keep the endpoints still wanted, in their wanted state.
    for (const slice of slices) {
      const kept: SliceEndpoint[] = [];
      for (const endpoint of slice.endpoints ?? []) {
        const k = endpointKey(endpoint);
        const want = wanted.get(k);
        if (want && !placed.has(k)) {
          kept.push(want);
          placed.add(k);
        }
      }
      if (kept.length === 0) plan.delete.push(slice);
      else if (sameJson(sortEndpoints(kept), sortEndpoints(slice.endpoints ?? [])) && sameJson(sortedLabels(slice.metadata?.labels), labels)) unchanged.push(slice);
      else updating.push({slice, endpoints: kept});
    }
    // 2. New endpoints fill the slices being written anyway, then new slices.
    const remaining = [...wanted].filter(([k]) => !placed.has(k)).sort(([a], [b]) => (a < b ? -1 : 1)).map(([, e]) => e);
    for (const u of updating) while (remaining.length && u.endpoints.length < maxPerSlice) u.endpoints.push(remaining.shift()!);
    const chunks: SliceEndpoint[][] = [];
    for (let i = 0; i < remaining.length; i += maxPerSlice) chunks.push(remaining.slice(i, i + maxPerSlice));
    // 3. A last, partial chunk goes to the fullest unchanged slice with room for it, if any.
    const last = chunks.at(-1);
    if (last && last.length < maxPerSlice) {
      const roomy = unchanged
        .filter((s) => (s.endpoints ?? []).length + last.length <= maxPerSlice)
        .sort((a, b) => (b.endpoints ?? []).length - (a.endpoints ?? []).length)[0];
      if (roomy) {
        chunks.pop();
        unchanged.splice(unchanged.indexOf(roomy), 1);
        updating.push({slice: roomy, endpoints: [...(roomy.endpoints ?? []), ...last]});
      }
    }
    for (const u of updating) plan.update.push(rewritten(u.slice, service, u.endpoints));
    for (const chunk of chunks) plan.create.push(newSlice(service, addressType, group?.ports ?? [], chunk));
  }

  // A service without endpoints keeps one empty placeholder slice (reused when one exists).
  if (plan.create.length === 0 && plan.delete.length === existing.length) {
    const placeholder = plan.delete.find(isPlaceholder);
    if (placeholder && sameJson(sortedLabels(placeholder.metadata?.labels), labels)) plan.delete.splice(plan.delete.indexOf(placeholder), 1);
    else plan.create.push(newSlice(service, addressType, undefined, []));
  }
  // A slice about to be deleted while another is created is rewritten instead: one write, not two.
  while (plan.create.length && plan.delete.length) {
    const reuse = plan.delete.shift()!;
    const wanted = plan.create.shift()!;
    plan.update.push(rewritten(reuse, service, wanted.endpoints ?? [], wanted.ports ?? null));
  }
  return plan;
}

/** The whole plan of a service: each address type it serves; slices of other types, or of an older service of the same name, go. */
export function planSlices(service: Service, pods: readonly Pod[], existing: readonly EndpointSlice[], maxPerSlice: number, zoneOf?: (nodeName: string) => string | undefined): SlicePlan {
  const plan: SlicePlan = {create: [], update: [], delete: []};
  const types = addressTypesFor(service);
  const owned = existing.filter((s) => ownedBy(s, service));
  plan.delete.push(...existing.filter((s) => !ownedBy(s, service) || !types.includes(s.addressType as AddressType)));
  for (const type of types) {
    const part = planAddressType(service, type, owned.filter((s) => s.addressType === type), desiredGroups(service, pods, type, zoneOf), Math.max(1, maxPerSlice));
    plan.create.push(...part.create);
    plan.update.push(...part.update);
    plan.delete.push(...part.delete);
  }
  return plan;
}

// ---------------------------------------------------------------------------------------------
// The controller.

export const endpointSliceController: ControllerDescriptor = {
  name: 'endpointslice',
  enabledByDefault: true,
  start(ctx: ControllerContext, signal: AbortSignal): RunningController {
    const workers = intOption(ctx.options, 'concurrent-service-endpoint-syncs', 5);
    const maxPerSlice = intOption(ctx.options, 'max-endpoints-per-slice', 100);
    const batchMs = durationMsOption(ctx.options, 'endpointslice-updates-batch-period');
    const services = ctx.informers.informerFor<Service>({group: '', version: 'v1', resource: 'services'});
    const pods = ctx.informers.informerFor<Pod>({group: '', version: 'v1', resource: 'pods'});
    const nodes = ctx.informers.informerFor<Node>({group: '', version: 'v1', resource: 'nodes'});
    const slices = ctx.informers.informerFor<EndpointSlice>({group: names().groups.discovery, version: 'v1', resource: 'endpointslices'});
    const queue = new RateLimitingQueue<string>({name: 'endpoint_slice', metrics: ctx.metrics});
    const enqueue = (key: string, delayMs = 0) => (delayMs > 0 ? queue.addAfter(key, delayMs) : queue.add(key));
    const serviceKey = (s: Service | DeletedFinalStateUnknown<Service>) => enqueue(metaNamespaceKey(deletedObject(s)));
    /** A change to one of our slices by anyone: the service is checked again. */
    const sliceChanged = (s: EndpointSlice | DeletedFinalStateUnknown<EndpointSlice>) => {
      const slice = deletedObject(s);
      const service = slice.metadata?.labels?.[serviceNameLabel()];
      if (service && slice.metadata?.labels?.[managedByLabel()] === controllerName()) enqueue(`${slice.metadata?.namespace}/${service}`, batchMs);
    };

    const registrations = [
      services.addEventHandler({onAdd: serviceKey, onUpdate: (_old, s) => serviceKey(s), onDelete: serviceKey}),
      pods.addEventHandler(podEventHandler(services, enqueue, batchMs)),
      slices.addEventHandler({onAdd: sliceChanged, onUpdate: (old, s) => old.metadata?.resourceVersion !== s.metadata?.resourceVersion && sliceChanged(s), onDelete: sliceChanged}),
    ];

    const client = ctx.client;
    const collection = (namespace: string) => `/apis/${sliceApiVersion()}/namespaces/${seg(namespace)}/endpointslices`;
    const zoneOf = (nodeName: string) => nodes.indexer.getByKey(nodeName)?.metadata?.labels?.[zoneLabel()] || undefined;

    async function deleteSlice(slice: EndpointSlice): Promise<void> {
      try {
        await client.request({method: 'DELETE', path: `${collection(slice.metadata?.namespace ?? '')}/${seg(slice.metadata?.name ?? '')}`});
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }

    async function sync(key: string): Promise<void> {
      const {namespace, name} = splitMetaNamespaceKey(key);
      const listed = await client.get<{items?: EndpointSlice[] | null}>(collection(namespace), {labelSelector: `${serviceNameLabel()}=${name},${managedByLabel()}=${controllerName()}`});
      const existing = listed.items ?? [];
      const service = services.indexer.getByKey(key);
      if (!service) {
        // Upstream leaves these to the garbage collector; deleting them here works without it too.
        for (const slice of existing) await deleteSlice(slice);
        return;
      }
      if (service.spec?.type === 'ExternalName' || !hasSelector(service)) return;
      const plan = planSlices(service, podsForService(pods, service), existing, maxPerSlice, zoneOf);
      // Creates first and deletes last, so no endpoint disappears in between.
      for (const slice of plan.create) await client.request({method: 'POST', path: collection(namespace), body: slice});
      for (const slice of plan.update) await client.request({method: 'PUT', path: `${collection(namespace)}/${seg(slice.metadata?.name ?? '')}`, body: slice});
      for (const slice of plan.delete) await deleteSlice(slice);
    }

    const done = (async () => {
      const synced = await Promise.all([services.waitForSync({signal}), pods.waitForSync({signal}), nodes.waitForSync({signal}), slices.waitForSync({signal})]);
      if (signal.aborted || synced.includes(false)) return;
      const running = runWorkers(workers, queue, sync, (key, error) => ctx.logger.error('Error syncing endpoint slices, retrying', 'service', key, 'err', String(error)));
      await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), {once: true})));
      queue.shutDown();
      await running;
    })().finally(() => {
      queue.shutDown();
      for (const r of registrations) r.remove();
    });

    return {
      done,
      snapshot: () => ({name: 'endpointslice', workers, queueDepth: queue.len(), details: {services: services.indexer.size, slices: slices.indexer.size}}),
    };
  },
};
