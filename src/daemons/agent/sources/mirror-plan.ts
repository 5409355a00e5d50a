/**
 * What must happen to mirror pods (upstream: the mirror part of Kubelet.SyncPod and
 * deleteOrphanedMirrorPods). Pure: from the static pods and the mirror pods the API server has,
 * the creations and deletions that make them agree.
 */
import { configHashAnnotation, configMirrorAnnotation, podFullName, type SourcePod } from './types.js';

export type MirrorAction =
  | { type: 'create'; staticPod: SourcePod }
  | { type: 'delete'; namespace: string; name: string; uid?: string; reason: 'outdated' | 'terminating' | 'orphaned' };

/** Upstream IsMirrorPodOf: same name and namespace, mirror annotation = the static pod's hash. */
export function isMirrorPodOf(mirror: SourcePod, staticPod: SourcePod): boolean {
  const hash = staticPod.metadata.annotations?.[configHashAnnotation()];
  return (
    mirror.metadata.name === staticPod.metadata.name &&
    mirror.metadata.namespace === staticPod.metadata.namespace &&
    hash !== undefined &&
    mirror.metadata.annotations?.[configMirrorAnnotation()] === hash
  );
}

/**
 * The actions, deletions of a pod's outdated mirror before its creation. `deleteOrphans` only
 * once every static source has been read, so mirrors are not deleted before their files are.
 */
export function planMirrorPods(staticPods: readonly SourcePod[], mirrorPods: readonly SourcePod[], deleteOrphans: boolean): MirrorAction[] {
  const mirrors = new Map(mirrorPods.map((m) => [podFullName(m), m]));
  const actions: MirrorAction[] = [];
  const wanted = new Set<string>();
  for (const staticPod of staticPods) {
    const name = podFullName(staticPod);
    wanted.add(name);
    const mirror = mirrors.get(name);
    if (mirror) {
      const terminating = mirror.metadata.deletionTimestamp !== undefined;
      if (!terminating && isMirrorPodOf(mirror, staticPod)) continue;
      // The API side changed or is deleting it: the file wins, so it is deleted and made again.
      actions.push({
        type: 'delete',
        namespace: mirror.metadata.namespace ?? 'default',
        name: mirror.metadata.name ?? '',
        uid: mirror.metadata.uid,
        reason: terminating ? 'terminating' : 'outdated',
      });
    }
    actions.push({ type: 'create', staticPod });
  }
  if (deleteOrphans) {
    for (const [name, mirror] of mirrors) {
      // A terminating orphan too: a deletion with grace 0 finishes what the API server waits on.
      if (wanted.has(name)) continue;
      actions.push({ type: 'delete', namespace: mirror.metadata.namespace ?? 'default', name: mirror.metadata.name ?? '', uid: mirror.metadata.uid, reason: 'orphaned' });
    }
  }
  return actions;
}
