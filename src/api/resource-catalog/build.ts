/**
 * The builder of the resource catalog: each file of this folder lists one API group's resources as
 * specs (upstream's `kubectl api-resources` of the release orch emulates), turned into registry
 * entries here. Group names come from the name set the catalog is built for (names.ts), so the
 * same specs serve `networking.orch.io` or `networking.k8s.io`.
 */
import type {ResourceInfo, SubresourceInfo, Verb} from '../resources.js';

export const EVERY_VERB: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
/** The verbs of a review (create-only, never stored). */
export const CREATE_ONLY: Verb[] = ['create'];
/** Upstream's verbs of the connect subresources (proxy): the HTTP methods as verbs. */
export const CONNECT_VERBS: Verb[] = ['create', 'delete', 'get', 'patch', 'update'];
const STATUS_VERBS: Verb[] = ['get', 'patch', 'update'];

export interface CatalogSpec {
  kind: string;
  plural: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  /** Has a `status` subresource. */
  status?: boolean;
  subresources?: SubresourceInfo[];
  verbs?: Verb[];
  /** Key prefix below the kvstore prefix; upstream's (the plural) unless given. */
  storagePrefix?: string;
  storageVersion?: ResourceInfo['storageVersion'];
  rest?: ResourceInfo['rest'];
}

/** A subresource answering with the parent's kind under get/patch/update (status-like writes). */
export function partialWriteSub(name: string, kind: string): SubresourceInfo {
  return {name, kind, verbs: [...STATUS_VERBS]};
}

export function catalog(group: string, version: string, specs: CatalogSpec[]): ResourceInfo[] {
  return specs.map((s) => {
    const info: ResourceInfo = {
      group,
      version,
      kind: s.kind,
      plural: s.plural,
      singular: s.kind.toLowerCase(),
      namespaced: s.namespaced,
      verbs: [...(s.verbs ?? EVERY_VERB)],
      shortNames: s.shortNames,
      categories: s.categories,
      subresources: [...(s.status ? [partialWriteSub('status', s.kind)] : []), ...(s.subresources ?? [])],
      storagePrefix: s.storagePrefix ?? s.plural,
    };
    if (s.storageVersion) info.storageVersion = s.storageVersion;
    if (s.rest) info.rest = s.rest;
    return info;
  });
}

export const API_EXTENSIONS = ['api-extensions'];
export const ALL = ['all'];
