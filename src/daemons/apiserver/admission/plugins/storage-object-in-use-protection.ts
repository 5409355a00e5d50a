/**
 * StorageObjectInUseProtection: new PersistentVolumeClaims and PersistentVolumes get the
 * `<labelDomain>/pvc-protection` and `<labelDomain>/pv-protection` finalizers, which the
 * protection controllers remove once nothing uses them (upstream's storageobjectinuseprotection).
 */
import {pvcProtectionFinalizer, pvProtectionFinalizer} from '../../../../api/storage-protection.js';
import type {JsonObject} from '../../../../patch/types.js';
import {finalizersOf, metadataOf} from '../../rest/objects.js';
import type {AdmissionAttributes, AdmissionPlugin} from '../interfaces.js';
import {operations} from '../matching.js';

/** Adds the finalizer unless it is there. */
export function withFinalizer(object: JsonObject, finalizer: string): void {
  const finalizers = finalizersOf(object);
  if (!finalizers.includes(finalizer)) metadataOf(object).finalizers = [...finalizers, finalizer];
}

export class StorageObjectInUseProtection implements AdmissionPlugin {
  readonly name = 'StorageObjectInUseProtection';

  readonly handles = operations('CREATE');

  admit(attributes: AdmissionAttributes): void {
    const {resource, object} = attributes;
    if (resource.group !== '' || attributes.subresource || !object) return;
    if (resource.plural === 'persistentvolumeclaims') withFinalizer(object, pvcProtectionFinalizer());
    else if (resource.plural === 'persistentvolumes') withFinalizer(object, pvProtectionFinalizer());
  }
}
