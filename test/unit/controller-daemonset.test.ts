/**
 * The daemonset controller against the real REST API (startTestApi). Nodes are created through
 * the API with their Ready condition; no scheduler or agent runs: the pods stay unbound (the node
 * they are for is in their node affinity), and the test plays the agent by patching pod status.
 */
import {describe, expect, it} from '@jest/globals';
import {eventually, pause, useControllerHarness} from '../helpers/controller-harness.js';
import {daemonSetController} from '../../src/daemons/controller-manager/controllers/daemonset.js';
import {templateHashAnnotation} from '../../src/daemons/controller-manager/controllers/daemonset-core.js';

const DAEMON_SETS = '/apis/apps/v1/namespaces/default/daemonsets';
const PODS = '/api/v1/namespaces/default/pods';
const MERGE = 'application/merge-patch+json';
const h = useControllerHarness();

type Taint = {key: string; value?: string; effect: string};

async function createNode(name: string, fields: {labels?: Record<string, string>; taints?: Taint[]; unschedulable?: boolean} = {}): Promise<void> {
  const spec = {...(fields.taints ? {taints: fields.taints} : {}), ...(fields.unschedulable ? {unschedulable: true} : {})};
  await h.client.request({method: 'POST', path: '/api/v1/nodes', body: {apiVersion: 'v1', kind: 'Node', metadata: {name, labels: fields.labels ?? {}}, spec}});
  await h.client.patch(`/api/v1/nodes/${name}/status`, MERGE, {status: {conditions: [{type: 'Ready', status: 'True'}], allocatable: {cpu: '4', memory: '8Gi', pods: '110'}}});
}

const template = (extra: Record<string, unknown> = {}) => ({
  metadata: {labels: {app: 'agent', tier: 'node'}},
  spec: {containers: [{name: 'agent', image: 'busybox:1'}], ...extra},
});
async function createDaemonSet(name: string, spec: Record<string, unknown> = {}): Promise<any> {
  const body = {apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: {name}, spec: {selector: {matchLabels: {app: 'agent'}}, template: template(), ...spec}};
  return (await h.client.request<any>({method: 'POST', path: DAEMON_SETS, body})).body;
}
const daemonSet = (name: string) => h.client.get<any>(`${DAEMON_SETS}/${name}`);
const allPods = async (): Promise<any[]> => (await h.client.request<any>({method: 'GET', path: PODS, query: {labelSelector: 'app=agent'}})).body.items;
/** The node a daemon pod is for: the one its required node affinity names. */
const nodeOf = (pod: any): string => pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0];
const podNodes = (pods: any[]) => pods.map(nodeOf).sort();
/** Waits until the daemon pods are for exactly `nodes`, and returns them. */
const podsOn = (nodes: string[], accept: (pods: any[]) => boolean = () => true) =>
  eventually(async () => {
    const pods = await allPods();
    return JSON.stringify(podNodes(pods)) === JSON.stringify([...nodes].sort()) && accept(pods) ? pods : undefined;
  }, 5000, `daemon pods on [${nodes.join(', ')}]`);
const statusWhere = (name: string, accept: (status: any) => boolean, what: string) =>
  eventually(async () => {
    const ds = await daemonSet(name);
    return ds.status && accept(ds.status) ? ds.status : undefined;
  }, 5000, what);
const markReady = (pod: any) =>
  h.client.patch(`${PODS}/${pod.metadata.name}/status`, MERGE, {status: {phase: 'Running', conditions: [{type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')}]}});
const events = async (name: string): Promise<{type: string; reason: string; message: string}[]> =>
  (await h.client.request<any>({method: 'GET', path: '/api/v1/namespaces/default/events', query: {fieldSelector: `involvedObject.kind=DaemonSet,involvedObject.name=${name}`}})).body.items;
const eventWith = (name: string, reason: string, message: string) =>
  eventually(async () => (await events(name)).find((e) => e.reason === reason && e.message === message), 5000, `${reason} event "${message}"`);

describe('daemonset controller', () => {
  it('runs one pod on each eligible node, bound there by node affinity, and reports status', async () => {
    await createNode('w1', {labels: {role: 'worker'}});
    await createNode('cordoned', {labels: {role: 'worker'}, unschedulable: true, taints: [{key: 'node.orch.io/unschedulable', effect: 'NoSchedule'}]});
    await createNode('db', {labels: {role: 'db'}});
    await createNode('gpu', {labels: {role: 'worker'}, taints: [{key: 'dedicated', value: 'gpu', effect: 'NoSchedule'}]});
    await h.start(daemonSetController);
    const created = await createDaemonSet('agent', {template: template({nodeSelector: {role: 'worker'}})});

    const pods = await podsOn(['cordoned', 'w1']);
    const hash = pods[0].metadata.annotations[templateHashAnnotation()];
    for (const pod of pods) {
      expect(pod.metadata.name).toMatch(/^agent-[a-z0-9]{5}$/);
      expect(pod.metadata.labels).toEqual({app: 'agent', tier: 'node'});
      expect(pod.metadata.ownerReferences).toEqual([{apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true}]);
      expect(pod.metadata.annotations[templateHashAnnotation()]).toBe(hash);
      // The scheduler binds it: no nodeName, a required term naming the node.
      expect(pod.spec.nodeName).toBeUndefined();
      expect(pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([{matchFields: [{key: 'metadata.name', operator: 'In', values: [nodeOf(pod)]}]}]);
      expect(pod.spec.tolerations).toEqual(expect.arrayContaining([
        {key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute'},
        {key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute'},
        {key: 'node.orch.io/unschedulable', operator: 'Exists', effect: 'NoSchedule'},
        {key: 'node.orch.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule'},
      ]));
      await eventWith('agent', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`);
    }
    expect(hash).toMatch(/^[a-z0-9]+$/);

    const pending = await statusWhere('agent', (s) => s.desiredNumberScheduled === 2 && s.currentNumberScheduled === 2, 'two pods scheduled');
    expect(pending).toEqual({desiredNumberScheduled: 2, currentNumberScheduled: 2, numberMisscheduled: 0, numberReady: 0, updatedNumberScheduled: 2, numberUnavailable: 2, observedGeneration: 1});

    for (const pod of pods) await markReady(pod);
    const ready = await statusWhere('agent', (s) => s.numberReady === 2, 'two pods ready');
    expect(ready).toEqual({desiredNumberScheduled: 2, currentNumberScheduled: 2, numberMisscheduled: 0, numberReady: 2, updatedNumberScheduled: 2, numberAvailable: 2, observedGeneration: 1});
  });

  it('follows the nodes: a new node gets a pod, one that stops matching or goes away loses it', async () => {
    await createNode('w1', {labels: {role: 'worker'}});
    await h.start(daemonSetController);
    await createDaemonSet('agent', {template: template({affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: 'role', operator: 'In', values: ['worker']}]}]}}}})});
    await podsOn(['w1']);

    await createNode('w2', {labels: {role: 'worker'}});
    const [, second] = await podsOn(['w1', 'w2'], (pods) => pods.length === 2).then((pods) => pods.sort((a, b) => nodeOf(a).localeCompare(nodeOf(b))));

    // w2 relabeled out of the selector: its pod is deleted, and the status says so.
    await h.client.patch('/api/v1/nodes/w2', MERGE, {metadata: {labels: {role: 'db'}}});
    await podsOn(['w1']);
    await eventWith('agent', 'SuccessfulDelete', `Deleted pod: ${second.metadata.name}`);
    await statusWhere('agent', (s) => s.desiredNumberScheduled === 1 && s.currentNumberScheduled === 1 && s.numberMisscheduled === 0, 'one node desired');

    // A NoExecute taint the daemon does not tolerate evicts it too.
    await h.client.patch('/api/v1/nodes/w1', MERGE, {spec: {taints: [{key: 'maintenance', effect: 'NoExecute'}]}});
    await podsOn([]);

    await createNode('w3', {labels: {role: 'worker'}});
    await podsOn(['w3']);
    // The node is deleted before its pod was ever bound: the controller cleans the pod up.
    await h.client.request({method: 'DELETE', path: '/api/v1/nodes/w3'});
    await podsOn([]);
    await statusWhere('agent', (s) => s.desiredNumberScheduled === 0 && s.currentNumberScheduled === 0, 'nothing desired');
  });

  it('replaces a failed pod and deletes a second pod on the same node', async () => {
    await createNode('w1');
    await h.start(daemonSetController);
    const created = await createDaemonSet('agent');
    const [first] = await podsOn(['w1']);

    await h.client.patch(`${PODS}/${first.metadata.name}/status`, MERGE, {status: {phase: 'Failed'}});
    await eventWith('agent', 'FailedDaemonPod', `Found failed daemon pod default/${first.metadata.name} on node w1, will try to kill it`);
    const [replacement] = await podsOn(['w1'], (pods) => pods[0].metadata.name !== first.metadata.name);
    expect(replacement.status.phase).toBe('Pending');

    // A second pod of the daemon set on w1 (e.g. made by hand): the newer one goes, though its
    // name sorts first (generated suffixes have no 0).
    h.api.clock.advance(60_000); // the API server's clock stamps creationTimestamp
    const extra = structuredClone(replacement);
    extra.metadata = {name: 'agent-0extra', labels: replacement.metadata.labels, annotations: replacement.metadata.annotations, ownerReferences: replacement.metadata.ownerReferences};
    delete extra.status;
    const posted = (await h.client.request<any>({method: 'POST', path: PODS, body: extra})).body;
    await eventWith('agent', 'SuccessfulDelete', 'Deleted pod: agent-0extra');
    const [kept] = await podsOn(['w1']);
    expect(Date.parse(kept.metadata.creationTimestamp)).toBeLessThan(Date.parse(posted.metadata.creationTimestamp));
    expect(kept.metadata.name).toBe(replacement.metadata.name);
    expect(kept.metadata.ownerReferences[0].uid).toBe(created.metadata.uid);
  });

  it('rolls a template change out maxUnavailable pods at a time, as the new pods become ready', async () => {
    for (const name of ['w1', 'w2', 'w3']) await createNode(name);
    await h.start(daemonSetController);
    await createDaemonSet('agent', {updateStrategy: {type: 'RollingUpdate', rollingUpdate: {maxUnavailable: 1}}});
    const original = await podsOn(['w1', 'w2', 'w3']);
    for (const pod of original) await markReady(pod);
    const oldHash = original[0].metadata.annotations[templateHashAnnotation()];
    await statusWhere('agent', (s) => s.numberAvailable === 3, 'three available');

    await h.client.patch(`${DAEMON_SETS}/agent`, MERGE, {spec: {template: {spec: {containers: [{name: 'agent', image: 'busybox:2'}]}}}});
    const isNew = (pod: any) => pod.metadata.annotations[templateHashAnnotation()] !== oldHash;
    for (let step = 1; step <= 3; step++) {
      // One old pod is replaced; the new one is not ready, so no other old pod goes meanwhile.
      const pods = await podsOn(['w1', 'w2', 'w3'], (p) => p.filter(isNew).length === step);
      await pause(300);
      const still = await allPods();
      expect(still.filter(isNew)).toHaveLength(step);
      expect(still.filter((p) => !isNew(p))).toHaveLength(3 - step);
      const fresh = pods.filter(isNew).find((p) => !p.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'));
      expect(fresh.spec.containers[0].image).toBe('busybox:2');
      await markReady(fresh);
    }
    const done = await statusWhere('agent', (s) => s.updatedNumberScheduled === 3 && s.numberAvailable === 3, 'three updated and available');
    expect(done).toMatchObject({desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 3, observedGeneration: 2});
  });

  it('OnDelete: a template change replaces nothing until a pod is deleted by hand', async () => {
    await createNode('w1');
    await h.start(daemonSetController);
    await createDaemonSet('agent', {updateStrategy: {type: 'OnDelete'}});
    const [first] = await podsOn(['w1']);
    await h.client.patch(`${DAEMON_SETS}/agent`, MERGE, {spec: {template: {spec: {containers: [{name: 'agent', image: 'busybox:2'}]}}}});
    await statusWhere('agent', (s) => s.observedGeneration === 2, 'generation 2 observed');
    await pause(300);
    expect((await allPods()).map((p) => p.metadata.name)).toEqual([first.metadata.name]);
    expect((await daemonSet('agent')).status.updatedNumberScheduled).toBeUndefined();

    await h.client.request({method: 'DELETE', path: `${PODS}/${first.metadata.name}`});
    const [second] = await podsOn(['w1'], (pods) => pods[0].metadata.name !== first.metadata.name);
    expect(second.spec.containers[0].image).toBe('busybox:2');
    await statusWhere('agent', (s) => s.updatedNumberScheduled === 1, 'one updated');
  });

  it('is the `daemonset` controller, on by default, with --concurrent-daemonset-syncs workers (default 2)', async () => {
    expect(daemonSetController).toMatchObject({name: 'daemonset', enabledByDefault: true});
    expect((await h.start(daemonSetController)).snapshot()).toMatchObject({name: 'daemonset', workers: 2});
    expect((await h.start(daemonSetController, {'concurrent-daemonset-syncs': 5})).snapshot().workers).toBe(5);
  });
});
