/**
 * The `ttl-after-finished` controller: deletes a Job `spec.ttlSecondsAfterFinished` seconds after
 * it finished (its Complete or Failed condition turned True), with foreground propagation so its
 * pods go first, as upstream's. Before deleting it reads the job again from the API server: a job
 * whose TTL was raised or removed meanwhile stays. The deletion is conditioned on the job's uid and
 * resourceVersion, so a job replaced or changed since that read is not deleted by mistake.
 */
import { ApiStatusError } from '../../../client/errors.js';
import { RateLimitingQueue, resourcePath, type DeletedFinalStateUnknown, deletedObject } from '../../../client/informers/index.js';
import type { ControllerContext, ControllerDescriptor, RunningController } from './types.js';
import { runQueueWorkers } from './queue-workers.js';
import { isNotFound, objectKey } from './owners.js';
import { finishedCondition, type Job } from './job-core.js';
import { JOBS } from './job.js';

/** When the job may be deleted (ms since the epoch), or undefined when it never expires (no TTL, not finished). */
export function ttlExpiresAt(job: Job): number | undefined {
  const ttl = job.spec?.ttlSecondsAfterFinished;
  if (typeof ttl !== 'number' || job.metadata.deletionTimestamp) return undefined;
  const finished = finishedCondition(job);
  if (!finished) return undefined;
  const at = Date.parse(finished.lastTransitionTime ?? '');
  return Number.isNaN(at) ? undefined : at + ttl * 1000;
}

export function startTtlAfterFinishedController(ctx: ControllerContext, signal: AbortSignal): RunningController {
  const workers = Math.max(1, Number(ctx.options['concurrent-ttl-after-finished-syncs'] ?? 5));
  const jobs = ctx.informers.informerFor<Job>(JOBS);
  const queue = new RateLimitingQueue<string>({ name: 'ttl_jobs_to_delete', metrics: ctx.metrics });
  const stats = { deleted: 0 };
  const enqueue = (job: Job) => {
    if (ttlExpiresAt(job) !== undefined) queue.add(objectKey(job));
  };
  const registrations = [
    jobs.addEventHandler({
      onAdd: enqueue,
      onUpdate: (_old, job) => enqueue(job),
      onDelete: (object) => queue.forget(objectKey(deletedObject(object as Job | DeletedFinalStateUnknown<Job>))),
    }),
  ];
  const jobPath = (namespace: string, name: string) => `${resourcePath({ ...JOBS, namespace })}/${encodeURIComponent(name)}`;

  const sync = async (key: string): Promise<void> => {
    const cached = jobs.indexer.getByKey(key);
    if (!cached) return;
    const expiresAt = ttlExpiresAt(cached);
    if (expiresAt === undefined) return;
    if (expiresAt > ctx.now()) {
      queue.addAfter(key, expiresAt - ctx.now());
      return;
    }
    // The cache may be behind: the TTL may have changed since. Decide on the API server's copy.
    const [namespace, name] = [cached.metadata.namespace ?? '', cached.metadata.name ?? ''];
    let fresh: Job;
    try {
      fresh = await ctx.client.get<Job>(jobPath(namespace, name));
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    const freshExpiry = ttlExpiresAt(fresh);
    if (freshExpiry === undefined) return;
    if (freshExpiry > ctx.now()) {
      queue.addAfter(key, freshExpiry - ctx.now());
      return;
    }
    ctx.logger.v(2).info('Cleaning up Job', 'job', key);
    try {
      await ctx.client.request({
        method: 'DELETE',
        path: jobPath(namespace, name),
        body: {
          kind: 'DeleteOptions',
          apiVersion: 'v1',
          propagationPolicy: 'Foreground',
          preconditions: { uid: fresh.metadata.uid, resourceVersion: fresh.metadata.resourceVersion },
        },
      });
      stats.deleted++;
    } catch (error) {
      // Gone, or changed since the read (409): its next update brings it back here if still due.
      if (isNotFound(error) || (error instanceof ApiStatusError && error.code === 409)) return;
      throw error;
    }
  };

  const done = runQueueWorkers({ ctx, signal, queue, workers, sync, name: 'ttl-after-finished', registrations });
  return {
    done,
    snapshot: () => ({ name: 'ttl-after-finished', workers, queueDepth: queue.len(), details: { jobsDeleted: stats.deleted } }),
  };
}

export const ttlAfterFinishedController: ControllerDescriptor = {
  name: 'ttl-after-finished',
  enabledByDefault: true,
  start: startTtlAfterFinishedController,
};
