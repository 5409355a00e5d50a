/**
 * Upstream's certificates.IsAuthorizedForSignerName: may the user `verb` (approve, sign, attest)
 * the synthetic `signers` resource of the certificates group named after the signer, or, failing
 * that, `<signer domain>/*`.
 */
import {names} from '../../../../api/names.js';
import type {UserInfo} from '../../../shared/authentication/user.js';
import type {AdmissionAttributes} from '../interfaces.js';

export async function isAuthorizedForSignerName(
  authorize: NonNullable<AdmissionAttributes['authorize']>, user: UserInfo, verb: string, signerName: string,
): Promise<boolean> {
  const ask = async (name: string) => {
    try {
      return (await authorize({user, verb, name, apiGroup: names().groups.certificates, apiVersion: '*', resource: 'signers', resourceRequest: true})).allowed;
    } catch {
      // An authorizer that cannot decide is not an allow (upstream logs and goes on).
      return false;
    }
  };
  if (await ask(signerName)) return true;
  return ask(`${signerName.split('/')[0]}/*`);
}
