/** The daemonset controller's decisions (daemonset-core.ts), table-driven on a fixed `now`. */
import {describe, expect, it} from '@jest/globals';
import {
  availabilityRecheckMs,
  daemonPodFor,
  daemonSetStatus,
  daemonSetStatusChanged,
  FailedPodBackoff,
  maxUnavailableOf,
  nodeShouldRunDaemonPod,
  planDaemonPods,
  planRollingUpdate,
  targetNodeName,
  templateHash,
  templateHashAnnotation,
  type DaemonSet,
} from '../../src/daemons/controller-manager/controllers/daemonset-core.js';
import {controllerRefTo, type Pod} from '../../src/daemons/controller-manager/controllers/replica-set-core.js';
import type {Node, Taint} from '../../src/daemons/controller-manager/controllers/scheduler.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

function ds(templateSpec: Record<string, unknown> = {}, spec: DaemonSet['spec'] = {}): DaemonSet {
  return {
    metadata: {name: 'agent', namespace: 'kube', uid: 'ds-uid', generation: 3},
    spec: {selector: {matchLabels: {app: 'agent'}}, template: {metadata: {labels: {app: 'agent'}}, spec: {containers: [{name: 'a', image: 'busybox'}], ...templateSpec}}, ...spec},
  };
}
function node(name: string, extra: {labels?: Record<string, string>; taints?: Taint[]; unschedulable?: boolean} = {}): Node {
  return {metadata: {name, labels: extra.labels ?? {}}, spec: {taints: extra.taints, unschedulable: extra.unschedulable}};
}
let n = 0;
/** A daemon pod for `nodeName`, bound or (unbound: true) only targeted by affinity. */
function pod(nodeName: string, extra: {phase?: string; ready?: boolean; readySecondsAgo?: number; secondsAgo?: number; hash?: string; unbound?: boolean; deleting?: boolean} = {}): Pod {
  const p: Pod = {
    metadata: {name: `agent-${n++}`, namespace: 'kube', creationTimestamp: at(extra.secondsAgo ?? 60), annotations: {[templateHashAnnotation()]: extra.hash ?? 'current'}},
    spec: extra.unbound ? {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: 'metadata.name', operator: 'In', values: [nodeName]}]}]}}}} : {nodeName},
    status: {phase: extra.phase ?? 'Running'},
  };
  if (extra.ready) p.status!.conditions = [{type: 'Ready', status: 'True', lastTransitionTime: at(extra.readySecondsAgo ?? 30)}];
  if (extra.deleting) p.metadata.deletionTimestamp = at(1);
  return p;
}
const affinity = (...matchExpressions: {key: string; operator: string; values?: string[]}[]) => ({
  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions}]}}},
});
const names = (pods: Pod[]) => pods.map((p) => p.metadata.name);

describe('nodeShouldRunDaemonPod', () => {
  const both = {shouldRun: true, shouldContinueRunning: true};
  const neither = {shouldRun: false, shouldContinueRunning: false};
  const onlyKeep = {shouldRun: false, shouldContinueRunning: true};
  it.each<[string, Record<string, unknown>, Node, object]>([
    ['a plain node', {}, node('w1'), both],
    ['nodeSelector matching', {nodeSelector: {disk: 'ssd'}}, node('w1', {labels: {disk: 'ssd'}}), both],
    ['nodeSelector not matching', {nodeSelector: {disk: 'ssd'}}, node('w1', {labels: {disk: 'hdd'}}), neither],
    ['affinity In', affinity({key: 'zone', operator: 'In', values: ['a', 'b']}), node('w1', {labels: {zone: 'b'}}), both],
    ['affinity NotIn', affinity({key: 'zone', operator: 'NotIn', values: ['a']}), node('w1', {labels: {zone: 'a'}}), neither],
    ['affinity Exists', affinity({key: 'gpu', operator: 'Exists'}), node('w1'), neither],
    ['affinity DoesNotExist', affinity({key: 'gpu', operator: 'DoesNotExist'}), node('w1'), both],
    ['affinity Gt', affinity({key: 'cores', operator: 'Gt', values: ['4']}), node('w1', {labels: {cores: '8'}}), both],
    ['affinity Lt', affinity({key: 'cores', operator: 'Lt', values: ['4']}), node('w1', {labels: {cores: '8'}}), neither],
    [
      'affinity matchFields metadata.name',
      {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: 'metadata.name', operator: 'In', values: ['w2']}]}]}}}},
      node('w1'),
      neither,
    ],
    ['an untolerated NoSchedule taint: no new pod, the old one stays', {}, node('w1', {taints: [{key: 'dedicated', value: 'db', effect: 'NoSchedule'}]}), onlyKeep],
    ['an untolerated NoExecute taint: the pod goes', {}, node('w1', {taints: [{key: 'dedicated', value: 'db', effect: 'NoExecute'}]}), neither],
    ['a PreferNoSchedule taint does not count', {}, node('w1', {taints: [{key: 'dedicated', effect: 'PreferNoSchedule'}]}), both],
    ['a taint the template tolerates', {tolerations: [{key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule'}]}, node('w1', {taints: [{key: 'dedicated', value: 'db', effect: 'NoSchedule'}]}), both],
    ['a cordoned node (taint and flag): daemons tolerate it', {}, node('w1', {unschedulable: true, taints: [{key: 'node.orch.io/unschedulable', effect: 'NoSchedule'}]}), both],
    ['a not-ready node (NoExecute): daemons tolerate it', {}, node('w1', {taints: [{key: 'node.orch.io/not-ready', effect: 'NoExecute'}]}), both],
    ['memory pressure: daemons tolerate it', {}, node('w1', {taints: [{key: 'node.orch.io/memory-pressure', effect: 'NoSchedule'}]}), both],
    ['network unavailable: only host-network daemons tolerate it', {}, node('w1', {taints: [{key: 'node.orch.io/network-unavailable', effect: 'NoSchedule'}]}), onlyKeep],
    ['network unavailable with hostNetwork', {hostNetwork: true}, node('w1', {taints: [{key: 'node.orch.io/network-unavailable', effect: 'NoSchedule'}]}), both],
    ['the template names another node', {nodeName: 'w2'}, node('w1'), neither],
  ])('%s', (_name, templateSpec, nd, expected) => {
    expect(nodeShouldRunDaemonPod(nd, ds(templateSpec))).toEqual(expected);
  });
});

describe('daemonPodFor', () => {
  it('makes the template into a pod for one node, with the daemon tolerations and the hash', () => {
    const set = ds({tolerations: [{key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300}, {key: 'x', operator: 'Exists'}]});
    const p = daemonPodFor(set, 'w1', controllerRefTo(set, 'apps/v1', 'DaemonSet'), 'h1');
    expect(p.metadata).toEqual({
      generateName: 'agent-',
      namespace: 'kube',
      labels: {app: 'agent'},
      annotations: {[templateHashAnnotation()]: 'h1'},
      ownerReferences: [{apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'ds-uid', controller: true, blockOwnerDeletion: true}],
    });
    expect(p.spec?.nodeName).toBeUndefined();
    expect(p.spec?.affinity).toEqual({nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: 'metadata.name', operator: 'In', values: ['w1']}]}]}}});
    // The template's not-ready toleration loses its tolerationSeconds: a daemon is never evicted.
    expect(p.spec?.tolerations).toEqual([
      {key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute'},
      {key: 'x', operator: 'Exists'},
      {key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute'},
      {key: 'node.orch.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule'},
      {key: 'node.orch.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule'},
      {key: 'node.orch.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule'},
      {key: 'node.orch.io/unschedulable', operator: 'Exists', effect: 'NoSchedule'},
    ]);
    // The daemon set's own template is left as it was.
    expect(set.spec?.template?.spec?.tolerations).toHaveLength(2);
    expect(targetNodeName(p)).toBe('w1');
  });

  it('replaces the template required terms with the node and keeps the preferred ones', () => {
    const preferred = [{weight: 1, preference: {matchExpressions: [{key: 'zone', operator: 'In', values: ['a']}]}}];
    const set = ds({affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: 'disk', operator: 'Exists'}]}]}, preferredDuringSchedulingIgnoredDuringExecution: preferred}}});
    const p = daemonPodFor(set, 'w9', controllerRefTo(set, 'apps/v1', 'DaemonSet'), 'h');
    expect(p.spec?.affinity).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: 'metadata.name', operator: 'In', values: ['w9']}]}]},
        preferredDuringSchedulingIgnoredDuringExecution: preferred,
      },
    });
  });

  it('hashes the template: equal templates alike, any change differs', () => {
    expect(templateHash(ds())).toBe(templateHash(ds()));
    expect(templateHash(ds())).not.toBe(templateHash(ds({hostNetwork: true})));
    expect(templateHash(ds())).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
  });
});

describe('planDaemonPods', () => {
  const tainted = (name: string, effect: string) => node(name, {taints: [{key: 'k', effect}]});
  it.each<[string, DaemonSet, Node[], () => Pod[], {create: string[]; remove?: number[]; failed?: number[]; succeeded?: number[]}]>([
    ['one pod for each node without one', ds(), [node('w2'), node('w1'), node('w3')], () => [pod('w2')], {create: ['w1', 'w3']}],
    ['unbound pods count for the node their affinity names', ds(), [node('w1')], () => [pod('w1', {unbound: true})], {create: []}],
    ['a node that stopped matching the selector loses its pod', ds({nodeSelector: {role: 'edge'}}), [node('w1'), node('w2', {labels: {role: 'edge'}})], () => [pod('w1'), pod('w2')], {create: [], remove: [0]}],
    ['a NoSchedule taint keeps the pod there but gets no new one', ds(), [tainted('w1', 'NoSchedule'), tainted('w2', 'NoSchedule')], () => [pod('w1')], {create: []}],
    ['a NoExecute taint deletes the pod', ds(), [tainted('w1', 'NoExecute')], () => [pod('w1')], {create: [], remove: [0]}],
    ['two pods on a node: the oldest stays', ds(), [node('w1')], () => [pod('w1', {secondsAgo: 10}), pod('w1', {secondsAgo: 100}), pod('w1', {secondsAgo: 50})], {create: [], remove: [0, 2]}],
    ['a bound pod is kept over an older unbound one', ds(), [node('w1')], () => [pod('w1', {secondsAgo: 100, unbound: true}), pod('w1', {secondsAgo: 10})], {create: [], remove: [0]}],
    ['a failed pod is reported for deletion, not yet replaced', ds(), [node('w1')], () => [pod('w1', {phase: 'Failed'})], {create: [], failed: [0]}],
    ['a succeeded pod goes too', ds(), [node('w1')], () => [pod('w1', {phase: 'Succeeded'})], {create: [], succeeded: [0]}],
    ['a terminating pod blocks a new one until it is gone', ds(), [node('w1')], () => [pod('w1', {deleting: true})], {create: []}],
    ['a finished pod held while deleted does not', ds(), [node('w1')], () => [pod('w1', {deleting: true, phase: 'Failed'})], {create: ['w1']}],
    ['an unbound pod for a node that is gone goes; a bound one is pod GC\'s', ds(), [node('w1')], () => [pod('w1'), pod('gone', {unbound: true}), pod('gone2')], {create: [], remove: [1]}],
  ])('%s', (_name, set, nodes, makePods, expected) => {
    const pods = makePods();
    const plan = planDaemonPods(set, nodes, pods);
    const pick = (indices: number[] = []) => indices.map((i) => pods[i]!.metadata.name);
    expect(plan.create).toEqual(expected.create);
    expect(names(plan.remove).sort()).toEqual(pick(expected.remove).sort());
    expect(plan.failed.map((f) => f.pod.metadata.name)).toEqual(pick(expected.failed));
    expect(plan.succeeded.map((f) => f.pod.metadata.name)).toEqual(pick(expected.succeeded));
  });
});

describe('planRollingUpdate', () => {
  const nodes = [node('w1'), node('w2'), node('w3'), node('w4')];
  const oldReady = (nd: string) => pod(nd, {hash: 'old', ready: true});
  const newReady = (nd: string) => pod(nd, {ready: true});
  const withMax = (maxUnavailable: number | string, minReadySeconds?: number) => ds({}, {updateStrategy: {type: 'RollingUpdate', rollingUpdate: {maxUnavailable}}, minReadySeconds});
  it.each<[string, DaemonSet, () => Pod[], number]>([
    ['maxUnavailable 1, all old and available: one goes', withMax(1), () => nodes.map((x) => oldReady(x.metadata!.name!)), 1],
    ['maxUnavailable 2: two go', withMax(2), () => nodes.map((x) => oldReady(x.metadata!.name!)), 2],
    ['maxUnavailable 50% of 4 desired: two go', withMax('50%'), () => nodes.map((x) => oldReady(x.metadata!.name!)), 2],
    ['maxUnavailable 30% of 4 rounds up to two', withMax('30%'), () => nodes.map((x) => oldReady(x.metadata!.name!)), 2],
    ['maxUnavailable 0 still makes progress, one at a time', withMax(0), () => nodes.map((x) => oldReady(x.metadata!.name!)), 1],
    ['a new pod not ready yet uses the budget: none go', withMax(1), () => [pod('w1'), oldReady('w2'), oldReady('w3'), oldReady('w4')], 0],
    ['a new pod ready but not for minReadySeconds is not available yet', withMax(1, 60), () => [pod('w1', {ready: true, readySecondsAgo: 10}), pod('w2', {hash: 'old', ready: true, readySecondsAgo: 120})], 0],
    ['a new pod available: the next one goes', withMax(1), () => [newReady('w1'), oldReady('w2'), oldReady('w3'), oldReady('w4')], 1],
    ['a node still without a pod (old one deleted) uses the budget', withMax(1), () => [pod('w1', {hash: 'old', deleting: true}), oldReady('w2')], 0],
    ['old pods that are not available go at once, whatever the budget', withMax(1), () => [pod('w1', {hash: 'old'}), pod('w2', {hash: 'old'}), oldReady('w3')], 2],
    ['everything up to date: nothing', withMax(1), () => nodes.map((x) => newReady(x.metadata!.name!)), 0],
  ])('%s', (_name, set, makePods, count) => {
    const pods = makePods();
    const remove = planRollingUpdate(set, nodes, pods, 'current', NOW);
    expect(remove).toHaveLength(count);
    for (const p of remove) expect(p.metadata.annotations?.[templateHashAnnotation()]).toBe('old');
  });

  it('rejects a maxUnavailable that is neither an int nor a percentage', () => {
    expect(() => maxUnavailableOf(withMax('lots'), 3)).toThrow(/must be an int or a percentage/);
    expect(maxUnavailableOf(ds(), 3)).toBe(1);
  });
});

describe('daemonSetStatus', () => {
  it('counts desired, scheduled, misscheduled, ready, available and updated nodes', () => {
    const set = ds({nodeSelector: {daemon: 'yes'}}, {minReadySeconds: 20});
    const yes = {labels: {daemon: 'yes'}};
    const nodes = [node('w1', yes), node('w2', yes), node('w3', yes), node('w4', yes), node('w5')];
    const pods = [
      pod('w1', {ready: true, readySecondsAgo: 60}),
      pod('w2', {ready: true, readySecondsAgo: 5, hash: 'old'}),
      pod('w3'),
      pod('w5', {ready: true}),
    ];
    expect(daemonSetStatus(set, nodes, pods, 'current', NOW, true)).toEqual({
      desiredNumberScheduled: 4,
      currentNumberScheduled: 3,
      numberMisscheduled: 1,
      numberReady: 2,
      numberAvailable: 1,
      numberUnavailable: 3,
      updatedNumberScheduled: 2,
      observedGeneration: 3,
    });
  });

  it('omits the optional counts when zero, and keeps observedGeneration while waiting', () => {
    const set = {...ds(), status: {desiredNumberScheduled: 0, currentNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0, observedGeneration: 2}};
    expect(daemonSetStatus(set, [], [], 'current', NOW, false)).toEqual({desiredNumberScheduled: 0, currentNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0, observedGeneration: 2});
    expect(daemonSetStatusChanged(set, daemonSetStatus(set, [], [], 'current', NOW, false))).toBe(false);
    expect(daemonSetStatusChanged(set, daemonSetStatus(set, [], [], 'current', NOW, true))).toBe(true);
  });

  it('looks again after minReadySeconds while ready pods are not available yet', () => {
    const set = ds({}, {minReadySeconds: 15});
    expect(availabilityRecheckMs(set, {desiredNumberScheduled: 1, currentNumberScheduled: 1, numberMisscheduled: 0, numberReady: 1})).toBe(15_000);
    expect(availabilityRecheckMs(set, {desiredNumberScheduled: 1, currentNumberScheduled: 1, numberMisscheduled: 0, numberReady: 1, numberAvailable: 1})).toBeUndefined();
    expect(availabilityRecheckMs(ds(), {desiredNumberScheduled: 1, currentNumberScheduled: 1, numberMisscheduled: 0, numberReady: 1})).toBeUndefined();
  });
});

describe('FailedPodBackoff', () => {
  it('allows a deletion at once, then waits 1 s, 2 s, 4 s..., at most 15 minutes, and forgets after 30', () => {
    const backoff = new FailedPodBackoff();
    expect(backoff.remainingMs('u/w1', NOW)).toBe(0);
    backoff.next('u/w1', NOW);
    expect(backoff.remainingMs('u/w1', NOW + 400)).toBe(600);
    backoff.next('u/w1', NOW + 1000);
    expect(backoff.remainingMs('u/w1', NOW + 1000)).toBe(2000);
    backoff.next('u/w1', NOW + 3000);
    expect(backoff.remainingMs('u/w1', NOW + 3000)).toBe(4000);
    expect(backoff.remainingMs('u/w2', NOW + 3000)).toBe(0);
    for (let i = 0; i < 20; i++) backoff.next('u/w1', NOW + 3000);
    expect(backoff.remainingMs('u/w1', NOW + 3000)).toBe(15 * 60_000);
    expect(backoff.remainingMs('u/w1', NOW + 3000 + 31 * 60_000)).toBe(0);
    backoff.next('u/w1', NOW + 3000 + 31 * 60_000);
    expect(backoff.remainingMs('u/w1', NOW + 3000 + 31 * 60_000)).toBe(1000);
    backoff.forget('u/');
    expect(backoff.remainingMs('u/w1', NOW + 3000 + 31 * 60_000)).toBe(0);
  });
});
