/**
 * What most plugins ask first: which operations they look at (upstream's admission.NewHandler) and
 * whether a request is for one resource (upstream's GetResource().GroupResource() and GetSubresource()).
 */
import type {AdmissionAttributes, AdmissionOperation} from './interfaces.js';

/** A plugin's `handles`: true for the operations given. */
export function operations(...handled: AdmissionOperation[]): (operation: AdmissionOperation) => boolean {
  return (operation) => handled.includes(operation);
}

/** The request is on `group`/`plural` (and that subresource: '' for the resource itself). */
export function isResource(attributes: AdmissionAttributes, group: string, plural: string, subresource = ''): boolean {
  return attributes.resource.group === group && attributes.resource.plural === plural && attributes.subresource === subresource;
}
