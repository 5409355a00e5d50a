/**
 * The job controller against the real REST API (startTestApi). No agent runs: the test plays it,
 * turning the pods the controller creates Succeeded or Failed through the status subresource.
 */
import { describe, expect, it } from '@jest/globals';
import { eventually, useControllerHarness } from '../helpers/controller-harness.js';
import { jobController } from '../../src/daemons/controller-manager/controllers/job.js';

const JOBS = '/apis/batch/v1/namespaces/default/jobs';
const PODS = '/api/v1/namespaces/default/pods';
const h = useControllerHarness();

const template = { spec: { restartPolicy: 'Never', containers: [{ name: 'work', image: 'busybox', command: ['true'] }] } };

async function createJob(name: string, spec: Record<string, unknown>): Promise<any> {
  return (await h.client.request<any>({ method: 'POST', path: JOBS, body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { template, ...spec } } })).body;
}
const jobPods = async (name: string): Promise<any[]> =>
  (await h.client.request<any>({ method: 'GET', path: PODS, query: { labelSelector: `job-name=${name}` } })).body.items;
const job = (name: string) => h.client.get<any>(`${JOBS}/${name}`);
const finish = (pod: any, phase: 'Succeeded' | 'Failed') =>
  h.client.patch(`${PODS}/${pod.metadata.name}/status`, 'application/merge-patch+json', { status: { phase } });
const running = async (name: string, count: number) =>
  eventually(async () => {
    const active = (await jobPods(name)).filter((p) => !p.status?.phase || p.status.phase === 'Pending' || p.status.phase === 'Running');
    return active.length === count ? active : undefined;
  }, 5000, `${count} pod(s) of ${name} running`);
const condition = (j: any, type: string) => j.status?.conditions?.find((c: any) => c.type === type && c.status === 'True');
const eventReasons = async (name: string) =>
  (await h.client.request<any>({ method: 'GET', path: '/api/v1/namespaces/default/events', query: { fieldSelector: `involvedObject.kind=Job,involvedObject.name=${name}` } })).body.items.map((e: any) => e.reason);

describe('job controller', () => {
  it('runs pods, parallelism at a time, until enough succeeded, then reports Complete', async () => {
    await h.start(jobController);
    const created = await createJob('batch', { completions: 3, parallelism: 2 });
    const first = await running('batch', 2);
    for (const pod of first) {
      expect(pod.metadata.ownerReferences).toEqual([{ apiVersion: 'batch/v1', kind: 'Job', name: 'batch', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true }]);
      expect(pod.metadata.name).toMatch(/^batch-[a-z0-9]{5}$/);
    }
    const started = await eventually(async () => ((await job('batch')).status?.active === 2 ? job('batch') : undefined), 5000, 'status.active 2');
    expect(started.status.startTime).toMatch(/Z$/);

    for (const pod of first) await finish(pod, 'Succeeded');
    // Only one more is needed for 3 completions.
    const [last] = await running('batch', 1);
    await finish(last, 'Succeeded');
    const done = await eventually(async () => {
      const j = await job('batch');
      return condition(j, 'Complete') ? j : undefined;
    }, 5000, 'Complete');
    expect(done.status).toMatchObject({ succeeded: 3, completionTime: expect.any(String) });
    expect(done.status.active).toBeUndefined();
    expect(condition(done, 'Complete')).toMatchObject({ reason: 'CompletionsReached' });
    expect(await jobPods('batch')).toHaveLength(3);
    const reasons = await eventually(async () => {
      const r = await eventReasons('batch');
      return r.includes('Completed') ? r : undefined;
    }, 5000, 'the Completed event');
    expect(reasons).toEqual(expect.arrayContaining(['SuccessfulCreate', 'Completed']));
  });

  it('fails the job once failures pass backoffLimit, and stops what still runs', async () => {
    await h.start(jobController);
    await createJob('flaky', { completions: 2, parallelism: 2, backoffLimit: 0 });
    const [one, two] = await running('flaky', 2);
    await finish(one, 'Failed');
    const failed = await eventually(async () => {
      const j = await job('flaky');
      return condition(j, 'Failed') ? j : undefined;
    }, 5000, 'Failed');
    expect(condition(failed, 'Failed')).toMatchObject({ reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' });
    // The other pod is deleted, and no replacement comes.
    await eventually(async () => ((await jobPods('flaky')).some((p) => p.metadata.name === two.metadata.name) ? undefined : true), 5000, 'the running pod deleted');
    expect((await jobPods('flaky')).map((p) => p.metadata.name)).toEqual([one.metadata.name]);
    await eventually(async () => ((await eventReasons('flaky')).includes('BackoffLimitExceeded') ? true : undefined), 5000, 'the BackoffLimitExceeded event');
  });

  it('stops the pods of a suspended job and starts them again on resume', async () => {
    await h.start(jobController);
    await createJob('later', { completions: 1 });
    await running('later', 1);
    await h.client.patch(`${JOBS}/later`, 'application/merge-patch+json', { spec: { suspend: true } });
    await running('later', 0);
    const suspended = await eventually(async () => {
      const j = await job('later');
      return condition(j, 'Suspended') ? j : undefined;
    }, 5000, 'Suspended');
    expect(condition(suspended, 'Suspended')).toMatchObject({ reason: 'JobSuspended' });
    await h.client.patch(`${JOBS}/later`, 'application/merge-patch+json', { spec: { suspend: false } });
    await running('later', 1);
  });
});

describe('job defaults on the API server', () => {
  it.each<[string, Record<string, unknown>, { completions?: number; parallelism: number }]>([
    ['neither set: one pod to completion', {}, { completions: 1, parallelism: 1 }],
    ['parallelism only: a work queue, no completions', { parallelism: 3 }, { parallelism: 3 }],
    ['completions only', { completions: 4 }, { completions: 4, parallelism: 1 }],
  ])('%s', async (_name, spec, expected) => {
    const created = await createJob(`defaults-${Object.keys(spec).join('-') || 'none'}`, spec);
    expect(created.spec.parallelism).toBe(expected.parallelism);
    expect(created.spec.completions).toBe(expected.completions);
    expect(created.spec.backoffLimit).toBe(6);
  });
});
