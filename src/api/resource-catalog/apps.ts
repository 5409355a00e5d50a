/** apps/v1 ControllerRevision, autoscaling v2 and v1 (v2 is stored; v1 converts), policy/v1. */
import type {NameSet} from '../names.js';
import type {ResourceInfo} from '../resources.js';
import {ALL, catalog} from './build.js';

export function appsResources(_n: NameSet): ResourceInfo[] {
  return catalog('apps', 'v1', [{kind: 'ControllerRevision', plural: 'controllerrevisions', namespaced: true}]);
}

const HPA_STORAGE = {group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler'};

/** v2 first: the group's preferred version, as upstream. */
export function autoscalingResources(_n: NameSet): ResourceInfo[] {
  const hpa = {kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers', namespaced: true, shortNames: ['hpa'], categories: ALL, status: true};
  return [...catalog('autoscaling', 'v2', [hpa]), ...catalog('autoscaling', 'v1', [{...hpa, storageVersion: HPA_STORAGE}])];
}

export function policyResources(_n: NameSet): ResourceInfo[] {
  return catalog('policy', 'v1', [{kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', namespaced: true, shortNames: ['pdb'], status: true}]);
}
