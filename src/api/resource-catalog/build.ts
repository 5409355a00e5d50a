/**
 * The builder of the resource catalog: each file of this folder lists one API group's resources as
 * specs (upstream's `kubectl api-resources` of the release orch emulates), turned into registry
 * entries here. Group names come from the name set the catalog is built for (names.ts), so the
 * same specs serve `networking.orch.io` or `networking.k8s.io`.
 */
import {defineResources, statusSub, type ResourceInfo, type ResourceSpec, type SubresourceInfo, type Verb} from '../resources.js';

/** The verbs of a review (create-only, never stored). */
export const CREATE_ONLY: Verb[] = ['create'];
/** Upstream's verbs of the connect subresources (proxy): the HTTP methods as verbs. */
export const CONNECT_VERBS: Verb[] = ['create', 'delete', 'get', 'patch', 'update'];

export interface CatalogSpec extends Omit<ResourceSpec, 'scale' | 'extraSubresources'> {
  subresources?: SubresourceInfo[];
}

/** A subresource answering with the parent's kind under get/patch/update (status-like writes). */
export function partialWriteSub(name: string, kind: string): SubresourceInfo {
  return {...statusSub(kind), name};
}

/** A group version of the catalog: as defineResources, with upstream's key prefix (the plural) by default. */
export function catalog(group: string, version: string, specs: CatalogSpec[]): ResourceInfo[] {
  return defineResources(group, version, specs.map(({subresources, ...s}) => ({...s, extraSubresources: subresources, storagePrefix: s.storagePrefix ?? s.plural})));
}

export const API_EXTENSIONS = ['api-extensions'];
export const ALL = ['all'];
