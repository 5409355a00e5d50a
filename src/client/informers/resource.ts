/**
 * Which collection an informer watches: group/version/resource, optionally one namespace and
 * selectors; the REST path of that collection; and the key that makes informers shared.
 */

export interface ResourceRef {
  /** '' for the core group. */
  group: string;
  version: string;
  /** The plural resource name: `pods`, `deployments`. */
  resource: string;
  /** Unset or '': every namespace (or a cluster-scoped resource). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** `/api/v1/pods`, `/api/v1/namespaces/ns/pods`, `/apis/apps/v1/deployments`... Pure. */
export function resourcePath(ref: ResourceRef): string {
  const root = ref.group === '' ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  const namespace = ref.namespace ? `/namespaces/${encodeURIComponent(ref.namespace)}` : '';
  return `${root}${namespace}/${ref.resource}`;
}

/** Informers of refs with the same key are one informer. Pure. */
export function resourceKey(ref: ResourceRef): string {
  const gvr = `${ref.group || 'core'}/${ref.version}/${ref.resource}`;
  return [gvr, ref.namespace ?? '', ref.labelSelector ?? '', ref.fieldSelector ?? ''].join('|');
}
