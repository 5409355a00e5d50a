/**
 * The decisions of the `job` controller (batch/v1 Job, NonIndexed completion mode), pure: given a
 * job, the pods it controls and `now`, what its status is, how many pods to create, which to delete,
 * and whether it has just finished. Upstream's syncJob, without the finalizer-based tracking: the
 * counts come from the pods that exist, and never go down (a finished pod removed by pod GC stays
 * counted).
 */
import { formatTime, isPodActive, isPodReady, type Condition, type ObjectMeta, type Pod, type PodTemplate } from './replica-set-core.js';

export interface JobSpec {
  parallelism?: number;
  /** Absent: a work queue, done once any pod succeeded and none is left running. */
  completions?: number | null;
  backoffLimit?: number;
  activeDeadlineSeconds?: number;
  suspend?: boolean;
  completionMode?: string;
  selector?: unknown;
  template?: PodTemplate;
  [field: string]: unknown;
}

export interface JobStatus {
  startTime?: string;
  completionTime?: string;
  active?: number;
  succeeded?: number;
  failed?: number;
  ready?: number;
  conditions?: Condition[];
  [field: string]: unknown;
}

export interface Job {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: JobSpec;
  status?: JobStatus;
}

export interface JobFinish {
  type: 'Complete' | 'Failed';
  reason: string;
  message: string;
}

export interface JobPlan {
  status: JobStatus;
  /** Pods to create now. */
  create: number;
  /** Active pods to delete (surplus, or all of them once the job is over or suspended). */
  remove: Pod[];
  /** Set when this sync finishes the job. */
  finished?: JobFinish;
  /** Look again after this long (pod failure back-off, active deadline). */
  requeueAfterMs?: number;
}

/** Upstream's pod failure back-off: 10 s, doubling per failure, at most 6 minutes. */
export const BACKOFF_BASE_MS = 10_000;
export const BACKOFF_MAX_MS = 6 * 60_000;

export function failureBackoffMs(failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(failures - 1, 20));
}

export function finishedCondition(job: Job): Condition | undefined {
  return job.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

function restartPolicy(job: Job): string {
  return String(job.spec?.template?.spec?.restartPolicy ?? 'Never');
}

/** When a failed pod ended: its containers' last finish, else its creation. */
function failedAt(pod: Pod): number {
  const statuses = (pod.status?.containerStatuses ?? []) as { state?: { terminated?: { finishedAt?: string } } }[];
  const finished = statuses.map((s) => Date.parse(s.state?.terminated?.finishedAt ?? '')).filter((t) => !Number.isNaN(t));
  if (finished.length > 0) return Math.max(...finished);
  return Date.parse(pod.metadata.creationTimestamp ?? '') || 0;
}

function setCondition(conditions: Condition[], type: string, reason: string, message: string, nowMs: number): Condition[] {
  const rest = conditions.filter((c) => c.type !== type);
  const time = formatTime(nowMs);
  return [...rest, { type, status: 'True', lastProbeTime: time, lastTransitionTime: time, reason, message } as Condition];
}

/** Newest first: the pods a surplus deletes (upstream deletes the not-ready and newest first too). */
function surplusOrder(pods: Pod[]): Pod[] {
  return [...pods].sort((a, b) => {
    const ready = Number(isPodReady(a)) - Number(isPodReady(b));
    if (ready !== 0) return ready;
    return Date.parse(b.metadata.creationTimestamp ?? '') - Date.parse(a.metadata.creationTimestamp ?? '');
  });
}

export function planJob(job: Job, pods: Pod[], nowMs: number): JobPlan {
  const spec = job.spec ?? {};
  const previous = job.status ?? {};
  const active = pods.filter(isPodActive);
  const succeededPods = pods.filter((p) => p.status?.phase === 'Succeeded');
  const failedPods = pods.filter((p) => p.status?.phase === 'Failed');
  const status: JobStatus = {
    ...previous,
    active: active.length,
    ready: active.filter(isPodReady).length,
    succeeded: Math.max(previous.succeeded ?? 0, succeededPods.length),
    failed: Math.max(previous.failed ?? 0, failedPods.length),
  };
  for (const field of ['active', 'succeeded', 'failed'] as const) if (status[field] === 0) delete status[field];
  const conditions = previous.conditions ?? [];

  // A finished job only clears away what still runs.
  if (finishedCondition(job)) return { status, create: 0, remove: active };

  if (spec.suspend) {
    const suspended = conditions.some((c) => c.type === 'Suspended' && c.status === 'True');
    if (!suspended) status.conditions = setCondition(conditions, 'Suspended', 'JobSuspended', 'Job suspended', nowMs);
    return { status, create: 0, remove: active };
  }
  if (conditions.some((c) => c.type === 'Suspended' && c.status === 'True')) {
    // Resumed: upstream turns the condition False and starts the clock again.
    status.conditions = conditions.map((c) => (c.type === 'Suspended' ? { ...c, status: 'False', reason: 'JobResumed', message: 'Job resumed', lastTransitionTime: formatTime(nowMs) } : c));
    delete status.startTime;
  }
  status.startTime ??= formatTime(nowMs);

  const finish = (f: JobFinish): JobPlan => {
    status.conditions = setCondition(status.conditions ?? conditions, f.type, f.reason, f.message, nowMs);
    if (f.type === 'Complete') status.completionTime = formatTime(nowMs);
    return { status, create: 0, remove: active, finished: f };
  };

  const backoffLimit = spec.backoffLimit ?? 6;
  const failures = status.failed ?? 0;
  const restarts = restartPolicy(job) === 'OnFailure' ? active.reduce((n, p) => n + (p.status?.containerStatuses ?? []).reduce((m, c) => m + (c.restartCount ?? 0), 0), 0) : 0;
  const pastLimitOnFailure = restartPolicy(job) === 'OnFailure' && (backoffLimit === 0 ? restarts > 0 : restarts >= backoffLimit);
  if (failures > backoffLimit || pastLimitOnFailure) {
    return finish({ type: 'Failed', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' });
  }
  const deadline = spec.activeDeadlineSeconds;
  const started = Date.parse(status.startTime);
  if (deadline !== undefined && nowMs - started >= deadline * 1000) {
    return finish({ type: 'Failed', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' });
  }

  const succeeded = status.succeeded ?? 0;
  const completions = spec.completions ?? undefined;
  if (completions !== undefined ? succeeded >= completions : succeeded > 0 && active.length === 0) {
    return finish({ type: 'Complete', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' });
  }

  const parallelism = spec.parallelism ?? 1;
  const wanted = completions !== undefined ? Math.max(0, Math.min(parallelism, completions - succeeded)) : succeeded > 0 ? 0 : parallelism;
  let requeueAfterMs = deadline !== undefined ? started + deadline * 1000 - nowMs : undefined;
  const plan: JobPlan = { status, create: 0, remove: [] };
  if (active.length > wanted) {
    plan.remove = surplusOrder(active).slice(0, active.length - wanted);
  } else if (active.length < wanted) {
    // After a failure, the replacement waits out the back-off.
    const lastFailure = failedPods.length > 0 ? Math.max(...failedPods.map(failedAt)) : undefined;
    const wait = lastFailure === undefined ? 0 : lastFailure + failureBackoffMs(failedPods.length) - nowMs;
    if (wait > 0) requeueAfterMs = Math.min(requeueAfterMs ?? wait, wait);
    else plan.create = wanted - active.length;
  }
  if (requeueAfterMs !== undefined) plan.requeueAfterMs = Math.max(0, requeueAfterMs);
  return plan;
}

/** True when the status a sync computed differs from the job's (what is worth a write). */
export function jobStatusChanged(job: Job, status: JobStatus): boolean {
  return JSON.stringify(job.status ?? {}) !== JSON.stringify(status);
}
