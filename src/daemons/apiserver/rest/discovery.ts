/**
 * Legacy (unaggregated) discovery documents, exactly as api-conventions.md §1 shows. kubectl asks
 * for aggregated discovery first; answering plain `application/json` makes it fall back to these.
 * Pure: the registry in, JSON documents out.
 */
import { createHash } from 'node:crypto';
import { groupVersionOf, type ResourceInfo, type ResourceRegistry } from '../../../api/resources.js';
import type { JsonObject } from '../../../patch/types.js';

/** Upstream's storageVersionHash: base64 of the first 8 bytes of sha256("group/version/kind"). */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

export interface ServerAddress {
  clientCIDR: string;
  serverAddress: string;
}

export function apiVersions(addresses: ServerAddress[]): JsonObject {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: addresses as unknown as JsonObject[] };
}

function apiResources(info: ResourceInfo): JsonObject[] {
  const main: JsonObject = {
    name: info.plural,
    singularName: info.singular,
    namespaced: info.namespaced,
    kind: info.kind,
    verbs: [...info.verbs],
  };
  if (info.shortNames?.length) main.shortNames = [...info.shortNames];
  if (info.categories?.length) main.categories = [...info.categories];
  // The hash names what is stored: the storage version's (HPA autoscaling/v1 hashes as v2); nothing for what is never stored.
  const stored = info.storageVersion ?? info;
  if (!info.rest) main.storageVersionHash = storageVersionHash(stored.group, stored.version, stored.kind);
  const subs = info.subresources.map((sub) => {
    const entry: JsonObject = { name: `${info.plural}/${sub.name}`, singularName: '', namespaced: info.namespaced };
    if (sub.group !== undefined) {
      entry.group = sub.group;
      entry.version = sub.version ?? 'v1';
    }
    entry.kind = sub.kind;
    entry.verbs = [...sub.verbs];
    return entry;
  });
  return [main, ...subs];
}

export function apiResourceList(registry: ResourceRegistry, group: string, version: string): JsonObject | undefined {
  const gv = registry.groupVersions().find((g) => g.group === group && g.version === version);
  if (!gv) return undefined;
  const resources = [...gv.resources].sort((a, b) => a.plural.localeCompare(b.plural)).flatMap(apiResources);
  const list: JsonObject = { kind: 'APIResourceList' };
  if (group !== '') list.apiVersion = 'v1';
  list.groupVersion = groupVersionOf({ group, version });
  list.resources = resources;
  return list;
}

function groupDocument(registry: ResourceRegistry, group: string): JsonObject | undefined {
  const versions = registry.groupVersions().filter((g) => g.group === group).map((g) => ({ groupVersion: `${group}/${g.version}`, version: g.version }));
  if (versions.length === 0) return undefined;
  return { name: group, versions, preferredVersion: versions[0]! };
}

export function apiGroupList(registry: ResourceRegistry): JsonObject {
  const groups: JsonObject[] = [];
  for (const gv of registry.groupVersions()) {
    if (gv.group === '' || groups.some((g) => g.name === gv.group)) continue;
    groups.push(groupDocument(registry, gv.group)!);
  }
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

export function apiGroup(registry: ResourceRegistry, group: string): JsonObject | undefined {
  const doc = groupDocument(registry, group);
  return doc && { kind: 'APIGroup', apiVersion: 'v1', ...doc };
}
