/** Core v1 resources beyond the first ten, and the subresources upstream serves on pods, nodes, services and service accounts. */
import type {NameSet} from '../names.js';
import type {ResourceInfo, SubresourceInfo} from '../resources.js';
import {catalog, CONNECT_VERBS, partialWriteSub} from './build.js';

export function coreResources(_n: NameSet): ResourceInfo[] {
  return catalog('', 'v1', [
    {kind: 'LimitRange', plural: 'limitranges', namespaced: true, shortNames: ['limits']},
    {kind: 'ResourceQuota', plural: 'resourcequotas', namespaced: true, shortNames: ['quota'], status: true},
    {kind: 'PersistentVolume', plural: 'persistentvolumes', namespaced: false, shortNames: ['pv'], status: true},
    {kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims', namespaced: true, shortNames: ['pvc'], status: true},
    {kind: 'PodTemplate', plural: 'podtemplates', namespaced: true},
    // POST-only: binds the pod named in the Binding, as pods/binding does (upstream keeps both).
    {kind: 'Binding', plural: 'bindings', namespaced: true, verbs: ['create'], rest: 'review'},
    {kind: 'ComponentStatus', plural: 'componentstatuses', namespaced: false, shortNames: ['cs'], verbs: ['get', 'list'], rest: 'computed'},
  ]);
}

/** The subresources of the first core resources that this catalog adds (upstream's, by plural). */
function coreSubresources(n: NameSet): Record<string, SubresourceInfo[]> {
  return {
    pods: [
      {name: 'eviction', kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create']},
      partialWriteSub('ephemeralcontainers', 'Pod'),
      partialWriteSub('resize', 'Pod'),
      {name: 'proxy', kind: 'PodProxyOptions', verbs: [...CONNECT_VERBS]},
    ],
    nodes: [{name: 'proxy', kind: 'NodeProxyOptions', verbs: [...CONNECT_VERBS]}],
    services: [{name: 'proxy', kind: 'ServiceProxyOptions', verbs: [...CONNECT_VERBS]}],
    serviceaccounts: [{name: 'token', kind: 'TokenRequest', group: n.groups.authentication, version: 'v1', verbs: ['create']}],
  };
}

/** The core entries with the subresources above added (those already listed are kept once). */
export function withCoreSubresources(resources: ResourceInfo[], n: NameSet): ResourceInfo[] {
  const extra = coreSubresources(n);
  return resources.map((info) => {
    const add = info.group === '' ? extra[info.plural] : undefined;
    if (!add) return info;
    const have = new Set(info.subresources.map((s) => s.name));
    return {...info, subresources: [...info.subresources, ...add.filter((s) => !have.has(s.name))]};
  });
}
