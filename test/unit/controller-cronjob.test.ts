/**
 * The cronjob controller against the real REST API (startTestApi), on a clock the test moves: the
 * controller's `now` is the wall clock plus an offset. No job controller runs: the test plays it,
 * finishing the jobs through their status subresource. After moving the clock the test "pokes" the
 * cron job (a label change, which upstream syncs at once) so the controller looks again.
 */
import {beforeEach, describe, expect, it} from '@jest/globals';
import {eventually, pause, useControllerHarness} from '../helpers/controller-harness.js';
import {startCronJobController} from '../../src/daemons/controller-manager/controllers/cronjob.js';

const CRONJOBS = '/apis/batch/v1/namespaces/default/cronjobs';
const JOBS = '/apis/batch/v1/namespaces/default/jobs';
const ANNOTATION = 'batch.orch.io/cronjob-scheduled-timestamp';
const h = useControllerHarness();

let offset = 0;
const now = () => Date.now() + offset;
const setClock = (ms: number) => {
  offset = ms - Date.now();
};
beforeEach(() => {
  // The test API stamps objects with its own fixed clock: start 5 s before it, so nothing falls
  // due by accident at creation.
  setClock(h.api.clock.now().getTime() - 5000);
});
const start = () => h.start({start: (ctx, signal) => startCronJobController({...ctx, now}, signal)});

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** The first whole minute after `ms`. */
const minuteAfter = (ms: number) => Math.floor(ms / 60_000) * 60_000 + 60_000;
const jobTemplate = {
  metadata: {labels: {app: 'report'}, annotations: {team: 'ops'}},
  spec: {template: {spec: {restartPolicy: 'Never', containers: [{name: 'work', image: 'busybox', command: ['true']}]}}},
};

async function createCronJob(name: string, spec: Record<string, unknown>): Promise<any> {
  const body = {apiVersion: 'batch/v1', kind: 'CronJob', metadata: {name}, spec: {schedule: '* * * * *', jobTemplate, ...spec}};
  return (await h.client.request<any>({method: 'POST', path: CRONJOBS, body})).body;
}
const cronJob = (name: string) => h.client.get<any>(`${CRONJOBS}/${name}`);
let pokes = 0;
const poke = (name: string) => h.client.patch(`${CRONJOBS}/${name}`, 'application/merge-patch+json', {metadata: {labels: {poke: String(++pokes)}}});
const jobs = async (): Promise<any[]> => (await h.client.get<any>(JOBS)).items;
const jobNames = async () => (await jobs()).map((j) => j.metadata.name).sort();
const waitForJob = (name: string) => eventually(async () => (await jobs()).find((j) => j.metadata.name === name), 5000, `job ${name}`);
const finish = (name: string, type: 'Complete' | 'Failed', at: string) =>
  h.client.patch(`${JOBS}/${name}/status`, 'application/merge-patch+json', {
    status: {startTime: at, ...(type === 'Complete' ? {completionTime: at} : {}), conditions: [{type, status: 'True', lastTransitionTime: at}]},
  });
const events = async (name: string): Promise<string[]> =>
  (await h.client.request<any>({method: 'GET', path: '/api/v1/namespaces/default/events', query: {fieldSelector: `involvedObject.kind=CronJob,involvedObject.name=${name}`}})).body.items.map(
    (e: any) => `${e.type} ${e.reason} ${e.message}`,
  );
const waitForEvent = (name: string, text: string) =>
  eventually(async () => ((await events(name)).includes(text) ? true : undefined), 5000, `event "${text}"`);
/** Moves the clock `secondsLate` past the first minute after `afterMs`, pokes, and returns that minute. */
async function runAt(name: string, afterMs: number, secondsLate = 5): Promise<number> {
  const minute = minuteAfter(afterMs);
  setClock(minute + secondsLate * 1000);
  await poke(name);
  return minute;
}

describe('cronjob controller', () => {
  it('creates the job of a scheduled time when the time comes, then sees it complete', async () => {
    await start();
    const created = await createCronJob('report', {});
    const minute = minuteAfter(Date.parse(created.metadata.creationTimestamp));
    // One second before the minute: the controller's own timer must bring the run.
    setClock(minute - 1000);
    await poke('report');
    const name = `report-${minute / 60_000}`;
    const job = await waitForJob(name);
    expect(now()).toBeGreaterThanOrEqual(minute);
    expect(job.metadata.labels).toEqual({app: 'report'});
    expect(job.metadata.annotations).toEqual({team: 'ops', [ANNOTATION]: iso(minute)});
    expect(job.metadata.ownerReferences).toEqual([{apiVersion: 'batch/v1', kind: 'CronJob', name: 'report', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true}]);
    expect(job.spec.template.spec.containers[0].image).toBe('busybox');

    const listed = await eventually(async () => {
      const cj = await cronJob('report');
      return cj.status?.active?.length === 1 ? cj : undefined;
    }, 5000, 'status.active');
    expect(listed.status.active[0]).toMatchObject({kind: 'Job', apiVersion: 'batch/v1', namespace: 'default', name, uid: job.metadata.uid});
    expect(listed.status.lastScheduleTime).toBe(iso(minute));
    await waitForEvent('report', `Normal SuccessfulCreate Created job ${name}`);

    const doneAt = iso(minute + 20_000);
    await finish(name, 'Complete', doneAt);
    const done = await eventually(async () => {
      const cj = await cronJob('report');
      return cj.status?.lastSuccessfulTime ? cj : undefined;
    }, 5000, 'lastSuccessfulTime');
    expect(done.status.active).toBeUndefined();
    expect(done.status.lastSuccessfulTime).toBe(doneAt);
    await waitForEvent('report', `Normal SawCompletedJob Saw completed job: ${name}, condition: Complete`);
  });

  it.each<[string, (first: string, second: string) => {jobs: string[]; active: string[]; event: (first: string) => string}]>([
    ['Allow', (first, second) => ({jobs: [first, second], active: [first, second], event: () => `Normal SuccessfulCreate Created job ${second}`})],
    ['Forbid', (first) => ({jobs: [first], active: [first], event: () => 'Normal JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid'})],
    ['Replace', (_first, second) => ({jobs: [second], active: [second], event: (first) => `Normal SuccessfulDelete Deleted job ${first}`})],
  ])('concurrencyPolicy %s with the last run still active', async (policy, expected) => {
    await start();
    const created = await createCronJob('report', {concurrencyPolicy: policy});
    const m1 = await runAt('report', Date.parse(created.metadata.creationTimestamp));
    const first = `report-${m1 / 60_000}`;
    await waitForJob(first);
    await eventually(async () => ((await cronJob('report')).status?.lastScheduleTime === iso(m1) ? true : undefined), 5000, 'the first run recorded');

    const m2 = await runAt('report', m1);
    const second = `report-${m2 / 60_000}`;
    const want = expected(first, second);
    await waitForEvent('report', want.event(first));
    const cj = await eventually(async () => {
      const c = await cronJob('report');
      return JSON.stringify((c.status?.active ?? []).map((r: any) => r.name).sort()) === JSON.stringify(want.active) ? c : undefined;
    }, 5000, `status.active ${want.active.join(',')}`);
    expect(cj.status.lastScheduleTime).toBe(policy === 'Forbid' ? iso(m1) : iso(m2));
    expect(await jobNames()).toEqual(want.jobs);
  });

  it('keeps only the newest finished jobs within the history limits', async () => {
    await start();
    const cj = await createCronJob('report', {suspend: true, successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1});
    const owner = {apiVersion: 'batch/v1', kind: 'CronJob', name: 'report', uid: cj.metadata.uid, controller: true};
    const finished: [string, 'Complete' | 'Failed', string][] = [
      ['ok-old', 'Complete', '2026-01-01T00:00:00Z'],
      ['ok-mid', 'Complete', '2026-01-02T00:00:00Z'],
      ['ok-new', 'Complete', '2026-01-03T00:00:00Z'],
      ['bad-old', 'Failed', '2026-01-01T00:00:00Z'],
      ['bad-new', 'Failed', '2026-01-02T00:00:00Z'],
    ];
    for (const [name, type, at] of finished) {
      await h.client.request({method: 'POST', path: JOBS, body: {apiVersion: 'batch/v1', kind: 'Job', metadata: {name, ownerReferences: [owner]}, spec: jobTemplate.spec}});
      await finish(name, type, at);
    }
    const left = await eventually(async () => {
      const names = await jobNames();
      return names.length === 2 ? names : undefined;
    }, 5000, 'two jobs left');
    expect(left).toEqual(['bad-new', 'ok-new']);
    for (const name of ['ok-old', 'ok-mid', 'bad-old']) await waitForEvent('report', `Normal SuccessfulDelete Deleted job ${name}`);
    const status = await eventually(async () => (await cronJob('report')).status?.lastSuccessfulTime, 5000, 'lastSuccessfulTime');
    expect(status).toBe('2026-01-03T00:00:00Z');
  });

  it('runs nothing while suspended, and the missed time once resumed', async () => {
    await start();
    const created = await createCronJob('report', {suspend: true});
    const minute = await runAt('report', Date.parse(created.metadata.creationTimestamp));
    await pause(300);
    expect(await jobNames()).toEqual([]);
    await h.client.patch(`${CRONJOBS}/report`, 'application/merge-patch+json', {spec: {suspend: false}});
    await waitForJob(`report-${minute / 60_000}`);
  });

  it('skips a time older than startingDeadlineSeconds, and runs one within it', async () => {
    await start();
    const created = await createCronJob('report', {startingDeadlineSeconds: 10});
    const minute = await runAt('report', Date.parse(created.metadata.creationTimestamp), 30);
    await pause(300);
    expect(await jobNames()).toEqual([]);
    // Back within the deadline of the same time (a clock that jumped ahead and back).
    setClock(minute + 5000);
    await poke('report');
    await waitForJob(`report-${minute / 60_000}`);
  });

  it('runs a schedule in its time zone and stamps the job with the local time', async () => {
    await start();
    const created = await createCronJob('report', {schedule: '0 9 * * *', timeZone: 'Asia/Tokyo'});
    // 09:00 in Tokyo is midnight UTC.
    const day = Math.floor(Date.parse(created.metadata.creationTimestamp) / 86_400_000) * 86_400_000 + 86_400_000;
    setClock(day + 5000);
    await poke('report');
    const job = await waitForJob(`report-${day / 60_000}`);
    expect(job.metadata.annotations[ANNOTATION]).toBe(`${iso(day).slice(0, 10)}T09:00:00+09:00`);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an unknown time zone', {timeZone: 'Mars/Base'}, 'Warning UnknownTimeZone invalid timeZone: "Mars/Base": unknown time zone Mars/Base'],
    ['a TZ= prefix', {schedule: 'TZ=UTC * * * * *'}, 'Warning UnsupportedSchedule cannot use TZ or CRON_TZ in schedule, use timeZone field instead: "TZ=UTC * * * * *"'],
    ['an unparseable schedule', {schedule: '*/5 * * *'}, 'Warning UnparseableSchedule unparseable schedule: "*/5 * * *" : expected exactly 5 fields, found 4: [*/5 * * *]'],
  ])('warns about %s and runs nothing', async (_name, spec, event) => {
    await start();
    const created = await createCronJob('report', spec);
    await runAt('report', Date.parse(created.metadata.creationTimestamp));
    await waitForEvent('report', event);
    expect(await jobNames()).toEqual([]);
    expect((await cronJob('report')).status?.lastScheduleTime).toBeUndefined();
  });

  it('takes over its own job that already exists (409) instead of creating another', async () => {
    await start();
    const created = await createCronJob('report', {});
    const minute = minuteAfter(Date.parse(created.metadata.creationTimestamp));
    const name = `report-${minute / 60_000}`;
    // As if a crash had lost the status write after the job was created.
    const owner = {apiVersion: 'batch/v1', kind: 'CronJob', name: 'report', uid: created.metadata.uid, controller: true};
    const existing = (await h.client.request<any>({method: 'POST', path: JOBS, body: {apiVersion: 'batch/v1', kind: 'Job', metadata: {name, ownerReferences: [owner]}, spec: jobTemplate.spec}})).body;
    await runAt('report', Date.parse(created.metadata.creationTimestamp));
    const cj = await eventually(async () => {
      const c = await cronJob('report');
      return c.status?.lastScheduleTime ? c : undefined;
    }, 5000, 'the run recorded');
    expect(cj.status.lastScheduleTime).toBe(iso(minute));
    expect(cj.status.active.map((r: any) => r.uid)).toEqual([existing.metadata.uid]);
    expect(await jobNames()).toEqual([name]);
    expect((await events('report')).filter((e) => e.includes('SuccessfulCreate'))).toEqual([]);
  });
});
