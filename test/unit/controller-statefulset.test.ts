/**
 * The statefulset controller against the real REST API (startTestApi). No agent runs: the test
 * plays it, turning the pods the controller creates Running and Ready (or Failed) through the
 * status subresource, and finishing graceful deletions.
 */
import { describe, expect, it } from '@jest/globals';
import { eventually, pause, quietLogger, useControllerHarness } from '../helpers/controller-harness.js';
import { statefulSetController } from '../../src/daemons/controller-manager/controllers/statefulset.js';

const SETS = '/apis/apps/v1/namespaces/default/statefulsets';
const PODS = '/api/v1/namespaces/default/pods';
const warnings: unknown[][] = [];
const h = useControllerHarness({ logger: { ...quietLogger, warning: (...args: unknown[]) => void warnings.push(args) } });

const container = (image: string) => ({ name: 'web', image });
const template = (image = 'nginx:1', extraSpec: Record<string, unknown> = {}) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [container(image)], ...extraSpec } });

async function createSet(name: string, spec: Record<string, unknown>): Promise<any> {
  const body = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name }, spec: { selector: { matchLabels: { app: 'web' } }, serviceName: 'nginx', template: template(), ...spec } };
  return (await h.client.request<any>({ method: 'POST', path: SETS, body })).body;
}
const set = (name: string) => h.client.get<any>(`${SETS}/${name}`);
const podNames = async (): Promise<string[]> => (await h.client.request<any>({ method: 'GET', path: PODS })).body.items.map((p: any) => p.metadata.name).sort();
const getPod = async (name: string): Promise<any | undefined> => (await h.client.request<any>({ method: 'GET', path: PODS })).body.items.find((p: any) => p.metadata.name === name);
/** Waits until exactly `names` exist (in any state). */
const podsAre = (names: string[], what = `pods ${names.join(',')}`) =>
  eventually(async () => (JSON.stringify(await podNames()) === JSON.stringify([...names].sort()) ? true : undefined), 5000, what);
/** The agent's part: the pod runs and passes its readiness check. */
const makeReady = (name: string) =>
  h.client.patch(`${PODS}/${name}/status`, 'application/merge-patch+json', {
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') }] },
  });
const setPhase = (name: string, phase: string) => h.client.patch(`${PODS}/${name}/status`, 'application/merge-patch+json', { status: { phase } });
const eventMessages = async (name: string): Promise<string[]> =>
  (await h.client.request<any>({ method: 'GET', path: '/api/v1/namespaces/default/events', query: { fieldSelector: `involvedObject.kind=StatefulSet,involvedObject.name=${name}` } })).body.items.map(
    (e: any) => `${e.reason}: ${e.message}`,
  );
const hasEvents = (name: string, wanted: string[]) =>
  eventually(async () => {
    const messages = await eventMessages(name);
    return wanted.every((w) => messages.includes(w)) ? messages : undefined;
  }, 5000, `events ${wanted.join(' / ')}`);
/** Brings the set to `count` ready pods in OrderedReady order, as an agent would. */
async function rollOut(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await eventually(() => getPod(`web-${i}`), 5000, `web-${i} created`);
    await makeReady(`web-${i}`);
  }
}

describe('statefulset controller', () => {
  it('creates web-0, web-1, web-2 in order, each once the previous is Running and Ready', async () => {
    await h.start(statefulSetController);
    const created = await createSet('web', { replicas: 3 });
    await podsAre(['web-0']);
    const pod = await getPod('web-0');
    expect(pod.metadata.labels).toEqual({
      app: 'web',
      'statefulset.orch.io/pod-name': 'web-0',
      'apps.orch.io/pod-index': '0',
      'controller-revision-hash': expect.stringMatching(/^web-[a-z0-9]+$/),
    });
    expect(pod.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect(pod.spec).toMatchObject({ hostname: 'web-0', subdomain: 'nginx' });
    // web-0 is only Pending: web-1 must wait.
    await pause(300);
    expect(await podNames()).toEqual(['web-0']);

    await makeReady('web-0');
    await podsAre(['web-0', 'web-1']);
    await makeReady('web-1');
    await podsAre(['web-0', 'web-1', 'web-2']);
    await makeReady('web-2');

    const ready = await eventually(async () => {
      const s = await set('web');
      return s.status?.readyReplicas === 3 ? s : undefined;
    }, 5000, 'readyReplicas 3');
    expect(ready.status).toEqual({
      observedGeneration: 1,
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      currentRevision: pod.metadata.labels['controller-revision-hash'],
      updateRevision: pod.metadata.labels['controller-revision-hash'],
      collisionCount: 0,
    });
    await hasEvents('web', [0, 1, 2].map((i) => `SuccessfulCreate: create Pod web-${i} in StatefulSet web successful`));
  });

  it('creates every pod at once with podManagementPolicy Parallel', async () => {
    await h.start(statefulSetController);
    await createSet('web', { replicas: 3, podManagementPolicy: 'Parallel' });
    await podsAre(['web-0', 'web-1', 'web-2']);
    const s = await eventually(async () => {
      const current = await set('web');
      return current.status?.replicas === 3 ? current : undefined;
    }, 5000, 'status.replicas 3');
    expect(s.status.readyReplicas).toBeUndefined();
    expect(s.status.availableReplicas).toBe(0);
  });

  it('scales down from the highest ordinal, one pod at a time, waiting for each to terminate', async () => {
    await h.start(statefulSetController);
    // Scheduled pods are deleted gracefully: each stays Terminating until the "agent" finishes it.
    await createSet('web', { replicas: 3, template: template('nginx:1', { nodeName: 'node-a' }) });
    await rollOut(3);
    await eventually(async () => ((await set('web')).status?.readyReplicas === 3 ? true : undefined), 5000, 'readyReplicas 3');

    await h.client.patch(`${SETS}/web`, 'application/merge-patch+json', { spec: { replicas: 1 } });
    await eventually(async () => (await getPod('web-2'))?.metadata.deletionTimestamp, 5000, 'web-2 terminating');
    await pause(300);
    expect((await getPod('web-1')).metadata.deletionTimestamp).toBeUndefined();

    await h.client.request({ method: 'DELETE', path: `${PODS}/web-2`, query: { gracePeriodSeconds: '0' } });
    await eventually(async () => (await getPod('web-1'))?.metadata.deletionTimestamp, 5000, 'web-1 terminating next');
    await h.client.request({ method: 'DELETE', path: `${PODS}/web-1`, query: { gracePeriodSeconds: '0' } });
    await podsAre(['web-0']);
    await eventually(async () => ((await set('web')).status?.replicas === 1 ? true : undefined), 5000, 'status.replicas 1');
    await hasEvents('web', ['SuccessfulDelete: delete Pod web-2 in StatefulSet web successful', 'SuccessfulDelete: delete Pod web-1 in StatefulSet web successful']);
  });

  it('replaces a Failed pod with a new pod of the same name', async () => {
    await h.start(statefulSetController);
    await createSet('web', { replicas: 2 });
    await rollOut(2);
    const before = await getPod('web-0');
    await setPhase('web-0', 'Failed');
    const after = await eventually(async () => {
      const p = await getPod('web-0');
      return p && p.metadata.uid !== before.metadata.uid ? p : undefined;
    }, 5000, 'web-0 recreated');
    expect(after.metadata.labels['statefulset.orch.io/pod-name']).toBe('web-0');
    expect(after.status.phase).toBe('Pending');
    await hasEvents('web', ['SuccessfulDelete: delete Pod web-0 in StatefulSet web successful']);
  });

  it('rolls a template change out from the highest ordinal down, one ready pod at a time, above the partition', async () => {
    await h.start(statefulSetController);
    await createSet('web', { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } });
    await rollOut(3);
    const oldRevision = (await getPod('web-0')).metadata.labels['controller-revision-hash'];
    await eventually(async () => ((await set('web')).status?.readyReplicas === 3 ? true : undefined), 5000, 'readyReplicas 3');

    await h.client.patch(`${SETS}/web`, 'application/merge-patch+json', { spec: { template: template('nginx:2') } });
    const revisionOf = async (name: string) => (await getPod(name))?.metadata.labels['controller-revision-hash'];
    const web2 = await eventually(async () => {
      const p = await getPod('web-2');
      return p && p.metadata.labels['controller-revision-hash'] !== oldRevision ? p : undefined;
    }, 5000, 'web-2 updated');
    const newRevision = web2.metadata.labels['controller-revision-hash'];
    expect(web2.spec.containers[0].image).toBe('nginx:2');
    // web-2 is not ready yet: web-1 keeps the old template.
    await pause(300);
    expect(await revisionOf('web-1')).toBe(oldRevision);

    await makeReady('web-2');
    await eventually(async () => ((await revisionOf('web-1')) === newRevision ? true : undefined), 5000, 'web-1 updated');
    await makeReady('web-1');
    const status = await eventually(async () => {
      const s = await set('web');
      return s.status?.updatedReplicas === 2 && s.status?.readyReplicas === 3 ? s.status : undefined;
    }, 5000, 'updatedReplicas 2');
    // Below the partition, web-0 stays on the old revision, which stays current.
    expect(await revisionOf('web-0')).toBe(oldRevision);
    expect(status).toMatchObject({ replicas: 3, currentReplicas: 1, updatedReplicas: 2, currentRevision: oldRevision, updateRevision: newRevision, observedGeneration: 2 });

    // Partition 0 finishes the rollout; the new revision becomes current.
    await h.client.patch(`${SETS}/web`, 'application/merge-patch+json', { spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } } } });
    await eventually(async () => ((await revisionOf('web-0')) === newRevision ? true : undefined), 5000, 'web-0 updated');
    await makeReady('web-0');
    const done = await eventually(async () => {
      const s = await set('web');
      return s.status?.currentRevision === newRevision && s.status?.readyReplicas === 3 ? s.status : undefined;
    }, 5000, 'currentRevision = updateRevision');
    expect(done).toMatchObject({ currentReplicas: 3, updatedReplicas: 3 });
  });

  it('with OnDelete, updates a pod only when it is deleted by hand', async () => {
    await h.start(statefulSetController);
    await createSet('web', { replicas: 2, updateStrategy: { type: 'OnDelete' } });
    await rollOut(2);
    const oldUid = (await getPod('web-1')).metadata.uid;
    await h.client.patch(`${SETS}/web`, 'application/merge-patch+json', { spec: { template: template('nginx:2') } });
    await eventually(async () => ((await set('web')).status?.observedGeneration === 2 ? true : undefined), 5000, 'observedGeneration 2');
    await pause(300);
    expect((await getPod('web-1')).metadata.uid).toBe(oldUid);

    await h.client.request({ method: 'DELETE', path: `${PODS}/web-1` });
    const replaced = await eventually(async () => {
      const p = await getPod('web-1');
      return p && p.metadata.uid !== oldUid ? p : undefined;
    }, 5000, 'web-1 recreated');
    expect(replaced.spec.containers[0].image).toBe('nginx:2');
    expect((await getPod('web-0')).spec.containers[0].image).toBe('nginx:1');
  });

  it('adopts an orphan pod named after the set', async () => {
    await h.client.request({ method: 'POST', path: PODS, body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', labels: { app: 'web' } }, spec: { containers: [container('nginx:1')] } } });
    await h.start(statefulSetController);
    const created = await createSet('web', { replicas: 1 });
    const adopted = await eventually(async () => {
      const p = await getPod('web-0');
      return p?.metadata.ownerReferences?.length ? p : undefined;
    }, 5000, 'web-0 adopted');
    expect(adopted.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'StatefulSet', name: 'web', uid: created.metadata.uid, controller: true })]);
  });

  it('runs a set with volumeClaimTemplates without them, warning once', async () => {
    warnings.length = 0;
    await h.start(statefulSetController);
    const claim = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    await createSet('web', { replicas: 2, volumeClaimTemplates: [claim] });
    await rollOut(2);
    await eventually(async () => ((await set('web')).status?.readyReplicas === 2 ? true : undefined), 5000, 'readyReplicas 2');
    const mine = warnings.filter((w) => String(w[0]).includes('volumeClaimTemplates'));
    expect(mine).toEqual([[expect.stringContaining('orch does not support'), 'statefulSet', 'default/web']]);
  });
});
