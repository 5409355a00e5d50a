/**
 * The `replicationcontroller` controller: v1 ReplicationControllers kept at their replica count by
 * the runner of the replicaset controller, as upstream runs its ReplicaSet manager over RCs. The
 * one difference is the selector, a plain label map (the API server defaults it to the template's
 * labels).
 */
import { parseLabelSelector, mapSelectorString } from '../../../api/selectors.js';
import type { ControllerDescriptor } from './types.js';
import type { ReplicaOwner, Selector } from './replica-set-core.js';
import { startReplicaController, type ReplicaKind } from './replicaset.js';

/** An RC's map selector as requirements; an empty or invalid map selects nothing. */
export function mapSelectorRequirements(owner: ReplicaOwner): Selector {
  const selector = owner.spec?.selector;
  if (typeof selector !== 'object' || selector === null || Array.isArray(selector)) return [];
  try {
    const text = mapSelectorString(selector as Record<string, string>);
    return text === '' ? [] : parseLabelSelector(text);
  } catch {
    return [];
  }
}

export const REPLICATION_CONTROLLER_KIND: ReplicaKind = {
  controllerName: 'replicationcontroller',
  eventComponent: 'replication-controller',
  workersOption: 'concurrent-rc-syncs',
  ref: { group: '', version: 'v1', resource: 'replicationcontrollers' },
  apiVersion: 'v1',
  kind: 'ReplicationController',
  selectorOf: mapSelectorRequirements,
};

export const replicationControllerController: ControllerDescriptor = {
  name: 'replicationcontroller',
  enabledByDefault: true,
  start: (ctx, signal) => startReplicaController(ctx, signal, REPLICATION_CONTROLLER_KIND),
};

export default replicationControllerController;
