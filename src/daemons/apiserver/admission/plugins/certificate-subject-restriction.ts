/**
 * CertificateSubjectRestriction: a CertificateSigningRequest for the API server client signer may
 * not ask for the system:masters group (organization), as upstream's subjectrestriction plugin.
 */
import {names} from '../../../../api/names.js';
import {stringAt} from '../../rest/objects.js';
import {loadX509} from '../../../shared/pki/x509-lib.js';
import {admissionForbidden} from '../errors.js';
import type {AdmissionAttributes, AdmissionPlugin} from '../interfaces.js';
import {isResource, operations} from '../matching.js';

/** The organizations (O=) of a PEM certificate request, given base64 as in spec.request. */
export async function requestOrganizations(requestBase64: string): Promise<string[]> {
  const pem = Buffer.from(requestBase64, 'base64').toString('utf8');
  const match = /-----BEGIN CERTIFICATE REQUEST-----([\s\S]*?)-----END CERTIFICATE REQUEST-----/.exec(pem);
  if (!match) throw new Error('PEM block type must be CERTIFICATE REQUEST');
  const x509 = await loadX509();
  const request = new x509.Pkcs10CertificateRequest(Buffer.from(match[1].replace(/\s+/g, ''), 'base64'));
  return request.subjectName.getField('O');
}

export class CertificateSubjectRestriction implements AdmissionPlugin {
  readonly name = 'CertificateSubjectRestriction';

  readonly handles = operations('CREATE');

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const {object} = attributes;
    if (!isResource(attributes, names().groups.certificates, 'certificatesigningrequests') || !object) return;
    const signer = names().signers.apiserverClient;
    if (stringAt(object, 'spec', 'signerName') !== signer) return;
    let organizations: string[];
    try {
      organizations = await requestOrganizations(stringAt(object, 'spec', 'request') ?? '');
    } catch (error) {
      throw admissionForbidden(attributes, `failed to parse CSR: ${(error as Error).message}`);
    }
    if (organizations.includes('system:masters')) {
      throw admissionForbidden(attributes, `use of ${signer} signer with system:masters group is not allowed`);
    }
  }
}
