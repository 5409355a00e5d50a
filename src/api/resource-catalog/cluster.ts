/**
 * The remaining groups: flowcontrol/v1, node/v1, events/v1 (stored as core v1 Events), apiregistration/v1,
 * resource/v1 with v1beta1 and v1beta2 (dynamic resource allocation) and coordination/v1beta1 LeaseCandidate.
 */
import type {NameSet} from '../names.js';
import type {ResourceInfo} from '../resources.js';
import {API_EXTENSIONS, catalog} from './build.js';

export function flowcontrolResources(n: NameSet): ResourceInfo[] {
  return catalog(n.groups.flowcontrol, 'v1', [
    {kind: 'FlowSchema', plural: 'flowschemas', namespaced: false, status: true},
    {kind: 'PriorityLevelConfiguration', plural: 'prioritylevelconfigurations', namespaced: false, status: true},
  ]);
}

export function nodeResources(n: NameSet): ResourceInfo[] {
  return catalog(n.groups.node, 'v1', [{kind: 'RuntimeClass', plural: 'runtimeclasses', namespaced: false}]);
}

/** events/v1 Events are the core Events, converted: one store, two shapes (upstream). */
export function eventsResources(n: NameSet): ResourceInfo[] {
  return catalog(n.groups.events, 'v1', [
    {kind: 'Event', plural: 'events', namespaced: true, shortNames: ['ev'], storageVersion: {group: '', version: 'v1', kind: 'Event'}},
  ]);
}

export function apiregistrationResources(n: NameSet): ResourceInfo[] {
  return catalog(n.groups.apiregistration, 'v1', [
    {kind: 'APIService', plural: 'apiservices', namespaced: false, categories: API_EXTENSIONS, status: true, storagePrefix: 'apiregistration/apiservices'},
  ]);
}

/**
 * resource/v1, then the betas upstream still serves (off by default): v1beta2 (the v1 schema) and
 * v1beta1 (requests and devices shaped differently; conversion-dra.ts), both stored as v1.
 */
export function resourceResources(n: NameSet): ResourceInfo[] {
  const g = n.groups.resource;
  const specs = [
    {kind: 'DeviceClass', plural: 'deviceclasses', namespaced: false},
    {kind: 'ResourceClaim', plural: 'resourceclaims', namespaced: true, status: true},
    {kind: 'ResourceClaimTemplate', plural: 'resourceclaimtemplates', namespaced: true},
    {kind: 'ResourceSlice', plural: 'resourceslices', namespaced: false},
  ];
  const storedAsV1 = specs.map((s) => ({...s, storageVersion: {group: g, version: 'v1', kind: s.kind}}));
  // Upstream's version priority is the discovery order: v1, v1beta2, v1beta1.
  return [...catalog(g, 'v1', specs), ...catalog(g, 'v1beta2', storedAsV1), ...catalog(g, 'v1beta1', storedAsV1)];
}

/** Beta upstream; Lease (coordination/v1) stays the group's preferred version. */
export function coordinationResources(n: NameSet): ResourceInfo[] {
  return catalog(n.groups.coordination, 'v1beta1', [{kind: 'LeaseCandidate', plural: 'leasecandidates', namespaced: true}]);
}
