/**
 * ClusterTrustBundleAttest: writing a ClusterTrustBundle that names a signer needs `attest` on that
 * signer, unless an update changes only what the garbage collector changes (owner references,
 * finalizers), as upstream's ctbattest plugin.
 */
import {names} from '../../../../api/names.js';
import {jsonEqual, type JsonObject} from '../../../../patch/types.js';
import {deepCopy, metadataOf, stringAt} from '../../rest/objects.js';
import {admissionForbidden} from '../errors.js';
import type {AdmissionAttributes, AdmissionPlugin} from '../interfaces.js';
import {operations} from '../matching.js';
import {isAuthorizedForSignerName} from './signer-authorization.js';

/** Upstream's rbac.IsOnlyMutatingGCFields: equal once owner references, finalizers, selfLink and managedFields are the old ones. */
export function isOnlyMutatingGCFields(object: JsonObject, old: JsonObject): boolean {
  const copy = deepCopy(object);
  const meta = metadataOf(copy);
  const oldMeta = metadataOf(deepCopy(old));
  for (const key of ['ownerReferences', 'finalizers', 'selfLink', 'managedFields', 'resourceVersion']) {
    if (oldMeta[key] === undefined) delete meta[key];
    else meta[key] = oldMeta[key]!;
  }
  return jsonEqual(copy, {...old, metadata: oldMeta});
}

export class ClusterTrustBundleAttest implements AdmissionPlugin {
  readonly name = 'ClusterTrustBundleAttest';

  readonly handles = operations('CREATE', 'UPDATE');

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const {resource, object, oldObject} = attributes;
    if (resource.group !== names().groups.certificates || resource.plural !== 'clustertrustbundles' || !object) return;
    const signerName = stringAt(object, 'spec', 'signerName') ?? '';
    if (!signerName) return;
    if (attributes.operation === 'UPDATE' && oldObject && isOnlyMutatingGCFields(object, oldObject)) return;
    if (!attributes.authorize || !(await isAuthorizedForSignerName(attributes.authorize, attributes.user, 'attest', signerName))) {
      throw admissionForbidden(attributes, `user not permitted to attest for signerName ${JSON.stringify(signerName)}`);
    }
  }
}
