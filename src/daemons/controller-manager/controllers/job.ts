/**
 * The `job` controller (batch/v1 Job): informers on jobs and pods, a rate-limited queue of job keys
 * (--concurrent-job-syncs workers), and a sync that creates the pods a job still needs, deletes the
 * surplus and the leftovers of a finished or suspended job, and writes its status and Complete or
 * Failed condition through the status subresource. Decisions in job-core.ts.
 *
 * Left out against upstream: Indexed completion mode, pod failure policies and success policies
 * (a job using them is run as NonIndexed and the controller logs it), adoption of orphan pods, and
 * finalizer-based pod tracking.
 */
import {
  deletedObject,
  RateLimitingQueue,
  resourcePath,
  type DeletedFinalStateUnknown,
  type HandlerRegistration,
  type ResourceRef,
} from '../../../client/informers/index.js';
import type { ControllerContext, ControllerDescriptor, RunningController } from './types.js';
import { runQueueWorkers } from './queue-workers.js';
import { controlledBy, controllerOf, objectKey, ownerEvents, ownerHandlers, podControl } from './owners.js';
import { controllerRefTo, Expectations, podFromTemplate, podKey, slowStartBatch, SLOW_START_INITIAL_BATCH_SIZE, type Pod } from './replica-set-core.js';
import { PODS } from './replicaset.js';
import { jobStatusChanged, planJob, type Job, type JobStatus } from './job-core.js';

export const JOBS: ResourceRef = { group: 'batch', version: 'v1', resource: 'jobs' };
const UNSUPPORTED_FIELDS = ['podFailurePolicy', 'successPolicy', 'podReplacementPolicy'] as const;

export function startJobController(ctx: ControllerContext, signal: AbortSignal): RunningController {
  const workers = Math.max(1, Number(ctx.options['concurrent-job-syncs'] ?? 5));
  const log = ctx.logger;
  const jobs = ctx.informers.informerFor<Job>(JOBS);
  const pods = ctx.informers.informerFor<Pod>(PODS);
  const queue = new RateLimitingQueue<string>({ name: 'job', metrics: ctx.metrics });
  const expectations = new Expectations(() => ctx.now());
  const stats = { created: 0, deleted: 0, completed: 0, failed: 0 };
  const warned = new Set<string>();
  const keyOf = objectKey;
  const record = ownerEvents<Job>(ctx, 'job-controller', 'batch/v1', 'Job');
  const jobOf = (pod: Pod) => controllerOf(jobs, 'Job', pod);
  const podsOf = (job: Job) => controlledBy(pods, job);
  const control = podControl<Job>(ctx, record);

  const registrations: HandlerRegistration[] = [
    pods.addEventHandler({
      onAdd: (pod) => {
        const job = jobOf(pod);
        if (!job) return;
        expectations.creationObserved(keyOf(job));
        queue.add(keyOf(job));
      },
      onUpdate: (old, pod) => {
        if (old.metadata.resourceVersion === pod.metadata.resourceVersion) return;
        const job = jobOf(pod);
        if (job) queue.add(keyOf(job));
      },
      onDelete: (object) => {
        const pod = deletedObject(object as Pod | DeletedFinalStateUnknown<Pod>);
        const job = jobOf(pod);
        if (!job) return;
        expectations.deletionObserved(keyOf(job), podKey(pod));
        queue.add(keyOf(job));
      },
    }),
    jobs.addEventHandler(ownerHandlers<Job>(queue, (key) => expectations.delete(key))),
  ];

  const jobPath = (job: Job) => `${resourcePath({ ...JOBS, namespace: job.metadata.namespace })}/${encodeURIComponent(job.metadata.name ?? '')}`;

  const createPods = async (job: Job, key: string, count: number): Promise<void> => {
    expectations.expectCreations(key, count);
    const ref = controllerRefTo(job, 'batch/v1', 'Job');
    const { successes, error } = await slowStartBatch(count, SLOW_START_INITIAL_BATCH_SIZE, async () => {
      await control.createPod(job, podFromTemplate(job, ref));
      stats.created++;
    });
    for (let i = successes; i < count; i++) expectations.creationObserved(key);
    if (error) throw error;
  };

  const deletePods = async (job: Job, key: string, remove: Pod[]): Promise<void> => {
    expectations.expectDeletions(key, remove.map(podKey));
    const { deleted, error } = await control.deletePods(job, remove, (pod) => expectations.deletionObserved(key, podKey(pod)));
    stats.deleted += deleted;
    if (error) throw error;
  };

  const writeStatus = async (job: Job, status: JobStatus): Promise<void> => {
    if (!jobStatusChanged(job, status)) return;
    await ctx.client.request({ method: 'PUT', path: `${jobPath(job)}/status`, body: { ...job, status } });
  };

  const sync = async (key: string): Promise<void> => {
    if (signal.aborted) return;
    const job = jobs.indexer.getByKey(key);
    if (!job || job.metadata.deletionTimestamp) {
      if (!job) expectations.delete(key);
      return;
    }
    const unsupported = UNSUPPORTED_FIELDS.filter((f) => job.spec?.[f] !== undefined);
    if ((job.spec?.completionMode === 'Indexed' || unsupported.length > 0) && !warned.has(key)) {
      warned.add(key);
      log.warning('Job uses fields orch does not implement yet; running it as a NonIndexed job without them', 'job', key, 'fields', [...unsupported, ...(job.spec?.completionMode === 'Indexed' ? ['completionMode=Indexed'] : [])].join(','));
    }
    const plan = planJob(job, podsOf(job), ctx.now());
    if (expectations.satisfied(key)) {
      if (plan.remove.length > 0) await deletePods(job, key, plan.remove);
      if (plan.create > 0) await createPods(job, key, plan.create);
    }
    await writeStatus(job, plan.status);
    if (plan.finished) {
      if (plan.finished.type === 'Complete') {
        stats.completed++;
        record(job, 'Normal', 'Completed', 'Job completed');
      } else {
        stats.failed++;
        record(job, 'Warning', plan.finished.reason, plan.finished.message);
      }
    }
    if (plan.requeueAfterMs !== undefined) queue.addAfter(key, plan.requeueAfterMs + 100);
  };

  const done = runQueueWorkers({ ctx, signal, queue, workers, sync, name: 'job', registrations });

  return {
    done,
    snapshot: () => ({
      name: 'job',
      workers,
      queueDepth: queue.len(),
      details: { jobs: jobs.indexer.size, podsCreated: stats.created, podsDeleted: stats.deleted, completed: stats.completed, failed: stats.failed },
    }),
  };
}

export const jobController: ControllerDescriptor = {
  name: 'job',
  enabledByDefault: true,
  start: startJobController,
};
