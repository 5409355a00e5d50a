/**
 * NamespaceAutoProvision: a create in a namespace that does not exist creates the namespace first
 * (upstream's autoprovision plugin; not for dry runs, not for namespaces themselves). It runs
 * before NamespaceLifecycle, which then finds the namespace.
 */
import {ApiError} from '../../../../api/status.js';
import {admissionForbidden} from '../errors.js';
import type {AdmissionAttributes, AdmissionObjects, AdmissionPlugin} from '../interfaces.js';
import {operations} from '../matching.js';

export class NamespaceAutoProvision implements AdmissionPlugin {
  readonly name = 'NamespaceAutoProvision';

  constructor(private readonly objects: AdmissionObjects) {}

  readonly handles = operations('CREATE');

  async admit(attributes: AdmissionAttributes): Promise<void> {
    if (attributes.dryRun || !attributes.namespace) return;
    if (attributes.resource.group === '' && attributes.resource.kind === 'Namespace') return;
    if (await this.objects.get('', 'namespaces', '', attributes.namespace)) return;
    try {
      await this.objects.create('', 'namespaces', '', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: attributes.namespace}});
    } catch (error) {
      // Another request created it meanwhile: fine.
      if (error instanceof ApiError && error.status.reason === 'AlreadyExists') return;
      throw admissionForbidden(attributes, error instanceof ApiError ? error : (error as Error).message);
    }
  }
}
