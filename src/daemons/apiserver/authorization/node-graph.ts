/**
 * The graph the Node authorizer decides on, as upstream's (plugin/pkg/auth/authorizer/node/graph.go):
 * which objects a node may reach through the pods bound to it. A pod bound to a node reaches its
 * service account, the secrets and config maps its volumes, environment and image pull secrets
 * name, its persistent volume claims (ephemeral volumes included) and resource claims; a claim
 * bound to a persistent volume reaches that volume and the secrets the volume names; a volume
 * attachment for the node reaches its persistent volume. Pure: the server feeds it objects from
 * its store watch.
 */

export type VertexType = 'secret' | 'configmap' | 'serviceaccount' | 'pvc' | 'pv' | 'resourceclaim' | 'volumeattachment';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as unknown[]).map(obj) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A namespaced (or, for volumes, cluster-scoped) object key: `type/namespace/name`. */
export function vertexKey(type: VertexType, namespace: string, name: string): string {
  return `${type}/${namespace}/${name}`;
}

/** What one pod reaches, as vertex keys (without the node). */
export function podReferences(pod: Json): string[] {
  const namespace = str(obj(pod.metadata).namespace);
  const podName = str(obj(pod.metadata).name);
  const spec = obj(pod.spec);
  const refs = new Set<string>();
  const secret = (name: string) => name && refs.add(vertexKey('secret', namespace, name));
  const configMap = (name: string) => name && refs.add(vertexKey('configmap', namespace, name));
  refs.add(vertexKey('serviceaccount', namespace, str(spec.serviceAccountName) || 'default'));
  for (const s of arr(spec.imagePullSecrets)) secret(str(s.name));
  const containers = [...arr(spec.initContainers), ...arr(spec.containers), ...arr(spec.ephemeralContainers)];
  for (const c of containers) {
    for (const from of arr(c.envFrom)) {
      secret(str(obj(from.secretRef).name));
      configMap(str(obj(from.configMapRef).name));
    }
    for (const env of arr(c.env)) {
      const valueFrom = obj(env.valueFrom);
      secret(str(obj(valueFrom.secretKeyRef).name));
      configMap(str(obj(valueFrom.configMapKeyRef).name));
    }
  }
  for (const volume of arr(spec.volumes)) {
    secret(str(obj(volume.secret).secretName));
    configMap(str(obj(volume.configMap).name));
    for (const source of arr(obj(volume.projected).sources)) {
      secret(str(obj(source.secret).name));
      configMap(str(obj(source.configMap).name));
    }
    // Volume plugins that name a secret for their credentials.
    for (const plugin of ['csi', 'flexVolume', 'cephfs', 'rbd', 'iscsi', 'scaleIO', 'storageos', 'azureFile']) {
      const source = obj(volume[plugin]);
      secret(str(obj(source.nodePublishSecretRef).name) || str(obj(source.secretRef).name) || str(source.secretName));
    }
    const claim = str(obj(volume.persistentVolumeClaim).claimName);
    if (claim) refs.add(vertexKey('pvc', namespace, claim));
    // A generic ephemeral volume's claim is named `<pod>-<volume>`.
    if (volume.ephemeral) refs.add(vertexKey('pvc', namespace, `${podName}-${str(volume.name)}`));
  }
  for (const status of arr(obj(pod.status).resourceClaimStatuses)) {
    const name = str(status.resourceClaimName);
    if (name) refs.add(vertexKey('resourceclaim', namespace, name));
  }
  for (const claim of arr(spec.resourceClaims)) {
    const name = str(claim.resourceClaimName);
    if (name) refs.add(vertexKey('resourceclaim', namespace, name));
  }
  return [...refs];
}

/** The secrets a persistent volume names (its plugins' credentials). */
export function persistentVolumeSecrets(pv: Json): string[] {
  const spec = obj(pv.spec);
  const refs = new Set<string>();
  for (const value of Object.values(spec)) {
    const source = obj(value);
    for (const field of ['secretRef', 'nodePublishSecretRef', 'nodeStageSecretRef', 'controllerExpandSecretRef', 'nodeExpandSecretRef']) {
      const ref = obj(source[field]);
      if (str(ref.name)) refs.add(vertexKey('secret', str(ref.namespace), str(ref.name)));
    }
  }
  return [...refs];
}

export class NodeGraph {
  /** pod key -> its node and what it reaches. */
  private readonly pods = new Map<string, {node: string; refs: string[]}>();
  /** node -> reached vertex -> how many pods reach it. */
  private readonly reach = new Map<string, Map<string, number>>();
  /** pvc vertex -> pv name. */
  private readonly claimVolumes = new Map<string, string>();
  /** pv name -> secret vertices. */
  private readonly volumeSecrets = new Map<string, string[]>();
  /** volume attachment name -> {node, pv}. */
  private readonly attachments = new Map<string, {node: string; pv: string}>();

  private count(node: string, refs: string[], delta: number): void {
    let counts = this.reach.get(node);
    if (!counts) this.reach.set(node, (counts = new Map()));
    for (const ref of refs) {
      const next = (counts.get(ref) ?? 0) + delta;
      if (next > 0) counts.set(ref, next);
      else counts.delete(ref);
    }
    if (counts.size === 0) this.reach.delete(node);
  }

  applyPod(pod: Json): void {
    const meta = obj(pod.metadata);
    const key = `${str(meta.namespace)}/${str(meta.name)}`;
    this.deletePod(pod);
    const node = str(obj(pod.spec).nodeName);
    // Unbound pods reach nothing; neither do finished ones (upstream drops them from the graph).
    const phase = str(obj(pod.status).phase);
    if (!node || phase === 'Succeeded' || phase === 'Failed') return;
    const refs = podReferences(pod);
    this.pods.set(key, {node, refs});
    this.count(node, refs, 1);
  }

  deletePod(pod: Json): void {
    const meta = obj(pod.metadata);
    const key = `${str(meta.namespace)}/${str(meta.name)}`;
    const previous = this.pods.get(key);
    if (!previous) return;
    this.pods.delete(key);
    this.count(previous.node, previous.refs, -1);
  }

  applyPersistentVolumeClaim(pvc: Json): void {
    const meta = obj(pvc.metadata);
    const key = vertexKey('pvc', str(meta.namespace), str(meta.name));
    const volume = str(obj(pvc.spec).volumeName);
    if (volume) this.claimVolumes.set(key, volume);
    else this.claimVolumes.delete(key);
  }

  deletePersistentVolumeClaim(pvc: Json): void {
    const meta = obj(pvc.metadata);
    this.claimVolumes.delete(vertexKey('pvc', str(meta.namespace), str(meta.name)));
  }

  applyPersistentVolume(pv: Json): void {
    this.volumeSecrets.set(str(obj(pv.metadata).name), persistentVolumeSecrets(pv));
  }

  deletePersistentVolume(pv: Json): void {
    this.volumeSecrets.delete(str(obj(pv.metadata).name));
  }

  applyVolumeAttachment(va: Json): void {
    const spec = obj(va.spec);
    this.attachments.set(str(obj(va.metadata).name), {node: str(spec.nodeName), pv: str(obj(spec.source).persistentVolumeName)});
  }

  deleteVolumeAttachment(va: Json): void {
    this.attachments.delete(str(obj(va.metadata).name));
  }

  /** The persistent volumes a node reaches: through its pods' claims, and its volume attachments. */
  private volumesOf(node: string): Set<string> {
    const volumes = new Set<string>();
    for (const ref of this.reach.get(node)?.keys() ?? []) {
      const volume = ref.startsWith('pvc/') ? this.claimVolumes.get(ref) : undefined;
      if (volume) volumes.add(volume);
    }
    for (const a of this.attachments.values()) if (a.node === node && a.pv) volumes.add(a.pv);
    return volumes;
  }

  /** Whether the node reaches the object. */
  hasPath(node: string, type: VertexType, namespace: string, name: string): boolean {
    const key = vertexKey(type, namespace, name);
    if (this.reach.get(node)?.has(key)) return true;
    if (type === 'pv') return this.volumesOf(node).has(name);
    if (type === 'volumeattachment') return this.attachments.get(name)?.node === node;
    if (type === 'secret') {
      for (const volume of this.volumesOf(node)) if (this.volumeSecrets.get(volume)?.includes(key)) return true;
    }
    return false;
  }
}
