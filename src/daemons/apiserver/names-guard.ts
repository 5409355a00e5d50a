/**
 * One store, one name set. Objects keep the names they were written with (a Role stored as
 * `rbac.orch.io/v1` stays that), and the two sets share key prefixes, so serving a store under the
 * other set would mix both. The default `cluster-admin` ClusterRole, written by the first start,
 * tells which set created the store: a start with the other set is refused, naming both and the way
 * out, before anything is written.
 */
import {NAME_SET_IDS, nameSet, names, type NameSet} from '../../api/names.js';
import {builtinResource} from '../../api/resources.js';
import {ApiError} from '../../api/status.js';
import {RegistryStore} from './rest/registry-store.js';
import {AdmissionChain} from './admission/chain.js';
import {systemClock} from './rest/types.js';
import type {Store} from './storage/store.js';

export class NameSetMismatchError extends Error {
  constructor(readonly stored: string, readonly active: NameSet) {
    super(
      `this store was created with --names ${stored} (its default ClusterRole cluster-admin is ${nameSet(stored as never).groups.rbac}/v1), ` +
        `but the server was started with --names ${active.id}: start it with --names ${stored}, or give a new --data-dir (or --kvstore-prefix) for a cluster with ${active.id}'s names`,
    );
    this.name = 'NameSetMismatchError';
  }
}

/** The name set that wrote the store's `cluster-admin`, or undefined for a new store. */
export async function storedNameSet(store: Store, keyPrefix: string, n: NameSet = names()): Promise<string | undefined> {
  const info = builtinResource(n.groups.rbac, 'clusterroles', n);
  if (!info) return undefined;
  const registry = new RegistryStore(info, {store, clock: systemClock, keyPrefix, admission: new AdmissionChain([])});
  let role;
  try {
    role = await registry.get('', 'cluster-admin');
  } catch (error) {
    if (error instanceof ApiError && error.status.code === 404) return undefined;
    throw error;
  }
  const group = String(role.apiVersion ?? '').split('/')[0];
  return NAME_SET_IDS.find((id) => nameSet(id).groups.rbac === group);
}

/** Throws NameSetMismatchError when the store was created under another name set. */
export async function checkStoreNameSet(store: Store, keyPrefix: string, n: NameSet = names()): Promise<void> {
  const stored = await storedNameSet(store, keyPrefix, n);
  if (stored !== undefined && stored !== n.id) throw new NameSetMismatchError(stored, n);
}
