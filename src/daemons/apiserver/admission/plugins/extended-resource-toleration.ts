/**
 * ExtendedResourceToleration: a pod requesting an extended resource (`example.com/gpu`) tolerates
 * the NoSchedule taint of that name, so nodes with such devices can be tainted to keep other pods
 * off (upstream's extendedresourcetoleration).
 */
import {names} from '../../../../api/names.js';
import {isJsonObject, type JsonObject} from '../../../../patch/types.js';
import type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin} from '../interfaces.js';
import {addOrUpdateToleration, containersOf, podProper, specOf} from './pod-helpers.js';

// A qualified name: an optional DNS-subdomain prefix, then a name of alphanumerics, '-', '_', '.'.
const QUALIFIED_NAME = /^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/**
 * Upstream's IsExtendedResourceName: a name with a domain that is not the native one (`<labelDomain>/`
 * anywhere in it), not a quota `requests.` name, and a valid qualified name once prefixed by `requests.`.
 */
export function isExtendedResourceName(name: string): boolean {
  const native = !name.includes('/') || name.includes(`${names().labelDomain}/`);
  if (native || name.startsWith('requests.')) return false;
  return QUALIFIED_NAME.test(`requests.${name}`) && name.split('/')[0]!.length <= 253 - 'requests.'.length;
}

/** The extended resources the pod's containers and init containers request, sorted. */
export function extendedResourcesOf(pod: JsonObject): string[] {
  const found = new Set<string>();
  for (const {container} of containersOf(specOf(pod), ['containers', 'initContainers'])) {
    const requests = isJsonObject(container.resources) && isJsonObject(container.resources.requests) ? container.resources.requests : {};
    for (const name of Object.keys(requests)) if (isExtendedResourceName(name)) found.add(name);
  }
  return [...found].sort();
}

export class ExtendedResourceToleration implements AdmissionPlugin {
  readonly name = 'ExtendedResourceToleration';

  handles(operation: AdmissionOperation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  admit(attributes: AdmissionAttributes): void {
    const pod = podProper(attributes);
    if (!pod) return;
    const spec = specOf(pod);
    for (const resource of extendedResourcesOf(pod)) addOrUpdateToleration(spec, {key: resource, operator: 'Exists', effect: 'NoSchedule'});
  }
}
