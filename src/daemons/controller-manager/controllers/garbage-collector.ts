/**
 * The `garbagecollector` controller (upstream pkg/controller/garbagecollector): deletes objects
 * whose owners are gone, and carries out the two deletion policies the API server leaves to it
 * as finalizers:
 * - `foregroundDeletion`: the owner's dependents are deleted first (those with
 *   blockOwnerDeletion keep the owner until they are gone), then the finalizer is removed;
 * - `orphan`: the owner's references are removed from its dependents, then the finalizer.
 * Background deletion needs nothing more: the owner goes at once and its dependents follow here.
 *
 * Every resource the API server serves with list, watch and delete (found by discovery, again
 * every 30s so custom resources join) is watched and fed into a dependency graph of owner UIDs.
 * The graph only decides what to look at: each decision is made on live reads of the object and
 * its owners, as upstream does, since an informer's cache may lag behind.
 *
 * The pure parts (what to monitor, the graph, the decision for one dependent) come first; the
 * controller (informers, two work queues, REST calls) after.
 */
import {names} from '../../../api/names.js';
import {builtinGroupOrder} from '../../../api/resources.js';
import {setMaxListeners} from 'node:events';
import {discoverResources} from '../../../client/discovery.js';
import {ApiStatusError} from '../../../client/errors.js';
import {
  clientListWatcher,
  deletedObject,
  RateLimitingQueue,
  resourcePath,
  SharedIndexInformer,
  type DeletedFinalStateUnknown,
  type HandlerRegistration,
  type Unstructured,
} from '../../../client/informers/index.js';
import {parseGroupVersion, type ApiResourceList} from '../../../client/resource-mapper.js';
import {getOrUndefined, intOption, runWorkers, seg} from './endpoints.js';
import type {ControllerContext, ControllerDescriptor, RunningController} from './types.js';
import type {OwnerReference} from '../../../api/meta.js';

export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';
/** Upstream's garbage collector re-reads discovery this often. */
export const RESYNC_DISCOVERY_MS = 30_000;
/** How long the first graph build may take before workers start anyway (upstream also times out). */
const GRAPH_SYNC_TIMEOUT_MS = 30_000;
/** Upstream's absentOwnerCache size: owner UIDs known to be gone, so dependents of one owner cost one GET. */
const ABSENT_OWNER_CACHE_SIZE = 500;

export type {OwnerReference};

interface Metadata {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

const metaOf = (object: Unstructured) => (object.metadata ?? {}) as Metadata;

/** A served resource the collector can watch and delete. */
export interface MonitoredResource {
  group: string;
  version: string;
  /** Plural, as in URLs. */
  resource: string;
  kind: string;
  namespaced: boolean;
}

/** Where one object lives. */
export interface ObjectIdentity {
  resource: MonitoredResource;
  namespace: string;
  name: string;
  uid: string;
}

// ---------------------------------------------------------------------------------------------
// Discovery (pure): what to watch, and which resource an owner reference names.

/** Upstream's DefaultIgnoredResources: events are never owners or dependents worth watching. */
const ignored = () => new Set(['/events', `${names().groups.events}/events`]);

/**
 * The resources to monitor: the preferred version of each group's resources that support list,
 * watch and delete (upstream's GetDeletableResources), subresources and ignored ones left out.
 * `lists` are in the server's priority order, preferred versions first.
 */
export function deletableResources(lists: readonly ApiResourceList[]): MonitoredResource[] {
  const seen = new Set<string>();
  const result: MonitoredResource[] = [];
  for (const list of lists) {
    const {group, version} = parseGroupVersion(list.groupVersion);
    for (const r of list.resources) {
      if (r.name.includes('/')) continue;
      const verbs = new Set(r.verbs ?? []);
      if (!verbs.has('list') || !verbs.has('watch') || !verbs.has('delete')) continue;
      const key = `${group}/${r.name}`;
      if (ignored().has(key) || seen.has(key)) continue;
      seen.add(key);
      result.push({group, version, resource: r.name, kind: r.kind, namespaced: r.namespaced});
    }
  }
  return result;
}

/** Owner references name a kind and an apiVersion; any served version of that group and kind will do for a GET. */
export class KindResolver {
  private readonly byGroupKind = new Map<string, MonitoredResource>();

  constructor(resources: readonly MonitoredResource[]) {
    for (const r of resources) if (!this.byGroupKind.has(`${r.group}/${r.kind}`)) this.byGroupKind.set(`${r.group}/${r.kind}`, r);
  }

  resolve(apiVersion: string, kind: string): MonitoredResource | undefined {
    return this.byGroupKind.get(`${parseGroupVersion(apiVersion).group}/${kind}`);
  }
}

export function objectPath(identity: Pick<ObjectIdentity, 'resource' | 'namespace' | 'name'>): string {
  const {resource} = identity;
  const collection = resourcePath({group: resource.group, version: resource.version, resource: resource.resource, namespace: resource.namespaced ? identity.namespace : undefined});
  return `${collection}/${seg(identity.name)}`;
}

// ---------------------------------------------------------------------------------------------
// The dependency graph (pure).

export interface GraphNode {
  identity: ObjectIdentity;
  owners: OwnerReference[];
  /** deletionTimestamp set. */
  beingDeleted: boolean;
  /** Being deleted with the foregroundDeletion finalizer: waits for its dependents. */
  deletingDependents: boolean;
  /** Being deleted with the orphan finalizer. */
  orphaning: boolean;
}

/** What a graph change asks the workers to look at (UIDs). */
export interface GraphWork {
  attemptToDelete: string[];
  attemptToOrphan: string[];
}

export function nodeFor(resource: MonitoredResource, object: Unstructured): GraphNode {
  const meta = metaOf(object);
  const beingDeleted = !!meta.deletionTimestamp;
  const finalizers = meta.finalizers ?? [];
  return {
    identity: {resource, namespace: meta.namespace ?? '', name: meta.name ?? '', uid: meta.uid ?? ''},
    owners: meta.ownerReferences ?? [],
    beingDeleted,
    deletingDependents: beingDeleted && finalizers.includes(FOREGROUND_FINALIZER),
    orphaning: beingDeleted && finalizers.includes(ORPHAN_FINALIZER),
  };
}

/**
 * Objects by UID, and for every owner UID (present or not) the UIDs of its dependents (upstream's
 * GraphBuilder, without virtual nodes: an owner missing from the graph is checked by a live GET
 * when its dependent is processed).
 */
export class DependencyGraph {
  private readonly nodes = new Map<string, GraphNode>();
  private readonly dependentsOf = new Map<string, Set<string>>();

  get size(): number {
    return this.nodes.size;
  }

  get(uid: string): GraphNode | undefined {
    return this.nodes.get(uid);
  }

  dependents(uid: string): GraphNode[] {
    return [...(this.dependentsOf.get(uid) ?? [])].map((d) => this.nodes.get(d)).filter((n): n is GraphNode => n !== undefined);
  }

  /** Dependents whose reference to `uid` has blockOwnerDeletion: they keep a foreground deletion waiting. */
  blockingDependents(uid: string): GraphNode[] {
    return this.dependents(uid).filter((d) => d.owners.some((o) => o.uid === uid && o.blockOwnerDeletion === true));
  }

  /** An object added or changed. */
  upsert(node: GraphNode): GraphWork {
    const work: GraphWork = {attemptToDelete: [], attemptToOrphan: []};
    const uid = node.identity.uid;
    const old = this.nodes.get(uid);
    this.nodes.set(uid, node);
    const oldOwners = new Set((old?.owners ?? []).map((o) => o.uid));
    const newOwners = new Set(node.owners.map((o) => o.uid));
    for (const owner of oldOwners) if (!newOwners.has(owner)) this.unlink(owner, uid);
    for (const owner of newOwners) this.link(owner, uid);

    if (!old || JSON.stringify(old.owners) !== JSON.stringify(node.owners)) {
      // An owner we have not seen may be gone; an owner deleting its dependents wants this one gone.
      const suspicious = node.owners.some((o) => !this.nodes.has(o.uid) || this.nodes.get(o.uid)!.deletingDependents);
      if (suspicious) work.attemptToDelete.push(uid);
      // A reference removed or unblocked may be what a foreground deletion was waiting for.
      for (const owner of new Set([...oldOwners, ...newOwners])) if (this.nodes.get(owner)?.deletingDependents) work.attemptToDelete.push(owner);
    }
    if (node.orphaning && !old?.orphaning) work.attemptToOrphan.push(uid);
    if (node.deletingDependents && !old?.deletingDependents) {
      for (const dependent of this.dependentsOf.get(uid) ?? []) work.attemptToDelete.push(dependent);
      work.attemptToDelete.push(uid);
    }
    return work;
  }

  /** An object deleted: its dependents lost an owner, and owners waiting on it may go on. */
  remove(uid: string): GraphWork {
    const work: GraphWork = {attemptToDelete: [], attemptToOrphan: []};
    const node = this.nodes.get(uid);
    if (!node) return work;
    this.nodes.delete(uid);
    for (const owner of node.owners) {
      this.unlink(owner.uid, uid);
      if (this.nodes.get(owner.uid)?.deletingDependents) work.attemptToDelete.push(owner.uid);
    }
    work.attemptToDelete.push(...(this.dependentsOf.get(uid) ?? []));
    return work;
  }

  /** Drops every node of a resource no longer served (no work: its objects are gone or unreachable). */
  forgetResource(resource: MonitoredResource): void {
    for (const [uid, node] of this.nodes) {
      if (node.identity.resource.group === resource.group && node.identity.resource.resource === resource.resource) {
        this.nodes.delete(uid);
        for (const owner of node.owners) this.unlink(owner.uid, uid);
      }
    }
  }

  private link(owner: string, dependent: string): void {
    let set = this.dependentsOf.get(owner);
    if (!set) this.dependentsOf.set(owner, (set = new Set()));
    set.add(dependent);
  }

  private unlink(owner: string, dependent: string): void {
    const set = this.dependentsOf.get(owner);
    set?.delete(dependent);
    if (set?.size === 0) this.dependentsOf.delete(owner);
  }
}

// ---------------------------------------------------------------------------------------------
// The decision for one dependent (pure), upstream's attemptToDeleteItem switch.

/** solid: exists and stays; dangling: gone (404 or another UID); waiting: in foreground deletion. */
export type OwnerState = 'solid' | 'dangling' | 'waiting';
export type DeletePolicy = 'Background' | 'Foreground' | 'Orphan';

export type DependentAction =
  | {kind: 'keep'}
  /** Some owners remain: only the references to the gone or deleting ones are dropped. */
  | {kind: 'removeOwnerReferences'; uids: string[]}
  /** `unblockFirst`: clear blockOwnerDeletion first, so a cycle of foreground deletions cannot deadlock. */
  | {kind: 'delete'; policy: DeletePolicy; unblockFirst: boolean};

export function decideForDependent(input: {
  owners: {uid: string; state: OwnerState}[];
  finalizers: readonly string[];
  hasDependents: boolean;
  aDependentIsDeletingDependents: boolean;
}): DependentAction {
  const solid = input.owners.filter((o) => o.state === 'solid');
  const dangling = input.owners.filter((o) => o.state === 'dangling');
  const waiting = input.owners.filter((o) => o.state === 'waiting');
  if (solid.length > 0) {
    if (dangling.length === 0 && waiting.length === 0) return {kind: 'keep'};
    return {kind: 'removeOwnerReferences', uids: [...dangling, ...waiting].map((o) => o.uid)};
  }
  if (waiting.length > 0 && input.hasDependents) {
    // An owner waits for this one, which has dependents of its own: delete it in the foreground too.
    return {kind: 'delete', policy: 'Foreground', unblockFirst: input.aDependentIsDeletingDependents};
  }
  // No owner is left: delete, keeping the policy the object itself was given.
  const policy: DeletePolicy = input.finalizers.includes(ORPHAN_FINALIZER) ? 'Orphan' : input.finalizers.includes(FOREGROUND_FINALIZER) ? 'Foreground' : 'Background';
  return {kind: 'delete', policy, unblockFirst: false};
}

/** Owner UIDs known gone, oldest forgotten first (upstream's LRU absentOwnerCache). */
class AbsentOwners {
  private readonly uids = new Set<string>();
  constructor(private readonly capacity: number) {}
  has(uid: string): boolean {
    return this.uids.has(uid);
  }
  add(uid: string): void {
    this.uids.delete(uid);
    this.uids.add(uid);
    if (this.uids.size > this.capacity) this.uids.delete(this.uids.values().next().value!);
  }
}

// ---------------------------------------------------------------------------------------------
// The controller.

const MERGE_PATCH = 'application/merge-patch+json';
const isCode = (error: unknown, ...codes: number[]) => error instanceof ApiStatusError && codes.includes(error.code);

/**
 * Built-in resources are watched through the shared informers (other controllers watch them too);
 * custom resources through informers of the collector's own, which it stops when their CRD goes.
 */
const isBuiltinGroup = (group: string) => group === '' || !group.includes('.') || builtinGroupOrder().includes(group);

interface Monitor {
  resource: MonitoredResource;
  informer: SharedIndexInformer<Unstructured>;
  registration: HandlerRegistration;
  /** Set for the collector's own informers. */
  own: boolean;
}

class GarbageCollector {
  readonly graph = new DependencyGraph();
  readonly attemptToDelete: RateLimitingQueue<string>;
  readonly attemptToOrphan: RateLimitingQueue<string>;
  private readonly monitors = new Map<string, Monitor>();
  private resolver = new KindResolver([]);
  private readonly absent = new AbsentOwners(ABSENT_OWNER_CACHE_SIZE);
  /** Called when an owner's kind is unknown: discovery may be behind (a CRD just established). */
  onUnknownKind: () => void = () => undefined;

  constructor(private readonly ctx: ControllerContext) {
    this.attemptToDelete = new RateLimitingQueue<string>({name: 'garbage_collector_attempt_to_delete', metrics: ctx.metrics});
    this.attemptToOrphan = new RateLimitingQueue<string>({name: 'garbage_collector_attempt_to_orphan', metrics: ctx.metrics});
  }

  get monitorCount(): number {
    return this.monitors.size;
  }

  private schedule(work: GraphWork): void {
    for (const uid of work.attemptToDelete) this.attemptToDelete.add(uid);
    for (const uid of work.attemptToOrphan) this.attemptToOrphan.add(uid);
  }

  /** Reads discovery and starts/stops monitors to match; returns the informers started by this call. */
  async syncMonitors(): Promise<SharedIndexInformer<Unstructured>[]> {
    const lists = await discoverResources((path) => this.ctx.client.get(path));
    const resources = deletableResources(lists);
    this.resolver = new KindResolver(resources);
    const wanted = new Map(resources.map((r) => [`${r.group}/${r.resource}`, r]));
    for (const [key, monitor] of this.monitors) {
      const resource = wanted.get(key);
      if (resource && resource.version === monitor.resource.version) continue;
      monitor.registration.remove();
      if (monitor.own) await monitor.informer.stop();
      this.graph.forgetResource(monitor.resource);
      this.monitors.delete(key);
    }
    const added: SharedIndexInformer<Unstructured>[] = [];
    let sharedAdded = false;
    for (const [key, resource] of wanted) {
      if (this.monitors.has(key)) continue;
      const ref = {group: resource.group, version: resource.version, resource: resource.resource};
      const own = !isBuiltinGroup(resource.group);
      const informer = own
        ? new SharedIndexInformer<Unstructured>({listWatcher: clientListWatcher(this.ctx.client, resourcePath(ref)), name: `${resource.resource}.${resource.group}`, logger: this.ctx.logger})
        : this.ctx.informers.informerFor<Unstructured>(ref);
      const upsert = (object: Unstructured) => this.schedule(this.graph.upsert(nodeFor(resource, object)));
      const registration = informer.addEventHandler({
        onAdd: upsert,
        onUpdate: (_old, object) => upsert(object),
        onDelete: (object: Unstructured | DeletedFinalStateUnknown<Unstructured>) => {
          const uid = metaOf(deletedObject(object)).uid;
          if (!uid) return;
          this.absent.add(uid);
          this.schedule(this.graph.remove(uid));
        },
      });
      if (own) informer.run();
      else sharedAdded = true;
      this.monitors.set(key, {resource, informer, registration, own});
      added.push(informer);
    }
    // The manager starts shared informers after each controller starts; ones asked for later start here.
    if (sharedAdded) this.ctx.informers.start();
    return added;
  }

  async stop(): Promise<void> {
    for (const monitor of this.monitors.values()) {
      monitor.registration.remove();
      if (monitor.own) await monitor.informer.stop();
    }
    this.monitors.clear();
  }

  // -------------------------------------------------------------------------------------------
  // attemptToDelete: a dependent whose owners may be gone, or an owner in foreground deletion.

  async processAttemptToDelete(uid: string): Promise<void> {
    const node = this.graph.get(uid);
    if (!node) return;
    // Being deleted already, and not waiting on dependents: nothing for us to do.
    if (node.beingDeleted && !node.deletingDependents) return;
    const latest = await this.getLive(node.identity);
    if (!latest) return;
    const meta = metaOf(latest);
    if (meta.deletionTimestamp && (meta.finalizers ?? []).includes(FOREGROUND_FINALIZER)) return this.processDeletingDependents(node.identity, latest);
    const refs = meta.ownerReferences ?? [];
    if (refs.length === 0) return;

    const owners: {uid: string; state: OwnerState}[] = [];
    for (const ref of refs) owners.push({uid: ref.uid, state: await this.ownerState(ref, node.identity)});
    const dependents = this.graph.dependents(uid);
    const action = decideForDependent({
      owners,
      finalizers: meta.finalizers ?? [],
      hasDependents: dependents.length > 0,
      aDependentIsDeletingDependents: dependents.some((d) => d.deletingDependents),
    });
    const path = objectPath(node.identity);
    switch (action.kind) {
      case 'keep':
        return;
      case 'removeOwnerReferences': {
        const gone = new Set(action.uids);
        return this.patchOwnerReferences(path, latest, refs.filter((r) => !gone.has(r.uid)));
      }
      case 'delete':
        if (action.unblockFirst) await this.patchOwnerReferences(path, latest, refs.map((r) => (r.blockOwnerDeletion ? {...r, blockOwnerDeletion: false} : r)));
        this.ctx.logger.v(2).info('Deleting object', 'object', path, 'propagationPolicy', action.policy);
        return this.deleteObject(path, uid, action.policy);
    }
  }

  /** An owner in foreground deletion: done when no blocking dependent is left, else those are pushed. */
  private async processDeletingDependents(identity: ObjectIdentity, latest: Unstructured): Promise<void> {
    const blocking = this.graph.blockingDependents(identity.uid);
    if (blocking.length === 0) return this.removeFinalizer(identity, latest, FOREGROUND_FINALIZER);
    for (const dependent of blocking) if (!dependent.deletingDependents) this.attemptToDelete.add(dependent.identity.uid);
  }

  /** Upstream's isDangling plus the foreground check, on a live GET of the owner. */
  private async ownerState(ref: OwnerReference, dependent: ObjectIdentity): Promise<OwnerState> {
    if (this.absent.has(ref.uid)) return 'dangling';
    const resource = this.resolver.resolve(ref.apiVersion, ref.kind);
    // Unknown kinds are retried with backoff after discovery is read again: a CRD may be new.
    if (!resource) {
      this.onUnknownKind();
      throw new Error(`cannot resolve owner kind ${ref.kind} of apiVersion ${ref.apiVersion}`);
    }
    // A cluster-scoped object cannot be owned by a namespaced one: that owner cannot exist.
    if (resource.namespaced && !dependent.resource.namespaced) return 'dangling';
    const owner = await getOrUndefined<Unstructured>(this.ctx.client, objectPath({resource, namespace: dependent.namespace, name: ref.name}));
    const meta = owner ? metaOf(owner) : undefined;
    if (!meta || meta.uid !== ref.uid) {
      this.absent.add(ref.uid);
      return 'dangling';
    }
    return meta.deletionTimestamp && (meta.finalizers ?? []).includes(FOREGROUND_FINALIZER) ? 'waiting' : 'solid';
  }

  // -------------------------------------------------------------------------------------------
  // attemptToOrphan: an owner deleted with the orphan policy.

  async processAttemptToOrphan(uid: string): Promise<void> {
    const node = this.graph.get(uid);
    if (!node) return;
    for (const dependent of this.graph.dependents(uid)) {
      const latest = await this.getLive(dependent.identity);
      if (!latest) continue;
      const refs = metaOf(latest).ownerReferences ?? [];
      if (!refs.some((r) => r.uid === uid)) continue;
      try {
        await this.patchOwnerReferences(objectPath(dependent.identity), latest, refs.filter((r) => r.uid !== uid));
      } catch (error) {
        if (!isCode(error, 404)) throw error;
      }
    }
    const owner = await this.getLive(node.identity);
    if (owner) await this.removeFinalizer(node.identity, owner, ORPHAN_FINALIZER);
  }

  // -------------------------------------------------------------------------------------------
  // REST calls.

  /** The object now, or undefined when it is gone or was replaced by another of the same name. */
  private async getLive(identity: ObjectIdentity): Promise<Unstructured | undefined> {
    const object = await getOrUndefined<Unstructured>(this.ctx.client, objectPath(identity));
    return object && metaOf(object).uid === identity.uid ? object : undefined;
  }

  /** A merge patch of the whole list; uid and resourceVersion make it fail rather than clobber a newer write. */
  private async patchOwnerReferences(path: string, latest: Unstructured, refs: OwnerReference[]): Promise<void> {
    const meta = metaOf(latest);
    await this.ctx.client.patch(path, MERGE_PATCH, {metadata: {ownerReferences: refs.length ? refs : null, uid: meta.uid, resourceVersion: meta.resourceVersion}});
  }

  private async removeFinalizer(identity: ObjectIdentity, latest: Unstructured, finalizer: string): Promise<void> {
    const meta = metaOf(latest);
    const finalizers = meta.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return;
    const rest = finalizers.filter((f) => f !== finalizer);
    try {
      await this.ctx.client.patch(objectPath(identity), MERGE_PATCH, {metadata: {finalizers: rest.length ? rest : null, resourceVersion: meta.resourceVersion}});
    } catch (error) {
      if (!isCode(error, 404)) throw error;
    }
  }

  private async deleteObject(path: string, uid: string, policy: DeletePolicy): Promise<void> {
    try {
      await this.ctx.client.request({
        method: 'DELETE',
        path,
        body: {apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: policy, preconditions: {uid}},
      });
    } catch (error) {
      // Gone already, or replaced by another object of that name (the UID precondition).
      if (!isCode(error, 404, 409)) throw error;
    }
  }
}

/** Sleeps `ms`, or less when any of `signals` aborts; leaves no listener behind. */
function abortableSleep(ms: number, ...signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    if (signals.some((s) => s.aborted)) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      for (const s of signals) s.removeEventListener('abort', done);
      resolve();
    }
    for (const s of signals) s.addEventListener('abort', done, {once: true});
  });
}

export interface GarbageCollectorTuning {
  /** How often discovery is read again for new or removed resources (default 30s, as upstream). */
  discoveryResyncMs?: number;
}

/** The descriptor, with timings tests may shorten. */
export function createGarbageCollectorController(tuning: GarbageCollectorTuning = {}): ControllerDescriptor {
  const discoveryResyncMs = tuning.discoveryResyncMs ?? RESYNC_DISCOVERY_MS;
  return {
    name: 'garbagecollector',
    enabledByDefault: true,
    start(ctx: ControllerContext, signal: AbortSignal): RunningController {
      if (ctx.options['enable-garbage-collector'] === false) {
        ctx.logger.info('Garbage collector disabled by --enable-garbage-collector=false');
        return {done: Promise.resolve(), snapshot: () => ({name: 'garbagecollector', workers: 0, queueDepth: 0, details: {enabled: 'false'}})};
      }
      const workers = intOption(ctx.options, 'concurrent-gc-syncs', 20);
      const gc = new GarbageCollector(ctx);
      const onError = (what: string) => (uid: string, error: unknown) => ctx.logger.error(`Error in ${what}, retrying`, 'uid', uid, 'err', String(error));

      // Every informer's sync wait listens on this signal: one listener per monitor is expected.
      const stopping = new AbortController();
      setMaxListeners(0, stopping.signal);
      signal.addEventListener('abort', () => stopping.abort(), {once: true});
      let wake = new AbortController();
      gc.onUnknownKind = () => wake.abort();

      const done = (async () => {
        // The first discovery is retried until it succeeds: without it there is nothing to watch.
        let first: SharedIndexInformer<Unstructured>[] | undefined;
        while (!first && !signal.aborted) {
          try {
            first = await gc.syncMonitors();
          } catch (error) {
            ctx.logger.error('Garbage collector discovery failed, retrying', 'err', String(error));
            await abortableSleep(1000, signal);
          }
        }
        if (!first) return;
        await Promise.all(first.map((informer) => informer.waitForSync({signal: stopping.signal, timeoutMs: GRAPH_SYNC_TIMEOUT_MS})));
        if (signal.aborted) return;
        const running = Promise.all([
          runWorkers(workers, gc.attemptToDelete, (uid) => gc.processAttemptToDelete(uid), onError('attemptToDelete')),
          runWorkers(workers, gc.attemptToOrphan, (uid) => gc.processAttemptToOrphan(uid), onError('attemptToOrphan')),
        ]);
        while (!signal.aborted) {
          await abortableSleep(discoveryResyncMs, signal, wake.signal);
          if (signal.aborted) break;
          wake = new AbortController();
          await gc.syncMonitors().catch((error: unknown) => ctx.logger.error('Garbage collector discovery failed', 'err', String(error)));
        }
        gc.attemptToDelete.shutDown();
        gc.attemptToOrphan.shutDown();
        await running;
      })().finally(async () => {
        gc.attemptToDelete.shutDown();
        gc.attemptToOrphan.shutDown();
        await gc.stop();
      });

      return {
        done,
        snapshot: () => ({
          name: 'garbagecollector',
          workers,
          queueDepth: gc.attemptToDelete.len() + gc.attemptToOrphan.len(),
          details: {monitors: gc.monitorCount, graphNodes: gc.graph.size},
        }),
      };
    },
  };
}

export const garbageCollectorController: ControllerDescriptor = createGarbageCollectorController();
