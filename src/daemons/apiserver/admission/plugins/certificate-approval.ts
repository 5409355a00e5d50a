/**
 * CertificateApproval: approving or denying a CertificateSigningRequest (its `approval`
 * subresource) needs `approve` on the signer of the request as stored, as upstream's approval plugin.
 */
import {names} from '../../../../api/names.js';
import {stringAt} from '../../rest/objects.js';
import {admissionForbidden} from '../errors.js';
import type {AdmissionAttributes, AdmissionPlugin} from '../interfaces.js';
import {isResource, operations} from '../matching.js';
import {isAuthorizedForSignerName} from './signer-authorization.js';

export class CertificateApproval implements AdmissionPlugin {
  readonly name = 'CertificateApproval';

  readonly handles = operations('UPDATE');

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const {oldObject} = attributes;
    if (!isResource(attributes, names().groups.certificates, 'certificatesigningrequests', 'approval')) return;
    // The stored request's signer: an approval that also changes the signer is refused by validation anyway.
    const signerName = (oldObject && stringAt(oldObject, 'spec', 'signerName')) ?? '';
    if (!attributes.authorize || !(await isAuthorizedForSignerName(attributes.authorize, attributes.user, 'approve', signerName))) {
      throw admissionForbidden(attributes, `user not permitted to approve requests with signerName ${JSON.stringify(signerName)}`);
    }
  }
}
