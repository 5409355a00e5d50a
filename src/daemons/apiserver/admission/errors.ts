/**
 * Upstream's admission.NewForbidden: a 403 on the request's resource, named after the object being
 * written (its name, else its generateName, else "Unknown", as extractResourceName), with the
 * plugin's reason. A Forbidden error is passed on as it is; an object without metadata (a CONNECT's
 * options) makes upstream's accessor fail, which it reports as an internal error.
 */
import {ApiError, forbidden, internalError} from '../../../api/status.js';
import {isJsonObject} from '../../../patch/types.js';
import type {AdmissionAttributes} from './interfaces.js';

export function admissionForbidden(attributes: AdmissionAttributes, cause: string | ApiError): ApiError {
  if (cause instanceof ApiError && cause.status.reason === 'Forbidden') return cause;
  const reason = cause instanceof ApiError ? cause.status.message ?? '' : cause;
  const gr = {group: attributes.resource.group, resource: attributes.resource.plural};
  let name = 'Unknown';
  const object = attributes.object;
  if (object !== undefined) {
    const metadata = object.metadata;
    if (!isJsonObject(metadata)) return internalError(`[${reason}, object does not implement the Object interfaces]`);
    if (typeof metadata.name === 'string' && metadata.name) name = metadata.name;
    else if (typeof metadata.generateName === 'string' && metadata.generateName) name = metadata.generateName;
  }
  return forbidden(gr, name, reason);
}
