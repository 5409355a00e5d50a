/** The cronjob controller's decisions (schedules, planCronJob, history), table-driven on a fixed `now`. */
import {describe, expect, it} from '@jest/globals';
import {
  expiredJobs,
  formatRFC1123Z,
  formatRFC3339,
  jobFromTemplate,
  mostRecentScheduleTime,
  parseSchedule,
  planCronJob,
  scheduledTimestampAnnotation,
  timeZoneError,
  type CronJob,
  type Schedule,
} from '../../src/daemons/controller-manager/controllers/cronjob-core.js';
import type {Job} from '../../src/daemons/controller-manager/controllers/job-core.js';

/** A Sunday, 30 s past noon UTC. */
const NOW = Date.parse('2026-11-22T12:00:30Z');
const NOON = Date.parse('2026-11-22T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const ago = (seconds: number) => iso(NOW - seconds * 1000);

function cronJob(spec: CronJob['spec'] = {}, status: CronJob['status'] = {}, createdSecondsAgo = 3600): CronJob {
  return {
    metadata: {name: 'report', namespace: 'default', uid: 'cj-uid', creationTimestamp: ago(createdSecondsAgo)},
    spec: {
      schedule: '* * * * *',
      concurrencyPolicy: 'Allow',
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
      jobTemplate: {metadata: {labels: {app: 'report'}}, spec: {template: {spec: {restartPolicy: 'Never'}}}},
      ...spec,
    },
    status,
  };
}
const ref = (name: string, uid = `${name}-uid`) => ({kind: 'Job', namespace: 'default', name, uid, apiVersion: 'batch/v1'});
function job(name: string, state: 'Running' | 'Complete' | 'Failed', startedSecondsAgo?: number, completedSecondsAgo?: number): Job {
  const j: Job = {metadata: {name, namespace: 'default', uid: `${name}-uid`, ownerReferences: [{apiVersion: 'batch/v1', kind: 'CronJob', name: 'report', uid: 'cj-uid', controller: true}]}, status: {}};
  if (startedSecondsAgo !== undefined) j.status!.startTime = ago(startedSecondsAgo);
  if (state !== 'Running') j.status!.conditions = [{type: state, status: 'True'}];
  if (completedSecondsAgo !== undefined) j.status!.completionTime = ago(completedSecondsAgo);
  return j;
}
const schedule = (text: string, tz?: string): Schedule => {
  const parsed = parseSchedule(text, tz);
  if (!parsed.schedule) throw new Error(parsed.error);
  return parsed.schedule;
};

describe('parseSchedule', () => {
  it.each<[string, string | undefined, string, string]>([
    ['*/5 * * * *', 'UTC', '2026-01-01T00:05:00Z', '2026-01-01T00:10:00Z'],
    ['*/5 * * * *', 'UTC', '2026-01-01T00:04:59Z', '2026-01-01T00:05:00Z'],
    ['@hourly', 'UTC', '2026-01-01T00:30:00Z', '2026-01-01T01:00:00Z'],
    ['@daily', 'UTC', '2026-01-01T00:30:00Z', '2026-01-02T00:00:00Z'],
    ['@midnight', 'UTC', '2026-01-01T00:30:00Z', '2026-01-02T00:00:00Z'],
    ['@weekly', 'UTC', '2026-01-01T00:00:00Z', '2026-01-04T00:00:00Z'],
    ['@monthly', 'UTC', '2026-01-15T00:00:00Z', '2026-02-01T00:00:00Z'],
    ['@yearly', 'UTC', '2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z'],
    ['@annually', 'UTC', '2026-03-01T00:00:00Z', '2027-01-01T00:00:00Z'],
    ['0 9 * * *', 'Asia/Tokyo', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'],
    ['0 9 * * *', 'Asia/Tokyo', '2025-12-31T23:59:59Z', '2026-01-01T00:00:00Z'],
    ['0 0 * JAN mon-fri', 'UTC', '2026-01-03T00:00:00Z', '2026-01-05T00:00:00Z'],
    ['15 10 ? * SUN', 'UTC', '2026-01-01T00:00:00Z', '2026-01-04T10:15:00Z'],
  ])('%s in %s after %s: %s', (text, tz, after, expected) => {
    expect(iso(schedule(text, tz).next(Date.parse(after))!)).toBe(expected);
  });

  it.each<[string, RegExp]>([
    ['', /^empty spec string$/],
    ['* * * *', /^expected exactly 5 fields, found 4: \[\* \* \* \*\]$/],
    ['0 * * * * *', /^expected exactly 5 fields, found 6/],
    ['@every 1h', /^unrecognized descriptor: @every 1h$/],
    ['@reboot', /^unrecognized descriptor/],
    ['0 0 L * *', /unsupported syntax in field: L/],
    ['0 0 * * 1#2', /unsupported syntax in field: 1#2/],
    ['H * * * *', /unsupported syntax in field: H/],
    ['61 * * * *', /61/],
  ])('refuses %j', (text, message) => {
    expect(parseSchedule(text, 'UTC').error).toMatch(message);
  });
});

describe('time zones and time formats', () => {
  it.each<[string, string | undefined]>([
    ['Europe/Paris', undefined],
    ['UTC', undefined],
    ['Mars/Base', 'unknown time zone Mars/Base'],
    ['Local', 'unknown time zone Local'],
  ])('%s: %s', (tz, error) => expect(timeZoneError(tz)).toBe(error));

  it('writes RFC 3339 in the zone, Z for UTC, and RFC 1123Z in UTC', () => {
    expect(formatRFC3339(NOON, 'UTC')).toBe('2026-11-22T12:00:00Z');
    expect(formatRFC3339(NOON, 'Asia/Tokyo')).toBe('2026-11-22T21:00:00+09:00');
    expect(formatRFC3339(NOON, 'Asia/Kolkata')).toBe('2026-11-22T17:30:00+05:30');
    expect(formatRFC3339(NOON, 'America/New_York')).toBe('2026-11-22T07:00:00-05:00');
    expect(formatRFC1123Z(NOON)).toBe('Sun, 22 Nov 2026 12:00:00 +0000');
  });
});

describe('mostRecentScheduleTime', () => {
  // Weekdays at 06:30, 10:30, 14:30.
  const irregular = '30 6-16/4 * * 1-5';

  it('finds the latest time of an irregular schedule from its estimate of the times missed', () => {
    const cj = cronJob({schedule: irregular}, {lastScheduleTime: '2026-11-18T06:30:00Z'});
    const recent = mostRecentScheduleTime(cj, Date.parse('2026-11-19T12:00:30Z'), schedule(irregular, 'UTC'), false);
    expect(iso(recent.mostRecentMs!)).toBe('2026-11-19T10:30:00Z');
    expect(recent.missed).toBe('few');
  });

  it('overshoots across a weekend as upstream does: no time found, the next run is Monday', () => {
    const cj = cronJob({schedule: irregular, timeZone: 'UTC'}, {lastScheduleTime: '2026-11-13T14:30:00Z'});
    const recent = mostRecentScheduleTime(cj, NOW, schedule(irregular, 'UTC'), false);
    expect(recent).toMatchObject({mostRecentMs: undefined, missed: 'few'});
    const plan = planCronJob({cronJob: cj, jobs: [], nowMs: NOW});
    expect(plan.run).toBeUndefined();
    expect(iso(NOW + plan.requeueAfterMs! - 100)).toBe('2026-11-23T06:30:00Z');
  });
});

type Expected = {run?: string; replace?: string[]; events?: string[]; requeue?: number | null; active?: string[]; lastSuccessfulTime?: string};

describe('planCronJob', () => {
  it.each<[string, CronJob, Job[], Expected]>([
    ['created 20 s ago: nothing due yet, look again at 12:01', cronJob({}, {}, 20), [], {requeue: 30_100, events: []}],
    ['created before noon: the noon run is due', cronJob({}, {}, 40), [], {run: iso(NOON), requeue: 30_100}],
    ['noon already run: wait for 12:01', cronJob({}, {lastScheduleTime: iso(NOON)}), [], {requeue: 30_100}],
    ['five minutes missed: only the latest runs', cronJob({}, {lastScheduleTime: iso(NOON - 5 * 60_000)}), [], {run: iso(NOON), events: []}],
    ['two hours missed (over 100): a warning, and the latest runs', cronJob({}, {}, 7200), [], {run: iso(NOON), events: ['Warning TooManyMissedTimes too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew']}],
    ['a deadline of 10 s passed: the noon run is skipped', cronJob({startingDeadlineSeconds: 10}, {lastScheduleTime: iso(NOON - 60_000)}), [], {requeue: 30_100, events: []}],
    ['a deadline of 60 s not passed: it runs', cronJob({startingDeadlineSeconds: 60}, {lastScheduleTime: iso(NOON - 60_000)}), [], {run: iso(NOON)}],
    ['Forbid with a job running: not started', cronJob({concurrencyPolicy: 'Forbid'}, {active: [ref('report-1')]}, 40), [job('report-1', 'Running')], {events: ['Normal JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid'], requeue: 30_100}],
    ['Allow with a job running: another one', cronJob({}, {active: [ref('report-1')]}, 40), [job('report-1', 'Running')], {run: iso(NOON), replace: []}],
    ['Replace with a job running: it goes first', cronJob({concurrencyPolicy: 'Replace'}, {active: [ref('report-1')]}, 40), [job('report-1', 'Running')], {run: iso(NOON), replace: ['report-1']}],
    ['suspended: nothing, and no timer', cronJob({suspend: true}, {}, 40), [], {requeue: null, events: []}],
    ['being deleted: nothing', {...cronJob({}, {}, 40), metadata: {...cronJob().metadata, deletionTimestamp: ago(1)}}, [], {requeue: null}],
    ['an unknown time zone: a warning, nothing runs', cronJob({timeZone: 'Mars/Base'}, {}, 40), [], {requeue: null, events: ['Warning UnknownTimeZone invalid timeZone: "Mars/Base": unknown time zone Mars/Base']}],
    ['TZ= in the schedule: refused', cronJob({schedule: 'TZ=UTC * * * * *'}, {}, 40), [], {requeue: null, events: ['Warning UnsupportedSchedule cannot use TZ or CRON_TZ in schedule, use timeZone field instead: "TZ=UTC * * * * *"']}],
    ['CRON_TZ= in the schedule: refused', cronJob({schedule: 'CRON_TZ=UTC 0 * * * *'}, {}, 40), [], {requeue: null, events: [expect.stringContaining('Warning UnsupportedSchedule') as never]}],
    ['an unparseable schedule: a warning', cronJob({schedule: 'every minute'}, {}, 40), [], {requeue: null, events: ['Warning UnparseableSchedule unparseable schedule: "every minute" : expected exactly 5 fields, found 2: [every minute]']}],
    ['12:00 daily in UTC, last run yesterday: due', cronJob({schedule: '0 12 * * *', timeZone: 'UTC'}, {lastScheduleTime: iso(NOON - 86_400_000)}), [], {run: iso(NOON), requeue: 86_400_000 - 30_000 + 100}],
    ['12:00 daily in Tokyo (03:00 UTC), last run yesterday: due at 03:00 UTC', cronJob({schedule: '0 12 * * *', timeZone: 'Asia/Tokyo'}, {lastScheduleTime: '2026-11-21T03:00:00Z'}), [], {run: '2026-11-22T03:00:00Z'}],
    ['an active job completed: it leaves the list, lastSuccessfulTime', cronJob({}, {active: [ref('report-1')], lastScheduleTime: iso(NOON)}), [job('report-1', 'Complete', 30, 10)], {active: [], lastSuccessfulTime: ago(10), events: ['Normal SawCompletedJob Saw completed job: report-1, condition: Complete']}],
    ['an active job failed: it leaves the list', cronJob({}, {active: [ref('report-1')], lastScheduleTime: iso(NOON)}), [job('report-1', 'Failed', 30)], {active: [], events: ['Normal SawCompletedJob Saw completed job: report-1, condition: Failed']}],
    ['the latest completion wins', cronJob({}, {lastSuccessfulTime: ago(100), lastScheduleTime: iso(NOON)}), [job('a', 'Complete', 300, 200), job('b', 'Complete', 100, 50)], {lastSuccessfulTime: ago(50)}],
    ['a running job not listed: UnexpectedJob', cronJob({}, {lastScheduleTime: iso(NOON)}), [job('stray', 'Running')], {active: [], events: ['Warning UnexpectedJob Saw a job that the controller did not create or forgot: stray']}],
    ['a listed job the API server has not got: MissingJob', cronJob({}, {active: [ref('gone')], lastScheduleTime: iso(NOON)}), [], {active: [], events: ['Normal MissingJob Active job went missing: gone']}],
  ])('%s', (_name, cj, jobs, expected) => {
    const plan = planCronJob({cronJob: cj, jobs, gone: new Set(['gone-uid']), nowMs: NOW});
    expect(plan.run && iso(plan.run.scheduledMs)).toBe(expected.run);
    if (expected.replace) expect(plan.run?.replace.map((r) => r.name)).toEqual(expected.replace);
    if (expected.requeue !== undefined) expect(plan.requeueAfterMs).toBe(expected.requeue ?? undefined);
    if (expected.events) expect(plan.events.map((e) => `${e.type} ${e.reason} ${e.message}`)).toEqual(expected.events);
    if (expected.active) expect((plan.status.active ?? []).map((r) => r.name)).toEqual(expected.active);
    if (expected.lastSuccessfulTime) expect(plan.status.lastSuccessfulTime).toBe(expected.lastSuccessfulTime);
  });

  it('keeps a listed job that is only missing from the cache', () => {
    const plan = planCronJob({cronJob: cronJob({}, {active: [ref('late')], lastScheduleTime: iso(NOON)}), jobs: [], nowMs: NOW});
    expect(plan.status.active).toEqual([ref('late')]);
    expect(plan.events).toEqual([]);
  });

  it('builds the job kubectl shows: name by the minute, template labels, scheduled-time annotation, controller ref', () => {
    const cj = cronJob({timeZone: 'Asia/Tokyo', jobTemplate: {metadata: {labels: {app: 'report'}, annotations: {team: 'ops'}}, spec: {backoffLimit: 2, template: {spec: {restartPolicy: 'Never'}}}}}, {}, 40);
    const plan = planCronJob({cronJob: cj, jobs: [], nowMs: NOW});
    expect(plan.run?.job).toEqual({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'report-29922480',
        namespace: 'default',
        labels: {app: 'report'},
        annotations: {team: 'ops', [scheduledTimestampAnnotation()]: '2026-11-22T21:00:00+09:00'},
        ownerReferences: [{apiVersion: 'batch/v1', kind: 'CronJob', name: 'report', uid: 'cj-uid', controller: true, blockOwnerDeletion: true}],
      },
      spec: {backoffLimit: 2, template: {spec: {restartPolicy: 'Never'}}},
    });
    // Without a time zone the annotation is in UTC, as upstream's.
    expect(jobFromTemplate(cronJob(), NOON).metadata.annotations?.[scheduledTimestampAnnotation()]).toBe('2026-11-22T12:00:00Z');
  });
});

describe('expiredJobs', () => {
  it('keeps the newest successful and failed jobs up to each limit, deleting the oldest by start time', () => {
    const jobs = [
      job('ok-3', 'Complete', 300),
      job('ok-1', 'Complete', 500),
      job('ok-5', 'Complete', 100),
      job('ok-2', 'Complete', 400),
      job('ok-4', 'Complete', 200),
      job('bad-2', 'Failed', 200),
      job('bad-1', 'Failed', 400),
      job('bad-unstarted', 'Failed'),
      job('running', 'Running', 10),
    ];
    expect(expiredJobs(cronJob(), jobs).map((j) => j.metadata.name)).toEqual(['ok-1', 'ok-2', 'bad-1', 'bad-2']);
    expect(expiredJobs(cronJob({successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 5}), jobs).map((j) => j.metadata.name)).toEqual(['ok-1', 'ok-2', 'ok-3', 'ok-4', 'ok-5']);
    expect(expiredJobs(cronJob({successfulJobsHistoryLimit: undefined, failedJobsHistoryLimit: undefined}), jobs)).toEqual([]);
  });
});
