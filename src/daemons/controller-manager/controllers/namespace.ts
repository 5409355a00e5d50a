/**
 * The namespace controller (upstream pkg/controller/namespace): a namespace being deleted
 * (deletionTimestamp set, `orch` still in spec.finalizers) has every namespaced object deleted,
 * resource by resource as discovery lists them; once nothing is left, the `orch` finalizer is
 * removed through the `finalize` subresource and the namespace goes away. While content remains
 * the namespace's status conditions say what is left and why (NamespaceContentRemaining,
 * NamespaceFinalizersRemaining, NamespaceDeletionContentFailure...), as upstream's do.
 *
 * Pure parts (which resources to empty, the conditions) are exported for tests; the rest talks
 * to the API server through the REST client only.
 */
import { names } from '../../../api/names.js';
import { ApiStatusError } from '../../../client/errors.js';
import { discoverGroupVersions } from '../../../client/discovery.js';
import type { ApiResourceList } from '../../../client/resource-mapper.js';
import { parseGroupVersion } from '../../../client/resource-mapper.js';
import { RateLimitingQueue, type ApiObject, type ResourceRef } from '../../../client/informers/index.js';
import type { ControllerContext, ControllerDescriptor, RunningController } from './types.js';

/** The spec.finalizers token this controller owns (upstream: `kubernetes`). */
export const namespaceFinalizer = (): string => names().namespaceFinalizer;

/** Upstream's wait for content with finalizers (e.g. the garbage collector's) before looking again. */
const FINALIZER_ESTIMATE_SECONDS = 15;

const NAMESPACES: ResourceRef = { group: '', version: 'v1', resource: 'namespaces' };

interface Namespace extends ApiObject {
  metadata?: ApiObject['metadata'] & { deletionTimestamp?: string; finalizers?: string[] };
  spec?: { finalizers?: string[] };
  status?: { phase?: string; conditions?: NamespaceCondition[] };
}

interface Item extends ApiObject {
  metadata?: ApiObject['metadata'] & { finalizers?: string[]; deletionTimestamp?: string };
  spec?: { terminationGracePeriodSeconds?: number };
  status?: { phase?: string };
}

export interface NamespaceCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

// ---------------------------------------------------------------------------------------------
// Pure: what to delete.

/** A namespaced collection the controller empties. */
export interface DeletableResource {
  group: string;
  version: string;
  resource: string;
  /** The server offers DELETE on the collection (one request instead of one per object). */
  deleteCollection: boolean;
}

/**
 * The namespaced resources to empty, from discovery lists in the server's priority order: each
 * group/resource once, in its first (preferred) version, as upstream's ServerPreferredNamespacedResources;
 * subresources left out; only resources that can be both listed and deleted.
 */
export function deletableResources(lists: readonly ApiResourceList[]): DeletableResource[] {
  const seen = new Set<string>();
  const result: DeletableResource[] = [];
  for (const list of lists) {
    const { group, version } = parseGroupVersion(list.groupVersion);
    for (const r of list.resources) {
      const verbs = r.verbs ?? [];
      if (r.name.includes('/') || !r.namespaced || !verbs.includes('delete') || !verbs.includes('list')) continue;
      const key = `${r.name}.${group}`;
      if (seen.has(key)) continue;
      seen.add(key);
      result.push({ group, version, resource: r.name, deleteCollection: verbs.includes('deletecollection') });
    }
  }
  return result;
}

/** The collection path of a resource inside one namespace. */
export function collectionPath(r: Pick<DeletableResource, 'group' | 'version' | 'resource'>, namespace: string): string {
  const root = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  return `${root}/namespaces/${encodeURIComponent(namespace)}/${r.resource}`;
}

// ---------------------------------------------------------------------------------------------
// Pure: the namespace conditions (upstream's status_condition_utils.go).

export const NAMESPACE_CONDITION_TYPES = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
] as const;

const OK: Record<(typeof NAMESPACE_CONDITION_TYPES)[number], [reason: string, message: string]> = {
  NamespaceDeletionDiscoveryFailure: ['ResourcesDiscovered', 'All resources successfully discovered'],
  NamespaceDeletionGroupVersionParsingFailure: ['ParsedGroupVersions', 'All legacy kube types successfully parsed'],
  NamespaceDeletionContentFailure: ['ContentDeleted', 'All content successfully deleted, may be waiting on finalization'],
  NamespaceContentRemaining: ['ContentRemoved', 'All content successfully removed'],
  NamespaceFinalizersRemaining: ['ContentHasNoFinalizers', 'All content-preserving finalizers finished'],
};

/** What one pass over a namespace's content found. */
export interface DeletionFindings {
  /** `<groupVersion>: <error>` of each group version discovery could not read. */
  discoveryErrors: string[];
  /** Errors deleting or listing content. */
  contentErrors: string[];
  /** Objects left, by `<resource>.<group>` (upstream's spelling: `pods.` for the core group). */
  remaining: Record<string, number>;
  /** Objects left, by finalizer. */
  finalizers: Record<string, number>;
}

/** Go's utilerrors.Aggregate text. */
function aggregate(errors: string[]): string {
  return errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
}

/** The failing conditions the findings call for; the other types get their "ok" variant. */
function failingConditions(f: DeletionFindings): Map<string, Omit<NamespaceCondition, 'lastTransitionTime'>> {
  const out = new Map<string, Omit<NamespaceCondition, 'lastTransitionTime'>>();
  if (f.discoveryErrors.length) {
    out.set('NamespaceDeletionDiscoveryFailure', {
      type: 'NamespaceDeletionDiscoveryFailure', status: 'True', reason: 'DiscoveryFailed',
      message: `Discovery failed for some groups, ${f.discoveryErrors.length} failing: unable to retrieve the complete list of server APIs: ${f.discoveryErrors.join(', ')}`,
    });
  }
  if (f.contentErrors.length) {
    out.set('NamespaceDeletionContentFailure', {
      type: 'NamespaceDeletionContentFailure', status: 'True', reason: 'ContentDeletionFailed',
      message: `Failed to delete all resource types, ${f.contentErrors.length} remaining: ${aggregate(f.contentErrors)}`,
    });
  }
  const remaining = Object.entries(f.remaining).filter(([, n]) => n > 0).map(([gr, n]) => `${gr} has ${n} resource instances`).sort();
  if (remaining.length) {
    out.set('NamespaceContentRemaining', {
      type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain',
      message: `Some resources are remaining: ${remaining.join(', ')}`,
    });
  }
  const byFinalizer = Object.entries(f.finalizers).filter(([, n]) => n > 0).map(([fin, n]) => `${fin} in ${n} resource instances`).sort();
  if (byFinalizer.length) {
    out.set('NamespaceFinalizersRemaining', {
      type: 'NamespaceFinalizersRemaining', status: 'True', reason: 'SomeFinalizersRemain',
      message: `Some content in the namespace has finalizers remaining: ${byFinalizer.join(', ')}`,
    });
  }
  return out;
}

/**
 * The namespace's conditions after a pass: every type present, failing or ok; a condition whose
 * status and message did not change keeps its transition time. `changed` says whether to write.
 */
export function updateConditions(previous: readonly NamespaceCondition[], findings: DeletionFindings, now: string): { conditions: NamespaceCondition[]; changed: boolean } {
  const failing = failingConditions(findings);
  const conditions = previous.map((c) => ({ ...c }));
  let changed = false;
  for (const type of NAMESPACE_CONDITION_TYPES) {
    const [okReason, okMessage] = OK[type];
    const next = failing.get(type) ?? { type, status: 'False' as const, reason: okReason, message: okMessage };
    const old = conditions.find((c) => c.type === type);
    if (!old) {
      conditions.push({ ...next, lastTransitionTime: now });
      changed = true;
    } else if (old.status !== next.status || old.message !== next.message) {
      Object.assign(old, next, { lastTransitionTime: now });
      changed = true;
    }
  }
  return { conditions, changed };
}

/**
 * How long to wait for pods to terminate gracefully: the longest grace period among the pods
 * still there that are not finished (upstream estimates before deleting; we look at what is left,
 * so an emptied namespace is finalized at once instead of waiting for pods already gone).
 */
export function podGraceEstimateSeconds(pods: readonly Item[]): number {
  let estimate = 0;
  for (const pod of pods) {
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') continue;
    const grace = pod.spec?.terminationGracePeriodSeconds;
    if (typeof grace === 'number' && grace > estimate) estimate = grace;
  }
  return estimate;
}

/** Seconds to wait before looking at a namespace with content left (upstream: estimate/2 + 1). */
export function remainingRequeueSeconds(estimateSeconds: number): number {
  return Math.floor(estimateSeconds / 2) + 1;
}

// ---------------------------------------------------------------------------------------------
// I/O.

/** Content is still being deleted; look again in a while. */
class ResourcesRemainingError extends Error {
  constructor(readonly estimateSeconds: number) {
    super(`some content remains in the namespace, estimate ${estimateSeconds} seconds before it is removed`);
  }
}

function isCode(error: unknown, ...codes: number[]): boolean {
  return error instanceof ApiStatusError && codes.includes(error.code);
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const BACKGROUND = { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' };

interface ItemList {
  items?: Item[] | null;
}

/** Empties namespaces through the REST API (upstream's namespacedResourcesDeleter). */
class NamespaceDeleter {
  constructor(private readonly ctx: ControllerContext) {}

  private nsPath(name: string, sub = ''): string {
    return `/api/v1/namespaces/${encodeURIComponent(name)}${sub ? `/${sub}` : ''}`;
  }

  /** One pass over a namespace; throws ResourcesRemainingError while content is left. */
  async sync(name: string): Promise<void> {
    const { client } = this.ctx;
    let namespace: Namespace;
    try {
      namespace = await client.get<Namespace>(this.nsPath(name));
    } catch (error) {
      if (isCode(error, 404)) return;
      throw error;
    }
    if (!namespace.metadata?.deletionTimestamp) return;
    if (namespace.status?.phase !== 'Terminating') {
      namespace = await this.writeStatus({ ...namespace, status: { ...namespace.status, phase: 'Terminating' } });
    }
    if (!(namespace.spec?.finalizers ?? []).includes(namespaceFinalizer())) return;

    const { findings, estimateSeconds } = await this.deleteAllContent(name);
    const { conditions, changed } = updateConditions(namespace.status?.conditions ?? [], findings, new Date(this.ctx.now()).toISOString().replace(/\.\d+Z$/, 'Z'));
    if (changed) {
      try {
        namespace = await this.writeStatus({ ...namespace, status: { ...namespace.status, conditions } });
      } catch (error) {
        // As upstream: a failed condition write does not stop the deletion.
        if (isCode(error, 404)) return;
        this.ctx.logger.error('Could not update the namespace conditions', 'namespace', name, 'err', message(error));
      }
    }
    if (findings.contentErrors.length) throw new Error(aggregate(findings.contentErrors));
    if (estimateSeconds > 0) throw new ResourcesRemainingError(estimateSeconds);
    await this.finalize(name, namespace);
  }

  private async writeStatus(namespace: Namespace): Promise<Namespace> {
    return (await this.ctx.client.request<Namespace>({ method: 'PUT', path: this.nsPath(namespace.metadata!.name!, 'status'), body: namespace })).body;
  }

  /** The discovery lists, with the group versions that failed to answer. */
  private async discover(): Promise<{ lists: ApiResourceList[]; errors: string[] }> {
    const get = (path: string) => this.ctx.client.get(path);
    const groupVersions = await discoverGroupVersions(get);
    const errors: string[] = [];
    const lists: ApiResourceList[] = [];
    for (const { path, groupVersion } of groupVersions) {
      try {
        const list = (await get(path)) as Partial<ApiResourceList>;
        lists.push({ groupVersion, resources: list.resources ?? [] });
      } catch (error) {
        errors.push(`${groupVersion}: ${message(error)}`);
      }
    }
    return { lists, errors };
  }

  private async deleteAllContent(namespace: string): Promise<{ findings: DeletionFindings; estimateSeconds: number }> {
    const { lists, errors } = await this.discover();
    const findings: DeletionFindings = { discoveryErrors: errors, contentErrors: [], remaining: {}, finalizers: {} };
    let estimateSeconds = 0;
    for (const resource of deletableResources(lists)) {
      try {
        const left = await this.deleteCollectionContent(resource, namespace);
        if (left.length === 0) continue;
        findings.remaining[`${resource.resource}.${resource.group}`] = left.length;
        let withFinalizers = 0;
        for (const item of left) {
          const finalizers = item.metadata?.finalizers ?? [];
          if (finalizers.length) withFinalizers++;
          for (const f of finalizers) findings.finalizers[f] = (findings.finalizers[f] ?? 0) + 1;
        }
        const podEstimate = resource.group === '' && resource.resource === 'pods' ? podGraceEstimateSeconds(left) : 0;
        if (podEstimate > 0) estimateSeconds = Math.max(estimateSeconds, podEstimate);
        else if (withFinalizers > 0) estimateSeconds = Math.max(estimateSeconds, FINALIZER_ESTIMATE_SECONDS);
        else findings.contentErrors.push(`unexpected items still remain in namespace: ${namespace} for gvr: ${resource.group}/${resource.version}, Resource=${resource.resource}`);
      } catch (error) {
        findings.contentErrors.push(message(error));
      }
    }
    return { findings, estimateSeconds };
  }

  /** Deletes a collection's objects in the namespace and returns what is still there. */
  private async deleteCollectionContent(resource: DeletableResource, namespace: string): Promise<Item[]> {
    const { client } = this.ctx;
    const path = collectionPath(resource, namespace);
    let collectionDeleted = false;
    if (resource.deleteCollection) {
      try {
        await client.request({ method: 'DELETE', path, body: BACKGROUND });
        collectionDeleted = true;
      } catch (error) {
        // As upstream: a server that refuses the collection verb after all gets one DELETE per object.
        if (!isCode(error, 404, 405)) throw error;
      }
    }
    const listed = (await client.get<ItemList>(path)).items ?? [];
    if (collectionDeleted || listed.length === 0) return listed;
    for (const item of listed) {
      if (item.metadata?.deletionTimestamp) continue;
      try {
        await client.request({ method: 'DELETE', path: `${path}/${encodeURIComponent(item.metadata!.name!)}`, body: BACKGROUND });
      } catch (error) {
        if (!isCode(error, 404, 409)) throw error;
      }
    }
    return (await client.get<ItemList>(path)).items ?? [];
  }

  /**
   * Removes our token from spec.finalizers (retrying on conflicts with a fresh read). Upstream's
   * API server deletes a namespace whose last finalizer goes; if this one keeps it, delete it again
   * (what upstream's controller itself did before the server learned that).
   */
  private async finalize(name: string, namespace: Namespace): Promise<void> {
    const { client } = this.ctx;
    let current = namespace;
    for (let attempt = 0; ; attempt++) {
      const finalizers = [...new Set((current.spec?.finalizers ?? []).filter((f) => f !== namespaceFinalizer()))].sort();
      try {
        const result = (await client.request<Namespace>({ method: 'PUT', path: this.nsPath(name, 'finalize'), body: { ...current, spec: { ...current.spec, finalizers } } })).body;
        if ((result.spec?.finalizers ?? []).length === 0 && (result.metadata?.finalizers ?? []).length === 0) {
          await client.request({ method: 'DELETE', path: this.nsPath(name) }).catch((error: unknown) => {
            if (!isCode(error, 404)) throw error;
          });
          this.ctx.logger.info('Namespace has been deleted', 'namespace', name);
        } else {
          this.ctx.logger.v(2).info('Namespace finalized, other finalizers remain', 'namespace', name, 'finalizers', (result.spec?.finalizers ?? []).join(','));
        }
        return;
      } catch (error) {
        if (isCode(error, 404)) return;
        if (!isCode(error, 409) || attempt >= 4) throw error;
        current = await client.get<Namespace>(this.nsPath(name));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The controller.

function isDeleting(namespace: Namespace | undefined): boolean {
  return Boolean(namespace?.metadata?.deletionTimestamp);
}

function numberOption(options: Record<string, unknown>, name: string, fallback: number): number {
  const value = options[name];
  return typeof value === 'number' ? value : fallback;
}

function durationOptionMs(options: Record<string, unknown>, name: string, fallback: number): number {
  const value = options[name] as { ms?: unknown } | undefined;
  return typeof value?.ms === 'number' ? value.ms : fallback;
}

async function start(ctx: ControllerContext, signal: AbortSignal): Promise<RunningController> {
  const workers = Math.max(1, numberOption(ctx.options, 'concurrent-namespace-syncs', 10));
  const syncPeriodMs = durationOptionMs(ctx.options, 'namespace-sync-period', 5 * 60_000);
  const queue = new RateLimitingQueue<string>({ name: 'namespace', metrics: ctx.metrics });
  const informer = ctx.informers.informerFor<Namespace>(NAMESPACES);
  const deleter = new NamespaceDeleter(ctx);

  // Only namespaces being deleted are any of this controller's business (upstream's enqueueNamespace).
  const enqueue = (namespace: Namespace) => {
    if (isDeleting(namespace) && namespace.metadata?.name) queue.add(namespace.metadata.name);
  };
  const registration = informer.addEventHandler({ onAdd: enqueue, onUpdate: (_, namespace) => enqueue(namespace) });
  // --namespace-sync-period: look at every namespace being deleted again, as upstream's informer resync does.
  const resync = syncPeriodMs > 0 ? setInterval(() => informer.indexer.list().forEach(enqueue), syncPeriodMs) : undefined;

  const worker = async () => {
    for (;;) {
      const name = await queue.get();
      if (name === undefined) return;
      try {
        await deleter.sync(name);
        queue.forget(name);
      } catch (error) {
        if (error instanceof ResourcesRemainingError) {
          ctx.logger.v(4).info('Content remaining in namespace', 'namespace', name, 'waitSeconds', remainingRequeueSeconds(error.estimateSeconds));
          queue.addAfter(name, remainingRequeueSeconds(error.estimateSeconds) * 1000);
        } else {
          ctx.logger.error('Deletion of namespace failed', 'namespace', name, 'err', message(error));
          queue.addRateLimited(name);
        }
      } finally {
        queue.done(name);
      }
    }
  };

  const done = (async () => {
    ctx.informers.start();
    await informer.waitForSync({ signal });
    const running = signal.aborted ? [] : Array.from({ length: workers }, worker);
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    if (resync) clearInterval(resync);
    registration.remove();
    await queue.shutDownWithDrain();
    await Promise.all(running);
  })();

  return {
    done,
    snapshot: () => ({
      name: 'namespace',
      workers,
      queueDepth: queue.len(),
      details: { terminating: informer.indexer.list().filter(isDeleting).length },
    }),
  };
}

export const namespaceController: ControllerDescriptor = {
  name: 'namespace',
  enabledByDefault: true,
  start,
};

export default namespaceController;
