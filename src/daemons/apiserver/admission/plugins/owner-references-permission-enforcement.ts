/**
 * OwnerReferencesPermissionEnforcement: setting or changing an object's owner references needs
 * `delete` on the object, and making a reference block its owner's deletion needs `update` on the
 * owner's `finalizers` subresource, as upstream's gc admission plugin (pods/status is exempt: its
 * strategy keeps owner references as they are).
 */
import {isJsonObject, jsonEqual, type JsonObject} from '../../../../patch/types.js';
import {valueAt} from '../../rest/objects.js';
import type {ResourceInfo} from '../../../../api/resources.js';
import {admissionForbidden} from '../errors.js';
import type {AdmissionAttributes, AdmissionPlugin} from '../interfaces.js';
import {operations} from '../matching.js';

const ownerReferences = (object: JsonObject | undefined): JsonObject[] => {
  const refs = object && valueAt(object, 'metadata', 'ownerReferences');
  return Array.isArray(refs) ? refs.filter(isJsonObject) : [];
};

/** Upstream's isChangingOwnerReference. */
export function isChangingOwnerReference(object: JsonObject, old: JsonObject | undefined): boolean {
  const refs = ownerReferences(object);
  if (!old) return refs.length > 0;
  const oldRefs = ownerReferences(old);
  return refs.length !== oldRefs.length || refs.some((ref, i) => !jsonEqual(ref, oldRefs[i]));
}

/** Upstream's newBlockingOwnerDeletionRefs: blocking references that are new, or were not blocking before (by uid). */
export function newBlockingOwnerDeletionRefs(object: JsonObject, old: JsonObject | undefined): JsonObject[] {
  const blocking = ownerReferences(object).filter((ref) => ref.blockOwnerDeletion === true);
  if (!old) return blocking;
  const before = new Map(ownerReferences(old).map((ref) => [ref.uid, ref]));
  return blocking.filter((ref) => before.get(ref.uid)?.blockOwnerDeletion !== true);
}

export class OwnerReferencesPermissionEnforcement implements AdmissionPlugin {
  readonly name = 'OwnerReferencesPermissionEnforcement';

  constructor(private readonly resourcesForKind: (group: string, version: string, kind: string) => ResourceInfo[]) {}

  readonly handles = operations('CREATE', 'UPDATE');

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const {resource, object, oldObject} = attributes;
    if (!object || (resource.group === '' && resource.plural === 'pods' && attributes.subresource === 'status')) return;
    if (!isChangingOwnerReference(object, oldObject)) return;
    const authorize = attributes.authorize;
    const ask = async (a: Parameters<NonNullable<AdmissionAttributes['authorize']>>[0]) => (authorize ? authorize(a) : {allowed: false, reason: ''});
    const own = await ask({
      verb: 'delete', resourceRequest: true, namespace: attributes.namespace, apiGroup: resource.group, apiVersion: resource.version,
      resource: resource.plural, subresource: attributes.subresource, name: attributes.name,
    });
    if (!own.allowed) throw admissionForbidden(attributes, `cannot set an ownerRef on a resource you can't delete: ${own.reason ?? ''}, <nil>`);

    for (const ref of newBlockingOwnerDeletionRefs(object, oldObject)) {
      const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : '';
      const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
      const kind = typeof ref.kind === 'string' ? ref.kind : '';
      const owners = this.resourcesForKind(group, version, kind);
      if (owners.length === 0) {
        throw admissionForbidden(attributes,
          `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${apiVersion} Kind ${kind}: no matches for kind "${kind}" in version "${apiVersion}"`);
      }
      // An owner reference names a kind; every resource of that kind must allow it.
      for (const owner of owners) {
        const decision = await ask({
          verb: 'update', resourceRequest: true, namespace: attributes.namespace, apiGroup: group, apiVersion: version,
          resource: owner.plural, subresource: 'finalizers', name: typeof ref.name === 'string' ? ref.name : '',
        });
        if (!decision.allowed) {
          throw admissionForbidden(attributes, `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${decision.reason ?? ''}, <nil>`);
        }
      }
    }
  }
}
