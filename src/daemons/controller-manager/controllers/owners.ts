/**
 * What every controller that owns objects (pods of a job, a stateful or daemon set; jobs of a cron
 * job) needs about the owner-child link, as upstream's controller utilities give it: the queue key,
 * the owner a child's controller reference names (only while the informer still has that very
 * object), the children an owner controls, and events recorded on the owner.
 */
import { ApiStatusError } from '../../../client/errors.js';
import type { EventType } from '../../../client/event-recorder.js';
import { deletedObject, NAMESPACE_INDEX, type DeletedFinalStateUnknown } from '../../../client/informers/index.js';
import type { ControllerContext } from './types.js';
import { controllerRefOf, type ObjectMeta } from './replica-set-core.js';

interface Owned {
  metadata: ObjectMeta;
}

interface Cache<T> {
  indexer: { getByKey(key: string): T | undefined; byIndex(index: string, value: string): T[] };
}

/** `<namespace>/<name>`, the work queue key (client-go's MetaNamespaceKeyFunc). */
export function objectKey(object: { metadata: { namespace?: string; name?: string } }): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiStatusError && error.code === 404;
}

/** The owner of `kind` a child's controller reference names, when the cache holds that same object (same uid). */
export function controllerOf<T extends Owned>(owners: Cache<T>, kind: string, child: Owned): T | undefined {
  const ref = controllerRefOf(child);
  if (!ref || ref.kind !== kind) return undefined;
  const owner = owners.indexer.getByKey(`${child.metadata.namespace ?? ''}/${ref.name}`);
  return owner?.metadata.uid === ref.uid ? owner : undefined;
}

/** The children in a cache whose controller reference is `owner`. */
export function controlledBy<C extends Owned>(children: Cache<C>, owner: Owned): C[] {
  return children.indexer.byIndex(NAMESPACE_INDEX, owner.metadata.namespace ?? '').filter((c) => controllerRefOf(c)?.uid === owner.metadata.uid);
}

/** Records events on owners of one kind through the recorder of `component` (none where the context has no recorders). */
export function ownerEvents<T extends Owned>(ctx: ControllerContext, component: string, apiVersion: string, kind: string) {
  const recorder = ctx.events?.(component);
  return (owner: T, type: EventType, reason: string, message: string): void =>
    recorder?.event({ apiVersion, kind, name: owner.metadata.name ?? '', namespace: owner.metadata.namespace, uid: owner.metadata.uid }, type, reason, message);
}

/** A terminating namespace takes no new pods: not the owner's controller's failure. */
export function isNamespaceTerminating(error: unknown): boolean {
  return error instanceof ApiStatusError && (error.details?.causes?.some((c) => c.reason === 'NamespaceTerminating') ?? false);
}

export interface PodLike {
  metadata: ObjectMeta;
}

/**
 * Upstream's RealPodControl: creates and deletes an owner's pods through the API and records the
 * owner's SuccessfulCreate/FailedCreate/SuccessfulDelete/FailedDelete events. Expectations stay with
 * the caller.
 */
export function podControl<T extends Owned>(ctx: ControllerContext, record: (owner: T, type: EventType, reason: string, message: string) => void) {
  const podsPath = (namespace: string | undefined) => `/api/v1/namespaces/${encodeURIComponent(namespace ?? '')}/pods`;

  async function createPod(owner: T, pod: PodLike): Promise<PodLike> {
    try {
      const created = await ctx.client.request<PodLike>({ method: 'POST', path: podsPath(owner.metadata.namespace), body: pod });
      record(owner, 'Normal', 'SuccessfulCreate', `Created pod: ${created.body.metadata?.name ?? ''}`);
      return created.body;
    } catch (error) {
      if (!isNamespaceTerminating(error)) record(owner, 'Warning', 'FailedCreate', `Error creating: ${(error as Error).message}`);
      throw error;
    }
  }

  /** False when the pod was already gone (no error: what was wanted is done). */
  async function deletePod(owner: T, pod: PodLike): Promise<boolean> {
    try {
      await ctx.client.request({ method: 'DELETE', path: `${podsPath(pod.metadata.namespace)}/${encodeURIComponent(pod.metadata.name ?? '')}` });
      record(owner, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name ?? ''}`);
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      record(owner, 'Warning', 'FailedDelete', `Error deleting: ${(error as Error).message}`);
      throw error;
    }
  }

  /**
   * Deletes pods at once. `unobserved(pod)` is called for each deletion the informer will not
   * report (the pod was already gone, or the delete failed), so expectations can stop waiting.
   * Resolves with how many were deleted and the first failure, if any.
   */
  async function deletePods(owner: T, pods: PodLike[], unobserved: (pod: PodLike) => void): Promise<{ deleted: number; error?: unknown }> {
    let deleted = 0;
    const results = await Promise.allSettled(
      pods.map(async (pod) => {
        try {
          if (await deletePod(owner, pod)) deleted++;
          else unobserved(pod);
        } catch (error) {
          unobserved(pod);
          throw error;
        }
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    return failed ? { deleted, error: failed.reason } : { deleted };
  }

  return { createPod, deletePod, deletePods };
}

/**
 * The informer handlers of an owner kind: every add or change queues the owner's key; a deletion
 * calls `forget` (to drop the owner's expectations) with its key.
 */
export function ownerHandlers<T extends Owned>(queue: { add(key: string): void }, forget: (key: string, owner: T) => void) {
  return {
    onAdd: (owner: T) => queue.add(objectKey(owner)),
    onUpdate: (_old: T, owner: T) => queue.add(objectKey(owner)),
    onDelete: (object: T | DeletedFinalStateUnknown<T>) => {
      const owner = deletedObject(object);
      forget(objectKey(owner), owner);
    },
  };
}
