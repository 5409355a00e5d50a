/** The job controller's decisions (planJob), table-driven on a fixed `now`. */
import {describe, expect, it} from '@jest/globals';
import {failureBackoffMs, planJob, type Job} from '../../src/daemons/controller-manager/controllers/job-core.js';
import type {Pod} from '../../src/daemons/controller-manager/controllers/replica-set-core.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

function job(spec: Job['spec'] = {}, status: Job['status'] = {}): Job {
  return {metadata: {name: 'j', namespace: 'default', uid: 'u'}, spec: {parallelism: 1, completions: 1, backoffLimit: 6, template: {spec: {restartPolicy: 'Never'}}, ...spec}, status};
}
let n = 0;
function pod(phase: string, extra: {secondsAgo?: number; finishedSecondsAgo?: number; ready?: boolean; restarts?: number} = {}): Pod {
  const p: Pod = {metadata: {name: `p${n++}`, namespace: 'default', creationTimestamp: at(extra.secondsAgo ?? 60)}, status: {phase}};
  if (extra.finishedSecondsAgo !== undefined) p.status!.containerStatuses = [{state: {terminated: {finishedAt: at(extra.finishedSecondsAgo)}}} as never];
  if (extra.ready) p.status!.conditions = [{type: 'Ready', status: 'True'}];
  if (extra.restarts) p.status!.containerStatuses = [{restartCount: extra.restarts}];
  return p;
}

describe('planJob', () => {
  it.each<[string, Job, Pod[], {create?: number; remove?: number; finished?: string; requeue?: number; status?: object}]>([
    ['a new job starts its first pod and its clock', job(), [], {create: 1, status: {startTime: at(0)}}],
    ['parallelism 3 for 5 completions, 4 done: one more', job({parallelism: 3, completions: 5}), [pod('Succeeded'), pod('Succeeded'), pod('Succeeded'), pod('Succeeded')], {create: 1, status: {succeeded: 4}}],
    ['parallelism 3 for 5 completions, none done, one running: two more', job({parallelism: 3, completions: 5}), [pod('Running')], {create: 2, status: {active: 1}}],
    ['too many running for what is left: the surplus goes', job({parallelism: 3, completions: 2}), [pod('Succeeded'), pod('Running'), pod('Running', {ready: true})], {remove: 1}],
    ['enough successes: Complete, with the completion time', job({completions: 2}), [pod('Succeeded'), pod('Succeeded')], {finished: 'Complete', status: {succeeded: 2, completionTime: at(0)}}],
    ['a work queue (no completions) finishes once one succeeded and none runs', job({parallelism: 2, completions: undefined}), [pod('Succeeded'), pod('Succeeded')], {finished: 'Complete'}],
    ['a work queue with one success still running the other: no new pods', job({parallelism: 2, completions: undefined}), [pod('Succeeded'), pod('Running')], {create: 0}],
    ['failures beyond backoffLimit: Failed, running pods go', job({backoffLimit: 1, parallelism: 2, completions: 3}), [pod('Failed'), pod('Failed'), pod('Running')], {finished: 'Failed', remove: 1}],
    ['backoffLimit 0: the first failure fails the job', job({backoffLimit: 0}), [pod('Failed')], {finished: 'Failed'}],
    ['OnFailure: restarts reaching backoffLimit fail the job', job({backoffLimit: 2, template: {spec: {restartPolicy: 'OnFailure'}}}), [pod('Running', {restarts: 2})], {finished: 'Failed'}],
    ['a failure 5 s ago waits out the 10 s back-off', job(), [pod('Failed', {finishedSecondsAgo: 5})], {create: 0, requeue: 5000}],
    ['a second failure doubles it to 20 s', job(), [pod('Failed', {finishedSecondsAgo: 30}), pod('Failed', {finishedSecondsAgo: 15})], {create: 0, requeue: 5000}],
    ['after the back-off, the replacement', job(), [pod('Failed', {finishedSecondsAgo: 11})], {create: 1, status: {failed: 1}}],
    ['active deadline passed: Failed with DeadlineExceeded', job({activeDeadlineSeconds: 30}, {startTime: at(31)}), [pod('Running')], {finished: 'Failed', remove: 1}],
    ['active deadline ahead: look again when it falls', job({activeDeadlineSeconds: 30}, {startTime: at(10)}), [pod('Running')], {requeue: 20_000}],
    ['suspended: running pods go, Suspended condition', job({suspend: true}), [pod('Running')], {remove: 1}],
    ['already Complete: nothing more', job({}, {conditions: [{type: 'Complete', status: 'True'}], succeeded: 1}), [pod('Succeeded')], {create: 0}],
  ])('%s', (_name, j, pods, expected) => {
    const plan = planJob(j, pods, NOW);
    if (expected.create !== undefined) expect(plan.create).toBe(expected.create);
    if (expected.remove !== undefined) expect(plan.remove).toHaveLength(expected.remove);
    expect(plan.finished?.type).toBe(expected.finished);
    if (expected.requeue !== undefined) expect(plan.requeueAfterMs).toBe(expected.requeue);
    if (expected.status) expect(plan.status).toMatchObject(expected.status);
  });

  it('removes the not-ready and newest surplus pods first', () => {
    const old = pod('Running', {secondsAgo: 100, ready: true});
    const newestReady = pod('Running', {secondsAgo: 10, ready: true});
    const notReady = pod('Running', {secondsAgo: 200});
    const plan = planJob(job({parallelism: 1, completions: 1}), [old, newestReady, notReady], NOW);
    expect(plan.remove.map((p) => p.metadata.name)).toEqual([notReady.metadata.name, newestReady.metadata.name]);
  });

  it('writes the conditions kubectl shows', () => {
    expect(planJob(job({backoffLimit: 0}), [pod('Failed')], NOW).status.conditions).toEqual([
      {type: 'Failed', status: 'True', lastProbeTime: at(0), lastTransitionTime: at(0), reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit'},
    ]);
    expect(planJob(job({suspend: true}), [], NOW).status.conditions).toEqual([expect.objectContaining({type: 'Suspended', status: 'True', reason: 'JobSuspended'})]);
    const resumed = planJob(job({}, {conditions: [{type: 'Suspended', status: 'True'}], startTime: at(500)}), [], NOW);
    expect(resumed.status.conditions).toEqual([expect.objectContaining({type: 'Suspended', status: 'False', reason: 'JobResumed'})]);
    expect(resumed.status.startTime).toBe(at(0));
  });

  it('backs off 10 s, doubling, at most 6 minutes', () => {
    expect([1, 2, 3, 6, 7, 30].map(failureBackoffMs)).toEqual([10_000, 20_000, 40_000, 320_000, 360_000, 360_000]);
  });
});
