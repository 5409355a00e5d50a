/**
 * TaintNodesByCondition: a node is created with the not-ready NoSchedule taint, so nothing is
 * scheduled to it before its agent reports Ready and the node lifecycle controller lifts the taint
 * (upstream's nodetaint plugin).
 */
import {names} from '../../../../api/names.js';
import {isJsonObject, type JsonObject} from '../../../../patch/types.js';
import type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin} from '../interfaces.js';
import {isCoreResource, objectsAt} from './pod-helpers.js';

/** Adds the not-ready NoSchedule taint unless one with that key and effect is there (upstream's MatchTaint). */
export function addNotReadyTaint(node: JsonObject): void {
  const key = names().taints.notReady;
  const spec = isJsonObject(node.spec) ? node.spec : (node.spec = {});
  const taints = objectsAt(spec.taints);
  if (taints.some((t) => t.key === key && t.effect === 'NoSchedule')) return;
  spec.taints = [...taints, {key, effect: 'NoSchedule'}];
}

export class TaintNodesByCondition implements AdmissionPlugin {
  readonly name = 'TaintNodesByCondition';

  handles(operation: AdmissionOperation): boolean {
    return operation === 'CREATE';
  }

  admit(attributes: AdmissionAttributes): void {
    if (!isCoreResource(attributes, 'nodes') || attributes.subresource !== '' || !attributes.object) return;
    addNotReadyTaint(attributes.object);
  }
}
