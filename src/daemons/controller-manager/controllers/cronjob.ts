/**
 * The `cronjob` controller (batch/v1 CronJob): informers on cron jobs and jobs, a rate-limited queue
 * of cron job keys (--concurrent-cron-job-syncs workers), and a sync that creates the Job of each
 * scheduled time (named after the time, so a run is never created twice), applies the concurrency
 * policy, deletes finished jobs beyond the history limits and writes status.active,
 * lastScheduleTime and lastSuccessfulTime. Each cron job is requeued for its next scheduled time on
 * the injected clock. Decisions in cronjob-core.ts; the job controller runs the jobs.
 *
 * Left out against upstream: `@every <duration>` schedules and a `TZ=`/`CRON_TZ=` prefix in the
 * schedule (upstream's validation refuses the prefix; here the controller warns and runs nothing
 * for either), and the creation-skew metric.
 */
import {ApiStatusError} from '../../../client/errors.js';
import {
  deletedObject,
  RateLimitingQueue,
  resourcePath,
  type DeletedFinalStateUnknown,
  type HandlerRegistration,
  type ResourceRef,
} from '../../../client/informers/index.js';
import type {ControllerContext, ControllerDescriptor, RunningController} from './types.js';
import {runQueueWorkers} from './queue-workers.js';
import {controlledBy, controllerOf, objectKey, ownerEvents} from './owners.js';
import {controllerRefOf, errorMessage} from './replica-set-core.js';
import {JOBS} from './job.js';
import type {Job} from './job-core.js';
import {
  cronJobStatusChanged,
  isJobFinished,
  nextScheduleDelayMs,
  cronJobSchedule,
  planCronJob,
  statusAfterRun,
  type CronJob,
  type CronJobStatus,
  type ObjectReference,
  type PlannedEvent,
} from './cronjob-core.js';

export const CRONJOBS: ResourceRef = {group: 'batch', version: 'v1', resource: 'cronjobs'};
const BACKGROUND = {kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background'};

function statusCode(error: unknown): number | undefined {
  return error instanceof ApiStatusError ? error.code : undefined;
}

export function startCronJobController(ctx: ControllerContext, signal: AbortSignal): RunningController {
  const workers = Math.max(1, Number(ctx.options['concurrent-cron-job-syncs'] ?? 5));
  const log = ctx.logger;
  const cronJobs = ctx.informers.informerFor<CronJob>(CRONJOBS);
  const jobs = ctx.informers.informerFor<Job>(JOBS);
  const queue = new RateLimitingQueue<string>({name: 'cronjob', metrics: ctx.metrics});
  const stats = {created: 0, deleted: 0};
  const warned = new Set<string>();
  const keyOf = objectKey;
  const recordOn = ownerEvents<CronJob>(ctx, 'cronjob-controller', 'batch/v1', 'CronJob');
  const record = (cronJob: CronJob, e: PlannedEvent) => recordOn(cronJob, e.type, e.reason, e.message);
  const cronJobOf = (job: Job) => controllerOf(cronJobs, 'CronJob', job);
  const jobsOf = (cronJob: CronJob) => controlledBy(jobs, cronJob);
  const enqueueOwner = (job: Job) => {
    const cronJob = cronJobOf(job);
    if (cronJob) queue.add(keyOf(cronJob));
  };

  const registrations: HandlerRegistration[] = [
    jobs.addEventHandler({
      onAdd: enqueueOwner,
      onUpdate: (old, job) => {
        if (old.metadata.resourceVersion === job.metadata.resourceVersion) return;
        // A job handed to another owner is news for the old one too.
        if (controllerRefOf(old)?.uid !== controllerRefOf(job)?.uid) enqueueOwner(old);
        enqueueOwner(job);
      },
      onDelete: (object) => enqueueOwner(deletedObject(object as Job | DeletedFinalStateUnknown<Job>)),
    }),
    cronJobs.addEventHandler({
      onAdd: (cronJob) => queue.add(keyOf(cronJob)),
      onUpdate: (old, cronJob) => {
        // A new schedule takes effect from its next time (upstream): times it would have had in
        // the past are not run.
        if (old.spec?.schedule !== cronJob.spec?.schedule || old.spec?.timeZone !== cronJob.spec?.timeZone) {
          const parsed = cronJobSchedule(cronJob);
          // An unusable schedule is synced now, so its warning comes now.
          if (parsed.error === undefined) {
            const delay = nextScheduleDelayMs(cronJob, ctx.now(), parsed.schedule);
            if (delay !== undefined) {
              queue.addAfter(keyOf(cronJob), Math.max(0, delay));
              return;
            }
          }
        }
        queue.add(keyOf(cronJob));
      },
      onDelete: (object) => queue.add(keyOf(deletedObject(object as CronJob | DeletedFinalStateUnknown<CronJob>))),
    }),
  ];

  const cronJobPath = (cronJob: CronJob) => `${resourcePath({...CRONJOBS, namespace: cronJob.metadata.namespace})}/${encodeURIComponent(cronJob.metadata.name ?? '')}`;
  const jobsPath = (namespace: string | undefined) => resourcePath({...JOBS, namespace});
  const jobPath = (namespace: string | undefined, name: string | undefined) => `${jobsPath(namespace)}/${encodeURIComponent(name ?? '')}`;

  /** Reads an object from the API server; undefined when it does not exist. */
  const read = async <T>(path: string): Promise<T | undefined> => {
    try {
      return await ctx.client.get<T>(path);
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  };

  /** Deletes a job with its pods in the background; true when it is gone (upstream's deleteJob). */
  const deleteJob = async (cronJob: CronJob, ref: ObjectReference): Promise<boolean> => {
    try {
      await ctx.client.request({method: 'DELETE', path: jobPath(ref.namespace, ref.name), body: BACKGROUND});
    } catch (err) {
      if (statusCode(err) === 404) return true;
      record(cronJob, {type: 'Warning', reason: 'FailedDelete', message: `Deleted job: ${errorMessage(err)}`});
      log.error('Error deleting job from cronjob', 'job', `${ref.namespace ?? ''}/${ref.name ?? ''}`, 'cronjob', keyOf(cronJob), 'err', errorMessage(err));
      return false;
    }
    stats.deleted++;
    record(cronJob, {type: 'Normal', reason: 'SuccessfulDelete', message: `Deleted job ${ref.name ?? ''}`});
    return true;
  };

  const without = (status: CronJobStatus, uid: string | undefined): CronJobStatus => {
    const active = (status.active ?? []).filter((ref) => ref.uid !== uid);
    const next: CronJobStatus = {...status, active};
    if (active.length === 0) delete next.active;
    return next;
  };

  /**
   * Creates the run's job. A 409 means it exists: ours (created before a lost status write) is
   * listed active again; someone else's is left alone. Returns the job to list, if any.
   */
  const createJob = async (cronJob: CronJob, job: Job): Promise<Job | undefined> => {
    try {
      const created = await ctx.client.request<Job>({method: 'POST', path: jobsPath(cronJob.metadata.namespace), body: job});
      stats.created++;
      record(cronJob, {type: 'Normal', reason: 'SuccessfulCreate', message: `Created job ${created.body.metadata.name ?? ''}`});
      return created.body;
    } catch (err) {
      if (statusCode(err) !== 409) {
        record(cronJob, {type: 'Warning', reason: 'FailedCreate', message: `Error creating job: ${errorMessage(err)}`});
        throw err;
      }
    }
    const existing = await ctx.client.get<Job>(jobPath(cronJob.metadata.namespace, job.metadata.name));
    log.info('Job already exists', 'cronjob', keyOf(cronJob), 'job', `${cronJob.metadata.namespace ?? ''}/${job.metadata.name ?? ''}`);
    return controllerRefOf(existing)?.uid === cronJob.metadata.uid ? existing : undefined;
  };

  const writeStatus = async (cronJob: CronJob, status: CronJobStatus): Promise<void> => {
    if (!cronJobStatusChanged(cronJob, status)) return;
    await ctx.client.request({method: 'PUT', path: `${cronJobPath(cronJob)}/status`, body: {...cronJob, status}});
  };

  const sync = async (key: string): Promise<void> => {
    if (signal.aborted) return;
    let cronJob = cronJobs.indexer.getByKey(key);
    if (!cronJob) return;
    const schedule = cronJob.spec?.schedule ?? '';
    if ((schedule.trim().startsWith('@every') || schedule.includes('TZ')) && !warned.has(key)) {
      warned.add(key);
      log.warning('CronJob uses a schedule form orch does not implement; it runs no jobs', 'cronjob', key, 'schedule', schedule);
    }
    const children = jobsOf(cronJob);
    // A running job missing from the cached active list may be one this controller just listed in
    // a status write the cache has not seen yet: read the cron job afresh before calling it unexpected.
    const listed = new Set((cronJob.status?.active ?? []).map((ref) => ref.uid));
    if (children.some((j) => !isJobFinished(j) && !listed.has(j.metadata.uid))) {
      cronJob = await read<CronJob>(cronJobPath(cronJob));
      if (!cronJob) return;
    }
    // An active job missing from the cache may only be late in it: ask the API server.
    const cached = new Set(children.map((j) => j.metadata.uid));
    const gone = new Set<string>();
    for (const ref of cronJob.status?.active ?? []) {
      if (cached.has(ref.uid) || !ref.uid) continue;
      const job = await read<Job>(jobPath(ref.namespace, ref.name));
      if (!job || job.metadata.uid !== ref.uid) gone.add(ref.uid);
    }

    const plan = planCronJob({cronJob, jobs: children, gone, nowMs: ctx.now()});
    let status = plan.status;
    for (const job of plan.expired) {
      if (await deleteJob(cronJob, {namespace: job.metadata.namespace, name: job.metadata.name})) status = without(status, job.metadata.uid);
    }
    for (const e of plan.events) record(cronJob, e);
    try {
      if (plan.run) {
        for (const ref of plan.run.replace) {
          if (!(await deleteJob(cronJob, ref))) throw new Error(`could not replace job ${ref.namespace ?? ''}/${ref.name ?? ''}`);
          status = without(status, ref.uid);
        }
        const job = await createJob(cronJob, plan.run.job);
        if (job) status = statusAfterRun(status, job, plan.run.scheduledMs);
      }
    } finally {
      // What was done is recorded even when a step failed (the key is then retried).
      await writeStatus(cronJob, status);
    }
    if (plan.requeueAfterMs !== undefined) queue.addAfter(key, plan.requeueAfterMs);
  };

  const done = runQueueWorkers({ctx, signal, queue, workers, sync, name: 'cronjob', registrations});

  return {
    done,
    snapshot: () => ({
      name: 'cronjob',
      workers,
      queueDepth: queue.len(),
      details: {cronJobs: cronJobs.indexer.size, jobsCreated: stats.created, jobsDeleted: stats.deleted},
    }),
  };
}

export const cronJobController: ControllerDescriptor = {
  name: 'cronjob',
  enabledByDefault: true,
  start: startCronJobController,
};
