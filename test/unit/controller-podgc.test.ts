/**
 * The pod garbage collector against the real REST API (startTestApi), with a short period and
 * quarantine: finished pods beyond the threshold go (evicted first, then oldest), none with a
 * threshold of 0; pods of a node that is gone go after the quarantine, marked Failed with a
 * DisruptionTarget condition first, while pods of a node that shows up during the quarantine stay;
 * terminating pods on out-of-service nodes are force-deleted; unscheduled terminating pods are
 * marked Failed. Plus table tests of the selection rules.
 */
import { describe, expect, it } from '@jest/globals';
import { eventually, pause, useControllerHarness } from '../helpers/controller-harness.js';
import type { RunningController } from '../../src/daemons/controller-manager/controllers/types.js';
import {
  createPodGcController,
  outOfServiceTerminatingPods,
  podGcController,
  terminatedPodsToDelete,
  unknownNodeNames,
  unscheduledTerminatingPods,
  type Node,
  type Pod,
} from '../../src/daemons/controller-manager/controllers/podgc.js';
import { call, WatchReader } from '../helpers/memory-store.js';

const PODS = '/api/v1/namespaces/default/pods';

const h = useControllerHarness();

async function startGc(options: Record<string, unknown>, timing = { gcCheckPeriodMs: 50, quarantineMs: 400 }): Promise<RunningController> {
  return h.start(createPodGcController(timing), options);
}

async function createPod(name: string, fields: { nodeName?: string; phase?: string; reason?: string; finalizers?: string[] } = {}): Promise<void> {
  const reply = await call(h.api, 'POST', PODS, {
    body: {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name, ...(fields.finalizers ? { finalizers: fields.finalizers } : {}) },
      spec: { containers: [{ name: 'c', image: 'busybox' }], ...(fields.nodeName ? { nodeName: fields.nodeName } : {}) },
    },
  });
  if (reply.status !== 201) throw new Error(`create pod ${name}: ${reply.status} ${reply.text}`);
  if (fields.phase) {
    const status = { phase: fields.phase, ...(fields.reason ? { reason: fields.reason } : {}) };
    const patched = await call(h.api, 'PATCH', `${PODS}/${name}/status`, { body: { status }, contentType: 'application/merge-patch+json' });
    if (patched.status !== 200) throw new Error(`status of pod ${name}: ${patched.status} ${patched.text}`);
  }
  // Distinct creation timestamps, so "oldest first" means something.
  h.api.clock.advance(1000);
}

async function createNode(name: string, fields: { ready?: boolean; taints?: { key: string; effect: string }[] } = {}): Promise<void> {
  await call(h.api, 'POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: fields.taints ? { taints: fields.taints } : {} } });
  const conditions = [{ type: 'Ready', status: fields.ready === false ? 'False' : 'True' }];
  await call(h.api, 'PATCH', `/api/v1/nodes/${name}/status`, { body: { status: { conditions } }, contentType: 'application/merge-patch+json' });
}

const podNames = async () => ((await call(h.api, 'GET', PODS)).body.items as Pod[]).map((p) => p.metadata!.name).sort();

describe('podgc (against the REST API)', () => {
  it('deletes the finished pods beyond the threshold, evicted first, then oldest', async () => {
    await createPod('done-1', { phase: 'Succeeded' });
    await createPod('failed-2', { phase: 'Failed' });
    await createPod('done-3', { phase: 'Succeeded' });
    await createPod('evicted-4', { phase: 'Failed', reason: 'Evicted' });
    await createPod('pending-5');
    const gc = await startGc({ 'terminated-pod-gc-threshold': 2 });
    await eventually(async () => (await podNames()).length === 3);
    await pause(200);
    expect(await podNames()).toEqual(['done-3', 'failed-2', 'pending-5']);
    expect(gc.snapshot()).toMatchObject({ name: 'podgc', workers: 1, details: { threshold: 2, deleted: 2 } });
  });

  it.each([0, -1])('keeps every finished pod with a threshold of %d', async (threshold) => {
    await createPod('done-1', { phase: 'Succeeded' });
    await createPod('failed-2', { phase: 'Failed' });
    await startGc({ 'terminated-pod-gc-threshold': threshold });
    await pause(300);
    expect(await podNames()).toEqual(['done-1', 'failed-2']);
  });

  it('deletes the pods of a node that is gone after the quarantine, marking them Failed first; pods of nodes that exist or appear stay', async () => {
    await createNode('alive');
    await createPod('on-alive', { nodeName: 'alive', phase: 'Running' });
    await createPod('on-ghost', { nodeName: 'ghost', phase: 'Running' });
    await createPod('on-late', { nodeName: 'late', phase: 'Running' });
    const { reader, controller: watch } = await WatchReader.open(h.api, `${PODS}?watch=true&fieldSelector=metadata.name%3Don-ghost`);
    try {
      const started = Date.now();
      const gc = await startGc({}, { gcCheckPeriodMs: 50, quarantineMs: 800 });
      await pause(100);
      await createNode('late');
      await pause(300);
      // Still in quarantine.
      expect(await podNames()).toEqual(['on-alive', 'on-ghost', 'on-late']);
      expect(gc.snapshot().queueDepth).toBeGreaterThan(0);

      await eventually(async () => !(await podNames()).includes('on-ghost'));
      expect(Date.now() - started).toBeGreaterThanOrEqual(800);
      const events = await reader.take(3);
      const failed = events.find((e) => e.type === 'MODIFIED')?.object;
      expect(failed.status.phase).toBe('Failed');
      expect(failed.status.conditions).toContainEqual(expect.objectContaining({
        type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists',
      }));
      expect(events.at(-1).type).toBe('DELETED');
      await pause(200);
      expect(await podNames()).toEqual(['on-alive', 'on-late']);
    } finally {
      watch.abort();
    }
  });

  it('force-deletes terminating pods on an out-of-service node and marks unscheduled terminating pods Failed', async () => {
    await createNode('broken', { ready: false, taints: [{ key: 'node.orch.io/out-of-service', effect: 'NoExecute' }] });
    await createNode('healthy');
    await createPod('stuck', { nodeName: 'broken', phase: 'Running' });
    await createPod('draining', { nodeName: 'healthy', phase: 'Running' });
    await createPod('never-scheduled', { finalizers: ['example.com/hold'] });
    for (const name of ['stuck', 'draining', 'never-scheduled']) await call(h.api, 'DELETE', `${PODS}/${name}`);
    // Graceful deletion holds the scheduled pods, the finalizer the unscheduled one.
    expect(await podNames()).toEqual(['draining', 'never-scheduled', 'stuck']);

    await startGc({});
    await eventually(async () => !(await podNames()).includes('stuck'));
    const unscheduled = await eventually(async () => {
      const pod = (await call(h.api, 'GET', `${PODS}/never-scheduled`)).body;
      return pod.status.phase === 'Failed' && pod;
    });
    expect(unscheduled.metadata.deletionTimestamp).toBeDefined();
    const draining = (await call(h.api, 'GET', `${PODS}/draining`)).body;
    expect(draining.status.phase).toBe('Running');
  });

  it('the default descriptor makes a first pass at once but keeps a missing node\'s pods through its 40s quarantine', async () => {
    await createPod('done-1', { phase: 'Succeeded' });
    await createPod('done-2', { phase: 'Succeeded' });
    await createPod('on-ghost', { nodeName: 'ghost', phase: 'Running' });
    await h.start(podGcController, { 'terminated-pod-gc-threshold': 1 });
    await eventually(async () => !(await podNames()).includes('done-1'));
    await pause(300);
    expect(await podNames()).toEqual(['done-2', 'on-ghost']);
    expect(h.running!.snapshot().details).toMatchObject({ quarantinedNodes: 1 });
  });
});

const pod = (name: string, created: string, status: Pod['status'] = {}, extra: Partial<Pod> = {}): Pod => ({
  metadata: { name, namespace: 'ns', creationTimestamp: created, ...extra.metadata },
  spec: extra.spec ?? {},
  status,
});

describe('selection rules', () => {
  const pods = [
    pod('b', '2024-01-01T00:00:02Z', { phase: 'Succeeded' }),
    pod('a', '2024-01-01T00:00:02Z', { phase: 'Failed' }),
    pod('old', '2024-01-01T00:00:01Z', { phase: 'Succeeded' }),
    pod('evicted', '2024-01-01T00:00:09Z', { phase: 'Failed', reason: 'Evicted' }),
    pod('running', '2024-01-01T00:00:00Z', { phase: 'Running' }),
    pod('no-phase', '2024-01-01T00:00:00Z', {}),
  ];

  it.each([
    [0, []],
    [-5, []],
    [4, []],
    [10, []],
    [3, ['evicted']],
    [2, ['evicted', 'old']],
    [1, ['evicted', 'old', 'a']],
  ])('terminatedPodsToDelete with threshold %d deletes %j', (threshold, names) => {
    expect(terminatedPodsToDelete(pods, threshold).map((p) => p.metadata!.name)).toEqual(names);
  });

  const nodes = new Map<string, Node>([
    ['oos', { metadata: { name: 'oos' }, spec: { taints: [{ key: 'node.orch.io/out-of-service' }] }, status: { conditions: [{ type: 'Ready', status: 'False' }] } }],
    ['oos-ready', { metadata: { name: 'oos-ready' }, spec: { taints: [{ key: 'node.orch.io/out-of-service' }] }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }],
    ['down', { metadata: { name: 'down' }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } }],
  ]);
  const deleting = { metadata: { deletionTimestamp: '2024-01-01T00:00:00Z' } } as Partial<Pod>;

  it.each([
    ['terminating on an out-of-service node that is not ready', 'oos', deleting, { phase: 'Running' }, true],
    ['not terminating', 'oos', {}, { phase: 'Running' }, false],
    ['already finished', 'oos', deleting, { phase: 'Succeeded' }, false],
    ['node ready despite the taint', 'oos-ready', deleting, { phase: 'Running' }, false],
    ['node not ready but not out of service', 'down', deleting, { phase: 'Running' }, false],
    ['node unknown to the cache', 'gone', deleting, { phase: 'Running' }, false],
  ])('outOfServiceTerminatingPods: %s', (_what, nodeName, extra, status, selected) => {
    const p = pod('p', '2024-01-01T00:00:00Z', status as Pod['status'], { ...extra, spec: { nodeName } });
    expect(outOfServiceTerminatingPods([p], nodes)).toHaveLength(selected ? 1 : 0);
  });

  it('unknownNodeNames lists each missing node once and ignores unscheduled pods', () => {
    const bound = (node?: string) => pod('p', '2024-01-01T00:00:00Z', {}, { spec: node ? { nodeName: node } : {} });
    expect(unknownNodeNames([bound('gone'), bound('oos'), bound('gone'), bound(), bound('other')], nodes)).toEqual(['gone', 'other']);
  });

  it('unscheduledTerminatingPods picks pods being deleted without a node', () => {
    const candidates = [
      pod('deleting-unscheduled', '2024-01-01T00:00:00Z', {}, deleting),
      pod('deleting-scheduled', '2024-01-01T00:00:00Z', {}, { ...deleting, spec: { nodeName: 'oos' } }),
      pod('unscheduled', '2024-01-01T00:00:00Z', {}),
    ];
    expect(unscheduledTerminatingPods(candidates).map((p) => p.metadata!.name)).toEqual(['deleting-unscheduled']);
  });
});
