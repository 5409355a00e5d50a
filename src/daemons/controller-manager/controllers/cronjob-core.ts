/**
 * The decisions of the `cronjob` controller (batch/v1 CronJob), pure: given a cron job, the jobs it
 * controls and `now`, what its status is, which finished jobs fall out of the history limits, which
 * scheduled time (if any) is due, the Job to create for it, and when to look again. Upstream's
 * syncCronJob, cleanupFinishedJobs and the schedule arithmetic of pkg/controller/cronjob/utils.go
 * (Kubernetes 1.32), including its approximations (the missed-schedule count, the 100 ms padding).
 *
 * Schedules are parsed by cron-parser (a well-kept library); this module only narrows it to what
 * upstream's robfig/cron ParseStandard accepts: five fields, the @yearly...@hourly descriptors, no
 * seconds field and none of cron-parser's extensions (L, #, H). `@every <duration>` is not supported.
 */
import { names } from '../../../api/names.js';
import {CronExpressionParser} from 'cron-parser';
import {controllerRefTo, formatTime, type ObjectMeta} from './replica-set-core.js';
import {finishedCondition, type Job, type JobSpec} from './job-core.js';

/** `batch.kubernetes.io/cronjob-scheduled-timestamp` under orch's domain. */
export const scheduledTimestampAnnotation = (): string => names().annotations.cronJobScheduledTimestamp;
/** Upstream's nextScheduleDelta: requeues land a little after the scheduled time, past NTP skew. */
export const NEXT_SCHEDULE_DELTA_MS = 100;
/** More missed times than this earn a TooManyMissedTimes warning (upstream's "more than 80, less than lots"). */
export const MANY_MISSED_SCHEDULES = 100;

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
}

export interface CronJobSpec {
  schedule?: string;
  timeZone?: string;
  startingDeadlineSeconds?: number;
  concurrencyPolicy?: 'Allow' | 'Forbid' | 'Replace' | string;
  suspend?: boolean;
  jobTemplate?: {metadata?: {labels?: Record<string, string>; annotations?: Record<string, string>}; spec?: JobSpec};
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
  [field: string]: unknown;
}

export interface CronJobStatus {
  active?: ObjectReference[];
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
  [field: string]: unknown;
}

export interface CronJob {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: CronJobSpec;
  status?: CronJobStatus;
}

export interface PlannedEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

// ---------------------------------------------------------------------------------------------
// Schedules.

export interface Schedule {
  /** The first scheduled time strictly after `ms` (robfig's Next), or undefined when none ever comes. */
  next(ms: number): number | undefined;
}

export type ScheduleParse = {schedule: Schedule; error?: undefined} | {error: string; schedule?: undefined};

/** robfig/cron's descriptors, as five-field expressions (cron-parser's own differ: seconds, no @annually). */
const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** One value of a field, once lists, ranges and steps are split off: a number, `*`, `?` or a month/day name. */
const FIELD_VALUE = /^(\*|\?|\d+|[A-Za-z]{3})$/;

function standardFieldError(field: string): string | undefined {
  for (const item of field.split(',')) {
    const [range = '', step, ...extra] = item.split('/');
    if (extra.length > 0 || (step !== undefined && !/^\d+$/.test(step))) return `unsupported syntax in field: ${field}`;
    const bounds = range.split('-');
    if (bounds.length > 2 || !bounds.every((b) => FIELD_VALUE.test(b))) return `unsupported syntax in field: ${field}`;
  }
  return undefined;
}

/** Upstream's validation message for a time zone in the schedule (the controller runs nothing for it). */
export const TZ_IN_SCHEDULE_MESSAGE = 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead';

/**
 * Parses a schedule as upstream's cron.ParseStandard does, in `timeZone` (an IANA name; absent:
 * the process's local zone, as kube-controller-manager's). Errors read like robfig/cron's.
 */
export function parseSchedule(text: string, timeZone?: string): ScheduleParse {
  const trimmed = text.trim();
  if (trimmed === '') return {error: 'empty spec string'};
  let expression = trimmed;
  if (trimmed.startsWith('@')) {
    const descriptor = DESCRIPTORS[trimmed];
    if (!descriptor) return {error: `unrecognized descriptor: ${trimmed}`};
    expression = descriptor;
  }
  const fields = expression.split(/\s+/);
  if (fields.length !== 5) return {error: `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`};
  for (const field of fields) {
    const error = standardFieldError(field);
    if (error) return {error};
  }
  let parsed: ReturnType<typeof CronExpressionParser.parse>;
  try {
    parsed = CronExpressionParser.parse(expression, timeZone === undefined ? {} : {tz: timeZone});
  } catch (err) {
    return {error: (err as Error).message};
  }
  return {
    schedule: {
      next(ms) {
        try {
          parsed.reset(new Date(ms));
          return parsed.next().getTime();
        } catch {
          // cron-parser gives up on a schedule that never matches (robfig returns the zero time).
          return undefined;
        }
      },
    },
  };
}

/** Go's time.LoadLocation error for a name it cannot load; undefined for a known IANA zone. */
export function timeZoneError(timeZone: string): string | undefined {
  // Go loads "" as UTC; "Local" is refused by upstream's validation, so it is not a zone here either.
  if (timeZone === '') return undefined;
  if (timeZone !== 'Local') {
    try {
      new Intl.DateTimeFormat('en-US', {timeZone});
      return undefined;
    } catch {
      // fall through
    }
  }
  return `unknown time zone ${timeZone}`;
}

/**
 * A cron job's schedule in its zone: spec.timeZone (Go loads "" as UTC), else the process's. A
 * `TZ=`/`CRON_TZ=` prefix is refused, as upstream's validation does.
 */
export function cronJobSchedule(cronJob: CronJob): ScheduleParse {
  const text = cronJob.spec?.schedule ?? '';
  if (text.includes('TZ')) return {error: TZ_IN_SCHEDULE_MESSAGE};
  const tz = cronJob.spec?.timeZone;
  return parseSchedule(text, tz === '' ? 'UTC' : (tz ?? undefined));
}

/**
 * Go's time.RFC3339 of `ms` in `timeZone` ("2026-01-02T09:00:00+09:00", "Z" for a zero offset).
 * Hand-written on Intl: Date offers no formatting in another zone.
 */
export function formatRFC3339(ms: number, timeZone = 'UTC'): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    timeZoneName: 'longOffset',
  }).formatToParts(new Date(ms));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  const offset = part('timeZoneName').replace(/^GMT/, '');
  const zone = offset === '' || offset === '+00:00' || offset === '-00:00' ? 'Z' : offset;
  return `${part('year')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}:${part('second')}${zone}`;
}

/** Go's time.RFC1123Z in UTC ("Mon, 02 Jan 2006 15:04:05 +0000"), upstream's MissSchedule format. */
export function formatRFC1123Z(ms: number): string {
  return new Date(ms).toUTCString().replace(/GMT$/, '+0000');
}

// ---------------------------------------------------------------------------------------------
// Schedule arithmetic: upstream's mostRecentScheduleTime, nextScheduleTime, nextScheduleTimeDuration.

type Missed = 'none' | 'few' | 'many';

interface RecentSchedule {
  earliestMs: number;
  /** The latest scheduled time not after now, when one passed since earliestMs. */
  mostRecentMs?: number;
  missed: Missed;
  error?: string;
}

function earliestTimeMs(cronJob: CronJob): number {
  const last = cronJob.status?.lastScheduleTime;
  return Date.parse(last ?? cronJob.metadata.creationTimestamp ?? '') || 0;
}

/**
 * The most recent scheduled time since the last run (or the creation), with upstream's rough count
 * of the times missed: the gap between the first two times, fitted into the time elapsed. With
 * `withDeadline`, nothing older than startingDeadlineSeconds is considered.
 */
export function mostRecentScheduleTime(cronJob: CronJob, nowMs: number, schedule: Schedule, withDeadline: boolean): RecentSchedule {
  let earliestMs = earliestTimeMs(cronJob);
  const deadline = cronJob.spec?.startingDeadlineSeconds;
  if (withDeadline && deadline !== undefined && deadline !== null) earliestMs = Math.max(earliestMs, nowMs - deadline * 1000);
  const t1 = schedule.next(earliestMs);
  const t2 = t1 === undefined ? undefined : schedule.next(t1);
  if (t1 === undefined || nowMs < t1) return {earliestMs, missed: 'none'};
  if (t2 === undefined || nowMs < t2) return {earliestMs, mostRecentMs: t1, missed: 'none'};

  const between = Math.round((t2 - t1) / 1000);
  if (between < 1) return {earliestMs, missed: 'none', error: 'time difference between two schedules is less than 1 second'};
  const elapsed = Math.trunc((nowMs - t1) / 1000);
  const missedCount = Math.trunc(elapsed / between) + 1;
  // Start one interval before the estimate and let the schedule find the real times (irregular
  // schedules such as `30 6-16/4 * * 1-5` do not fit the estimate).
  let mostRecentMs: number | undefined;
  for (let t = schedule.next(t1 + (missedCount - 2) * between * 1000); t !== undefined && t <= nowMs; t = schedule.next(t)) mostRecentMs = t;
  return {earliestMs, mostRecentMs, missed: missedCount > MANY_MISSED_SCHEDULES ? 'many' : 'few'};
}

/** How long until the next scheduled time after now, plus the padding (upstream's nextScheduleTimeDuration). */
export function nextScheduleDelayMs(cronJob: CronJob, nowMs: number, schedule: Schedule): number | undefined {
  const recent = mostRecentScheduleTime(cronJob, nowMs, schedule, false);
  const base = recent.error ? nowMs : (recent.mostRecentMs ?? (recent.missed === 'none' ? recent.earliestMs : nowMs));
  const next = schedule.next(base);
  return next === undefined ? undefined : next + NEXT_SCHEDULE_DELTA_MS - nowMs;
}

// ---------------------------------------------------------------------------------------------
// Jobs.

export function isJobFinished(job: Job): boolean {
  return finishedCondition(job) !== undefined;
}

/** Upstream's getJobName: the scheduled time in minutes since the epoch makes the name a lock per run. */
export function jobName(cronJob: CronJob, scheduledMs: number): string {
  return `${cronJob.metadata.name ?? ''}-${Math.floor(scheduledMs / 60_000)}`;
}

/** Upstream's getJobFromTemplate2: the template's labels, annotations and spec, owned by the cron job. */
export function jobFromTemplate(cronJob: CronJob, scheduledMs: number): Job {
  const template = cronJob.spec?.jobTemplate ?? {};
  const annotations = {...(template.metadata?.annotations ?? {})};
  // Written in the cron job's zone (upstream loads "" - no zone - as UTC here).
  annotations[scheduledTimestampAnnotation()] = formatRFC3339(scheduledMs, cronJob.spec?.timeZone || 'UTC');
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName(cronJob, scheduledMs),
      namespace: cronJob.metadata.namespace,
      labels: {...(template.metadata?.labels ?? {})},
      annotations,
      ownerReferences: [controllerRefTo(cronJob, 'batch/v1', 'CronJob')],
    },
    spec: structuredClone(template.spec ?? {}),
  };
}

/** The reference status.active keeps (upstream's ref.GetReference of the job). */
export function jobReference(job: Job): ObjectReference {
  const ref: ObjectReference = {kind: 'Job', namespace: job.metadata.namespace, name: job.metadata.name, uid: job.metadata.uid, apiVersion: 'batch/v1'};
  if (job.metadata.resourceVersion) ref.resourceVersion = job.metadata.resourceVersion;
  return ref;
}

/** Upstream's byJobStartTime: started first, oldest first, unstarted last, the name breaking ties. */
function byStartTime(a: Job, b: Job): number {
  const sa = a.status?.startTime;
  const sb = b.status?.startTime;
  if (sa === undefined || sb === undefined) {
    if (sa !== sb) return sa === undefined ? 1 : -1;
  } else if (sa !== sb) {
    return Date.parse(sa) - Date.parse(sb);
  }
  return (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/**
 * The finished jobs beyond successfulJobsHistoryLimit and failedJobsHistoryLimit, oldest first
 * (upstream's cleanupFinishedJobs; an unset limit keeps them all).
 */
export function expiredJobs(cronJob: CronJob, jobs: Job[]): Job[] {
  const expired: Job[] = [];
  const limits = [
    ['Complete', cronJob.spec?.successfulJobsHistoryLimit],
    ['Failed', cronJob.spec?.failedJobsHistoryLimit],
  ] as const;
  for (const [type, limit] of limits) {
    if (limit === undefined || limit === null) continue;
    const finished = jobs.filter((j) => finishedCondition(j)?.type === type).sort(byStartTime);
    expired.push(...finished.slice(0, Math.max(0, finished.length - limit)));
  }
  return expired;
}

// ---------------------------------------------------------------------------------------------
// The sync.

export interface CronJobPlanInput {
  cronJob: CronJob;
  /** The jobs the cron job controls. */
  jobs: Job[];
  /** uids of active jobs the API server confirmed gone (not merely missing from the cache). */
  gone?: ReadonlySet<string>;
  nowMs: number;
}

export interface CronJobRun {
  scheduledMs: number;
  /** The Job to create. */
  job: Job;
  /** Active jobs to delete first (concurrencyPolicy Replace). */
  replace: ObjectReference[];
}

export interface CronJobPlan {
  /** The status once finished and vanished jobs have left the active list (before any run). */
  status: CronJobStatus;
  /** Events to record, in order. */
  events: PlannedEvent[];
  /** Finished jobs beyond the history limits, to delete. */
  expired: Job[];
  /** Set when a scheduled time is due now. */
  run?: CronJobRun;
  /** Sync again after this long (the next scheduled time); absent: only when something changes. */
  requeueAfterMs?: number;
}

/**
 * One sync of upstream's syncCronJob: reconcile the active list with the jobs, then decide whether
 * the most recent unmet scheduled time is run, skipped or waited for.
 */
export function planCronJob({cronJob, jobs, gone = new Set(), nowMs}: CronJobPlanInput): CronJobPlan {
  const spec = cronJob.spec ?? {};
  const status: CronJobStatus = structuredClone(cronJob.status ?? {});
  let active = [...(status.active ?? [])];
  const events: PlannedEvent[] = [];
  const inActive = (uid: string | undefined) => active.some((ref) => ref.uid === uid);

  for (const job of jobs) {
    const finished = finishedCondition(job);
    if (!finished && !inActive(job.metadata.uid)) {
      // Created by us before a crash lost the status write, or by someone else.
      events.push({type: 'Warning', reason: 'UnexpectedJob', message: `Saw a job that the controller did not create or forgot: ${job.metadata.name ?? ''}`});
      continue;
    }
    if (finished && inActive(job.metadata.uid)) {
      active = active.filter((ref) => ref.uid !== job.metadata.uid);
      events.push({type: 'Normal', reason: 'SawCompletedJob', message: `Saw completed job: ${job.metadata.name ?? ''}, condition: ${finished.type}`});
    }
    // Upstream takes the completion time one sync later for a job that just left the active list;
    // taking it now saves a status write and ends in the same status.
    const completed = finished?.type === 'Complete' ? job.status?.completionTime : undefined;
    if (completed && (!status.lastSuccessfulTime || Date.parse(completed) > Date.parse(status.lastSuccessfulTime))) status.lastSuccessfulTime = completed;
  }
  const children = new Set(jobs.map((j) => j.metadata.uid));
  for (const ref of [...active]) {
    if (children.has(ref.uid) || !gone.has(ref.uid ?? '')) continue;
    events.push({type: 'Normal', reason: 'MissingJob', message: `Active job went missing: ${ref.name ?? ''}`});
    active = active.filter((r) => r.uid !== ref.uid);
  }
  if (active.length > 0) status.active = active;
  else delete status.active;

  const plan: CronJobPlan = {status, events, expired: expiredJobs(cronJob, jobs)};
  if (cronJob.metadata.deletionTimestamp) return plan;

  const warn = (reason: string, message: string): CronJobPlan => {
    events.push({type: 'Warning', reason, message});
    return plan;
  };
  if (spec.timeZone !== undefined && spec.timeZone !== null) {
    const error = timeZoneError(spec.timeZone);
    if (error) return warn('UnknownTimeZone', `invalid timeZone: ${JSON.stringify(spec.timeZone)}: ${error}`);
  }
  if (spec.suspend) return plan;

  const text = spec.schedule ?? '';
  const parsed = cronJobSchedule(cronJob);
  if (parsed.error !== undefined) {
    // Upstream's reason for a time zone in the schedule, with its validation's message.
    if (text.includes('TZ')) return warn('UnsupportedSchedule', `${TZ_IN_SCHEDULE_MESSAGE}: ${JSON.stringify(text)}`);
    return warn('UnparseableSchedule', `unparseable schedule: ${JSON.stringify(text)} : ${parsed.error}`);
  }
  const schedule = parsed.schedule;

  const recent = mostRecentScheduleTime(cronJob, nowMs, schedule, true);
  if (recent.error) return warn('InvalidSchedule', `invalid schedule: ${text} : ${recent.error}`);
  const requeue = () => {
    const delay = nextScheduleDelayMs({...cronJob, status}, nowMs, schedule);
    if (delay !== undefined) plan.requeueAfterMs = Math.max(0, delay);
    return plan;
  };
  const scheduledMs = recent.mostRecentMs;
  if (scheduledMs === undefined || scheduledMs > nowMs) return requeue();
  if (recent.missed === 'many') {
    events.push({type: 'Warning', reason: 'TooManyMissedTimes', message: 'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew'});
  }

  // Kept from upstream, though the deadline already bounds the times looked at above.
  const deadline = spec.startingDeadlineSeconds;
  if (deadline !== undefined && deadline !== null && scheduledMs + deadline * 1000 < nowMs) {
    events.push({type: 'Warning', reason: 'MissSchedule', message: `Missed scheduled time to start a job: ${formatRFC1123Z(scheduledMs)}`});
    return requeue();
  }
  const name = jobName(cronJob, scheduledMs);
  const lastScheduled = status.lastScheduleTime ? Date.parse(status.lastScheduleTime) : undefined;
  if (active.some((ref) => ref.name === name && ref.namespace === cronJob.metadata.namespace) || lastScheduled === scheduledMs) return requeue();
  if (spec.concurrencyPolicy === 'Forbid' && active.length > 0) {
    events.push({type: 'Normal', reason: 'JobAlreadyActive', message: 'Not starting job because prior execution is running and concurrency policy is Forbid'});
    return requeue();
  }
  plan.run = {scheduledMs, job: jobFromTemplate(cronJob, scheduledMs), replace: spec.concurrencyPolicy === 'Replace' ? [...active] : []};
  // The requeue counts from the run about to be recorded.
  const delay = nextScheduleDelayMs({...cronJob, status: {...status, lastScheduleTime: formatTime(scheduledMs)}}, nowMs, schedule);
  if (delay !== undefined) plan.requeueAfterMs = Math.max(0, delay);
  return plan;
}

/** The status after a run's job was created (or found created): listed active, the run recorded. */
export function statusAfterRun(status: CronJobStatus, job: Job, scheduledMs: number): CronJobStatus {
  const active = (status.active ?? []).filter((ref) => ref.uid !== job.metadata.uid);
  return {...status, active: [...active, jobReference(job)], lastScheduleTime: formatTime(scheduledMs)};
}

/** True when the status a sync computed differs from the cron job's (what is worth a write). */
export function cronJobStatusChanged(cronJob: CronJob, status: CronJobStatus): boolean {
  return JSON.stringify(cronJob.status ?? {}) !== JSON.stringify(status);
}
