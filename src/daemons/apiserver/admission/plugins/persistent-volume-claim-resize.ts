/**
 * PersistentVolumeClaimResize: a claim may grow only when it is Bound and its StorageClass (the
 * same before and after) allows volume expansion (upstream's resize plugin).
 */
import {names} from '../../../../api/names.js';
import type {JsonObject} from '../../../../patch/types.js';
import {parseQuantity} from '../../../../options/quantity.js';
import {stringAt, valueAt} from '../../rest/objects.js';
import {admissionForbidden} from '../errors.js';
import type {AdmissionAttributes, AdmissionObjects, AdmissionPlugin} from '../interfaces.js';
import {isResource, operations} from '../matching.js';

const storageRequest = (claim: JsonObject): number => {
  const text = valueAt(claim, 'spec', 'resources', 'requests', 'storage');
  try {
    return typeof text === 'string' ? parseQuantity(text).value : typeof text === 'number' ? text : 0;
  } catch {
    return 0;
  }
};

/** Upstream's GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName. */
export function claimClass(claim: JsonObject): string {
  const annotation = valueAt(claim, 'metadata', 'annotations', `volume.beta.${names().labelDomain}/storage-class`);
  if (typeof annotation === 'string') return annotation;
  return stringAt(claim, 'spec', 'storageClassName') ?? '';
}

/** Why the update may not grow the claim, or undefined when it may (or does not grow it). */
export function resizeRefusal(claim: JsonObject, old: JsonObject, storageClass: JsonObject | undefined): string | undefined {
  if (storageRequest(claim) <= storageRequest(old)) return undefined;
  if (stringAt(old, 'status', 'phase') !== 'Bound') return 'Only bound persistent volume claims can be expanded';
  const name = claimClass(claim);
  const allowed = name !== '' && name === claimClass(old) && storageClass !== undefined && valueAt(storageClass, 'allowVolumeExpansion') === true;
  return allowed ? undefined : 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize';
}

export class PersistentVolumeClaimResize implements AdmissionPlugin {
  readonly name = 'PersistentVolumeClaimResize';

  constructor(private readonly objects: AdmissionObjects) {}

  readonly handles = operations('UPDATE');

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const {object, oldObject} = attributes;
    if (!isResource(attributes, '', 'persistentvolumeclaims') || !object || !oldObject) return;
    if (storageRequest(object) <= storageRequest(oldObject)) return;
    const className = claimClass(object);
    const storageClass = className ? await this.objects.get(names().groups.storage, 'storageclasses', '', className) : undefined;
    const refusal = resizeRefusal(object, oldObject, storageClass);
    if (refusal) throw admissionForbidden(attributes, refusal);
  }
}
