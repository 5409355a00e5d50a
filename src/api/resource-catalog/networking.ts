/**
 * networking/v1: ingresses, ingress classes, network policies, IP addresses and service CIDRs;
 * networking/v1beta1 IP addresses and service CIDRs, which upstream still serves (off by default),
 * stored as the v1 objects they equal.
 */
import type {NameSet} from '../names.js';
import type {ResourceInfo} from '../resources.js';
import {catalog} from './build.js';

export function networkingResources(n: NameSet): ResourceInfo[] {
  const g = n.groups.networking;
  const ipAddress = {kind: 'IPAddress', plural: 'ipaddresses', namespaced: false, shortNames: ['ip']};
  const serviceCIDR = {kind: 'ServiceCIDR', plural: 'servicecidrs', namespaced: false, status: true};
  const storedAsV1 = <T extends {kind: string}>(spec: T) => ({...spec, storageVersion: {group: g, version: 'v1', kind: spec.kind}});
  return [
    ...catalog(g, 'v1', [
      {kind: 'IngressClass', plural: 'ingressclasses', namespaced: false},
      {kind: 'Ingress', plural: 'ingresses', namespaced: true, shortNames: ['ing'], status: true, storagePrefix: 'ingress'},
      ipAddress,
      {kind: 'NetworkPolicy', plural: 'networkpolicies', namespaced: true, shortNames: ['netpol']},
      serviceCIDR,
    ]),
    ...catalog(g, 'v1beta1', [storedAsV1(ipAddress), storedAsV1(serviceCIDR)]),
  ];
}
