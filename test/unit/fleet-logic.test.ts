/** `orch fleet`'s pure decisions: node names and addresses, requested health, when to post status, the spread, and what to do with a pod. */
import {describe, expect, it} from '@jest/globals';
import {names} from '../../src/api/names.js';
import {decidePod, podStatus, slimPod, type FleetPod} from '../../src/daemons/fleet/pods.js';
import {fleetNode, nodeConditions, nodeIndex, nodeIP, podIP, requestedHealth, spreadOffset, statusPostDue, type FleetSettings} from '../../src/daemons/fleet/nodes.js';

const settings: FleetSettings = {
  name: 'sim',
  prefix: 'sim',
  nodes: 5000,
  capacity: {cpu: '8', memory: '32Gi', pods: '110'},
  nodeLabels: {'topology.orch.io/zone': 'a'},
  taints: [{key: 'fleet', value: 'yes', effect: 'NoSchedule'}],
  version: '1.32.0',
  nodeStatusUpdateFrequencyMs: 10_000,
  nodeStatusReportFrequencyMs: 300_000,
  nodeLeaseDurationSeconds: 40,
};

const T0 = Date.parse('2026-01-01T00:00:00Z');

function pod(overrides: Partial<FleetPod['metadata']> = {}, status?: FleetPod['status']): FleetPod {
  return {
    metadata: {name: 'p', namespace: 'default', uid: 'u-1', ...overrides},
    spec: {nodeName: 'sim-1', containers: [{name: 'app', image: 'nginx:1.27'}]},
    ...(status ? {status} : {}),
  };
}

describe('fleet nodes', () => {
  it('names nodes <prefix>-<index> and recognizes only its own', () => {
    expect(nodeIndex(settings, 'sim-0')).toBe(0);
    expect(nodeIndex(settings, 'sim-4999')).toBe(4999);
    expect(nodeIndex(settings, 'sim-5000')).toBeUndefined();
    expect(nodeIndex(settings, 'sim-01')).toBeUndefined();
    expect(nodeIndex(settings, 'simx-1')).toBeUndefined();
    expect(nodeIndex(settings, 'other-1')).toBeUndefined();
  });

  it('gives each node its own InternalIP and /24 of pod IPs', () => {
    expect(nodeIP(0)).toBe('10.0.0.1');
    expect(nodeIP(255)).toBe('10.0.1.0');
    expect(nodeIP(4999)).toBe('10.0.19.136');
    expect(podIP(0, 0)).toBe('10.128.0.1');
    expect(podIP(4999, 253)).toBe('10.147.135.254');
    // After 254 pods a node's addresses come round again, never into another node's range.
    expect(podIP(3, 254)).toBe(podIP(3, 0));
  });

  it('registers a Node with the agent\'s labels, the fleet label, taints, capacity and Ready', () => {
    const node = fleetNode(settings, 7, T0);
    expect(node.metadata.labels).toEqual({
      [names().labels.hostname]: 'sim-7',
      [names().labels.os]: 'linux',
      [names().labels.arch]: 'amd64',
      'topology.orch.io/zone': 'a',
      [names().fleet.nodeLabel]: 'sim',
    });
    expect(node.spec.taints).toEqual([{key: 'fleet', value: 'yes', effect: 'NoSchedule'}]);
    expect(node.status?.allocatable).toEqual(settings.capacity);
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({status: 'True', reason: 'AgentReady', lastHeartbeatTime: '2026-01-01T00:00:00Z'});
    expect(node.status?.nodeInfo?.kubeletVersion).toBe('v1.32.0');
  });

  it('reads the state annotation, Ready when absent or unknown', () => {
    const key = names().fleet.nodeState;
    expect(requestedHealth(undefined)).toBe('Ready');
    expect(requestedHealth({[key]: 'NotReady'})).toBe('NotReady');
    expect(requestedHealth({[key]: 'silent'})).toBe('Silent');
    expect(requestedHealth({[key]: 'bogus'})).toBe('Ready');
  });

  it('posts status when the Ready condition changes or the report is due, not for heartbeats alone', () => {
    const ready = nodeConditions(undefined, 'Ready', T0).conditions;
    const later = nodeConditions(ready, 'Ready', T0 + 10_000);
    expect(later.events).toEqual([]);
    expect(statusPostDue(ready, later.conditions, T0, T0 + 10_000, 300_000)).toBe(false);
    expect(statusPostDue(ready, later.conditions, T0, T0 + 300_000, 300_000)).toBe(true);
    const notReady = nodeConditions(ready, 'NotReady', T0 + 10_000);
    expect(notReady.events).toEqual(['NodeNotReady']);
    expect(notReady.conditions.find((c) => c.type === 'Ready')).toMatchObject({status: 'False', reason: 'AgentNotReady', lastTransitionTime: '2026-01-01T00:00:10Z'});
    expect(statusPostDue(ready, notReady.conditions, T0, T0 + 10_000, 300_000)).toBe(true);
  });

  it('spreads the nodes evenly over a period', () => {
    const offsets = Array.from({length: 4}, (_, i) => spreadOffset(i, 4, 10_000));
    expect(offsets).toEqual([0, 2500, 5000, 7500]);
    expect(spreadOffset(4999, 5000, 10_000)).toBe(9998);
  });
});

describe('fleet pods', () => {
  it('runs a new pod, and leaves a running ready one alone', () => {
    expect(decidePod(pod(), false)).toEqual({kind: 'status', phase: 'Running'});
    const running = podStatus(pod(), 'Running', {now: T0, hostIP: '10.0.0.2', podIP: '10.128.1.1'}).status;
    expect(decidePod({...pod(), status: running as FleetPod['status']}, false)).toEqual({kind: 'none'});
  });

  it('fails a pod the user asked to fail, and never touches a finished one', () => {
    expect(decidePod(pod(), true)).toEqual({kind: 'status', phase: 'Failed'});
    expect(decidePod(pod({}, {phase: 'Succeeded'}), true)).toEqual({kind: 'none'});
  });

  it('deletes after the grace period, at once when the pod has finished', () => {
    expect(decidePod(pod({deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30}), false)).toEqual({kind: 'delete', afterMs: 30_000});
    expect(decidePod(pod({deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30}, {phase: 'Failed'}), false)).toEqual({kind: 'delete', afterMs: 0});
  });

  it('ends a running pod: restartPolicy Never/OnFailure after the run time, any pod at its active deadline', () => {
    const started = '2026-01-01T00:00:00Z';
    const running = (spec: Record<string, unknown>) => {
      const base = {...pod(), spec: {...pod().spec, ...spec}};
      return {...base, status: podStatus(base, 'Running', {now: T0, hostIP: '10.0.0.2', podIP: '10.128.1.1'}).status as FleetPod['status']};
    };
    const at = (ms: number) => ({now: T0 + ms, completeAfterMs: 10_000});
    expect(running({}).status?.startTime).toBe(started);
    // Always (the default): runs until deleted, without a deadline.
    expect(decidePod(running({}), false, at(3000))).toEqual({kind: 'none'});
    expect(decidePod(running({restartPolicy: 'Never'}), false, at(3000))).toEqual({kind: 'finish', phase: 'Succeeded', afterMs: 7000});
    expect(decidePod(running({restartPolicy: 'OnFailure'}), false, at(12_000))).toEqual({kind: 'finish', phase: 'Succeeded', afterMs: 0});
    // Without a run time (--complete-pods-after=0) such pods run on.
    expect(decidePod(running({restartPolicy: 'Never'}), false, {now: T0})).toEqual({kind: 'none'});
    // The deadline, when sooner, fails the pod whatever its restart policy.
    expect(decidePod(running({activeDeadlineSeconds: 5}), false, at(1000))).toEqual({kind: 'finish', phase: 'Failed', reason: 'DeadlineExceeded', afterMs: 4000});
    expect(decidePod(running({restartPolicy: 'Never', activeDeadlineSeconds: 30}), false, at(1000))).toEqual({kind: 'finish', phase: 'Succeeded', afterMs: 9000});
  });

  it('posts Succeeded with completed containers, and DeadlineExceeded as the kubelet words it', () => {
    const base = pod({}, {phase: 'Running', podIP: '10.128.1.9', startTime: '2025-12-31T23:59:50Z'});
    const done = podStatus(base, 'Succeeded', {now: T0, hostIP: '10.0.0.2', podIP: '10.128.1.1'}).status;
    expect(done).toMatchObject({phase: 'Succeeded', podIP: '10.128.1.9'});
    expect(done.reason).toBeUndefined();
    expect((done.conditions as {type: string}[]).find((c) => c.type === 'Ready')).toMatchObject({status: 'False', reason: 'PodCompleted'});
    expect((done.containerStatuses as {state: {terminated: unknown}}[])[0]!.state.terminated).toMatchObject({exitCode: 0, reason: 'Completed', finishedAt: '2026-01-01T00:00:00Z'});
    const late = podStatus(base, 'Failed', {now: T0, hostIP: '10.0.0.2', podIP: '10.128.1.1', reason: 'DeadlineExceeded'}).status;
    expect(late).toMatchObject({phase: 'Failed', reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline'});
  });

  it('posts a Running status as the agent would, keeping conditions it does not own', () => {
    const scheduled = {type: 'PodScheduled', status: 'True', lastTransitionTime: '2025-12-31T23:59:59Z'};
    const {status} = podStatus(pod({}, {phase: 'Pending', conditions: [scheduled]}), 'Running', {now: T0, hostIP: '10.0.0.2', podIP: '10.128.1.1'});
    expect(status).toMatchObject({phase: 'Running', hostIP: '10.0.0.2', hostIPs: [{ip: '10.0.0.2'}], podIP: '10.128.1.1', podIPs: [{ip: '10.128.1.1'}], startTime: '2026-01-01T00:00:00Z'});
    expect((status.conditions as {type: string}[]).map((c) => c.type)).toEqual(['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled']);
    expect(status.containerStatuses).toEqual([
      {name: 'app', image: 'nginx:1.27', imageID: 'fleet://nginx:1.27', containerID: 'fleet://u-1/app', ready: true, started: true, restartCount: 0, state: {running: {startedAt: '2026-01-01T00:00:00Z'}}, lastState: {}},
    ]);
  });

  it('posts a Failed status with a terminated container and keeps the pod IP and start time', () => {
    const {status} = podStatus(pod({}, {phase: 'Running', podIP: '10.128.1.9', startTime: '2025-12-31T00:00:00Z'}), 'Failed', {now: T0, hostIP: '10.0.0.2', podIP: '10.128.1.1'});
    expect(status).toMatchObject({phase: 'Failed', podIP: '10.128.1.9', startTime: '2025-12-31T00:00:00Z'});
    const [container] = status.containerStatuses as {state: {terminated: Record<string, unknown>}; ready: boolean}[];
    expect(container!.ready).toBe(false);
    expect(container!.state.terminated).toMatchObject({exitCode: 1, reason: 'Error', startedAt: '2025-12-31T00:00:00Z', finishedAt: '2026-01-01T00:00:00Z'});
  });
});

describe('fleet pod transform', () => {
  const whole = (nodeName: string): FleetPod => ({
    metadata: {name: 'p', namespace: 'ns', uid: 'u', resourceVersion: '42', labels: {app: 'a'}, managedFields: [{manager: 'x'}], annotations: {big: 'x'.repeat(1000)}},
    spec: {nodeName, restartPolicy: 'Never', activeDeadlineSeconds: 9, containers: [{name: 'c', image: 'i', env: [{name: 'A', value: 'B'}]} as never], volumes: [{name: 'v'}]},
    status: {phase: 'Running', podIP: '1.2.3.4', startTime: 's', conditions: [{type: 'Ready', status: 'True'}], qosClass: 'BestEffort'},
  });
  const ours = (n: string) => n.startsWith('sim-');

  it('keeps what the fleet reads of its own pods, and the resourceVersion', () => {
    expect(slimPod(whole('sim-1'), ours)).toEqual({
      metadata: {name: 'p', namespace: 'ns', uid: 'u', resourceVersion: '42', labels: {app: 'a'}, deletionTimestamp: undefined, deletionGracePeriodSeconds: undefined},
      spec: {nodeName: 'sim-1', restartPolicy: 'Never', activeDeadlineSeconds: 9, containers: [{name: 'c', image: 'i'}], initContainers: undefined},
      status: {phase: 'Running', podIP: '1.2.3.4', startTime: 's', conditions: [{type: 'Ready', status: 'True'}]},
    });
  });

  it('keeps only name, namespace and node of other pods', () => {
    expect(slimPod(whole('elsewhere'), ours)).toEqual({metadata: {name: 'p', namespace: 'ns', resourceVersion: '42'}, spec: {nodeName: 'elsewhere'}});
    expect(JSON.stringify(slimPod(whole('sim-1'), ours)).length).toBeLessThan(JSON.stringify(whole('sim-1')).length / 3);
  });
});
