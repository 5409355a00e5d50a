/**
 * PodResizeValidator: a resize (pods/resize) of a pod bound to a node is refused when the pod's
 * new requests exceed the node's allocatable CPU or memory (cause NodeCapacity) or the node is not
 * a Linux node (cause UnsupportedPlatform), as upstream's podresize plugin. Upstream skips updates
 * that leave the generation alone; orch does not count generations on resizes, so an unchanged
 * spec is what is skipped.
 */
import {names} from '../../../../api/names.js';
import {ApiError} from '../../../../api/status.js';
import {jsonEqual, type JsonObject} from '../../../../patch/types.js';
import {parseQuantity} from '../../../../options/quantity.js';
import {podRequests, type Pod} from '../../../controller-manager/controllers/scheduler.js';
import {stringAt, valueAt} from '../../rest/objects.js';
import {admissionForbidden} from '../errors.js';
import type {AdmissionAttributes, AdmissionObjects, AdmissionPlugin} from '../interfaces.js';
import {isResource, operations} from '../matching.js';

const quantity = (v: unknown): number => {
  try {
    return typeof v === 'string' ? parseQuantity(v).value : 0;
  } catch {
    return 0;
  }
};

/** The refusal of a resize on `node`: reason and cause type, or undefined. */
export function resizeRefusalOnNode(pod: JsonObject, node: JsonObject): {reason: string; cause: string} | undefined {
  const requested = podRequests(pod as Pod);
  const cpuAllocatable = Math.round(quantity(valueAt(node, 'status', 'allocatable', 'cpu')) * 1000);
  const memoryAllocatable = Math.round(quantity(valueAt(node, 'status', 'allocatable', 'memory')));
  const problems: string[] = [];
  if (requested.milliCpu > cpuAllocatable) problems.push(`cpu, requested: ${requested.milliCpu}, allocatable: ${cpuAllocatable}`);
  if (requested.memory > memoryAllocatable) problems.push(`memory, requested: ${requested.memory}, allocatable: ${memoryAllocatable}`);
  if (problems.length) return {reason: `Node didn't have enough allocatable resources: ${problems.join('; ')}`, cause: 'NodeCapacity'};
  const os = valueAt(node, 'metadata', 'labels', names().labels.os);
  if (os !== 'linux') {
    return {reason: `pod resize is only supported on linux nodes, node ${JSON.stringify(stringAt(node, 'metadata', 'name') ?? '')} is ${JSON.stringify(typeof os === 'string' ? os : '')}`, cause: 'UnsupportedPlatform'};
  }
  return undefined;
}

export class PodResizeValidator implements AdmissionPlugin {
  readonly name = 'PodResizeValidator';

  constructor(private readonly objects: AdmissionObjects) {}

  readonly handles = operations('UPDATE');

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const {object, oldObject} = attributes;
    if (!isResource(attributes, '', 'pods', 'resize') || !object || !oldObject) return;
    const nodeName = stringAt(object, 'spec', 'nodeName');
    if (!nodeName) return;
    if (jsonEqual(object.spec ?? null, oldObject.spec ?? null)) return;
    const node = await this.objects.get('', 'nodes', '', nodeName);
    if (!node) throw admissionForbidden(attributes, `node ${JSON.stringify(nodeName)} not found`);
    const refusal = resizeRefusalOnNode(object, node);
    if (!refusal) return;
    const error = admissionForbidden(attributes, refusal.reason);
    if (error instanceof ApiError) {
      const details = (error.status.details ??= {});
      details.causes = [...(details.causes ?? []), {reason: refusal.cause}];
    }
    throw error;
  }
}
