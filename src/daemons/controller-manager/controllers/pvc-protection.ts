/**
 * The PVC protection controller (upstream pkg/controller/volume/pvcprotection, --controllers name
 * `pvc-protection`): a PersistentVolumeClaim being deleted keeps its `<labelDomain>/pvc-protection`
 * finalizer while a scheduled pod uses it (a `persistentVolumeClaim` volume naming it, or the
 * generic ephemeral volume it was created for), and loses it once none does, so the API server can
 * remove it; a claim not being deleted that lacks the finalizer gets it.
 *
 * As upstream, the pod cache (indexed by the claims pods name) is asked first; when it knows no
 * user, a live list of the namespace's pods decides, since a pod just created may not be in the
 * cache yet and a claim removed under it cannot be undone. A claim is looked at again when a pod
 * that used it is deleted, terminates or is not scheduled. One worker, as upstream runs it.
 */
import {deletedObject, RateLimitingQueue, type ApiObject, type ObjectMeta, type ResourceRef} from '../../../client/informers/index.js';
import {isDeletionCandidate, needsFinalizer, pvcProtectionFinalizer} from '../../../api/storage-protection.js';
import {LivePodLists} from './pvc-live-pods.js';
import {patchFinalizer, type FinalizerChange, type ProtectedObject} from './protection-finalizer.js';
import {runQueueWorkers} from './queue-workers.js';
import type {ControllerContext, ControllerDescriptor, RunningController} from './types.js';

const CLAIMS: ResourceRef = {group: '', version: 'v1', resource: 'persistentvolumeclaims'};
const PODS: ResourceRef = {group: '', version: 'v1', resource: 'pods'};
const WORKERS = 1;
/** Upstream's common.PodPVCIndex: pods by `<namespace>/<claim>` of every claim they name. */
export const POD_PVC_INDEX = 'pod-pvc-index';

interface ContainerStatus {
  state?: {running?: object; waiting?: object; terminated?: object};
}

export interface Pod extends ApiObject {
  metadata?: ObjectMeta & {deletionTimestamp?: string; deletionGracePeriodSeconds?: number};
  spec?: {nodeName?: string; volumes?: {name: string; persistentVolumeClaim?: {claimName?: string}; ephemeral?: object}[]};
  status?: {phase?: string; containerStatuses?: ContainerStatus[]; initContainerStatuses?: ContainerStatus[]; ephemeralContainerStatuses?: ContainerStatus[]};
}

export type PersistentVolumeClaim = ProtectedObject;

/** Pure: the claims a pod's volumes name, a generic ephemeral volume's being `<pod>-<volume>` (upstream's ephemeral.VolumeClaimName). */
export function claimNamesOf(pod: Pod): string[] {
  const names: string[] = [];
  for (const volume of pod.spec?.volumes ?? []) {
    if (volume.persistentVolumeClaim?.claimName) names.push(volume.persistentVolumeClaim.claimName);
    else if (volume.ephemeral) names.push(`${pod.metadata?.name ?? ''}-${volume.name}`);
  }
  return names;
}

/**
 * Pure: the kubelet is done with the pod or it was force-deleted (deleted with a zero grace period);
 * it only waits for removal, maybe blocked by its own finalizers. Upstream lets the claims of its
 * ephemeral volumes go then, which breaks a cycle of a pod finalizer waiting for its claim.
 */
export function podIsShutDown(pod: Pod): boolean {
  return Boolean(pod.metadata?.deletionTimestamp) && pod.metadata?.deletionGracePeriodSeconds === 0;
}

const notRunning = (statuses: ContainerStatus[] | undefined) => (statuses ?? []).every((s) => s.state?.terminated || s.state?.waiting);

/** Pure: upstream's volumeutil.IsPodTerminated: finished, or being deleted with no container running. */
export function isPodTerminated(pod: Pod): boolean {
  const status = pod.status ?? {};
  if (status.phase === 'Succeeded' || status.phase === 'Failed') return true;
  return Boolean(pod.metadata?.deletionTimestamp) && notRunning(status.initContainerStatuses) && notRunning(status.containerStatuses) && notRunning(status.ephemeralContainerStatuses);
}

/**
 * Pure: whether `pod` keeps `claim` (upstream's podUsesPVC). Only a scheduled pod counts: the agent
 * sees pods once scheduled and will not start one whose claim is being deleted. A pod naming the
 * claim in a persistentVolumeClaim volume keeps it until the pod is gone, even finished (its
 * volumes may still be unmounting); an ephemeral volume's claim is kept only when it was created
 * for this very pod (controlled by its uid) and the pod is not shut down.
 */
export function podUsesClaim(pod: Pod, claim: PersistentVolumeClaim): boolean {
  if (!pod.spec?.nodeName || pod.metadata?.namespace !== claim.metadata?.namespace) return false;
  const claimName = claim.metadata?.name;
  return (pod.spec.volumes ?? []).some((volume) => {
    if (volume.persistentVolumeClaim) return volume.persistentVolumeClaim.claimName === claimName;
    if (!volume.ephemeral || podIsShutDown(pod) || `${pod.metadata?.name}-${volume.name}` !== claimName) return false;
    return (claim.metadata?.ownerReferences ?? []).some((ref) => ref.controller === true && ref.uid === pod.metadata?.uid);
  });
}

/**
 * Pure: upstream's processPVC decision for a claim, given whether some pod uses it (which matters
 * only for a claim being deleted). `undefined`: leave the finalizers as they are.
 */
export function pvcFinalizerChange(claim: PersistentVolumeClaim, inUse: boolean): FinalizerChange | undefined {
  const finalizer = pvcProtectionFinalizer();
  if (isDeletionCandidate(claim, finalizer)) return inUse ? undefined : 'remove';
  return needsFinalizer(claim, finalizer) ? 'add' : undefined;
}

/**
 * Pure: whether a pod event may let a claim go (upstream's enqueuePVCs filter): the pod is deleted,
 * terminated, or not scheduled. A running scheduled pod only ever keeps its claims.
 */
export function podEventMayReleaseClaims(pod: Pod, deleted: boolean): boolean {
  return deleted || isPodTerminated(pod) || !pod.spec?.nodeName;
}

function start(ctx: ControllerContext, signal: AbortSignal): RunningController {
  const queue = new RateLimitingQueue<string>({name: 'pvcprotection', metrics: ctx.metrics});
  const claims = ctx.informers.informerFor<PersistentVolumeClaim>(CLAIMS);
  const pods = ctx.informers.informerFor<Pod>(PODS, {
    indexers: {[POD_PVC_INDEX]: (pod) => claimNamesOf(pod).map((claim) => `${pod.metadata?.namespace ?? ''}/${claim}`)},
  });
  const claimKey = (claim: PersistentVolumeClaim) => `${claim.metadata?.namespace ?? ''}/${claim.metadata?.name ?? ''}`;

  const livePods = new LivePodLists<Pod>(async (namespace) => {
    const list = await ctx.client.get<{items?: Pod[]}>(`/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`);
    return list.items ?? [];
  });

  // Only claims with something to do are queued (upstream's pvcAddedUpdated).
  const onClaim = (claim: PersistentVolumeClaim) => {
    const finalizer = pvcProtectionFinalizer();
    if (!needsFinalizer(claim, finalizer) && !isDeletionCandidate(claim, finalizer)) return;
    livePods.observed(claimKey(claim));
    queue.add(claimKey(claim));
  };
  const enqueueClaimsOf = (pod: Pod, deleted: boolean) => {
    if (!podEventMayReleaseClaims(pod, deleted)) return;
    livePods.podsChanged(pod.metadata?.namespace ?? '');
    for (const claim of claimNamesOf(pod)) queue.add(`${pod.metadata?.namespace ?? ''}/${claim}`);
  };
  const registrations = [
    claims.addEventHandler({
      onAdd: onClaim,
      onUpdate: (_, claim) => onClaim(claim),
      onDelete: (claim) => livePods.forget(claimKey(deletedObject(claim))),
    }),
    pods.addEventHandler({
      onAdd: (pod) => enqueueClaimsOf(pod, false),
      onUpdate: (old, pod) => {
        enqueueClaimsOf(pod, false);
        // An update may hide the deletion of a pod and the creation of another of the same name:
        // the claims of the old one may be free now.
        if (old.metadata?.uid !== pod.metadata?.uid) enqueueClaimsOf(old, true);
      },
      onDelete: (pod) => enqueueClaimsOf(deletedObject(pod), true),
    }),
  ];

  /** The cache first (cheap, and enough to keep the claim); then a live list, which alone may let it go. */
  const isInUse = async (claim: PersistentVolumeClaim): Promise<boolean> => {
    const key = claimKey(claim);
    if (pods.indexer.byIndex(POD_PVC_INDEX, key).some((pod) => podUsesClaim(pod, claim))) return true;
    const user = (await livePods.pods(claim.metadata?.namespace ?? '', key)).find((pod) => podUsesClaim(pod, claim));
    if (user) ctx.logger.v(2).info('Pod uses PVC', 'pod', `${claim.metadata?.namespace}/${user.metadata?.name}`, 'PVC', key);
    return user !== undefined;
  };

  const sync = async (key: string): Promise<void> => {
    try {
      await syncClaim(key);
    } finally {
      // The backlog is done: later claims get fresh lists.
      if (queue.len() === 0) livePods.clear();
    }
  };

  const syncClaim = async (key: string): Promise<void> => {
    const claim = claims.indexer.getByKey(key);
    if (!claim) return;
    // Whether it is used matters only to a claim being deleted (and costs a live list at worst).
    const inUse = isDeletionCandidate(claim, pvcProtectionFinalizer()) && (await isInUse(claim));
    const change = pvcFinalizerChange(claim, inUse);
    if (!change) {
      if (inUse) ctx.logger.v(2).info('Keeping PVC because it is being used', 'PVC', key);
      return;
    }
    const path = `/api/v1/namespaces/${encodeURIComponent(claim.metadata?.namespace ?? '')}/persistentvolumeclaims/${encodeURIComponent(claim.metadata?.name ?? '')}`;
    await patchFinalizer(ctx.client, path, claim, pvcProtectionFinalizer(), change);
    ctx.logger.v(3).info(change === 'add' ? 'Added protection finalizer to PVC' : 'Removed protection finalizer from PVC', 'PVC', key);
  };

  const done = runQueueWorkers({ctx, signal, queue, workers: WORKERS, sync, name: 'pvc-protection', registrations});
  return {done, snapshot: () => ({name: 'pvc-protection', workers: WORKERS, queueDepth: queue.len()})};
}

export const pvcProtectionController: ControllerDescriptor = {name: 'pvc-protection', enabledByDefault: true, start};
