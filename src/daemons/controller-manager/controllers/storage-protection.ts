/**
 * The protection controllers that pair with the StorageObjectInUseProtection admission plugin
 * (upstream pkg/controller/volume/pvcprotection and pvprotection, controller names `pvc-protection`
 * and `pv-protection`): a PersistentVolumeClaim being deleted loses its `<labelDomain>/pvc-protection`
 * finalizer once no scheduled pod of its namespace uses it; a PersistentVolume being deleted loses
 * `<labelDomain>/pv-protection` once it is not Bound. Until then the deletion waits.
 */
import {names} from '../../../api/names.js';
import {ApiStatusError} from '../../../client/errors.js';
import {deletedObject, RateLimitingQueue, type ApiObject, type ResourceRef} from '../../../client/informers/index.js';
import {runQueueWorkers} from './queue-workers.js';
import type {ControllerContext, ControllerDescriptor, RunningController} from './types.js';

const PVCS: ResourceRef = {group: '', version: 'v1', resource: 'persistentvolumeclaims'};
const PVS: ResourceRef = {group: '', version: 'v1', resource: 'persistentvolumes'};
const PODS: ResourceRef = {group: '', version: 'v1', resource: 'pods'};
const WORKERS = 1;

type Meta = NonNullable<ApiObject['metadata']> & {deletionTimestamp?: string; finalizers?: string[]};
interface Claim extends ApiObject {
  metadata?: Meta;
}
interface Volume extends ApiObject {
  metadata?: Meta;
  status?: {phase?: string};
}
interface Pod extends ApiObject {
  spec?: {nodeName?: string; volumes?: {name?: string; persistentVolumeClaim?: {claimName?: string}; ephemeral?: object}[]};
  status?: {phase?: string};
}

export const pvcFinalizer = (): string => `${names().labelDomain}/pvc-protection`;
export const pvFinalizer = (): string => `${names().labelDomain}/pv-protection`;

const deletingWith = (object: {metadata?: Meta} | undefined, finalizer: string): boolean =>
  Boolean(object?.metadata?.deletionTimestamp) && (object?.metadata?.finalizers ?? []).includes(finalizer);

/**
 * Upstream's podUsesPVC: a scheduled pod naming the claim in a persistentVolumeClaim volume, or (while
 * it is not shut down) in a generic ephemeral volume (`<pod>-<volume>`).
 */
export function podUsesClaim(pod: Pod, claim: string): boolean {
  if (!pod.spec?.nodeName) return false;
  const shutDown = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
  return (pod.spec.volumes ?? []).some((v) =>
    v.persistentVolumeClaim?.claimName === claim || (!shutDown && v.ephemeral !== undefined && `${pod.metadata?.name}-${v.name}` === claim));
}

/** Whether the claim's finalizer may go: it is being deleted and no pod uses it. */
export function claimReleasable(claim: Claim | undefined, pods: readonly Pod[]): boolean {
  const name = claim?.metadata?.name;
  return Boolean(name) && deletingWith(claim, pvcFinalizer()) && !pods.some((pod) => podUsesClaim(pod, name!));
}

/** Whether the volume's finalizer may go: it is being deleted and not Bound. */
export function volumeReleasable(volume: Volume | undefined): boolean {
  return deletingWith(volume, pvFinalizer()) && volume?.status?.phase !== 'Bound';
}

const withoutFinalizer = <T extends {metadata?: Meta}>(object: T, finalizer: string): T =>
  ({...object, metadata: {...object.metadata, finalizers: (object.metadata?.finalizers ?? []).filter((f) => f !== finalizer)}});

async function removeFinalizer(ctx: ControllerContext, path: string, object: {metadata?: Meta}, finalizer: string): Promise<void> {
  try {
    await ctx.client.request({method: 'PUT', path, body: withoutFinalizer(object, finalizer)});
  } catch (error) {
    // Gone already: nothing to release. A conflict is retried by the queue with the newer object.
    if (error instanceof ApiStatusError && error.code === 404) return;
    throw error;
  }
}

async function startPvcProtection(ctx: ControllerContext, signal: AbortSignal): Promise<RunningController> {
  const queue = new RateLimitingQueue<string>({name: 'pvcprotection', metrics: ctx.metrics});
  const claims = ctx.informers.informerFor<Claim>(PVCS);
  const pods = ctx.informers.informerFor<Pod>(PODS);
  const key = (o: ApiObject) => `${o.metadata?.namespace}/${o.metadata?.name}`;
  const claimsOf = (pod: Pod) => {
    for (const v of pod.spec?.volumes ?? []) {
      const claim = v.persistentVolumeClaim?.claimName ?? (v.ephemeral ? `${pod.metadata?.name}-${v.name}` : undefined);
      if (claim) queue.add(`${pod.metadata?.namespace}/${claim}`);
    }
  };
  const registrations = [
    claims.addEventHandler({
      onAdd: (c) => deletingWith(c, pvcFinalizer()) && queue.add(key(c)),
      onUpdate: (_, c) => deletingWith(c, pvcFinalizer()) && queue.add(key(c)),
    }),
    // A pod that ends or goes away may release the claims it used.
    pods.addEventHandler({onUpdate: (_, pod) => claimsOf(pod), onDelete: (pod) => claimsOf(deletedObject(pod))}),
  ];
  const sync = async (claimKey: string): Promise<void> => {
    const claim = claims.indexer.getByKey(claimKey);
    const namespace = claimKey.split('/')[0];
    const inNamespace = pods.indexer.list().filter((p) => p.metadata?.namespace === namespace);
    if (!claim || !claimReleasable(claim, inNamespace)) return;
    // Upstream asks the API server too before letting go: the informer may lag behind a new pod.
    const live = await ctx.client.get<{items?: Pod[]}>(`/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`);
    if (!claimReleasable(claim, live.items ?? [])) return;
    await removeFinalizer(ctx, `/api/v1/namespaces/${encodeURIComponent(namespace)}/persistentvolumeclaims/${encodeURIComponent(claim.metadata!.name!)}`, claim, pvcFinalizer());
  };
  const done = runQueueWorkers({ctx, signal, queue, workers: WORKERS, sync, name: 'pvc-protection', registrations});
  return {done, snapshot: () => ({name: 'pvc-protection', workers: WORKERS, queueDepth: queue.len()})};
}

async function startPvProtection(ctx: ControllerContext, signal: AbortSignal): Promise<RunningController> {
  const queue = new RateLimitingQueue<string>({name: 'pvprotection', metrics: ctx.metrics});
  const volumes = ctx.informers.informerFor<Volume>(PVS);
  const registrations = [
    volumes.addEventHandler({
      onAdd: (v) => deletingWith(v, pvFinalizer()) && queue.add(v.metadata!.name!),
      onUpdate: (_, v) => deletingWith(v, pvFinalizer()) && queue.add(v.metadata!.name!),
    }),
  ];
  const sync = async (name: string): Promise<void> => {
    const volume = volumes.indexer.getByKey(name);
    if (!volume || !volumeReleasable(volume)) return;
    await removeFinalizer(ctx, `/api/v1/persistentvolumes/${encodeURIComponent(name)}`, volume, pvFinalizer());
  };
  const done = runQueueWorkers({ctx, signal, queue, workers: WORKERS, sync, name: 'pv-protection', registrations});
  return {done, snapshot: () => ({name: 'pv-protection', workers: WORKERS, queueDepth: queue.len()})};
}

export const pvcProtectionController: ControllerDescriptor = {name: 'pvc-protection', enabledByDefault: true, start: startPvcProtection};
export const pvProtectionController: ControllerDescriptor = {name: 'pv-protection', enabledByDefault: true, start: startPvProtection};
