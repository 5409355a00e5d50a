/**
 * The remaining groups: flowcontrol/v1, node/v1, events/v1 (stored as core v1 Events), apiregistration/v1,
 * resource/v1 (dynamic resource allocation) and coordination/v1beta1 LeaseCandidate.
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

export function resourceResources(n: NameSet): ResourceInfo[] {
  return catalog(n.groups.resource, 'v1', [
    {kind: 'DeviceClass', plural: 'deviceclasses', namespaced: false},
    {kind: 'ResourceClaim', plural: 'resourceclaims', namespaced: true, status: true},
    {kind: 'ResourceClaimTemplate', plural: 'resourceclaimtemplates', namespaced: true},
    {kind: 'ResourceSlice', plural: 'resourceslices', namespaced: false},
  ]);
}

/** Beta upstream; Lease (coordination/v1) stays the group's preferred version. */
export function coordinationResources(n: NameSet): ResourceInfo[] {
  return catalog(n.groups.coordination, 'v1beta1', [{kind: 'LeaseCandidate', plural: 'leasecandidates', namespaced: true}]);
}
