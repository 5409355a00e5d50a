/**
 * Table tests of the pure decisions shared by the replicaset and replicationcontroller
 * controllers: claiming, the deletion ranking, create/delete counts, slow start, expectations and
 * status.
 */
import { describe, expect, it } from '@jest/globals';
import { parseLabelSelector } from '../../src/api/selectors.js';
import {
  calculateReplicaStatus,
  claimPods,
  controllerRefTo,
  Expectations,
  planReplicas,
  podFromTemplate,
  rankPodsForDeletion,
  slowStartBatch,
  slowStartBatchSizes,
  statusChanged,
  type Pod,
  type ReplicaOwner,
} from '../../src/daemons/controller-manager/controllers/replica-set-core.js';

const NOW = Date.parse('2025-01-01T12:00:00Z');
const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString().replace('.000Z', 'Z');

const owner: ReplicaOwner = {
  metadata: { name: 'web', namespace: 'default', uid: 'rs-1', generation: 4 },
  spec: { replicas: 3, template: { metadata: { labels: { app: 'web', tier: 'front' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
};
const ref = controllerRefTo(owner, 'apps/v1', 'ReplicaSet');

interface PodOptions {
  labels?: Record<string, string>;
  ownerUid?: string;
  deleting?: boolean;
  node?: string;
  phase?: string;
  readySince?: number;
  created?: number;
  restarts?: number;
  cost?: number;
}

function pod(name: string, o: PodOptions = {}): Pod {
  return {
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      labels: o.labels ?? { app: 'web', tier: 'front' },
      creationTimestamp: ago(o.created ?? 3600),
      ...(o.ownerUid ? { ownerReferences: [{ ...ref, uid: o.ownerUid }] } : {}),
      ...(o.deleting ? { deletionTimestamp: ago(0) } : {}),
      ...(o.cost !== undefined ? { annotations: { 'controller.orch.io/pod-deletion-cost': String(o.cost) } } : {}),
    },
    spec: o.node ? { nodeName: o.node } : {},
    status: {
      phase: o.phase ?? 'Running',
      conditions: o.readySince !== undefined ? [{ type: 'Ready', status: 'True', lastTransitionTime: ago(o.readySince) }] : [],
      containerStatuses: [{ restartCount: o.restarts ?? 0 }],
    },
  };
}

const names = (pods: Pod[]) => pods.map((p) => p.metadata.name);

describe('claimPods', () => {
  const selector = parseLabelSelector('app=web');
  it.each([
    ['owned and matching', pod('a', { ownerUid: 'rs-1' }), 'owned'],
    ['owned, labels no longer match', pod('a', { ownerUid: 'rs-1', labels: { app: 'other' } }), 'release'],
    ['controlled by another owner', pod('a', { ownerUid: 'rs-2' }), 'none'],
    ['orphan matching', pod('a'), 'adopt'],
    ['orphan not matching', pod('a', { labels: { app: 'api' } }), 'none'],
    ['orphan being deleted', pod('a', { deleting: true }), 'none'],
  ])('%s -> %s', (_what, candidate, expected) => {
    const decision = claimPods(owner, selector, [candidate]);
    const found = (['owned', 'adopt', 'release'] as const).find((k) => decision[k].length > 0) ?? 'none';
    expect(found).toBe(expected);
  });

  it('neither adopts nor releases while the owner is being deleted', () => {
    const deleting = { ...owner, metadata: { ...owner.metadata, deletionTimestamp: ago(1) } };
    const decision = claimPods(deleting, selector, [pod('orphan'), pod('stray', { ownerUid: 'rs-1', labels: { app: 'x' } })]);
    expect(decision).toEqual({ owned: [], adopt: [], release: [] });
  });

  it('an empty selector claims nothing', () => {
    expect(claimPods(owner, [], [pod('orphan')]).adopt).toEqual([]);
  });
});

describe('rankPodsForDeletion', () => {
  // Each row: the pod expected to be deleted first, then the other.
  it.each([
    ['unscheduled before scheduled', pod('first', { phase: 'Pending' }), pod('second', { node: 'n1', phase: 'Pending' })],
    ['pending before running', pod('first', { node: 'n1', phase: 'Pending' }), pod('second', { node: 'n1', phase: 'Running' })],
    ['unknown before running', pod('first', { node: 'n1', phase: 'Unknown' }), pod('second', { node: 'n1', phase: 'Running' })],
    ['not ready before ready', pod('first', { node: 'n1' }), pod('second', { node: 'n1', readySince: 10 })],
    ['lower deletion cost first', pod('first', { node: 'n1', readySince: 10, cost: -5 }), pod('second', { node: 'n1', readySince: 10, cost: 0 })],
    ['doubled-up node first', pod('first', { node: 'busy', readySince: 10 }), pod('second', { node: 'quiet', readySince: 10 })],
    ['ready for less time first', pod('first', { node: 'n1', readySince: 5 }), pod('second', { node: 'n2', readySince: 5000 })],
    ['more restarts first', pod('first', { node: 'n1', readySince: 100, restarts: 3 }), pod('second', { node: 'n2', readySince: 100, restarts: 0 })],
    ['newest first', pod('first', { node: 'n1', created: 10 }), pod('second', { node: 'n2', created: 100_000 })],
  ])('%s', (_what, first, second) => {
    const related = [first, second, pod('neighbour', { node: 'busy' })];
    expect(names(rankPodsForDeletion([second, first], related, NOW))).toEqual(['first', 'second']);
    expect(names(rankPodsForDeletion([first, second], related, NOW))).toEqual(['first', 'second']);
  });
});

describe('planReplicas', () => {
  const pods = (n: number) => Array.from({ length: n }, (_, i) => pod(`p${i}`, { ownerUid: 'rs-1' }));
  it.each([
    [3, 3, 500, { action: 'none' }],
    [5, 2, 500, { action: 'create', count: 3 }],
    [1000, 0, 500, { action: 'create', count: 500 }],
  ] as const)('desired %p with %p pods (burst %p) -> %p', (desired, have, burst, expected) => {
    expect(planReplicas(desired, pods(have), [], NOW, burst)).toEqual(expected);
  });

  it('deletes the surplus, the lowest ranked pods', () => {
    const ready = pod('ready', { node: 'n1', readySince: 100 });
    const pending = pod('pending', { phase: 'Pending' });
    const running = pod('running', { node: 'n1' });
    const plan = planReplicas(1, [ready, running, pending], [], NOW);
    expect(plan.action).toBe('delete');
    expect(plan.action === 'delete' && names(plan.pods)).toEqual(['pending', 'running']);
  });

  it('deletes at most burst pods per sync', () => {
    const plan = planReplicas(0, pods(7), [], NOW, 5);
    expect(plan.action === 'delete' && plan.pods.length).toBe(5);
  });
});

describe('slow start', () => {
  it.each([
    [0, []],
    [1, [1]],
    [10, [1, 2, 4, 3]],
    [500, [1, 2, 4, 8, 16, 32, 64, 128, 245]],
  ])('%p calls go in batches %p', (count, sizes) => {
    expect(slowStartBatchSizes(count)).toEqual(sizes);
  });

  it('stops after the first batch with a failure', async () => {
    let calls = 0;
    const result = await slowStartBatch(20, 1, async () => {
      calls++;
      // calls 1 (batch 1), 2-3 (batch 2), 4-7 (batch 3): the 5th fails.
      if (calls === 5) throw new Error('quota exceeded');
    });
    expect(calls).toBe(7);
    expect(result.successes).toBe(6);
    expect(String(result.error)).toMatch(/quota exceeded/);
  });
});

describe('Expectations', () => {
  it('holds a sync back until every creation was observed', () => {
    const e = new Expectations(() => NOW);
    expect(e.satisfied('default/web')).toBe(true);
    e.expectCreations('default/web', 2);
    expect(e.satisfied('default/web')).toBe(false);
    e.creationObserved('default/web');
    expect(e.satisfied('default/web')).toBe(false);
    e.creationObserved('default/web');
    expect(e.satisfied('default/web')).toBe(true);
  });

  it('counts only the deletions it asked for, once each', () => {
    const e = new Expectations(() => NOW);
    e.expectDeletions('default/web', ['default/a', 'default/b']);
    e.deletionObserved('default/web', 'default/zzz');
    e.deletionObserved('default/web', 'default/a');
    e.deletionObserved('default/web', 'default/a');
    expect(e.pending('default/web')).toEqual({ add: 0, del: 1 });
    e.deletionObserved('default/web', 'default/b');
    expect(e.satisfied('default/web')).toBe(true);
  });

  it('lapses after the timeout', () => {
    let now = NOW;
    const e = new Expectations(() => now, 1000);
    e.expectCreations('k', 1);
    now += 1001;
    expect(e.satisfied('k')).toBe(true);
  });
});

describe('calculateReplicaStatus', () => {
  it('counts fully labeled, ready and available pods (minReadySeconds)', () => {
    const slow = { ...owner, spec: { ...owner.spec, minReadySeconds: 30 } };
    const pods = [
      pod('a', { readySince: 60 }),
      pod('b', { readySince: 5 }),
      pod('c', { labels: { app: 'web' } }),
    ];
    expect(calculateReplicaStatus(slow, pods, undefined, NOW)).toEqual({
      replicas: 3,
      fullyLabeledReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 1,
      observedGeneration: 4,
    });
  });

  it.each([
    ['too few pods', 1, 'FailedCreate'],
    ['too many pods', 5, 'FailedDelete'],
  ])('a failed sync with %s sets ReplicaFailure %s', (_what, count, reason) => {
    const pods = Array.from({ length: count }, (_, i) => pod(`p${i}`));
    const status = calculateReplicaStatus(owner, pods, new Error('pods "x" is forbidden'), NOW);
    expect(status.conditions).toEqual([{ type: 'ReplicaFailure', status: 'True', lastTransitionTime: '2025-01-01T12:00:00Z', reason, message: 'pods "x" is forbidden' }]);
  });

  it('a successful sync removes ReplicaFailure', () => {
    const failing = { ...owner, status: { replicas: 0, conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate' }] } };
    const status = calculateReplicaStatus(failing, [], undefined, NOW);
    expect(status.conditions).toBeUndefined();
    expect(statusChanged(failing, status)).toBe(true);
  });

  it('an unchanged status needs no write', () => {
    const synced = { ...owner, status: { replicas: 1, fullyLabeledReplicas: 1, observedGeneration: 4 } };
    expect(statusChanged(synced, calculateReplicaStatus(synced, [pod('a')], undefined, NOW))).toBe(false);
  });
});

describe('podFromTemplate', () => {
  it('names pods after the owner and gives them the template labels and a controller reference', () => {
    expect(podFromTemplate(owner, ref)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: 'web-',
        namespace: 'default',
        labels: { app: 'web', tier: 'front' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-1', controller: true, blockOwnerDeletion: true }],
      },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
  });
});
