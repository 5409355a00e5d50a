/**
 * Legacy (unaggregated) discovery, as client-go falls back to it: `/api` and `/apis`, then every
 * group version's APIResourceList, fetched in parallel. The result is in priority order: the core
 * group first, then the groups as /apis lists them, each with its preferred version first.
 */
import {ApiStatusError} from './errors.js';
import type {ApiResourceList} from './resource-mapper.js';

interface ApiVersions {
  versions?: string[];
}

interface ApiGroupList {
  groups?: {
    name: string;
    versions?: {groupVersion: string; version: string}[];
    preferredVersion?: {groupVersion: string};
  }[];
}

/** Fetches one discovery document; rejects with ApiStatusError on an error status. */
export type DiscoveryGet = (path: string) => Promise<unknown>;

/** The group versions the server serves, in priority order. */
export async function discoverGroupVersions(get: DiscoveryGet): Promise<{path: string; groupVersion: string}[]> {
  const [core, groups] = await Promise.all([
    // A server without the core group answers 404 on /api, which client-go tolerates.
    get('/api').catch((error: unknown) => {
      if (error instanceof ApiStatusError && error.code === 404) return {versions: []};
      throw error;
    }) as Promise<ApiVersions>,
    get('/apis') as Promise<ApiGroupList>,
  ]);
  const result = (core.versions ?? []).map((v) => ({path: `/api/${v}`, groupVersion: v}));
  for (const group of groups.groups ?? []) {
    const versions = group.versions ?? [];
    const preferred = group.preferredVersion?.groupVersion;
    const ordered = [...versions.filter((v) => v.groupVersion === preferred), ...versions.filter((v) => v.groupVersion !== preferred)];
    for (const v of ordered) result.push({path: `/apis/${v.groupVersion}`, groupVersion: v.groupVersion});
  }
  return result;
}

/**
 * Every served resource list. A group version that fails to answer is left out, as client-go's
 * partial discovery does, so one broken aggregated group does not break every command.
 */
export async function discoverResources(get: DiscoveryGet): Promise<ApiResourceList[]> {
  const groupVersions = await discoverGroupVersions(get);
  const lists = await Promise.all(
    groupVersions.map(async ({path, groupVersion}) => {
      try {
        const list = (await get(path)) as Partial<ApiResourceList>;
        return {groupVersion, resources: list.resources ?? []};
      } catch {
        return undefined;
      }
    }),
  );
  return lists.filter((list): list is ApiResourceList => list !== undefined);
}
