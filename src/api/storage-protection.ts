/**
 * The storage protection finalizers (upstream's volumeutil.PVCProtectionFinalizer and
 * PVProtectionFinalizer, under the active label domain) and upstream's protectionutil predicates.
 * The API server's StorageObjectInUseProtection admission plugin adds the finalizers; the controller
 * manager's pvc-protection and pv-protection controllers add them where missing and remove them
 * once nothing uses the object, so both sides read the keys from here.
 */
import {names} from './names.js';

export const pvcProtectionFinalizer = (): string => `${names().labelDomain}/pvc-protection`;
export const pvProtectionFinalizer = (): string => `${names().labelDomain}/pv-protection`;

interface Finalizable {
  metadata?: {deletionTimestamp?: string | null; finalizers?: string[] | null};
}

/** Being deleted and still held by `finalizer`: the protection controller decides whether it may go. */
export function isDeletionCandidate(object: Finalizable, finalizer: string): boolean {
  return Boolean(object.metadata?.deletionTimestamp) && (object.metadata?.finalizers ?? []).includes(finalizer);
}

/** Not being deleted and without `finalizer` (created before the admission plugin was on, or with it off). */
export function needsFinalizer(object: Finalizable, finalizer: string): boolean {
  return !object.metadata?.deletionTimestamp && !(object.metadata?.finalizers ?? []).includes(finalizer);
}
