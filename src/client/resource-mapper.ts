/**
 * TYPE arguments to REST resources, as kubectl's RESTMapper (DeferredDiscoveryRESTMapper wrapped in
 * its shortcut expander) maps them from discovery: plural (`pods`), singular (`pod`), short name
 * (`po`), Kind (`Pod`), with a group (`deployment.apps`, `deploy.apps`), or fully specified
 * (`deployments.v1.apps`); and an object's apiVersion/kind to its resource (for `-f FILE`).
 * Pure: built from the discovered APIResourceLists, in the server's priority order (core group
 * first, then the groups in /apis order, preferred version first), which decides ties such as a
 * resource name served by two groups.
 */
import {NoResourceMatchError} from './error-text.js';

/** One entry of an APIResourceList (api-conventions §1.2). */
export interface ApiResource {
  name: string;
  singularName?: string;
  namespaced: boolean;
  kind: string;
  group?: string;
  version?: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
}

export interface ApiResourceList {
  groupVersion: string;
  resources: ApiResource[];
}

/** A resource as requests address it. */
export interface ResourceMapping {
  group: string;
  version: string;
  /** The plural name used in URLs: `pods`. */
  resource: string;
  kind: string;
  namespaced: boolean;
}

interface Entry extends ResourceMapping {
  singular: string;
  shortNames: string[];
}

/** `apps/v1` -> {group: apps, version: v1}; `v1` -> the core group. */
export function parseGroupVersion(groupVersion: string): {group: string; version: string} {
  const slash = groupVersion.indexOf('/');
  return slash < 0 ? {group: '', version: groupVersion} : {group: groupVersion.slice(0, slash), version: groupVersion.slice(slash + 1)};
}

/** `pods` or `deployments.apps`: how kubectl and the API server name a resource in messages. */
export function qualifiedResource(mapping: Pick<ResourceMapping, 'group' | 'resource'>): string {
  return mapping.group ? `${mapping.resource}.${mapping.group}` : mapping.resource;
}

export class ResourceMapper {
  private readonly entries: Entry[] = [];

  /** `lists` in priority order. Subresources (`pods/status`) are not TYPE arguments and are skipped. */
  constructor(lists: readonly ApiResourceList[]) {
    for (const list of lists) {
      const {group, version} = parseGroupVersion(list.groupVersion);
      for (const r of list.resources) {
        if (r.name.includes('/')) continue;
        this.entries.push({
          group,
          version,
          resource: r.name,
          kind: r.kind,
          namespaced: r.namespaced,
          singular: (r.singularName || r.kind).toLowerCase(),
          shortNames: r.shortNames ?? [],
        });
      }
    }
  }

  get resources(): readonly ResourceMapping[] {
    return this.entries.map(({group, version, resource, kind, namespaced}) => ({group, version, resource, kind, namespaced}));
  }

  /**
   * The resource a TYPE argument names; throws NoResourceMatchError (kubectl's
   * `the server doesn't have a resource type "x"`) when nothing matches.
   */
  resourceFor(arg: string): ResourceMapping {
    const parts = arg.split('.');
    // `resource.version.group` (three or more parts) is tried as fully specified first.
    if (parts.length >= 3) {
      const [resource, version] = parts;
      const group = parts.slice(2).join('.');
      const found = this.byName(resource.toLowerCase(), group, version);
      if (found) return strip(found);
    }
    const dot = arg.indexOf('.');
    const resource = (dot < 0 ? arg : arg.slice(0, dot)).toLowerCase();
    const group = dot < 0 ? '' : arg.slice(dot + 1);
    const found =
      this.byName(resource, group) ??
      this.byShortName(resource, group) ??
      this.byKind(dot < 0 ? arg : arg.slice(0, dot), group) ??
      // As kubectl's shortcut expander does, a group may be given by its prefix (`deploy.app`).
      (group ? this.byName(resource, group, undefined, true) ?? this.byShortName(resource, group, true) : undefined);
    if (!found) throw new NoResourceMatchError(resource);
    return strip(found);
  }

  /** The resource serving objects of `apiVersion`/`kind`, or undefined (kubectl's NoKindMatch). */
  resourceForKind(apiVersion: string, kind: string): ResourceMapping | undefined {
    const {group, version} = parseGroupVersion(apiVersion);
    const found = this.entries.find((e) => e.group === group && e.version === version && e.kind === kind);
    return found && strip(found);
  }

  private groupMatches(entry: Entry, group: string, prefix: boolean): boolean {
    if (group === '') return true;
    return prefix ? entry.group.startsWith(group) : entry.group === group;
  }

  private byName(name: string, group: string, version?: string, prefix = false): Entry | undefined {
    return this.entries.find(
      (e) => (e.resource === name || e.singular === name) && this.groupMatches(e, group, prefix) && (version === undefined || e.version === version),
    );
  }

  private byShortName(name: string, group: string, prefix = false): Entry | undefined {
    return this.entries.find((e) => e.shortNames.includes(name) && this.groupMatches(e, group, prefix));
  }

  private byKind(kind: string, group: string): Entry | undefined {
    return this.entries.find((e) => e.kind === kind && this.groupMatches(e, group, false));
  }
}

function strip({group, version, resource, kind, namespaced}: Entry): ResourceMapping {
  return {group, version, resource, kind, namespaced};
}

/**
 * The URL path of a collection, an object or an object's subresource (api-conventions §2).
 * `namespace` is ignored for cluster-scoped resources.
 */
export function resourcePath(mapping: ResourceMapping, target: {namespace?: string; name?: string; subresource?: string} = {}): string {
  const base = mapping.group === '' ? `/api/${mapping.version}` : `/apis/${mapping.group}/${mapping.version}`;
  let path = base;
  if (mapping.namespaced && target.namespace) path += `/namespaces/${encodeURIComponent(target.namespace)}`;
  path += `/${mapping.resource}`;
  if (target.name !== undefined) {
    path += `/${encodeURIComponent(target.name)}`;
    if (target.subresource) path += `/${encodeURIComponent(target.subresource)}`;
  }
  return path;
}
