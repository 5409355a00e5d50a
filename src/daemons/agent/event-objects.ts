/**
 * What the agent's events are about, as upstream's kubelet refers to them: the pod, and for a
 * container event the container's place in the pod spec (`spec.containers{web}`,
 * `spec.initContainers{setup}`), which `kubectl describe pod` shows as the event's subobject.
 */
import type {InvolvedObject} from '../../client/event-recorder.js';

interface PodLike {
  metadata: {name?: string; namespace?: string; uid?: string; resourceVersion?: string};
  spec?: {initContainers?: {name: string}[]};
}

export function podEventObject(pod: PodLike, container?: string): InvolvedObject {
  const object: InvolvedObject = {apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name ?? '', namespace: pod.metadata.namespace || 'default'};
  if (pod.metadata.uid) object.uid = pod.metadata.uid;
  if (container !== undefined) {
    const init = pod.spec?.initContainers?.some((c) => c.name === container) ?? false;
    object.fieldPath = `${init ? 'spec.initContainers' : 'spec.containers'}{${container}}`;
  }
  return object;
}
