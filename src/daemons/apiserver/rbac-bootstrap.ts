/**
 * The `rbac/bootstrap-roles` post-start hook and the RBAC informer: the default cluster roles and
 * bindings are written through the same registry as any API write (idempotently), and the RBAC
 * authorizer reads roles and bindings from an index fed by the store's watch.
 */
import {RegistryStore} from './rest/registry-store.js';
import {AdmissionChain} from './admission/chain.js';
import {builtinResource, type ResourceInfo} from '../../api/resources.js';
import {names} from '../../api/names.js';
import {ApiError} from '../../api/status.js';
import {systemClock} from './rest/types.js';
import {bootstrapClusterRoleBindings, bootstrapClusterRoles} from './authorization/bootstrap-policy.js';
import {RbacPolicyIndex} from './authorization/rbac.js';
import type {RbacObject} from './authorization/rbac-types.js';
import type {Store} from './storage/store.js';
import {StoreInformer} from './store-informer.js';
import type {JsonObject} from '../../patch/types.js';

const SYSTEM_WRITE = {user: {name: 'system:apiserver', groups: ['system:masters']}, dryRun: false, fieldManager: 'orch-apiserver'};

function registryFor(store: Store, plural: string, keyPrefix: string): RegistryStore {
  const info = builtinResource(names().groups.rbac, plural) as ResourceInfo;
  return new RegistryStore(info, {store, clock: systemClock, keyPrefix, admission: new AdmissionChain([])});
}

export async function bootstrapRbac(store: Store, keyPrefix: string): Promise<{created: number}> {
  let created = 0;
  const write = async (registry: RegistryStore, object: unknown) => {
    try {
      await registry.create('', object as JsonObject, SYSTEM_WRITE);
      created++;
    } catch (error) {
      if (!(error instanceof ApiError && error.status.reason === 'AlreadyExists')) throw error;
    }
  };
  const roles = registryFor(store, 'clusterroles', keyPrefix);
  for (const role of bootstrapClusterRoles()) await write(roles, role);
  const bindings = registryFor(store, 'clusterrolebindings', keyPrefix);
  for (const binding of bootstrapClusterRoleBindings()) await write(bindings, binding);
  return {created};
}

const RBAC_PREFIXES = ['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings'];

/** Keeps an RbacPolicyIndex in step with the store: list, then watch from the list's revision. */
export class RbacInformer {
  readonly index = new RbacPolicyIndex();
  private readonly informer: StoreInformer;

  constructor(store: Store, keyPrefix: string, onError: (error: Error) => void) {
    const handlers = {
      apply: (object: Record<string, unknown>) => this.index.apply(object as unknown as RbacObject),
      remove: (object: Record<string, unknown>) => this.index.remove(object as unknown as RbacObject),
    };
    this.informer = new StoreInformer(store, new Map(RBAC_PREFIXES.map((p) => [`${keyPrefix}/${p}/`, handlers])), onError);
  }

  get synced(): boolean {
    return this.informer.synced;
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  stop(): void {
    this.informer.stop();
  }
}
