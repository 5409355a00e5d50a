/**
 * PodTopologyLabels: a pod created on a node, or bound to one (a CREATE of pods/binding, whose
 * labels the binding copies onto the pod), gets the node's `topology.<domain>/zone` and
 * `topology.<domain>/region` labels, keeping labels already there, as upstream's podtopologylabels.
 */
import {names} from '../../../../api/names.js';
import {isJsonObject, type JsonObject} from '../../../../patch/types.js';
import {metadataOf, stringAt, valueAt} from '../../rest/objects.js';
import type {AdmissionAttributes, AdmissionObjects, AdmissionPlugin} from '../interfaces.js';
import {isResource, operations} from '../matching.js';

/** The labels upstream copies (its defaultConfig). */
export const topologyLabelKeys = (): string[] => [`topology.${names().domain}/zone`, `topology.${names().domain}/region`];

/** Adds the node's topology labels the object (a pod or a Binding) does not have. */
export function copyTopologyLabels(pod: JsonObject, node: JsonObject | undefined): void {
  const nodeLabels = node && valueAt(node, 'metadata', 'labels');
  if (!isJsonObject(nodeLabels)) return;
  const toCopy = topologyLabelKeys().filter((key) => typeof nodeLabels[key] === 'string');
  if (toCopy.length === 0) return;
  const meta = metadataOf(pod);
  const labels = isJsonObject(meta.labels) ? meta.labels : (meta.labels = {});
  for (const key of toCopy) if (!(key in labels)) labels[key] = nodeLabels[key]!;
}

export class PodTopologyLabels implements AdmissionPlugin {
  readonly name = 'PodTopologyLabels';

  constructor(private readonly objects: AdmissionObjects) {}

  readonly handles = operations('CREATE');

  async admit(attributes: AdmissionAttributes): Promise<void> {
    const {object} = attributes;
    if (!object) return;
    let nodeName: string | undefined;
    if (isResource(attributes, '', 'pods')) nodeName = stringAt(object, 'spec', 'nodeName');
    else if (isResource(attributes, '', 'pods', 'binding') && stringAt(object, 'target', 'kind') === 'Node') nodeName = stringAt(object, 'target', 'name');
    if (!nodeName) return;
    // A node that does not exist has no labels to give (upstream ignores NotFound).
    copyTopologyLabels(object, await this.objects.get('', 'nodes', '', nodeName));
  }
}
