/**
 * LimitPodHardAntiAffinityTopology: required pod anti-affinity may only use the hostname topology
 * key, so one pod cannot keep a whole zone or region to itself (upstream's antiaffinity plugin).
 */
import {names} from '../../../../api/names.js';
import {forbidden} from '../../../../api/status.js';
import {isJsonObject, type JsonObject} from '../../../../patch/types.js';
import {stringAt, valueAt} from '../../rest/objects.js';
import type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin} from '../interfaces.js';
import {objectsAt, podProper} from './pod-helpers.js';

/** The first required anti-affinity topology key other than the hostname label, or undefined. */
export function forbiddenTopologyKey(pod: JsonObject): string | undefined {
  const antiAffinity = valueAt(pod, 'spec', 'affinity', 'podAntiAffinity');
  if (!isJsonObject(antiAffinity)) return undefined;
  const hostname = names().labels.hostname;
  const term = objectsAt(antiAffinity.requiredDuringSchedulingIgnoredDuringExecution).find((t) => (t.topologyKey ?? '') !== hostname);
  return term ? String(term.topologyKey ?? '') : undefined;
}

export class LimitPodHardAntiAffinityTopology implements AdmissionPlugin {
  readonly name = 'LimitPodHardAntiAffinityTopology';

  handles(operation: AdmissionOperation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  validate(attributes: AdmissionAttributes): void {
    const pod = podProper(attributes);
    if (!pod) return;
    const key = forbiddenTopologyKey(pod);
    if (key === undefined) return;
    throw forbidden({group: '', resource: 'pods'}, stringAt(pod, 'metadata', 'name') ?? '',
      `affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ${key} but only key ${names().labels.hostname} is allowed`);
  }
}
