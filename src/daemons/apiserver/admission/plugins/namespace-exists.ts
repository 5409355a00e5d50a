/**
 * NamespaceExists: refuses creates, updates and deletes in a namespace that does not exist, with
 * the namespace's NotFound (upstream's exists plugin, a validating one).
 */
import {notFound} from '../../../../api/status.js';
import type {AdmissionAttributes, AdmissionObjects, AdmissionPlugin} from '../interfaces.js';
import {operations} from '../matching.js';

export class NamespaceExists implements AdmissionPlugin {
  readonly name = 'NamespaceExists';

  constructor(private readonly objects: AdmissionObjects) {}

  readonly handles = operations('CREATE', 'UPDATE', 'DELETE');

  async validate(attributes: AdmissionAttributes): Promise<void> {
    if (!attributes.namespace) return;
    if (attributes.resource.group === '' && attributes.resource.kind === 'Namespace') return;
    if (await this.objects.get('', 'namespaces', '', attributes.namespace)) return;
    throw notFound({group: '', resource: 'namespaces'}, attributes.namespace);
  }
}
