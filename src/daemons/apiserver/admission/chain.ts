/**
 * The admission chain: every plugin's mutating step in order, then every validating step, as
 * upstream runs them around the registry's own defaulting and validation. NamespaceLifecycle is
 * the first plugin; more plugins slot in through `AdmissionChain`'s constructor.
 */
import { names } from '../../../api/names.js';
import type { ResourceInfo } from '../../../api/resources.js';
import { forbidden, notFound } from '../../../api/status.js';
import type { JsonObject } from '../../../patch/types.js';
import { stringAt } from '../rest/objects.js';
import type { UserInfo } from '../rest/types.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface AdmissionAttributes {
  operation: AdmissionOperation;
  resource: ResourceInfo;
  subresource: string;
  namespace: string;
  name: string;
  /** The object being written (CREATE, UPDATE); plugins in the mutating phase may change it. */
  object?: JsonObject;
  oldObject?: JsonObject;
  user: UserInfo;
  dryRun: boolean;
}

export interface AdmissionPlugin {
  readonly name: string;
  /** Mutating phase: may change `attributes.object`; throws an ApiError to reject. */
  admit?(attributes: AdmissionAttributes): void | Promise<void>;
  /** Validating phase: may only reject (throw an ApiError). */
  validate?(attributes: AdmissionAttributes): void | Promise<void>;
}

export class AdmissionChain {
  constructor(readonly plugins: readonly AdmissionPlugin[]) {}

  async admit(attributes: AdmissionAttributes): Promise<void> {
    for (const plugin of this.plugins) await plugin.admit?.(attributes);
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    for (const plugin of this.plugins) await plugin.validate?.(attributes);
  }
}

/** The namespaces that can never be deleted (upstream: default, kube-system, kube-public). */
export const immortalNamespaces = (): string[] => ['default', names().namespaces.system, names().namespaces.public];

const NAMESPACES = { group: '', resource: 'namespaces' };

/**
 * NamespaceLifecycle: no new objects in a namespace that does not exist or is being terminated,
 * and the system namespaces cannot be deleted.
 */
export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = 'NamespaceLifecycle';

  constructor(private readonly getNamespace: (name: string) => Promise<JsonObject | undefined>) {}

  async admit(attributes: AdmissionAttributes): Promise<void> {
    const { resource, operation } = attributes;
    const gr = { group: resource.group, resource: resource.plural };
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
