/**
 * Where each resource lives in the store, shared by the watch cache and by
 * --kvstore-servers-overrides routing: the key prefix the REST layer writes the resource under
 * (its registry `storagePrefix`: nodes under `minions`, services under `services/specs`, ... as
 * upstream), or `<group>/<resource>` for resources the registry does not know (custom resources).
 */
import {BUILTIN_RESOURCES} from '../../api/resources.js';

const storagePrefixOf = new Map(BUILTIN_RESOURCES.map((r) => [`${r.group}/${r.plural}`, r.storagePrefix]));

export function resourceKeyPrefix(keyPrefix: string, group: string, resource: string): string {
  const known = storagePrefixOf.get(`${group}/${resource}`);
  return `${keyPrefix.replace(/\/+$/, '')}/${known ?? (group ? `${group}/${resource}` : resource)}/`;
}
