/** AlwaysDeny: refuses every request, mutating and validating, CONNECT included (upstream's deny plugin; for tests). */
import {admissionForbidden} from '../errors.js';
import type {AdmissionAttributes, AdmissionPlugin} from '../interfaces.js';

export const ALWAYS_DENY_REASON = 'admission control is denying all modifications';

export class AlwaysDeny implements AdmissionPlugin {
  readonly name = 'AlwaysDeny';

  admit(attributes: AdmissionAttributes): void {
    throw admissionForbidden(attributes, ALWAYS_DENY_REASON);
  }

  validate(attributes: AdmissionAttributes): void {
    throw admissionForbidden(attributes, ALWAYS_DENY_REASON);
  }
}
