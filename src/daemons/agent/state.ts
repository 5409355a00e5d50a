/**
 * The node agent's observable state: what its dashboard shows. The agent assembles it from its
 * pieces (registration and status loop, pod sources, the process runtime, the eviction manager) and
 * hands it to a throttled StateEmitter (src/ui/state-emitter.ts), which clones and compares it: so
 * it is plain data only, times as epoch milliseconds.
 *
 * Pods are reduced to what a person watches (states, restarts, readiness, probe verdicts) instead of
 * carrying whole PodStatus objects: a hundred pods would otherwise make every comparison and clone
 * of the emitter heavy for fields nobody sees.
 */
import type {EvictionSnapshot} from './eviction/snapshot.js';
import type {PodSnapshot as RuntimePodSnapshot} from './runtime/runtime.js';
import type {ProbeKind, ProbeResult} from './runtime/probe-tracker.js';
import type {ContainerState, PodPhase} from './runtime/types.js';

export type {EvictionSnapshot} from './eviction/snapshot.js';
export type {ProbeKind, ProbeResult} from './runtime/probe-tracker.js';
export type {ContainerState, PodPhase} from './runtime/types.js';

/** Standalone runs static pods only (no --orchconfig); API server mode registers and watches. */
export type AgentMode = 'standalone' | 'apiserver';

/** Where a pod came from: the API server watch, --pod-manifest-path, or --manifest-url. */
export type PodSource = 'api' | 'file' | 'http';

export interface ServingEndpoint {
  /** `server` (--port, HTTPS), `read-only` (--read-only-port), `healthz` (--healthz-port). */
  name: 'server' | 'read-only' | 'healthz';
  url: string;
}

/** Registration and the agent's link to the API server (API server mode only). */
export interface ApiServerLink {
  /** --register-node. */
  registerNode: boolean;
  /** The Node object exists (created by this agent or found). */
  registered: boolean;
  /** Last successful node status post (every --node-status-update-frequency). */
  lastStatusAt?: number;
  /** Last successful renewal of the Lease in orch-node-lease. */
  lastLeaseRenewAt?: number;
  /** The last request to the API server succeeded. */
  connected: boolean;
  /** The last failed request's error, kept until a request succeeds again. */
  lastError?: string;
  lastErrorAt?: number;
}

export interface ApiPodSource {
  /** The watch of pods bound to this node is established. */
  watching: boolean;
  error?: string;
}

export interface FilePodSource {
  /** --pod-manifest-path (a file or a directory). */
  path: string;
  lastCheckAt?: number;
  /** Static pods the manifests currently define. */
  pods?: number;
  error?: string;
}

export interface HttpPodSource {
  /** --manifest-url. */
  url: string;
  lastCheckAt?: number;
  pods?: number;
  /** The last fetch or decode error; cleared by the next good fetch. */
  error?: string;
}

/** Only the configured sources are present. */
export interface PodSources {
  api?: ApiPodSource;
  file?: FilePodSource;
  http?: HttpPodSource;
}

export interface ProbeSnapshot {
  /** The probe's current verdict (`unknown` until its first result, or before its initial delay). */
  result: ProbeResult;
  /** Why it last failed (exec output, HTTP status, connection error). */
  message?: string;
}

export interface AgentContainerSnapshot {
  name: string;
  init: boolean;
  /** Waiting (reason, e.g. CrashLoopBackOff), running (since), or terminated (exit code). */
  state: ContainerState;
  /** The previous instance's end, which explains a crash loop. */
  lastState?: ContainerState;
  restartCount: number;
  ready: boolean;
  probes: Partial<Record<ProbeKind, ProbeSnapshot>>;
}

export interface AgentPodSnapshot {
  uid: string;
  namespace: string;
  name: string;
  source: PodSource;
  phase: PodPhase;
  /** Pod-level reason (Evicted, CommandRequired, OutOfpods) and message. */
  reason?: string;
  message?: string;
  /** Init containers first, in order, then the app containers. */
  containers: AgentContainerSnapshot[];
}

export interface AgentSnapshot {
  version: string;
  nodeName: string;
  mode: AgentMode;
  /** The API server URL, in API server mode. */
  server?: string;
  /** Empty when --enable-server=false and the other ports are 0. */
  serving: ServingEndpoint[];
  /** In API server mode. */
  apiServer?: ApiServerLink;
  sources: PodSources;
  pods: AgentPodSnapshot[];
  /** --max-pods: the capacity the pod count is shown against. */
  maxPods?: number;
  /** Pods get a cgroup with their cpu and memory limits (cgroup v2, writable); unknown until the first pod. */
  cgroups?: boolean;
  /** Absent until the eviction manager's first cycle. */
  eviction?: EvictionSnapshot;
  /** When the daemon was created, ms since the epoch (the dashboard's uptime). */
  startedAt: number;
  /** Wall-clock time of the snapshot, ms since the epoch. */
  at: number;
}

/** The dashboard's view of one pod of the process runtime's snapshot. */
export function podFromRuntime(pod: RuntimePodSnapshot, source: PodSource): AgentPodSnapshot {
  return {
    uid: pod.uid,
    namespace: pod.namespace,
    name: pod.name,
    source,
    phase: pod.status.phase,
    reason: pod.status.reason,
    message: pod.status.message,
    // `status` is matched to containers by position in the runtime; tolerate a missing one rather than crash the view.
    containers: pod.containers.map((c) => ({
      name: c.name,
      init: c.init,
      state: c.status?.state ?? {},
      lastState: hasState(c.status?.lastState) ? c.status.lastState : undefined,
      restartCount: c.status?.restartCount ?? 0,
      ready: c.status?.ready ?? false,
      probes: c.probes,
    })),
  };
}

function hasState(state: ContainerState | undefined): state is ContainerState {
  return state !== undefined && (state.waiting !== undefined || state.running !== undefined || state.terminated !== undefined);
}
