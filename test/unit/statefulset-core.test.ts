/** The statefulset controller's decisions (planStatefulSet), table-driven on a fixed `now`. */
import { describe, expect, it } from '@jest/globals';
import {
  newStatefulSetPod,
  ordinalOf,
  planStatefulSet,
  statusChanged,
  updateRevisionOf,
  type StatefulSet,
  type StatefulSetSpec,
  type StatefulSetStatus,
} from '../../src/daemons/controller-manager/controllers/statefulset-core.js';
import { controllerRefTo, type Pod } from '../../src/daemons/controller-manager/controllers/replica-set-core.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const OLD = 'web-oldrev';

function sts(spec: StatefulSetSpec = {}, status?: StatefulSetStatus, deleting = false): StatefulSet {
  const set: StatefulSet = {
    metadata: { name: 'web', namespace: 'default', uid: 'set-uid', generation: 2 },
    spec: {
      replicas: 3,
      serviceName: 'nginx',
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } },
      ...spec,
    },
  };
  if (status) set.status = status;
  if (deleting) set.metadata.deletionTimestamp = at(0);
  return set;
}
const REV = updateRevisionOf(sts());

type State = 'ready' | 'running' | 'pending' | 'failed' | 'succeeded' | 'terminating';
/** A pod of `web` at `ordinal`; `rev` defaults to the template's revision. */
function pod(ordinal: number, state: State = 'ready', opts: { rev?: string; readySecondsAgo?: number; name?: string; deleting?: boolean } = {}): Pod {
  const phase = { ready: 'Running', running: 'Running', pending: 'Pending', failed: 'Failed', succeeded: 'Succeeded', terminating: 'Running' }[state];
  const p: Pod = {
    metadata: { name: opts.name ?? `web-${ordinal}`, namespace: 'default', uid: `uid-${ordinal}`, labels: { app: 'web', 'controller-revision-hash': opts.rev ?? REV } },
    status: { phase },
  };
  if (state === 'ready' || state === 'terminating') p.status!.conditions = [{ type: 'Ready', status: 'True', lastTransitionTime: at(opts.readySecondsAgo ?? 600) }];
  if (state === 'terminating' || opts.deleting) p.metadata.deletionTimestamp = at(0);
  return p;
}
const plan = (set: StatefulSet, pods: Pod[]) => planStatefulSet(set, pods, controllerRefTo(set, 'apps/v1', 'StatefulSet'), NOW);

describe('planStatefulSet: which pods to create and delete', () => {
  it.each<[string, StatefulSet, Pod[], { create?: string[]; remove?: string[]; requeue?: number }]>([
    ['OrderedReady, no pods: only web-0', sts(), [], { create: ['web-0'] }],
    ['OrderedReady, web-0 Running and Ready: web-1', sts(), [pod(0)], { create: ['web-1'] }],
    ['OrderedReady, web-0 still Pending: nothing', sts(), [pod(0, 'pending')], {}],
    ['OrderedReady, web-1 Running but not Ready: nothing', sts(), [pod(0), pod(1, 'running')], {}],
    ['OrderedReady, a gap at web-1 is filled first', sts(), [pod(0), pod(2)], { create: ['web-1'] }],
    ['Parallel, no pods: all at once', sts({ podManagementPolicy: 'Parallel' }), [], { create: ['web-0', 'web-1', 'web-2'] }],
    ['Parallel, web-0 Pending: the others anyway', sts({ podManagementPolicy: 'Parallel' }), [pod(0, 'pending')], { create: ['web-1', 'web-2'] }],
    ['ordinals.start 5: web-5 first', sts({ ordinals: { start: 5 } }), [], { create: ['web-5'] }],
    ['a Failed pod is deleted, not yet recreated', sts(), [pod(0), pod(1, 'failed'), pod(2)], { remove: ['web-1'] }],
    ['a Succeeded pod too', sts(), [pod(0, 'succeeded')], { remove: ['web-0'] }],
    ['a finished pod already terminating: wait for it to go', sts(), [pod(0, 'succeeded', { deleting: true }), pod(1)], {}],
    ['Parallel replaces the failed pod and creates the missing one in one plan', sts({ podManagementPolicy: 'Parallel' }), [pod(0, 'failed'), pod(1)], { remove: ['web-0'], create: ['web-2'] }],
    ['scale 3 -> 1, all ready: the highest ordinal, one at a time', sts({ replicas: 1 }), [pod(0), pod(1), pod(2)], { remove: ['web-2'] }],
    ['scale down waits while the condemned pod terminates', sts({ replicas: 1 }), [pod(0), pod(1), pod(2, 'terminating')], {}],
    ['scale down waits for the remaining replicas to be ready', sts({ replicas: 1 }), [pod(0, 'running'), pod(1), pod(2)], {}],
    ['scale down deletes an unhealthy highest pod when it is the first unhealthy', sts({ replicas: 1 }), [pod(0), pod(1), pod(2, 'running')], { remove: ['web-2'] }],
    ['scale down blocks on an unhealthy pod that is not the first unhealthy', sts({ replicas: 1 }), [pod(0), pod(1, 'running'), pod(2, 'pending')], {}],
    ['Parallel scale to 0: all at once', sts({ replicas: 0, podManagementPolicy: 'Parallel' }), [pod(0), pod(1, 'pending'), pod(2)], { remove: ['web-2', 'web-1', 'web-0'] }],
    ['rolling update: the highest old pod first', sts(), [pod(0, 'ready', { rev: OLD }), pod(1, 'ready', { rev: OLD }), pod(2, 'ready', { rev: OLD })], { remove: ['web-2'] }],
    ['rolling update: then the next one down', sts(), [pod(0, 'ready', { rev: OLD }), pod(1, 'ready', { rev: OLD }), pod(2)], { remove: ['web-1'] }],
    ['Parallel rolling update waits for the updated pod to be ready', sts({ podManagementPolicy: 'Parallel' }), [pod(0, 'ready', { rev: OLD }), pod(1, 'ready', { rev: OLD }), pod(2, 'running')], {}],
    ['rolling update with partition 2: only web-2 is updated', sts({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } }), [pod(0, 'ready', { rev: OLD }), pod(1, 'ready', { rev: OLD }), pod(2)], {}],
    ['rolling update with partition 2, web-2 old: it goes', sts({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } }), [pod(0, 'ready', { rev: OLD }), pod(1, 'ready', { rev: OLD }), pod(2, 'ready', { rev: OLD })], { remove: ['web-2'] }],
    ['OnDelete: old pods stay', sts({ updateStrategy: { type: 'OnDelete' } }), [pod(0, 'ready', { rev: OLD }), pod(1, 'ready', { rev: OLD }), pod(2, 'ready', { rev: OLD })], {}],
    ['minReadySeconds 10, web-0 ready 4 s ago: wait 6 s before web-1', sts({ minReadySeconds: 10 }), [pod(0, 'ready', { readySecondsAgo: 4 })], { requeue: 6000 }],
    ['minReadySeconds 10, web-0 ready 11 s ago: web-1', sts({ minReadySeconds: 10 }), [pod(0, 'ready', { readySecondsAgo: 11 })], { create: ['web-1'] }],
    ['a set being deleted: nothing', sts({}, undefined, true), [pod(0, 'failed')], {}],
    ['pods not named <set>-<ordinal> are not the set\'s', sts({ replicas: 1 }), [pod(0), pod(9, 'ready', { name: 'web-abc' }), pod(9, 'ready', { name: 'webby-1' })], {}],
  ])('%s', (_name, set, pods, expected) => {
    const p = plan(set, pods);
    expect(p.create.map((c) => c.metadata.name)).toEqual(expected.create ?? []);
    expect(p.remove.map((r) => r.pod.metadata.name)).toEqual(expected.remove ?? []);
    expect(p.requeueAfterMs).toBe(expected.requeue);
  });

  it('names why it deletes', () => {
    expect(plan(sts({ replicas: 1 }), [pod(0), pod(1, 'failed')]).remove.map((r) => r.reason)).toEqual(['scale-down']);
    expect(plan(sts(), [pod(0, 'failed')]).remove.map((r) => r.reason)).toEqual(['finished']);
    expect(plan(sts({ replicas: 1 }), [pod(0, 'ready', { rev: OLD })]).remove.map((r) => r.reason)).toEqual(['update']);
  });
});

describe('newStatefulSetPod', () => {
  it('gives the pod its stable name, identity labels, DNS identity, revision and owner', () => {
    const set = sts();
    const ref = controllerRefTo(set, 'apps/v1', 'StatefulSet');
    const p = newStatefulSetPod(set, 2, ref, REV);
    expect(p.metadata).toEqual({
      name: 'web-2',
      generateName: 'web-',
      namespace: 'default',
      labels: { app: 'web', 'statefulset.orch.io/pod-name': 'web-2', 'apps.orch.io/pod-index': '2', 'controller-revision-hash': REV },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'set-uid', controller: true, blockOwnerDeletion: true }],
    });
    expect(p.spec).toEqual({ containers: [{ name: 'c', image: 'nginx:1' }], hostname: 'web-2', subdomain: 'nginx' });
    expect(newStatefulSetPod(sts({ serviceName: undefined }), 0, ref, REV).spec).not.toHaveProperty('subdomain');
  });

  it('parses ordinals only from names of this set', () => {
    const set = sts();
    expect([`web-0`, 'web-12', 'web-x', 'web-', 'other-1', 'web-web-1'].map((name) => ordinalOf(set, { metadata: { name } }))).toEqual([0, 12, -1, -1, -1, -1]);
  });

  it('names the revision <set>-<hash>, changing with the template only', () => {
    expect(REV).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(updateRevisionOf(sts({ replicas: 7 }))).toBe(REV);
    expect(updateRevisionOf(sts({ template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } }))).not.toBe(REV);
  });
});

describe('planStatefulSet: status', () => {
  it('counts existing, ready, available, current and updated pods', () => {
    const set = sts({ minReadySeconds: 30 }, { replicas: 3, availableReplicas: 3, currentRevision: OLD, updateRevision: REV });
    const pods = [pod(0, 'ready', { rev: OLD }), pod(1, 'ready', { rev: OLD, readySecondsAgo: 10 }), pod(2, 'pending'), pod(3, 'terminating', { rev: OLD })];
    expect(plan(set, pods).status).toEqual({
      observedGeneration: 2,
      replicas: 4,
      readyReplicas: 3,
      availableReplicas: 2,
      currentReplicas: 2,
      updatedReplicas: 1,
      currentRevision: OLD,
      updateRevision: REV,
      collisionCount: 0,
    });
  });

  it('a new set: currentRevision is the update revision, zero counts left out but replicas and availableReplicas', () => {
    expect(plan(sts(), []).status).toEqual({ observedGeneration: 2, replicas: 0, availableReplicas: 0, currentRevision: REV, updateRevision: REV, collisionCount: 0 });
  });

  it('a pod deleted for the update no longer counts as current', () => {
    const set = sts({}, { replicas: 3, availableReplicas: 3, currentRevision: OLD });
    const p = plan(set, [pod(0, 'ready', { rev: OLD }), pod(1, 'ready', { rev: OLD }), pod(2, 'ready', { rev: OLD })]);
    expect(p.status).toMatchObject({ currentReplicas: 2, currentRevision: OLD, updateRevision: REV });
  });

  it('once every pod is updated and ready, the update revision becomes current', () => {
    const set = sts({}, { replicas: 3, availableReplicas: 3, currentRevision: OLD });
    expect(plan(set, [pod(0), pod(1), pod(2)]).status).toMatchObject({ currentRevision: REV, currentReplicas: 3, updatedReplicas: 3 });
    // One not ready yet: still the old revision.
    expect(plan(set, [pod(0), pod(1), pod(2, 'running')]).status).toMatchObject({ currentRevision: OLD, updatedReplicas: 3 });
    // OnDelete does not complete a rolling update.
    const onDelete = sts({ updateStrategy: { type: 'OnDelete' } }, { replicas: 3, availableReplicas: 3, currentRevision: OLD });
    expect(plan(onDelete, [pod(0), pod(1), pod(2)]).status.currentRevision).toBe(OLD);
  });

  it('is written only when it differs', () => {
    const set = sts();
    const status = plan(set, []).status;
    expect(statusChanged({ ...set, status }, status)).toBe(false);
    expect(statusChanged(set, status)).toBe(true);
    expect(statusChanged({ ...set, status: { ...status, readyReplicas: 1 } }, status)).toBe(true);
  });
});
