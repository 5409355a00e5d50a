/**
 * Parsers for the storage options whose values carry structure. The option rules (src/options/rules.ts)
 * already rejected malformed entries; these turn valid ones into data.
 */

export interface ServersOverride {
  /** The API group, empty for the core group. */
  group: string;
  resource: string;
  servers: string[];
}

/** `--kvstore-servers-overrides` entries: `group/resource#server;server` (`/events#http://h:2379`). */
export function parseServersOverrides(entries: readonly string[]): ServersOverride[] {
  return entries.map((entry) => {
    const hash = entry.indexOf('#');
    const slash = entry.indexOf('/');
    if (hash < 0 || slash < 0 || slash > hash) throw new Error(`invalid --kvstore-servers-overrides entry ${JSON.stringify(entry)}`);
    const servers = entry.slice(hash + 1).split(';').filter((s) => s !== '');
    return {group: entry.slice(0, slash), resource: entry.slice(slash + 1, hash), servers};
  });
}

/**
 * `--watch-cache-sizes` entries: `resource[.group]#size`, as a map from `resource[.group]` to the size.
 * Upstream only honours 0 (no cache for that resource); any other size keeps the default.
 */
export function parseWatchCacheSizes(entries: readonly string[]): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const entry of entries) {
    const hash = entry.lastIndexOf('#');
    const size = Number(entry.slice(hash + 1));
    if (hash <= 0 || !Number.isInteger(size) || size < 0) throw new Error(`invalid --watch-cache-sizes entry ${JSON.stringify(entry)}`);
    sizes.set(entry.slice(0, hash), size);
  }
  return sizes;
}

/** The `resource[.group]` spelling of `--watch-cache-sizes` (the core group has none). */
export function qualifiedResource(group: string, resource: string): string {
  return group ? `${resource}.${group}` : resource;
}

/**
 * Where a resource's objects live under the kvstore prefix, upstream's layout for built-in resources:
 * `/registry/<resource>/` whatever the group (`/registry/deployments/`). Custom resources use
 * `/registry/<group>/<resource>/`; callers pass their own mapping for those.
 */
export function defaultKeyPrefix(kvstorePrefix: string, _group: string, resource: string): string {
  return `${kvstorePrefix.replace(/\/+$/, '')}/${resource}/`;
}

/**
 * `--storage-backend`: upstream knows one backend, `etcd3` (the etcd v3 API); orch names it `kvstore3`.
 * Both engines speak that API's semantics (the embedded SQLite store, or etcd when --kvstore-servers
 * is given), so the value is checked here and the engine follows from the servers.
 */
export const STORAGE_BACKENDS = ['kvstore3'];

export function checkStorageBackend(value: string | undefined): void {
  if (value === undefined || value === '' || STORAGE_BACKENDS.includes(value)) return;
  throw new Error(`--storage-backend invalid, allowed values: ${STORAGE_BACKENDS.join(', ')}. If not specified, it will default to '${STORAGE_BACKENDS[0]}' (got ${JSON.stringify(value)})`);
}
