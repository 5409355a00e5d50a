/**
 * AdmissionObjects over the server's own registries (rest/registry-store.ts): reads and writes in
 * the preferred served version of a resource, as upstream's plugins do through their informers
 * and the loopback client. Writes are the API server's own (`system:apiserver`), going through
 * validation and admission like any other write.
 */
import {names} from '../../../api/names.js';
import type {ResourceInfo, ResourceRegistry} from '../../../api/resources.js';
import {ApiError} from '../../../api/status.js';
import type {JsonObject} from '../../../patch/types.js';
import type {RegistryStore, WriteContext} from '../rest/registry-store.js';
import {stringAt} from '../rest/objects.js';
import type {AdmissionObjects} from './interfaces.js';
import {DecodedObjects} from './decoded-objects.js';
import type {Store} from '../storage/store.js';

/** The identity of the API server's own writes (upstream's loopback client user). */
export const API_SERVER_USER = {name: 'system:apiserver', groups: ['system:authenticated', 'system:masters']};

/** The served version a plugin reads a resource in: the group's preferred one when it serves the resource, else the first that does. */
export function preferredResource(registry: ResourceRegistry, group: string, resource: string): ResourceInfo | undefined {
  const preferred = registry.preferredVersion(group);
  const found = preferred !== undefined ? registry.lookup(group, preferred, resource) : undefined;
  if (found) return found;
  for (const gv of registry.groupVersions()) {
    if (gv.group !== group) continue;
    const info = registry.lookup(group, gv.version, resource);
    if (info) return info;
  }
  return undefined;
}

const ALL = {labelSelector: [], fieldSelector: [], limit: 0, allowWatchBookmarks: false};

/**
 * `store`, the registries' own store: reads then go to it directly and reuse the objects decoded
 * at the same revision (decoded-objects.ts); without it every read decodes through the registry.
 * The objects read may then be shared between requests, and are frozen.
 */
export function registryObjects(registry: ResourceRegistry, registryFor: (info: ResourceInfo) => RegistryStore, store?: Store): AdmissionObjects {
  const decoded = store ? new DecodedObjects(store) : undefined;
  // Finding the preferred version walks every served group version: remembered per resource, and
  // looked up again only when the registry no longer serves what was remembered (a CRD changed).
  const preferred = new Map<string, ResourceInfo>();
  const storeOf = (group: string, resource: string): RegistryStore => {
    const key = `${group}/${resource}`;
    let info = preferred.get(key);
    if (!info || registry.lookup(info.group, info.version, info.plural) !== info) {
      info = preferredResource(registry, group, resource);
      if (!info) throw new Error(`admission: the resource ${resource}${group ? `.${group}` : ''} is not served`);
      preferred.set(key, info);
    }
    return registryFor(info);
  };
  const writeContext = (subresource = ''): WriteContext => ({
    user: API_SERVER_USER, dryRun: false, fieldManager: `${names().product}-apiserver`, subresource,
  });
  return {
    // Not async: a read the store answers from memory resolves without further hops.
    get(group, resource, namespace, name) {
      let registryStore: RegistryStore;
      try {
        registryStore = storeOf(group, resource);
      } catch (error) {
        return Promise.reject(error);
      }
      if (decoded?.handles(registryStore)) {
        const hit = decoded.peek(registryStore, namespace, name);
        return hit ? Promise.resolve(hit.object) : decoded.get(registryStore, namespace, name);
      }
      return registryStore.get(namespace, name).catch((error: unknown) => {
        if (error instanceof ApiError && error.status.code === 404) return undefined;
        throw error;
      });
    },
    list(group, resource, namespace = '') {
      let registryStore: RegistryStore;
      try {
        registryStore = storeOf(group, resource);
      } catch (error) {
        return Promise.reject(error);
      }
      if (decoded?.handles(registryStore)) {
        const items = decoded.peekList(registryStore, namespace);
        return items ? Promise.resolve(items) : decoded.list(registryStore, namespace);
      }
      return registryStore.list(namespace, ALL).then((r) => r.items);
    },
    create(group, resource, namespace, object) {
      return storeOf(group, resource).create(namespace, object, writeContext());
    },
    async update(group, resource, namespace, object: JsonObject, subresource) {
      const name = stringAt(object, 'metadata', 'name') ?? '';
      return (await storeOf(group, resource).replace(namespace, name, object, writeContext(subresource))).object;
    },
  };
}
