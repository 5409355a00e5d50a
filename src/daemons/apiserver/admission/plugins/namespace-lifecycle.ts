/**
 * NamespaceLifecycle: no new objects in a namespace that does not exist or is being terminated,
 * and the system namespaces cannot be deleted.
 */
import {names} from '../../../../api/names.js';
import {forbidden, notFound} from '../../../../api/status.js';
import type {JsonObject} from '../../../../patch/types.js';
import {stringAt} from '../../rest/objects.js';
import type {AdmissionAttributes, AdmissionPlugin} from '../interfaces.js';

/** The namespaces that can never be deleted (upstream: default, kube-system, kube-public). */
export const immortalNamespaces = (): string[] => ['default', names().namespaces.system, names().namespaces.public];

const NAMESPACES = {group: '', resource: 'namespaces'};

export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = 'NamespaceLifecycle';

  constructor(private readonly getNamespace: (name: string) => Promise<JsonObject | undefined>) {}

  async admit(attributes: AdmissionAttributes): Promise<void> {
    const {resource, operation} = attributes;
    const gr = {group: resource.group, resource: resource.plural};
    if (resource.kind === 'Namespace' && resource.group === '') {
      if (operation === 'DELETE' && immortalNamespaces().includes(attributes.name)) {
        throw forbidden(gr, attributes.name, 'this namespace may not be deleted');
      }
      return;
    }
    if (operation !== 'CREATE' || !resource.namespaced || !attributes.namespace) return;
    const namespace = await this.getNamespace(attributes.namespace);
    if (!namespace) throw notFound(NAMESPACES, attributes.namespace);
    if (stringAt(namespace, 'status', 'phase') === 'Terminating' || stringAt(namespace, 'metadata', 'deletionTimestamp')) {
      throw forbidden(gr, attributes.name, `unable to create new content in namespace ${attributes.namespace} because it is being terminated`);
    }
  }
}
