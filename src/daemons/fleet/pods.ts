/**
 * What a simulated node does with a pod bound to it, as pure functions: the decision (post a
 * Running or Failed status, delete after the grace period, or nothing) and the status it posts,
 * shaped as the agent's would be (phase, the five pod conditions, hostIP/podIP, startTime, one
 * running container status per container and a completed one per init container).
 */
import { formatRfc3339 } from '../agent/node/time.js';

export interface FleetContainer {
  name: string;
  image?: string;
}

/** The fields of a Pod the fleet reads. */
export interface FleetPod {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    [field: string]: unknown;
  };
  spec?: { nodeName?: string; containers?: FleetContainer[]; initContainers?: FleetContainer[]; restartPolicy?: string; activeDeadlineSeconds?: number; [field: string]: unknown };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; [field: string]: unknown }[];
    podIP?: string;
    startTime?: string;
    [field: string]: unknown;
  };
}

export type SimulatedPhase = 'Running' | 'Failed' | 'Succeeded';

/** Upstream kubelet's reason and message for a pod past spec.activeDeadlineSeconds (active_deadline.go). */
export const DEADLINE_REASON = 'DeadlineExceeded';
export const DEADLINE_MESSAGE = 'Pod was active on the node longer than the specified deadline';

export type PodAction =
  | { kind: 'none' }
  | { kind: 'status'; phase: SimulatedPhase }
  /**
   * A running pod ends after this many milliseconds: Succeeded (restartPolicy Never or OnFailure,
   * its run time over) or Failed with DeadlineExceeded (spec.activeDeadlineSeconds passed).
   */
  | { kind: 'finish'; phase: 'Succeeded' | 'Failed'; reason?: string; afterMs: number }
  /** Delete the pod object (grace 0, the uid as precondition) after this many milliseconds. */
  | { kind: 'delete'; afterMs: number };

const isTerminal = (phase: string | undefined) => phase === 'Succeeded' || phase === 'Failed';
const readyTrue = (pod: FleetPod) => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/**
 * The next step for a pod on a fleet node. `fails`: whether the pod is one the user asked to fail;
 * `timing`: when given, a running pod ends when its deadline or its run time is over (finishing()).
 * A pod being deleted is removed once its grace period has passed (the agent would have stopped its
 * containers by then); a pod already finished has nothing left to stop and goes at once.
 */
export function decidePod(pod: FleetPod, fails: boolean, timing?: PodTiming): PodAction {
  if (pod.metadata.deletionTimestamp) {
    const graceMs = Math.max(0, (pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000);
    return { kind: 'delete', afterMs: isTerminal(pod.status?.phase) ? 0 : graceMs };
  }
  if (isTerminal(pod.status?.phase)) return { kind: 'none' };
  if (fails) return { kind: 'status', phase: 'Failed' };
  if (pod.status?.phase === 'Running' && readyTrue(pod) && pod.status.podIP) return (timing && finishing(pod, timing)) ?? { kind: 'none' };
  return { kind: 'status', phase: 'Running' };
}

/** What ends a running pod: now (epoch ms) and how long a pod that runs to completion runs. */
export interface PodTiming {
  now: number;
  /** Run time of a pod with restartPolicy Never or OnFailure; undefined: such pods run until deleted. */
  completeAfterMs?: number;
}

/**
 * When a running pod ends, if it does: its activeDeadlineSeconds from its startTime (as the
 * kubelet's active deadline handler), or its run time when its containers are not restarted (a
 * Job's pods), whichever comes first.
 */
function finishing(pod: FleetPod, timing: PodTiming): PodAction | undefined {
  const started = Date.parse(pod.status?.startTime ?? '');
  if (Number.isNaN(started)) return undefined;
  const deadline = pod.spec?.activeDeadlineSeconds;
  const deadlineAt = typeof deadline === 'number' && deadline > 0 ? started + deadline * 1000 : undefined;
  const restartPolicy = pod.spec?.restartPolicy ?? 'Always';
  const completeAt = restartPolicy !== 'Always' && timing.completeAfterMs !== undefined ? started + timing.completeAfterMs : undefined;
  if (deadlineAt !== undefined && (completeAt === undefined || deadlineAt < completeAt)) {
    return { kind: 'finish', phase: 'Failed', reason: DEADLINE_REASON, afterMs: Math.max(0, deadlineAt - timing.now) };
  }
  if (completeAt !== undefined) return { kind: 'finish', phase: 'Succeeded', afterMs: Math.max(0, completeAt - timing.now) };
  return undefined;
}

/**
 * The fields of a pod the fleet reads (FleetPod), the rest dropped as the pod arrives (the pod
 * reflector's transform): at 150,000 pods a relist held every page of whole pods. A pod of another
 * node keeps only its name, namespace and node, which is all the fleet looks at. resourceVersion
 * stays: the reflector resumes its watch from the last one it saw.
 */
export function slimPod(pod: FleetPod, ours: (nodeName: string) => boolean): FleetPod {
  const m = pod.metadata;
  const spec = pod.spec;
  const metadata: FleetPod['metadata'] = { name: m.name, namespace: m.namespace, resourceVersion: m.resourceVersion };
  if (!spec?.nodeName || !ours(spec.nodeName)) return { metadata, spec: spec?.nodeName ? { nodeName: spec.nodeName } : {} };
  const container = (c: FleetContainer): FleetContainer => ({ name: c.name, image: c.image });
  return {
    metadata: { ...metadata, uid: m.uid, labels: m.labels, deletionTimestamp: m.deletionTimestamp, deletionGracePeriodSeconds: m.deletionGracePeriodSeconds },
    spec: {
      nodeName: spec.nodeName,
      containers: spec.containers?.map(container),
      initContainers: spec.initContainers?.map(container),
      restartPolicy: spec.restartPolicy,
      activeDeadlineSeconds: spec.activeDeadlineSeconds,
    },
    status: pod.status && { phase: pod.status.phase, conditions: pod.status.conditions, podIP: pod.status.podIP, startTime: pod.status.startTime },
  };
}

/** The conditions the agent owns; others (PodScheduled, readiness gates, DisruptionTarget) are kept. */
const OWNED = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady'];

/** A stable container ID: the runtime's scheme, the pod uid and the container name. */
function containerID(pod: FleetPod, name: string): string {
  return `fleet://${pod.metadata.uid ?? pod.metadata.name}/${name}`;
}

/**
 * The status to post for `phase` at `now` (epoch ms), as a JSON merge patch of pods/<name>/status.
 * Lists are whole in a merge patch, so the conditions this node does not own are carried over.
 */
export function podStatus(pod: FleetPod, phase: SimulatedPhase, at: { now: number; hostIP: string; podIP: string; reason?: string }): { status: Record<string, unknown> } {
  const now = formatRfc3339(at.now);
  const running = phase === 'Running';
  const succeeded = phase === 'Succeeded';
  const deadline = at.reason === DEADLINE_REASON;
  const startTime = pod.status?.startTime ?? now;
  const podIP = pod.status?.podIP ?? at.podIP;
  const failedReason: Record<string, string> = running ? {} : { reason: succeeded ? 'PodCompleted' : 'PodFailed' };
  const kept = (pod.status?.conditions ?? []).filter((c) => !OWNED.includes(c.type));
  const owned = (type: string, status: 'True' | 'False', extra: Record<string, string> = {}) => {
    const before = pod.status?.conditions?.find((c) => c.type === type);
    return { type, status, lastProbeTime: null, lastTransitionTime: before?.status === status ? (before.lastTransitionTime ?? now) : now, ...extra };
  };
  const conditions = [
    owned('PodReadyToStartContainers', 'True'),
    owned('Initialized', 'True'),
    owned('Ready', running ? 'True' : 'False', failedReason),
    owned('ContainersReady', running ? 'True' : 'False', failedReason),
    ...kept,
  ];
  const image = (c: FleetContainer) => ({ image: c.image ?? '', imageID: c.image ? `fleet://${c.image}` : '' });
  const containerStatuses = (pod.spec?.containers ?? []).map((c) => ({
    name: c.name,
    ...image(c),
    containerID: containerID(pod, c.name),
    ready: running,
    started: running,
    restartCount: 0,
    state: running
      ? { running: { startedAt: startTime } }
      : succeeded
        ? { terminated: { exitCode: 0, reason: 'Completed', startedAt: startTime, finishedAt: now, containerID: containerID(pod, c.name) } }
        : deadline
          ? { terminated: { exitCode: 137, reason: 'Error', startedAt: startTime, finishedAt: now, containerID: containerID(pod, c.name) } }
          : { terminated: { exitCode: 1, reason: 'Error', message: 'simulated failure: pod failed by orch fleet', startedAt: startTime, finishedAt: now, containerID: containerID(pod, c.name) } },
    lastState: {},
  }));
  const initContainerStatuses = (pod.spec?.initContainers ?? []).map((c) => ({
    name: c.name,
    ...image(c),
    containerID: containerID(pod, c.name),
    ready: true,
    started: false,
    restartCount: 0,
    state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: startTime, finishedAt: startTime, containerID: containerID(pod, c.name) } },
    lastState: {},
  }));
  return {
    status: {
      phase,
      ...(deadline ? { reason: DEADLINE_REASON, message: DEADLINE_MESSAGE } : {}),
      conditions,
      hostIP: at.hostIP,
      hostIPs: [{ ip: at.hostIP }],
      podIP,
      podIPs: [{ ip: podIP }],
      startTime,
      ...(initContainerStatuses.length > 0 ? { initContainerStatuses } : {}),
      containerStatuses,
    },
  };
}
