/**
 * CertificateSigning: a status write that changes a CertificateSigningRequest's certificate or
 * conditions needs `sign` on its signer, as upstream's signing plugin.
 */
import {names} from '../../../../api/names.js';
import {jsonEqual} from '../../../../patch/types.js';
import {stringAt, valueAt} from '../../rest/objects.js';
import {admissionForbidden} from '../errors.js';
import type {AdmissionAttributes, AdmissionPlugin} from '../interfaces.js';
import {isResource, operations} from '../matching.js';
import {isAuthorizedForSignerName} from './signer-authorization.js';

export class CertificateSigning implements AdmissionPlugin {
  readonly name = 'CertificateSigning';

  readonly handles = operations('UPDATE');

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const {object, oldObject} = attributes;
    if (!isResource(attributes, names().groups.certificates, 'certificatesigningrequests', 'status')) return;
    if (!object || !oldObject) return;
    const same = (...path: string[]) => jsonEqual(valueAt(object, ...path) ?? null, valueAt(oldObject, ...path) ?? null);
    if (same('status', 'certificate') && same('status', 'conditions')) return;
    const signerName = stringAt(oldObject, 'spec', 'signerName') ?? '';
    if (!attributes.authorize || !(await isAuthorizedForSignerName(attributes.authorize, attributes.user, 'sign', signerName))) {
      throw admissionForbidden(attributes, `user not permitted to sign requests with signerName ${JSON.stringify(signerName)}`);
    }
  }
}
