/**
 * The subresources with their own shapes: `scale` (autoscaling/v1 Scale over spec.replicas,
 * status.replicas and the selector), pods' `binding`, and namespaces' `finalize`. Pure mappings;
 * the handler runs them through RegistryStore.update.
 */
import { labelSelectorString, mapSelectorString, type LabelSelectorObject } from '../../../api/selectors.js';
import { badRequest, conflict, field, invalid } from '../../../api/status.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../patch/types.js';
import { metadataOf, rfc3339, stringAt, valueAt } from './objects.js';

/** The Scale view of a scalable object. */
export function toScale(object: JsonObject, kind: string): JsonObject {
  const meta = metadataOf(object);
  const selector = valueAt(object, 'spec', 'selector');
  const selectorText = kind === 'ReplicationController'
    ? mapSelectorString(isJsonObject(selector) ? (selector as Record<string, string>) : undefined)
    : labelSelectorString(isJsonObject(selector) ? (selector as LabelSelectorObject) : undefined);
  const scaleMeta: JsonObject = {};
  for (const key of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp']) if (meta[key] !== undefined) scaleMeta[key] = meta[key]!;
  const replicas = valueAt(object, 'spec', 'replicas');
  const status: JsonObject = { replicas: typeof valueAt(object, 'status', 'replicas') === 'number' ? (valueAt(object, 'status', 'replicas') as number) : 0 };
  if (selectorText) status.selector = selectorText;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: scaleMeta,
    spec: { replicas: typeof replicas === 'number' ? replicas : 0 },
    status,
  };
}

/** Writes a Scale's spec.replicas into the object; 422 for a bad replica count. */
export function applyScale(object: JsonObject, scale: unknown, name: string): JsonObject {
  if (!isJsonObject(scale)) throw badRequest('the body of the request must be a Scale object');
  const scaleName = stringAt(scale, 'metadata', 'name');
  if (scaleName !== undefined && scaleName !== '' && scaleName !== name) {
    throw badRequest(`the name of the object (${scaleName}) does not match the name on the URL (${name})`);
  }
  const replicas = valueAt(scale, 'spec', 'replicas') ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw invalid({ group: 'autoscaling', kind: 'Scale' }, name, [field.invalid('spec.replicas', replicas, 'must be greater than or equal to 0')]);
  }
  const spec = isJsonObject(object.spec) ? object.spec : (object.spec = {});
  spec.replicas = replicas;
  const rv = stringAt(scale, 'metadata', 'resourceVersion');
  if (rv) metadataOf(object).resourceVersion = rv;
  return object;
}

const BINDING = { group: '', resource: 'pods/binding' };

/** Assigns a pod to the binding's node (upstream's assignPod): 409 when it is already bound or being deleted. */
export function bindPod(pod: JsonObject, binding: unknown, name: string, now: Date): JsonObject {
  if (!isJsonObject(binding)) throw badRequest('the body of the request must be a Binding object');
  const node = stringAt(binding, 'target', 'name');
  if (!node) throw invalid({ group: '', kind: 'Binding' }, name, [field.required('target.name')]);
  const boundTo = stringAt(pod, 'spec', 'nodeName');
  if (boundTo) throw conflict(BINDING, name, `pod ${name} is already assigned to node ${JSON.stringify(boundTo)}`);
  if (stringAt(pod, 'metadata', 'deletionTimestamp')) throw conflict(BINDING, name, `pod ${name} is being deleted, cannot be assigned to a host`);
  const spec = isJsonObject(pod.spec) ? pod.spec : (pod.spec = {});
  spec.nodeName = node;
  const annotations = valueAt(binding, 'metadata', 'annotations');
  if (isJsonObject(annotations)) {
    const meta = metadataOf(pod);
    meta.annotations = { ...(isJsonObject(meta.annotations) ? meta.annotations : {}), ...annotations };
  }
  // The Binding's labels (PodTopologyLabels puts the node's topology there) overwrite the pod's, as upstream.
  const labels = valueAt(binding, 'metadata', 'labels');
  if (isJsonObject(labels)) {
    const meta = metadataOf(pod);
    meta.labels = { ...(isJsonObject(meta.labels) ? meta.labels : {}), ...labels };
  }
  const status = isJsonObject(pod.status) ? pod.status : (pod.status = {});
  const conditions = (Array.isArray(status.conditions) ? status.conditions : []).filter((c: JsonValue) => !(isJsonObject(c) && c.type === 'PodScheduled'));
  conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339(now) });
  status.conditions = conditions;
  return pod;
}

/** A namespace finalize write: only spec.finalizers comes from the body. */
export function finalizeNamespace(namespace: JsonObject, body: unknown): JsonObject {
  if (!isJsonObject(body)) throw badRequest('the body of the request must be a Namespace object');
  const finalizers = valueAt(body, 'spec', 'finalizers');
  const spec = isJsonObject(namespace.spec) ? namespace.spec : (namespace.spec = {});
  if (Array.isArray(finalizers) && finalizers.length) spec.finalizers = finalizers;
  else delete spec.finalizers;
  const rv = stringAt(body, 'metadata', 'resourceVersion');
  if (rv) metadataOf(namespace).resourceVersion = rv;
  return namespace;
}
