/**
 * The write both storage protection controllers make (upstream updates the object from its cache):
 * the object's finalizers with one added or removed, as a merge patch carrying the cached uid and
 * resourceVersion, so a newer write or a replaced object makes it fail with 409 and the key is
 * retried on fresh cache contents instead of clobbering what changed. Gone meanwhile: nothing to do.
 */
import {ApiStatusError} from '../../../client/errors.js';
import type {ApiObject, ObjectMeta} from '../../../client/informers/index.js';
import type {RestClient} from '../../../client/rest-client.js';

/** A claim or a volume as the protection controllers read it. */
export interface ProtectedObject extends ApiObject {
  metadata?: ObjectMeta & {deletionTimestamp?: string; finalizers?: string[]; ownerReferences?: {uid?: string; controller?: boolean}[]};
}

const MERGE_PATCH = 'application/merge-patch+json';

export type FinalizerChange = 'add' | 'remove';

/** Pure: the finalizer list after the change (an added one goes last, as upstream appends it). */
export function changedFinalizers(current: readonly string[], finalizer: string, change: FinalizerChange): string[] {
  const others = current.filter((f) => f !== finalizer);
  return change === 'add' ? [...others, finalizer] : others;
}

export async function patchFinalizer(client: RestClient, path: string, cached: ProtectedObject, finalizer: string, change: FinalizerChange): Promise<void> {
  const meta = cached.metadata ?? {};
  const finalizers = changedFinalizers(meta.finalizers ?? [], finalizer, change);
  try {
    await client.patch(path, MERGE_PATCH, {metadata: {finalizers: finalizers.length ? finalizers : null, uid: meta.uid, resourceVersion: meta.resourceVersion}});
  } catch (error) {
    if (!(error instanceof ApiStatusError && error.code === 404)) throw error;
  }
}
