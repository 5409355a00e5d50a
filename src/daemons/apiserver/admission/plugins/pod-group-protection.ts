/**
 * PodGroupProtection: a new PodGroup (scheduling group) gets the `<scheduling group>/podgroup-
 * protection` finalizer, which the podgroup protection controller removes once no pod uses it, as
 * upstream's podgroupprotection plugin. orch does not serve PodGroups (upstream serves them only
 * with the GenericWorkload feature gate, off by default), so no write reaches this plugin yet.
 */
import {names} from '../../../../api/names.js';
import type {AdmissionAttributes, AdmissionPlugin} from '../interfaces.js';
import {isResource, operations} from '../matching.js';
import {withFinalizer} from './storage-object-in-use-protection.js';

export const podGroupProtectionFinalizer = (): string => `${names().groups.scheduling}/podgroup-protection`;

export class PodGroupProtection implements AdmissionPlugin {
  readonly name = 'PodGroupProtection';

  readonly handles = operations('CREATE');

  admit(attributes: AdmissionAttributes): void {
    const {object} = attributes;
    if (!isResource(attributes, names().groups.scheduling, 'podgroups') || !object) return;
    withFinalizer(object, podGroupProtectionFinalizer());
  }
}
