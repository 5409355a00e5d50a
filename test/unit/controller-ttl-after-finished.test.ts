/**
 * The ttl-after-finished controller against the real REST API: a finished job with a TTL is
 * deleted (foreground) once the TTL has passed since it finished, and not before; a job without a
 * TTL, or not finished, stays.
 */
import { describe, expect, it } from '@jest/globals';
import { eventually, pause, useControllerHarness } from '../helpers/controller-harness.js';
import { startTtlAfterFinishedController, ttlAfterFinishedController, ttlExpiresAt } from '../../src/daemons/controller-manager/controllers/ttl-after-finished.js';

const JOBS = '/apis/batch/v1/namespaces/default/jobs';
const h = useControllerHarness();
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

async function finishedJob(name: string, ttlSeconds: number | undefined, finishedAt = Date.now()): Promise<void> {
  const spec: Record<string, unknown> = { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } };
  if (ttlSeconds !== undefined) spec.ttlSecondsAfterFinished = ttlSeconds;
  await h.client.request({ method: 'POST', path: JOBS, body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec } });
  await h.client.patch(`${JOBS}/${name}/status`, 'application/merge-patch+json', {
    status: { conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: rfc3339(finishedAt) }], succeeded: 1 },
  });
}
const deleting = async (name: string) => {
  const job = await h.client.get<any>(`${JOBS}/${name}`).catch(() => undefined);
  return job === undefined || job.metadata.deletionTimestamp !== undefined;
};

describe('ttl-after-finished controller', () => {
  it('deletes a finished job once its TTL has passed, foreground, and not before', async () => {
    // The controller's clock is the test's: the job finished at T, its TTL is 2 s.
    const T = Date.now() - 60_000;
    let now = T + 1000;
    await h.start({ start: (ctx, signal) => startTtlAfterFinishedController({ ...ctx, now: () => now }, signal) });
    await finishedJob('soon', 2, T);
    await pause(300);
    expect(await deleting('soon')).toBe(false);
    now = T + 2000;
    // The controller looks again when it computed the TTL would pass (1 s after its first look).
    await eventually(async () => (await deleting('soon')) || undefined, 5000, 'the job deleted');
    const job = await h.client.get<any>(`${JOBS}/soon`);
    expect(job.metadata.finalizers).toContain('foregroundDeletion');
  });

  it('deletes at once a job that finished longer ago than its TTL', async () => {
    await h.start(ttlAfterFinishedController);
    await finishedJob('old', 10, Date.now() - 60_000);
    await eventually(async () => (await deleting('old')) || undefined, 3000, 'the job deleted');
  });

  it('keeps a finished job without a TTL, and one whose TTL was removed before it expired', async () => {
    const T = Date.now() - 60_000;
    let now = T;
    await h.start({ start: (ctx, signal) => startTtlAfterFinishedController({ ...ctx, now: () => now }, signal) });
    await finishedJob('kept', undefined, T - 60_000);
    await finishedJob('changed', 1, T);
    await h.client.patch(`${JOBS}/changed`, 'application/merge-patch+json', { spec: { ttlSecondsAfterFinished: null } });
    now = T + 5000;
    await pause(1500);
    expect(await deleting('kept')).toBe(false);
    expect(await deleting('changed')).toBe(false);
  });
});

describe('ttlExpiresAt', () => {
  const job = (spec: Record<string, unknown>, conditions: unknown[] = []) => ({ metadata: { name: 'j' }, spec, status: { conditions } }) as never;
  it.each([
    ['finished with a TTL', job({ ttlSecondsAfterFinished: 30 }, [{ type: 'Failed', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }]), Date.parse('2026-01-01T00:00:30Z')],
    ['TTL 0: at the finish', job({ ttlSecondsAfterFinished: 0 }, [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }]), Date.parse('2026-01-01T00:00:00Z')],
    ['not finished', job({ ttlSecondsAfterFinished: 30 }, [{ type: 'Suspended', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }]), undefined],
    ['no TTL', job({}, [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }]), undefined],
  ])('%s', (_name, j, expected) => {
    expect(ttlExpiresAt(j)).toBe(expected);
  });
});
