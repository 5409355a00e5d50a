/**
 * The resource registry: every resource the API server serves, as data (group, version, kind,
 * names, scope, verbs, subresources), in upstream's shapes with the group names of the active
 * name set (src/api/names.ts). Custom resources join at run time through `ResourceRegistry.setCustom`
 * when their CRD is established.
 *
 * The catalog is a function of the name set, computed on first use and memoized per name-set id
 * (never at import time: `--names` is selected after modules load). Groups beyond the ones below
 * live in src/api/resource-catalog/, one file a group, each a `(n: NameSet) => ResourceInfo[]`
 * listed in `catalog()`.
 */
import {names, type NameSet, type NameSetId} from './names.js';
import {catalogResources, withCoreSubresources} from './resource-catalog/index.js';

export type Verb = 'create' | 'delete' | 'deletecollection' | 'get' | 'list' | 'patch' | 'update' | 'watch';

export const ALL_VERBS: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export interface SubresourceInfo {
  /** `status`, `scale`, `binding`, `finalize`. */
  name: string;
  kind: string;
  /** Set when the subresource's kind lives in another group (scale: autoscaling/v1). */
  group?: string;
  version?: string;
  verbs: Verb[];
}

export interface ResourceInfo {
  group: string;
  version: string;
  kind: string;
  /** Plural, the URL segment. */
  plural: string;
  singular: string;
  namespaced: boolean;
  verbs: Verb[];
  shortNames?: string[];
  categories?: string[];
  subresources: SubresourceInfo[];
  /** Key prefix below the kvstore prefix, without slashes at the ends (`pods`, `services/specs`). */
  storagePrefix: string;
  /** Served from a CustomResourceDefinition. */
  custom?: boolean;
  /** A custom resource version's `schema.openAPIV3Schema` (list types and map keys for server-side apply). */
  openAPIV3Schema?: { [key: string]: unknown };
  /**
   * The group/version/kind objects are stored as when it is not this one (HPA autoscaling/v1 is
   * stored as autoscaling/v2, events.k8s.io Events as core v1 Events): reads convert from it,
   * writes convert to it (src/daemons/apiserver/rest/conversion.ts).
   */
  storageVersion?: {group: string; version: string; kind: string};
  /**
   * Not stored: `review` resources answer a create at once (access and token reviews),
   * `computed` ones are worked out on each read (componentstatuses).
   */
  rest?: 'review' | 'computed';
}

export const statusSub = (kind: string): SubresourceInfo => ({ name: 'status', kind, verbs: ['get', 'patch', 'update'] });
export const scaleSub = (): SubresourceInfo => ({ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] });

export interface ResourceSpec {
  kind: string;
  plural: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  status?: boolean;
  scale?: boolean;
  extraSubresources?: SubresourceInfo[];
  verbs?: Verb[];
  /** Key prefix below the kvstore prefix; without it, orch's rule (`<group>/<plural>` for dotted groups). */
  storagePrefix?: string;
  storageVersion?: ResourceInfo['storageVersion'];
  rest?: ResourceInfo['rest'];
}

/** The resources of one group version, from their specs (the resource catalog files build on it). */
export function defineResources(group: string, version: string, specs: ResourceSpec[]): ResourceInfo[] {
  return specs.map((s) => {
    const info: ResourceInfo = {
      group,
      version,
      kind: s.kind,
      plural: s.plural,
      singular: s.kind.toLowerCase(),
      namespaced: s.namespaced,
      verbs: [...(s.verbs ?? ALL_VERBS)],
      shortNames: s.shortNames,
      categories: s.categories,
      subresources: [...(s.status ? [statusSub(s.kind)] : []), ...(s.scale ? [scaleSub()] : []), ...(s.extraSubresources ?? [])],
      storagePrefix: s.storagePrefix ?? (group === '' || !group.includes('.') ? s.plural : `${group}/${s.plural}`),
    };
    if (s.storageVersion) info.storageVersion = s.storageVersion;
    if (s.rest) info.rest = s.rest;
    return info;
  });
}

const resources = defineResources;
const all = ['all'];

/**
 * The built-in resources of a name set, in discovery order (groups in the order they first
 * appear here are the order of `/apis`); the groups of src/api/resource-catalog/ follow.
 */
const catalog = (n: NameSet): ResourceInfo[] => withCoreSubresources([
  ...resources('', 'v1', [
    { kind: 'ConfigMap', plural: 'configmaps', namespaced: true, shortNames: ['cm'] },
    { kind: 'Endpoints', plural: 'endpoints', namespaced: true, shortNames: ['ep'], storagePrefix: 'services/endpoints' },
    { kind: 'Event', plural: 'events', namespaced: true, shortNames: ['ev'] },
    {
      kind: 'Namespace', plural: 'namespaces', namespaced: false, shortNames: ['ns'], status: true,
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      extraSubresources: [{ name: 'finalize', kind: 'Namespace', verbs: ['update'] }],
    },
    { kind: 'Node', plural: 'nodes', namespaced: false, shortNames: ['no'], status: true, storagePrefix: 'minions' },
    {
      kind: 'Pod', plural: 'pods', namespaced: true, shortNames: ['po'], categories: all, status: true,
      extraSubresources: [{ name: 'binding', kind: 'Binding', verbs: ['create'] }],
    },
    {
      kind: 'ReplicationController', plural: 'replicationcontrollers', namespaced: true, shortNames: ['rc'], categories: all,
      status: true, scale: true, storagePrefix: 'controllers',
    },
    { kind: 'Secret', plural: 'secrets', namespaced: true },
    { kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true, shortNames: ['sa'] },
    {
      kind: 'Service', plural: 'services', namespaced: true, shortNames: ['svc'], categories: all, status: true,
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'], storagePrefix: 'services/specs',
    },
  ]),
  ...resources('apps', 'v1', [
    { kind: 'DaemonSet', plural: 'daemonsets', namespaced: true, shortNames: ['ds'], categories: all, status: true },
    { kind: 'Deployment', plural: 'deployments', namespaced: true, shortNames: ['deploy'], categories: all, status: true, scale: true },
    { kind: 'ReplicaSet', plural: 'replicasets', namespaced: true, shortNames: ['rs'], categories: all, status: true, scale: true },
    { kind: 'StatefulSet', plural: 'statefulsets', namespaced: true, shortNames: ['sts'], categories: all, status: true, scale: true },
  ]),
  ...resources('batch', 'v1', [
    { kind: 'CronJob', plural: 'cronjobs', namespaced: true, shortNames: ['cj'], categories: all, status: true },
    { kind: 'Job', plural: 'jobs', namespaced: true, categories: all, status: true },
  ]),
  ...resources(n.groups.coordination, 'v1', [{ kind: 'Lease', plural: 'leases', namespaced: true, storagePrefix: 'leases' }]),
  ...resources(n.groups.rbac, 'v1', [
    { kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false, storagePrefix: 'clusterrolebindings' },
    { kind: 'ClusterRole', plural: 'clusterroles', namespaced: false, storagePrefix: 'clusterroles' },
    { kind: 'RoleBinding', plural: 'rolebindings', namespaced: true, storagePrefix: 'rolebindings' },
    { kind: 'Role', plural: 'roles', namespaced: true, storagePrefix: 'roles' },
  ]),
  ...resources(n.groups.scheduling, 'v1', [
    { kind: 'PriorityClass', plural: 'priorityclasses', namespaced: false, shortNames: ['pc'], storagePrefix: 'priorityclasses' },
  ]),
  // Written by the endpointslice controller; upstream serves no short name for it.
  ...resources(n.groups.discovery, 'v1', [{ kind: 'EndpointSlice', plural: 'endpointslices', namespaced: true, storagePrefix: 'endpointslices' }]),
  ...resources(n.groups.apiextensions, 'v1', [
    {
      kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', namespaced: false, shortNames: ['crd', 'crds'],
      categories: ['api-extensions'], status: true, storagePrefix: `${n.groups.apiextensions}/customresourcedefinitions`,
    },
  ]),
  ...catalogResources(n),
], n);

const memo = new Map<NameSetId, {resources: readonly ResourceInfo[]; groupOrder: readonly string[]}>();

function catalogOf(n: NameSet) {
  let entry = memo.get(n.id);
  if (!entry) {
    const list = catalog(n);
    // The first groups in the order they are listed above, then the resource catalog's groups by name.
    const fromCatalog = catalogResources(n);
    const catalogGroups = new Set(fromCatalog.map((r) => r.group).filter((g) => g !== ''));
    const first = [...new Set(list.slice(0, list.length - fromCatalog.length).map((r) => r.group).filter((g) => g !== ''))];
    const groupOrder = [...first, ...[...catalogGroups].filter((g) => !first.includes(g)).sort()];
    entry = {resources: Object.freeze(list), groupOrder};
    memo.set(n.id, entry);
  }
  return entry;
}

/** The built-in resources of the active name set (or of `n`), in discovery order. */
export function builtinResources(n: NameSet = names()): readonly ResourceInfo[] {
  return catalogOf(n).resources;
}

/** Group order of `/apis` for the built-in groups (custom groups follow, sorted). */
export function builtinGroupOrder(n: NameSet = names()): readonly string[] {
  return catalogOf(n).groupOrder;
}

/** The built-in resource of a group and plural (any version), or undefined. */
export function builtinResource(group: string, plural: string, n: NameSet = names()): ResourceInfo | undefined {
  return builtinResources(n).find((r) => r.group === group && r.plural === plural);
}

export function groupVersionOf(info: { group: string; version: string }): string {
  return info.group ? `${info.group}/${info.version}` : info.version;
}

/** A GroupVersion with its resources, as discovery lists them. */
export interface GroupVersionResources {
  group: string;
  version: string;
  resources: ResourceInfo[];
}

/**
 * The live set of served resources: the built-ins plus custom resources. Discovery and routing
 * read it on every request, so a new CRD is served as soon as it is added.
 */
export class ResourceRegistry {
  private readonly byPath = new Map<string, ResourceInfo>();
  /** Per custom group: its versions in preference order (the CRD's order). */
  private readonly customVersions = new Map<string, string[]>();
  private readonly customOwners = new Map<string, ResourceInfo[]>();

  private readonly groupOrder: readonly string[];

  constructor(builtins: readonly ResourceInfo[] = builtinResources(), groupOrder: readonly string[] = builtinGroupOrder()) {
    this.groupOrder = groupOrder;
    for (const info of builtins) this.byPath.set(this.pathKey(info.group, info.version, info.plural), info);
  }

  private pathKey(group: string, version: string, plural: string): string {
    return `${group}/${version}/${plural}`;
  }

  /** The resource served at group/version/plural. */
  lookup(group: string, version: string, plural: string): ResourceInfo | undefined {
    return this.byPath.get(this.pathKey(group, version, plural));
  }

  /** Any version of a group/plural (custom resources use it to find the CRD's entry). */
  all(): ResourceInfo[] {
    return [...this.byPath.values()];
  }

  /** Served group versions: core first, then built-in groups in order, then custom groups sorted. */
  groupVersions(): GroupVersionResources[] {
    const map = new Map<string, GroupVersionResources>();
    for (const info of this.byPath.values()) {
      const key = groupVersionOf(info);
      const entry = map.get(key) ?? { group: info.group, version: info.version, resources: [] };
      entry.resources.push(info);
      map.set(key, entry);
    }
    const order = this.groupOrder;
    const rank = (group: string) => (group === '' ? -1 : order.includes(group) ? order.indexOf(group) : 1000);
    const versionRank = (gv: GroupVersionResources) => this.customVersions.get(gv.group)?.indexOf(gv.version) ?? 0;
    return [...map.values()].sort((a, b) => rank(a.group) - rank(b.group) || a.group.localeCompare(b.group) || versionRank(a) - versionRank(b));
  }

  /** Registers (or replaces) the resources of one CRD, all its served versions. */
  setCustom(crdName: string, infos: ResourceInfo[], versionOrder: string[]): void {
    this.removeCustom(crdName);
    for (const info of infos) this.byPath.set(this.pathKey(info.group, info.version, info.plural), info);
    this.customOwners.set(crdName, infos);
    if (infos[0]) this.customVersions.set(infos[0].group, versionOrder);
  }

  removeCustom(crdName: string): void {
    const owned = this.customOwners.get(crdName);
    if (!owned) return;
    for (const info of owned) this.byPath.delete(this.pathKey(info.group, info.version, info.plural));
    this.customOwners.delete(crdName);
  }

  /** Whether a group is served at all (unknown paths under it answer a Status 404). */
  hasGroup(group: string): boolean {
    for (const info of this.byPath.values()) if (info.group === group) return true;
    return false;
  }

  /** The preferred version of a group: the built-in's only version, or the CRD's first served one. */
  preferredVersion(group: string): string | undefined {
    const versions = this.groupVersions().filter((gv) => gv.group === group).map((gv) => gv.version);
    return versions[0];
  }
}
