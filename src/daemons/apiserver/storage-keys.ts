/**
 * Where each resource lives in the store, shared by the watch cache and by
 * --kvstore-servers-overrides routing: the key prefix the REST layer writes the resource under
 * (its registry `storagePrefix`: nodes under `minions`, services under `services/specs`, ... as
 * upstream), or `<group>/<resource>` for resources the registry does not know (custom resources).
 */
import {builtinResources} from '../../api/resources.js';
import {names, type NameSetId} from '../../api/names.js';

const storagePrefixes = new Map<NameSetId, Map<string, string>>();

/** The built-ins' storage prefixes by `<group>/<plural>`, per name set (groups differ between sets). */
function storagePrefixOf(): Map<string, string> {
  const n = names();
  let map = storagePrefixes.get(n.id);
  if (!map) {
    map = new Map(builtinResources(n).map((r) => [`${r.group}/${r.plural}`, r.storagePrefix]));
    storagePrefixes.set(n.id, map);
  }
  return map;
}

export function resourceKeyPrefix(keyPrefix: string, group: string, resource: string): string {
  const known = storagePrefixOf().get(`${group}/${resource}`);
  return `${keyPrefix.replace(/\/+$/, '')}/${known ?? (group ? `${group}/${resource}` : resource)}/`;
}
