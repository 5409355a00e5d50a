/**
 * PodTopologyLabels: a pod bound to a node gets the node's `topology.<domain>/zone` and
 * `topology.<domain>/region` labels (labels the pod has already stay), as upstream's
 * podtopologylabels plugin does for pods created with spec.nodeName and for bindings. In orch a
 * binding (pods/binding, the bindings resource) is admitted as the write of the bound pod itself,
 * so the labels go straight onto the pod, where upstream's binding registry copies them.
 */
import {names} from '../../../../api/names.js';
import {isJsonObject, type JsonObject} from '../../../../patch/types.js';
import {metadataOf, stringAt, valueAt} from '../../rest/objects.js';
import type {AdmissionAttributes, AdmissionObjects, AdmissionPlugin} from '../interfaces.js';

/** The labels upstream copies (its defaultConfig). */
export const topologyLabelKeys = (): string[] => [`topology.${names().domain}/zone`, `topology.${names().domain}/region`];

/** Adds the node's topology labels the pod does not have. */
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

  async admit(attributes: AdmissionAttributes): Promise<void> {
    const {resource, object, operation, subresource} = attributes;
    if (resource.group !== '' || resource.plural !== 'pods' || !object) return;
    const creating = operation === 'CREATE' && subresource === '';
    const binding = subresource === 'binding' && (operation === 'CREATE' || operation === 'UPDATE');
    if (!creating && !binding) return;
    const nodeName = stringAt(object, 'spec', 'nodeName');
    if (!nodeName) return;
    // A node that does not exist has no labels to give (upstream ignores NotFound).
    copyTopologyLabels(object, await this.objects.get('', 'nodes', '', nodeName));
  }
}
