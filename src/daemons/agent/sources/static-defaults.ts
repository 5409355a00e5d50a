/**
 * The defaults the agent gives a pod read from a file or a URL (upstream
 * pkg/kubelet/config/common.go applyDefaults): a stable UID hashed from the manifest and where it
 * came from, the `<name>-<node>` name, the `default` namespace, the node binding, the config hash
 * annotation, the NoExecute toleration of file pods and the Pending phase. Pure.
 */
import { configHashAnnotation, type SourcePod } from './types.js';
import type {Toleration} from '../../../api/toleration.js';

const FNV128_OFFSET = 0x6c62272e07bb014262b821756295c58dn;
const FNV128_PRIME = 0x0000000001000000000000000000013bn;
const MASK128 = (1n << 128n) - 1n;

/**
 * 128-bit FNV-1a, as hex. Hand-written because node:crypto offers no FNV and upstream's static pod
 * UIDs are FNV-1a 128 (a few lines; BigInt keeps it exact and a manifest is small).
 */
export function fnv1a128Hex(data: string | Uint8Array): string {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let hash = FNV128_OFFSET;
  for (const byte of bytes) hash = ((hash ^ BigInt(byte)) * FNV128_PRIME) & MASK128;
  return hash.toString(16).padStart(32, '0');
}

/** JSON with object keys sorted, so the same manifest hashes the same whatever its key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Where a static pod was read: a manifest file, or the manifest URL. */
export type StaticOrigin = { kind: 'file'; path: string } | { kind: 'http'; url: string };

/**
 * The UID of a static pod: the hash of the decoded pod followed, as upstream writes them after
 * the object, by `host:<node>file:<path>` for a file or `url:<url>` for a URL. Stable across agent
 * restarts; changes whenever the manifest's content changes.
 */
export function staticPodUid(pod: SourcePod, origin: StaticOrigin, nodeName: string): string {
  const suffix = origin.kind === 'file' ? `host:${nodeName}file:${origin.path}` : `url:${origin.url}`;
  return fnv1a128Hex(canonicalJson(pod) + suffix);
}

/** Upstream generatePodName: unique among nodes. */
export function staticPodName(name: string, nodeName: string): string {
  return `${name}-${nodeName.toLowerCase()}`;
}


const TOLERATE_NO_EXECUTE: Toleration = { operator: 'Exists', effect: 'NoExecute' };

/** Upstream AddOrUpdateTolerationInPod: replaces a toleration matching key/operator/value/effect, else appends. */
function withToleration(tolerations: Toleration[], toleration: Toleration): Toleration[] {
  const same = (t: Toleration) =>
    (t.key ?? '') === (toleration.key ?? '') &&
    (t.operator || 'Equal') === (toleration.operator || 'Equal') &&
    (t.value ?? '') === (toleration.value ?? '') &&
    (t.effect ?? '') === (toleration.effect ?? '');
  const index = tolerations.findIndex(same);
  if (index < 0) return [...tolerations, toleration];
  return tolerations.map((t, i) => (i === index ? toleration : t));
}

/** A copy of `pod` with the static pod defaults applied. */
export function applyStaticDefaults(pod: SourcePod, origin: StaticOrigin, nodeName: string): SourcePod {
  const uid = pod.metadata.uid || staticPodUid(pod, origin, nodeName);
  const spec: SourcePod['spec'] = { ...pod.spec, nodeName };
  if (origin.kind === 'file') {
    // So node problems (unreachable, not-ready taints) never evict the node's own static pods.
    const tolerations = Array.isArray(pod.spec.tolerations) ? (pod.spec.tolerations as Toleration[]) : [];
    spec.tolerations = withToleration(tolerations, TOLERATE_NO_EXECUTE);
  }
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      uid,
      name: staticPodName(pod.metadata.name ?? '', nodeName),
      namespace: pod.metadata.namespace || 'default',
      annotations: { ...pod.metadata.annotations, [configHashAnnotation()]: uid },
    },
    spec,
    status: { ...pod.status, phase: 'Pending' },
  };
}
