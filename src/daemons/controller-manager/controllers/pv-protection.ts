/**
 * The PV protection controller (upstream pkg/controller/volume/pvprotection, --controllers name
 * `pv-protection`): a PersistentVolume being deleted keeps its `<labelDomain>/pv-protection`
 * finalizer while it is bound to a claim (status.phase Bound), and loses it once released, so the
 * API server can remove it; a volume not being deleted that lacks the finalizer gets it. One
 * worker, as upstream runs it.
 */
import {RateLimitingQueue, type ResourceRef} from '../../../client/informers/index.js';
import {isDeletionCandidate, needsFinalizer, pvProtectionFinalizer} from '../../../api/storage-protection.js';
import {patchFinalizer, type FinalizerChange, type ProtectedObject} from './protection-finalizer.js';
import {runQueueWorkers} from './queue-workers.js';
import type {ControllerContext, ControllerDescriptor, RunningController} from './types.js';

const PERSISTENT_VOLUMES: ResourceRef = {group: '', version: 'v1', resource: 'persistentvolumes'};
const WORKERS = 1;

export interface PersistentVolume extends ProtectedObject {
  status?: {phase?: string};
}

/** Pure: whether a volume is in use (upstream's isBeingUsed: bound to a claim, as the PV controller records it). */
export function isVolumeInUse(pv: PersistentVolume): boolean {
  return pv.status?.phase === 'Bound';
}

/** Pure: upstream's processPV. `undefined`: leave the finalizers as they are. */
export function pvFinalizerChange(pv: PersistentVolume): FinalizerChange | undefined {
  const finalizer = pvProtectionFinalizer();
  if (isDeletionCandidate(pv, finalizer)) return isVolumeInUse(pv) ? undefined : 'remove';
  return needsFinalizer(pv, finalizer) ? 'add' : undefined;
}

function start(ctx: ControllerContext, signal: AbortSignal): RunningController {
  const queue = new RateLimitingQueue<string>({name: 'pvprotection', metrics: ctx.metrics});
  const volumes = ctx.informers.informerFor<PersistentVolume>(PERSISTENT_VOLUMES);
  // Only volumes with something to do are queued (upstream's pvAddedUpdated).
  const enqueue = (pv: PersistentVolume) => {
    if (pvFinalizerChange(pv) !== undefined) queue.add(pv.metadata!.name!);
  };
  const registrations = [volumes.addEventHandler({onAdd: enqueue, onUpdate: (_, pv) => enqueue(pv)})];

  const sync = async (name: string): Promise<void> => {
    const pv = volumes.indexer.getByKey(name);
    if (!pv) return;
    const change = pvFinalizerChange(pv);
    if (!change) {
      ctx.logger.v(4).info('Keeping PV because it is being used', 'PV', name);
      return;
    }
    await patchFinalizer(ctx.client, `/api/v1/persistentvolumes/${encodeURIComponent(name)}`, pv, pvProtectionFinalizer(), change);
    ctx.logger.v(3).info(change === 'add' ? 'Added protection finalizer to PV' : 'Removed protection finalizer from PV', 'PV', name);
  };

  const done = runQueueWorkers({ctx, signal, queue, workers: WORKERS, sync, name: 'pv-protection', registrations});
  return {done, snapshot: () => ({name: 'pv-protection', workers: WORKERS, queueDepth: queue.len()})};
}

export const pvProtectionController: ControllerDescriptor = {name: 'pv-protection', enabledByDefault: true, start};
