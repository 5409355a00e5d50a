/**
 * DefaultStorageClass: a PersistentVolumeClaim created without a class gets the default
 * StorageClass (annotated `storageclass.<labelDomain>/is-default-class: "true"`, or the beta
 * form; the newest when several are), as upstream's setdefault plugin.
 */
import {names} from '../../../../api/names.js';
import type {JsonObject} from '../../../../patch/types.js';
import {stringAt, valueAt} from '../../rest/objects.js';
import type {AdmissionAttributes, AdmissionObjects, AdmissionPlugin} from '../interfaces.js';
import {isResource, operations} from '../matching.js';
import {annotationOf, newestDefault} from './default-class.js';

/** Upstream's storageutil.IsDefaultAnnotation. */
export function isDefaultStorageClass(storageClass: JsonObject): boolean {
  const domain = names().labelDomain;
  return annotationOf(storageClass, `storageclass.${domain}/is-default-class`) === 'true'
    || annotationOf(storageClass, `storageclass.beta.${domain}/is-default-class`) === 'true';
}

/** Upstream's PersistentVolumeClaimHasClass: the beta annotation, or spec.storageClassName set (even to ""). */
export function claimHasClass(claim: JsonObject): boolean {
  const annotations = valueAt(claim, 'metadata', 'annotations');
  if (annotations && typeof annotations === 'object' && `volume.beta.${names().labelDomain}/storage-class` in annotations) return true;
  const field = valueAt(claim, 'spec', 'storageClassName');
  return field !== undefined && field !== null;
}

/** The class a claim gets, undefined when it names one or no class is the default. */
export function defaultClassFor(claim: JsonObject, classes: readonly JsonObject[]): string | undefined {
  if (claimHasClass(claim)) return undefined;
  const chosen = newestDefault(classes, isDefaultStorageClass);
  return chosen && stringAt(chosen, 'metadata', 'name');
}

export class DefaultStorageClass implements AdmissionPlugin {
  readonly name = 'DefaultStorageClass';

  constructor(private readonly objects: AdmissionObjects) {}

  readonly handles = operations('CREATE');

  async admit(attributes: AdmissionAttributes): Promise<void> {
    const {object} = attributes;
    if (!isResource(attributes, '', 'persistentvolumeclaims') || !object) return;
    if (claimHasClass(object)) return;
    const name = defaultClassFor(object, await this.objects.list(names().groups.storage, 'storageclasses'));
    if (name === undefined) return;
    object.spec = {...(object.spec && typeof object.spec === 'object' && !Array.isArray(object.spec) ? object.spec : {}), storageClassName: name};
  }
}
