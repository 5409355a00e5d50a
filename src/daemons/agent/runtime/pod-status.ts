/**
 * PodStatus from the state of a pod's containers, as the kubelet computes it (getPhase,
 * GeneratePodInitializedCondition, GenerateContainersReadyCondition, GeneratePodReadyCondition).
 * Pure: the caller supplies the container states, the time and the previous conditions.
 */
import {parseQuantity} from '../../../options/quantity.js';
import type {ContainerStatus, Pod, PodCondition, PodPhase, PodStatus} from './types.js';

export interface PodStatusInput {
  pod: Pod;
  nodeIP: string;
  startTime: string;
  now: string;
  initContainers: ContainerStatus[];
  containers: ContainerStatus[];
  /** The runtime stopped the pod for good (killPod): stopped containers decide Succeeded or Failed. */
  terminal: boolean;
  /** A pod-level verdict that overrides the containers (CommandRequired, Evicted, OutOfpods...). */
  failure?: {reason: string; message: string};
  previousConditions?: PodCondition[];
}

const byName = (statuses: ContainerStatus[], name: string): ContainerStatus | undefined => statuses.find((s) => s.name === name);

export function podPhase(pod: Pod, init: ContainerStatus[], app: ContainerStatus[], terminal: boolean): PodPhase {
  const policy = pod.spec.restartPolicy ?? 'Always';
  let pendingInit = 0;
  let failedInit = 0;
  for (const container of pod.spec.initContainers ?? []) {
    const s = byName(init, container.name);
    if (!s || s.state.running) pendingInit++;
    else if (s.state.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInit++;
    } else if (s.state.waiting && s.lastState.terminated) {
      if (s.lastState.terminated.exitCode !== 0) failedInit++;
    } else pendingInit++;
  }
  let unknown = 0, running = 0, waiting = 0, stopped = 0, succeeded = 0;
  for (const container of pod.spec.containers) {
    const s = byName(app, container.name);
    if (!s) unknown++;
    else if (s.state.running) running++;
    else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state.waiting) {
      if (s.lastState.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  if (terminal && failedInit > 0 && running === 0 && stopped === 0) return 'Failed';
  if (pendingInit > 0 || waiting > 0) return terminal ? 'Failed' : 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (terminal) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

type ConditionCore = Omit<PodCondition, 'lastProbeTime' | 'lastTransitionTime'>;

function initializedCondition(pod: Pod, init: ContainerStatus[], app: ContainerStatus[], phase: PodPhase): ConditionCore {
  const inits = pod.spec.initContainers ?? [];
  if (inits.length === 0) return {type: 'Initialized', status: 'True'};
  if (phase === 'Succeeded') return {type: 'Initialized', status: 'True', reason: 'PodCompleted'};
  // A regular container that ever started means the pod was initialized.
  if (app.some((s) => s.state.running || s.state.terminated || s.lastState.terminated)) return {type: 'Initialized', status: 'True'};
  const incomplete = inits.filter((c) => byName(init, c.name)?.state.terminated?.exitCode !== 0).map((c) => c.name);
  if (incomplete.length === 0) return {type: 'Initialized', status: 'True'};
  return {type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: `containers with incomplete status: [${incomplete.join(' ')}]`};
}

function containersReadyCondition(pod: Pod, app: ContainerStatus[], phase: PodPhase): ConditionCore {
  const unready = pod.spec.containers.filter((c) => !byName(app, c.name)?.ready).map((c) => c.name);
  if (phase === 'Succeeded') return {type: 'ContainersReady', status: 'False', reason: 'PodCompleted'};
  if (unready.length === 0) return {type: 'ContainersReady', status: 'True'};
  return {type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: `containers with unready status: [${unready.join(' ')}]`};
}

/** Keeps lastTransitionTime from the previous condition of the same type while its status holds. */
function withTimes(core: ConditionCore, now: string, previous: PodCondition[] | undefined): PodCondition {
  const before = previous?.find((c) => c.type === core.type);
  const lastTransitionTime = before && before.status === core.status ? before.lastTransitionTime : now;
  return {type: core.type, status: core.status, lastProbeTime: null, lastTransitionTime, ...(core.reason ? {reason: core.reason} : {}), ...(core.message ? {message: core.message} : {})};
}

export function podConditions(input: PodStatusInput, phase: PodPhase): PodCondition[] {
  const containersReady = containersReadyCondition(input.pod, input.containers, phase);
  const cores: ConditionCore[] = [
    {type: 'PodReadyToStartContainers', status: input.terminal ? 'False' : 'True'},
    initializedCondition(input.pod, input.initContainers, input.containers, phase),
    {...containersReady, type: 'Ready'},
    containersReady,
    {type: 'PodScheduled', status: 'True'},
  ];
  return cores.map((core) => withTimes(core, input.now, input.previousConditions));
}

/** The pod's QoS class (upstream qos.GetPodQOS), from requests and limits of cpu and memory. */
export function qosClass(pod: Pod): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    for (const resource of ['cpu', 'memory']) {
      const limit = c.resources?.limits?.[resource];
      const request = c.resources?.requests?.[resource] ?? limit;
      if (limit !== undefined || request !== undefined) any = true;
      if (limit === undefined || request === undefined || parseQuantity(limit).value !== parseQuantity(request).value) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

export function buildPodStatus(input: PodStatusInput): PodStatus {
  const phase = input.failure ? 'Failed' : podPhase(input.pod, input.initContainers, input.containers, input.terminal);
  const status: PodStatus = {
    phase,
    conditions: podConditions(input, phase),
    hostIP: input.nodeIP,
    hostIPs: [{ip: input.nodeIP}],
    podIP: input.nodeIP,
    podIPs: [{ip: input.nodeIP}],
    startTime: input.startTime,
    containerStatuses: input.containers,
    qosClass: qosClass(input.pod),
  };
  if (input.initContainers.length > 0) status.initContainerStatuses = input.initContainers;
  if (input.failure) {
    status.reason = input.failure.reason;
    status.message = input.failure.message;
  }
  return status;
}
