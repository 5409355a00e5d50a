/**
 * The PodList documents of `GET /pods` and `GET /runningpods/`, encoded as upstream's legacy v1
 * codec writes them: items without kind/apiVersion, `items: null` for an empty list (a nil Go
 * slice), and the running pods reduced to what the runtime knows (upstream's Pod.ToAPIPod).
 */
import type {RunningPod, ServedPod} from './types.js';

export interface PodListDocument {
  kind: 'PodList';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  items: unknown[] | null;
}

function listOf(items: unknown[]): PodListDocument {
  return {kind: 'PodList', apiVersion: 'v1', metadata: {}, items: items.length > 0 ? items : null};
}

/** The desired pods of this agent, as `GET /pods` serves them. */
export function podList(pods: readonly ServedPod[]): PodListDocument {
  return listOf(pods.map(({kind: _kind, apiVersion: _apiVersion, ...item}) => item));
}

/** The runtime's pods as upstream converts them: identity and container names and images only. */
export function runningPodList(pods: readonly RunningPod[]): PodListDocument {
  return listOf(
    pods.map((pod) => ({
      metadata: {name: pod.name, namespace: pod.namespace, uid: pod.uid, creationTimestamp: null},
      spec: {containers: pod.containers.map((c) => ({name: c.name, ...(c.image ? {image: c.image} : {}), resources: {}}))},
      status: {},
    })),
  );
}

/** Go's json encoding followed by the newline runtime.Encode adds. */
export function encodeDocument(document: unknown): string {
  return JSON.stringify(document) + '\n';
}
