/**
 * Mirror pods in the API server (upstream pkg/kubelet/pod/mirror_client.go): a copy of a static
 * pod carrying `orch.io/config.mirror` = the static pod's config hash and a controller
 * ownerReference to this Node (so the garbage collector removes mirrors of a deleted Node).
 * Deletion is immediate (grace 0) and guarded by a UID precondition, so a mirror recreated
 * meanwhile is not deleted by mistake.
 */
import { ApiStatusError } from '../../../client/errors.js';
import type { RestClient } from '../../../client/rest-client.js';
import { configHashAnnotation, configMirrorAnnotation, type SourcePod } from './types.js';

/** What the mirror pod manager needs; MirrorClient implements it over the REST API. */
export interface MirrorPodClient {
  /** Creates the mirror of a static pod; an existing mirror (AlreadyExists) counts as created. */
  createMirrorPod(staticPod: SourcePod): Promise<void>;
  /** Deletes a mirror pod; false when it was already gone or its UID no longer matches. */
  deleteMirrorPod(namespace: string, name: string, uid?: string): Promise<boolean>;
}

/** The part of RestClient used here. */
export type MirrorRestClient = Pick<RestClient, 'request' | 'get'>;

interface NodeObject {
  metadata?: { uid?: string; deletionTimestamp?: string };
}

export class MirrorError extends Error {
  override name = 'MirrorError';
}

/** The mirror pod object of a static pod (without the owner, which needs the Node's UID). Pure. */
export function mirrorPodOf(staticPod: SourcePod): SourcePod {
  const { uid: _uid, resourceVersion: _rv, ...metadata } = staticPod.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...metadata,
      annotations: { ...staticPod.metadata.annotations, [configMirrorAnnotation()]: staticPod.metadata.annotations?.[configHashAnnotation()] ?? '' },
    },
    spec: structuredClone(staticPod.spec),
  };
}

const isCode = (error: unknown, code: number) => error instanceof ApiStatusError && error.code === code;

export class MirrorClient implements MirrorPodClient {
  constructor(private readonly options: { client: MirrorRestClient; nodeName: string }) {}

  private podsPath(namespace: string): string {
    return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;
  }

  /** The Node's UID for the ownerReference; refuses while the Node is missing or being deleted. */
  private async nodeUid(): Promise<string> {
    const { nodeName, client } = this.options;
    let node: NodeObject;
    try {
      node = await client.get<NodeObject>(`/api/v1/nodes/${encodeURIComponent(nodeName)}`, undefined, { resource: 'nodes', name: nodeName });
    } catch (error) {
      throw new MirrorError(`failed to get node UID: ${(error as Error).message}`);
    }
    if (node.metadata?.deletionTimestamp) throw new MirrorError(`node ${JSON.stringify(nodeName)} is being deleted`);
    if (!node.metadata?.uid) throw new MirrorError(`failed to get node UID: node ${JSON.stringify(nodeName)} has none`);
    return node.metadata.uid;
  }

  async createMirrorPod(staticPod: SourcePod): Promise<void> {
    const mirror = mirrorPodOf(staticPod);
    mirror.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: this.options.nodeName, uid: await this.nodeUid(), controller: true }];
    const namespace = mirror.metadata.namespace ?? 'default';
    try {
      await this.options.client.request({ method: 'POST', path: this.podsPath(namespace), body: mirror, context: { resource: 'pods', name: mirror.metadata.name } });
    } catch (error) {
      if (!isCode(error, 409)) throw error;
    }
  }

  async deleteMirrorPod(namespace: string, name: string, uid?: string): Promise<boolean> {
    const body = { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, ...(uid ? { preconditions: { uid } } : {}) };
    try {
      await this.options.client.request({ method: 'DELETE', path: `${this.podsPath(namespace)}/${encodeURIComponent(name)}`, body, context: { resource: 'pods', name } });
      return true;
    } catch (error) {
      // Gone already, or a newer mirror (UID precondition failed: 409): nothing to do.
      if (isCode(error, 404) || isCode(error, 409)) return false;
      throw error;
    }
  }
}
