/**
 * DenyServiceExternalIPs: no Service may gain spec.externalIPs; an update may keep or drop the
 * ones it had (upstream's denyserviceexternalips plugin).
 */
import type {JsonObject} from '../../../../patch/types.js';
import {valueAt} from '../../rest/objects.js';
import {admissionForbidden} from '../errors.js';
import type {AdmissionAttributes, AdmissionPlugin} from '../interfaces.js';
import {isResource, operations} from '../matching.js';

const externalIPs = (service: JsonObject | undefined): string[] => {
  const ips = service && valueAt(service, 'spec', 'externalIPs');
  return Array.isArray(ips) ? ips.filter((ip): ip is string => typeof ip === 'string') : [];
};

/** Upstream's isSubset: every external IP of the new service was on the old one. */
export function externalIPsAllowed(service: JsonObject, old: JsonObject | undefined): boolean {
  const wanted = externalIPs(service);
  if (wanted.length === 0) return true;
  if (!old) return false;
  const had = new Set(externalIPs(old));
  return wanted.every((ip) => had.has(ip));
}

export class DenyServiceExternalIPs implements AdmissionPlugin {
  readonly name = 'DenyServiceExternalIPs';

  readonly handles = operations('CREATE', 'UPDATE');

  validate(attributes: AdmissionAttributes): void {
    const {object} = attributes;
    if (!isResource(attributes, '', 'services') || !object) return;
    if (!externalIPsAllowed(object, attributes.oldObject)) throw admissionForbidden(attributes, 'Use of external IPs is denied by admission control');
  }
}
