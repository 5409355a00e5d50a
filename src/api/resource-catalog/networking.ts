/** networking/v1: ingresses, ingress classes, network policies, IP addresses and service CIDRs. */
import type {NameSet} from '../names.js';
import type {ResourceInfo} from '../resources.js';
import {catalog} from './build.js';

export function networkingResources(n: NameSet): ResourceInfo[] {
  return catalog(n.groups.networking, 'v1', [
    {kind: 'IngressClass', plural: 'ingressclasses', namespaced: false},
    {kind: 'Ingress', plural: 'ingresses', namespaced: true, shortNames: ['ing'], status: true, storagePrefix: 'ingress'},
    {kind: 'IPAddress', plural: 'ipaddresses', namespaced: false, shortNames: ['ip']},
    {kind: 'NetworkPolicy', plural: 'networkpolicies', namespaced: true, shortNames: ['netpol']},
    {kind: 'ServiceCIDR', plural: 'servicecidrs', namespaced: false, status: true},
  ]);
}
