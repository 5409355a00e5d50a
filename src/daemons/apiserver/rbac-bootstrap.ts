/**
 * The `rbac/bootstrap-roles` post-start hook and the RBAC informer: the default cluster roles and
 * bindings are written through the same registry as any API write (idempotently), and the RBAC
 * authorizer reads roles and bindings from an index fed by the store's watch.
 */
import {RegistryStore} from './rest/registry-store.js';
import {AdmissionChain} from './rest/admission.js';
import {builtinResource, type ResourceInfo} from '../../api/resources.js';
import {names} from '../../api/names.js';
import {ApiError} from '../../api/status.js';
import {systemClock} from './rest/types.js';
import {bootstrapClusterRoleBindings, bootstrapClusterRoles} from './auth/bootstrap-policy.js';
import {RbacPolicyIndex} from './auth/rbac.js';
import type {RbacObject} from './auth/rbac-types.js';
import type {Store, WatchHandle} from './storage/store.js';
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
  private watches: WatchHandle[] = [];
  private stopped = false;
  private syncedPrefixes = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly keyPrefix: string,
    private readonly onError: (error: Error) => void,
  ) {}

  get synced(): boolean {
    return this.syncedPrefixes.size === RBAC_PREFIXES.length;
  }

  async start(): Promise<void> {
    await Promise.all(RBAC_PREFIXES.map((p) => this.run(`${this.keyPrefix}/${p}/`)));
  }

  private async run(prefix: string): Promise<void> {
    while (!this.stopped) {
      try {
        const list = await this.store.list(prefix);
        for (const item of list.items) this.index.apply(JSON.parse(item.value) as RbacObject);
        this.syncedPrefixes.add(prefix);
        await new Promise<void>((resolve) => {
          const handle = this.store.watch(
            prefix,
            list.revision,
            (event) => {
              if (event.type === 'PUT' && event.value) this.index.apply(JSON.parse(event.value) as RbacObject);
              else if (event.type === 'DELETE' && event.prevValue) this.index.remove(JSON.parse(event.prevValue) as RbacObject);
            },
            (error) => {
              this.onError(error);
              resolve();
            },
          );
          this.watches.push(handle);
        });
      } catch (error) {
        this.onError(error as Error);
      }
      // Relist after a failed list or an ended watch, with a short pause so a down store is not hammered.
      if (!this.stopped) await new Promise((r) => setTimeout(r, 1000).unref());
    }
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watches) w.close();
  }
}
