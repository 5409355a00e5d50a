/**
 * The process runtime: runs each container of a pod as a local process and keeps the pod's
 * containers matching its spec (init containers in order, then the app containers; restart
 * policies with crash-loop back-off; probes; graceful termination), and reports the PodStatus.
 *
 * Processes are not isolated as containers are: they share the host's filesystem, network, users
 * and process table. What they get is their own process group (so termination reaches their
 * children), the user and group of their securityContext, and where cgroup v2 is writable a cgroup
 * per pod with its cpu and memory limits.
 *
 * Only processes this runtime spawned are ever signalled: every signal goes to a process group
 * recorded at spawn time, and none is sent once the group's leader has been reaped.
 */
import {EventEmitter} from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import {systemClock, type Clock, type TimerHandle} from '../../shared/clock.js';
import {klog, type Logger} from '../../../lib/klog.js';
import {Backoff, DEFAULT_BACKOFF, formatDuration, type BackoffOptions} from './backoff.js';
import {PodCgroups, podLimits} from './cgroup.js';
import {VolumeError} from '../volumes/projection.js';
import {buildEnvironment, EnvConfigError, expandCommand, noEnvSources, type EnvSourceResolver} from './env.js';
import {RotatingLogWriter} from './log-writer.js';
import {buildPodStatus} from './pod-status.js';
import {commandRequiredFailure, identityProblem, runAsIdentity} from './preflight.js';
import {runProbe, type ExecEnvironment} from './probe-handlers.js';
import {probeTiming, type ProbeKind, type ProbeResult} from './probe-tracker.js';
import {ProbeWorker} from './probe-worker.js';
import {ContainerProcess, defaultSpawn, type ProcessExit, type SpawnFn} from './process.js';
import {spawnExec, type ExecProcess, type ExecRequest} from './exec.js';
import type {Container, ContainerState, Probe, ContainerStateTerminated, ContainerStatus, Pod, PodCondition, PodStatus} from './types.js';

export interface ProcessRuntimeOptions {
  /** `--root-dir`: pod directories and container logs live under `<rootDir>/pods/<uid>/`. */
  rootDir: string;
  /** The node's IP: pods share the host's network, so it is both hostIP and podIP. */
  nodeIP?: string;
  clock?: Clock;
  /** Spawns processes; default child_process.spawn (always called with detached: true). */
  spawn?: SpawnFn;
  /** `--container-log-max-size` in bytes (default 10Mi). */
  logMaxSize?: number;
  /** `--container-log-max-files` (default 5). */
  logMaxFiles?: number;
  /** ConfigMap and Secret data for env valueFrom / envFrom (default: none exist). */
  resolveEnv?: EnvSourceResolver;
  /** Crash-loop back-off (default 10 s doubling to 5 min). */
  backoff?: BackoffOptions;
  /** Shortest grace period a container gets when stopped (default 2 s, as upstream; tests use 0). */
  minGracePeriodSeconds?: number;
  /** Pod cgroups; `false` turns them off, default the cgroup v2 hierarchy at /sys/fs/cgroup. */
  cgroups?: PodCgroups | false;
  /** PATH every container starts with (default the agent's own PATH). */
  path?: string;
  /** Node allocatable, the fallback of resourceFieldRef limits.* when a container sets no limit. */
  nodeAllocatable?: Record<string, string>;
  /** Sets up the pods' volumes (src/daemons/agent/volumes/); without it a pod with volumes runs without them. */
  volumes?: PodVolumes;
  /** Variables every container gets after PATH, HOSTNAME and HOME (the API server's service variables). */
  baseEnv?: Record<string, string>;
  logger?: Logger;
}

/** What the runtime needs of a volume manager. */
export interface PodVolumes {
  /** Puts the pod's volumes on disk; answers variables for its containers; throws VolumeError to retry later. */
  setUp(pod: Pod, podDir: string): Promise<Record<string, string>>;
  tearDown(uid: string): void;
}

/** An event the agent may record on the pod (Created, Started, Killing, BackOff, Unhealthy...). */
export interface RuntimeEvent {
  uid: string;
  pod: Pod;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  container?: string;
}

export interface RuntimeEvents {
  status: [uid: string, status: PodStatus, pod: Pod];
  event: [event: RuntimeEvent];
}

/** What the dashboard shows of a container beyond its status. */
export interface ContainerSnapshot {
  name: string;
  init: boolean;
  status: ContainerStatus;
  pid?: number;
  probes: Partial<Record<ProbeKind, {result: ProbeResult; message?: string}>>;
}

export interface PodSnapshot {
  uid: string;
  namespace: string;
  name: string;
  status: PodStatus;
  containers: ContainerSnapshot[];
  cgroup?: string;
}

/** A container's running process as `kubectl attach` reaches it. */
export interface AttachTarget {
  stdin: import('node:stream').Writable | null;
  stdinOnce: boolean;
  tty: boolean;
  /** Receives the process's output from now on; returns the unsubscribe. */
  subscribe(onStdout: (chunk: Buffer) => void, onStderr: (chunk: Buffer) => void): () => void;
  /** The container's terminal size (tty: true containers). */
  resize(columns: number, rows: number): void;
  exited: Promise<ProcessExit>;
}

/** A pod-level verdict that replaces what the containers would say. */
export interface PodFailure {
  reason: string;
  message: string;
}

interface ContainerRecord {
  spec: Container;
  init: boolean;
  specKey: string;
  /** Instances started so far; the next log file is `<runs>.log`. */
  runs: number;
  restartCount: number;
  state: ContainerState;
  lastState: ContainerState;
  process?: ContainerProcess;
  containerID?: string;
  started: boolean;
  ready: boolean;
  probes: Map<ProbeKind, ProbeWorker>;
  execEnv?: ExecEnvironment;
  retryTimer?: TimerHandle;
  /** The spec changed while it ran: start again at once whatever the restart policy. */
  restartNow: boolean;
  /** A SIGKILL timer of a termination in progress. */
  killTimer?: TimerHandle;
  /** When the last instance ended (ms), the reference of the crash-loop back-off. */
  finishedAtMs?: number;
  /** Settles once the running instance's end is recorded in `state`. */
  done?: Promise<void>;
  /** Starts liveness and readiness once the startup probe succeeds. */
  startGated?: () => void;
}

interface PodRecord {
  uid: string;
  pod: Pod;
  dir: string;
  startTime: string;
  init: ContainerRecord[];
  app: ContainerRecord[];
  failure?: PodFailure;
  /** killPod was called: nothing starts again. */
  terminal: boolean;
  cgroup?: string;
  /** `kubectl exec` processes still running: they end with the pod. */
  execs: Set<ExecProcess>;
  conditions?: PodCondition[];
  lastEmitted?: string;
  syncing?: Promise<void>;
  dirty: boolean;
}

const DEFAULT_GRACE_SECONDS = 30;
const STREAM_DRAIN_MS = 1000;

export const ISOLATION_NOTE =
  'pods run as local processes: no filesystem, network, user or PID isolation as containers have; ' +
  'each pod has its own process groups and, where cgroup v2 is writable, a cgroup with its cpu and memory limits';

function containerKey(spec: Container): string {
  return JSON.stringify(spec);
}

export class ProcessRuntime extends EventEmitter<RuntimeEvents> {
  private readonly pods = new Map<string, PodRecord>();
  private readonly clock: Clock;
  private readonly spawn: SpawnFn;
  private readonly backoff: Backoff;
  private readonly log: Logger;
  private readonly options: Required<Pick<ProcessRuntimeOptions, 'rootDir' | 'nodeIP' | 'logMaxSize' | 'logMaxFiles' | 'minGracePeriodSeconds' | 'path'>> & ProcessRuntimeOptions;
  private cgroups: PodCgroups | undefined;
  private cgroupsChecked = false;

  constructor(options: ProcessRuntimeOptions) {
    super();
    this.options = {
      nodeIP: '127.0.0.1',
      logMaxSize: 10 * 1024 * 1024,
      logMaxFiles: 5,
      minGracePeriodSeconds: 2,
      path: process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      ...options,
    };
    this.clock = options.clock ?? systemClock;
    this.spawn = options.spawn ?? defaultSpawn;
    this.backoff = new Backoff(options.backoff ?? DEFAULT_BACKOFF);
    this.log = options.logger ?? klog('runtime');
  }

  // ---- public API -------------------------------------------------------------------------

  /**
   * Makes the pod's containers match its spec: starts what should run, restarts what should be
   * restarted. Call it again whenever the pod changes; a pod with a deletionTimestamp is killed
   * with its deletion grace period. Resolves once this pass has started what it could.
   */
  async syncPod(pod: Pod): Promise<void> {
    const uid = pod.metadata.uid;
    if (!uid) throw new Error('pod has no metadata.uid');
    let rec = this.pods.get(uid);
    if (!rec) rec = this.admit(pod, uid);
    else this.updateSpec(rec, pod);
    if (pod.metadata.deletionTimestamp && !rec.terminal) {
      await this.killPod(uid, pod.metadata.deletionGracePeriodSeconds);
      return;
    }
    await this.requestSync(rec);
  }

  /**
   * Stops every container of the pod for good: SIGTERM to each container's process group, SIGKILL
   * after the grace period (default the pod's terminationGracePeriodSeconds, else 30 s). A `failure`
   * (Evicted, for instance) becomes the pod's phase reason. Resolves when every process is gone.
   */
  async killPod(pod: Pod | string, gracePeriodSeconds?: number, failure?: PodFailure): Promise<void> {
    const rec = this.pods.get(typeof pod === 'string' ? pod : pod.metadata.uid ?? '');
    if (!rec) return;
    rec.terminal = true;
    if (failure) rec.failure = failure;
    const graceSeconds = gracePeriodSeconds ?? rec.pod.spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
    const all = [...rec.init, ...rec.app];
    for (const c of all) {
      this.stopProbes(c);
      this.cancelRetry(c);
    }
    await Promise.all(all.filter((c) => c.process).map((c) => this.killContainer(rec, c, graceSeconds, 'Stopping container')));
    for (const exec of rec.execs) exec.kill();
    this.notify(rec);
  }

  /** Forgets a pod (after killPod): its status, its directory and logs, its cgroup. */
  async removePod(uid: string): Promise<void> {
    const rec = this.pods.get(uid);
    if (!rec) return;
    if (!rec.terminal) await this.killPod(uid, 0);
    this.pods.delete(uid);
    for (const c of [...rec.init, ...rec.app]) this.backoff.forget(this.backoffKey(rec, c));
    this.options.volumes?.tearDown(uid);
    fs.rmSync(rec.dir, {recursive: true, force: true});
    if (rec.cgroup) this.cgroups?.removePod(uid);
  }

  /** Kills every pod (agent shutdown). */
  async shutdown(gracePeriodSeconds?: number): Promise<void> {
    await Promise.all([...this.pods.keys()].map((uid) => this.killPod(uid, gracePeriodSeconds)));
  }

  /** The pod's current status, or undefined for a pod this runtime does not know. */
  podStatus(uid: string): PodStatus | undefined {
    const rec = this.pods.get(uid);
    return rec ? this.computeStatus(rec) : undefined;
  }

  /** UIDs of the pods this runtime tracks. */
  podUIDs(): string[] {
    return [...this.pods.keys()];
  }

  /** The pods with at least one running process (for /runningpods). */
  runningPods(): Pod[] {
    return [...this.pods.values()].filter((r) => [...r.init, ...r.app].some((c) => c.process)).map((r) => r.pod);
  }

  /** PIDs of the running container processes of a pod (their process groups), for usage accounting. */
  podPids(uid: string): number[] {
    const rec = this.pods.get(uid);
    if (!rec) return [];
    return [...rec.init, ...rec.app].flatMap((c) => (c.process?.pid !== undefined ? [c.process.pid] : []));
  }

  /** The log file of a container's current (or previous) instance, as `kubectl logs [--previous]` reads it. */
  logPath(uid: string, container: string, previous = false): string | undefined {
    const rec = this.pods.get(uid);
    const c = rec && [...rec.init, ...rec.app].find((x) => x.spec.name === container);
    if (!rec || !c || c.runs === 0) return undefined;
    const run = c.runs - 1 - (previous ? 1 : 0);
    return run < 0 ? undefined : path.join(rec.dir, container, `${run}.log`);
  }

  /**
   * Runs a command in a running container's context (`kubectl exec`): its environment, working
   * directory, user and group, and the pod's cgroup; or says why it cannot, in upstream's words.
   */
  exec(uid: string, container: string, request: ExecRequest): ExecProcess | {error: string} {
    const target = this.runningContainer(uid, container);
    if ('error' in target) return target;
    const {rec, c} = target;
    const context = c.execEnv ?? {env: {}};
    const proc = spawnExec(this.spawn, context, request);
    if (proc.pid !== undefined && rec.cgroup) {
      try {
        this.cgroups?.addProcess(rec.uid, proc.pid);
      } catch (err) {
        this.log.v(2).info('Could not move the exec process into the pod cgroup', 'pod', this.podRef(rec), 'err', err);
      }
    }
    rec.execs.add(proc);
    void proc.exited.then(() => rec.execs.delete(proc));
    return proc;
  }

  /**
   * The running process of a container, for `kubectl attach`: its stdin (when the container has
   * `stdin: true`), its output as it comes (the log file keeps it too), and its end.
   */
  attach(uid: string, container: string): AttachTarget | {error: string} {
    const target = this.runningContainer(uid, container);
    if ('error' in target) return target;
    const {c} = target;
    const proc = c.process as ContainerProcess;
    return {
      stdin: c.spec.stdin ? proc.stdin : null,
      stdinOnce: c.spec.stdinOnce === true,
      tty: c.spec.tty === true,
      subscribe: (onStdout, onStderr) => {
        const out = (chunk: string | Buffer) => onStdout(Buffer.from(chunk));
        const err = (chunk: string | Buffer) => onStderr(Buffer.from(chunk));
        proc.stdout?.on('data', out);
        proc.stderr?.on('data', err);
        return () => {
          proc.stdout?.off('data', out);
          proc.stderr?.off('data', err);
        };
      },
      resize: (columns, rows) => proc.resize(columns, rows),
      exited: proc.exited,
    };
  }

  /** Why a container cannot be exec'd into or attached to now; undefined when it runs. */
  notRunning(uid: string, container: string): string | undefined {
    const target = this.runningContainer(uid, container);
    return 'error' in target ? target.error : undefined;
  }

  private runningContainer(uid: string, container: string): {rec: PodRecord; c: ContainerRecord} | {error: string} {
    const rec = this.pods.get(uid);
    const c = rec && [...rec.init, ...rec.app].find((x) => x.spec.name === container);
    if (!rec || !c) return {error: `container not found ("${container}")`};
    // containerd's words for a container that does not run (now), which kubectl shows after the kubelet's.
    if (!c.process || !c.process.running || rec.terminal) return {error: `failed to exec in container: container is in ${c.state.terminated ? 'CONTAINER_EXITED' : 'CONTAINER_CREATED'} state`};
    return {rec, c};
  }

  snapshot(): PodSnapshot[] {
    return [...this.pods.values()].map((rec) => {
      const status = this.computeStatus(rec);
      const statuses = [...(status.initContainerStatuses ?? []), ...status.containerStatuses];
      return {
        uid: rec.uid,
        namespace: rec.pod.metadata.namespace ?? 'default',
        name: rec.pod.metadata.name ?? '',
        status,
        cgroup: rec.cgroup,
        containers: [...rec.init, ...rec.app].map((c, i) => ({
          name: c.spec.name,
          init: c.init,
          status: statuses[i],
          pid: c.process?.pid,
          probes: Object.fromEntries([...c.probes].map(([kind, w]) => [kind, {result: w.result, message: w.lastOutcome?.message}])),
        })),
      };
    });
  }

  /** Whether pods get cgroups on this host, and why not (known after the first pod). */
  get cgroupsEnabled(): boolean {
    return this.cgroups !== undefined;
  }

  // ---- pods -------------------------------------------------------------------------------

  private admit(pod: Pod, uid: string): PodRecord {
    const newContainer = (spec: Container, init: boolean): ContainerRecord => ({
      spec, init, specKey: containerKey(spec), runs: 0, restartCount: 0, state: {}, lastState: {},
      started: false, ready: false, probes: new Map(), restartNow: false,
    });
    const rec: PodRecord = {
      uid,
      pod,
      dir: path.join(this.options.rootDir, 'pods', uid),
      startTime: this.timestamp(),
      init: (pod.spec.initContainers ?? []).map((c) => newContainer(c, true)),
      app: pod.spec.containers.map((c) => newContainer(c, false)),
      terminal: false,
      dirty: false,
      execs: new Set(),
    };
    this.pods.set(uid, rec);
    const missing = commandRequiredFailure(pod);
    if (missing) {
      rec.failure = {reason: missing.reason, message: missing.message};
      rec.terminal = true;
      for (const c of [...rec.init, ...rec.app]) {
        if (missing.containers.includes(c.spec.name)) c.state = {waiting: {reason: missing.reason, message: missing.message}};
      }
      this.event(rec, 'Warning', missing.reason, missing.message);
      return rec;
    }
    fs.mkdirSync(rec.dir, {recursive: true});
    this.setUpCgroup(rec);
    return rec;
  }

  private setUpCgroup(rec: PodRecord): void {
    if (!this.cgroupsChecked) {
      this.cgroupsChecked = true;
      const candidate = this.options.cgroups === false ? undefined : this.options.cgroups ?? new PodCgroups();
      const availability = candidate?.check() ?? {available: false, reason: 'turned off'};
      if (candidate && availability.available) {
        try {
          candidate.prepare();
          this.cgroups = candidate;
        } catch (err) {
          availability.reason = (err as Error).message;
        }
      }
      if (!this.cgroups) this.log.info('Pod cgroups are not used: pods run without cpu and memory limits', 'reason', availability.reason);
    }
    if (!this.cgroups) return;
    try {
      rec.cgroup = this.cgroups.ensurePod(rec.uid, podLimits(rec.pod));
    } catch (err) {
      this.log.warning('Could not create the pod cgroup; the pod runs without limits', 'pod', this.podRef(rec), 'err', err);
    }
  }

  /** A changed container spec restarts that container (upstream: its hash changed). */
  private updateSpec(rec: PodRecord, pod: Pod): void {
    rec.pod = pod;
    const specs = new Map([...(pod.spec.initContainers ?? []), ...pod.spec.containers].map((c) => [c.name, c]));
    for (const c of [...rec.init, ...rec.app]) {
      const spec = specs.get(c.spec.name);
      if (!spec || containerKey(spec) === c.specKey) continue;
      c.spec = spec;
      c.specKey = containerKey(spec);
      if (c.process && !c.init && !rec.terminal) {
        c.restartNow = true;
        void this.killContainer(rec, c, this.graceFor(rec), `Container ${c.spec.name} definition changed, will be restarted`);
      }
    }
  }

  /** Runs reconcile passes one at a time; a request during a pass causes one more pass. */
  private requestSync(rec: PodRecord): Promise<void> {
    rec.dirty = true;
    if (!rec.syncing) {
      rec.syncing = (async () => {
        try {
          while (rec.dirty) {
            rec.dirty = false;
            await this.reconcile(rec);
            this.notify(rec);
          }
        } catch (err) {
          this.log.error('Pod sync failed', 'pod', this.podRef(rec), 'err', err);
        } finally {
          rec.syncing = undefined;
        }
      })();
    }
    return rec.syncing;
  }

  private async reconcile(rec: PodRecord): Promise<void> {
    if (rec.terminal) return;
    const policy = rec.pod.spec.restartPolicy ?? 'Always';
    for (const c of rec.init) {
      if (c.process || c.retryTimer) return;
      if (c.state.terminated?.exitCode === 0) continue;
      if (c.runs === 0) return this.start(rec, c);
      // It failed: the pod fails under Never, otherwise the init container runs again.
      if (policy === 'Never') return;
      return this.restartWithBackoff(rec, c);
    }
    for (const c of rec.app) {
      if (c.process || c.retryTimer) continue;
      if (c.runs === 0 || c.restartNow) {
        await this.start(rec, c);
        continue;
      }
      const exitCode = c.state.terminated?.exitCode ?? c.lastState.terminated?.exitCode ?? 0;
      if (policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0)) await this.restartWithBackoff(rec, c);
    }
  }

  // ---- containers -------------------------------------------------------------------------

  private backoffKey(rec: PodRecord, c: ContainerRecord): string {
    return `${rec.uid}/${c.spec.name}`;
  }

  private async restartWithBackoff(rec: PodRecord, c: ContainerRecord): Promise<void> {
    const key = this.backoffKey(rec, c);
    const wait = this.backoff.remaining(key, c.finishedAtMs ?? this.clock.now(), this.clock.now());
    if (wait <= 0) return this.start(rec, c);
    const message = `back-off ${formatDuration(this.backoff.current(key))} restarting failed container=${c.spec.name} pod=${this.podRef(rec)}`;
    if (c.state.terminated) c.lastState = {terminated: c.state.terminated};
    c.state = {waiting: {reason: 'CrashLoopBackOff', message}};
    this.event(rec, 'Warning', 'BackOff', `Back-off restarting failed container ${c.spec.name} in pod ${this.podRef(rec)}`, c.spec.name);
    this.retryAfter(rec, c, wait);
  }

  private retryAfter(rec: PodRecord, c: ContainerRecord, ms: number): void {
    this.cancelRetry(c);
    c.retryTimer = this.clock.setTimeout(() => {
      c.retryTimer = undefined;
      void this.requestSync(rec);
    }, ms);
  }

  private cancelRetry(c: ContainerRecord): void {
    if (c.retryTimer) this.clock.clearTimeout(c.retryTimer);
    c.retryTimer = undefined;
  }

  /** A container that cannot be created yet (missing ConfigMap, impossible user): Waiting, retried with back-off. */
  private configError(rec: PodRecord, c: ContainerRecord, message: string): void {
    const key = `${this.backoffKey(rec, c)}#config`;
    this.backoff.next(key, this.clock.now());
    c.state = {waiting: {reason: 'CreateContainerConfigError', message}};
    this.event(rec, 'Warning', 'Failed', `Error: ${message}`, c.spec.name);
    this.retryAfter(rec, c, this.backoff.current(key));
  }

  /** A volume that cannot be set up yet (missing config map, refused token): ContainerCreating, FailedMount, retried with back-off. */
  private mountError(rec: PodRecord, c: ContainerRecord, message: string): void {
    const key = `${this.backoffKey(rec, c)}#mount`;
    this.backoff.next(key, this.clock.now());
    c.state = {waiting: {reason: 'ContainerCreating'}};
    this.event(rec, 'Warning', 'FailedMount', `MountVolume.SetUp failed: ${message}`, c.spec.name);
    this.retryAfter(rec, c, this.backoff.current(key));
  }

  private async start(rec: PodRecord, c: ContainerRecord): Promise<void> {
    const spec = c.spec;
    let volumeEnv: Record<string, string> = {};
    if (this.options.volumes) {
      try {
        volumeEnv = await this.options.volumes.setUp(rec.pod, rec.dir);
      } catch (err) {
        if (!(err instanceof VolumeError)) throw err;
        return this.mountError(rec, c, err.message);
      }
    }
    let env: Record<string, string>;
    try {
      env = await buildEnvironment(rec.pod, spec, {
        nodeIP: this.options.nodeIP,
        resolver: this.options.resolveEnv ?? noEnvSources,
        base: {PATH: this.options.path, HOSTNAME: rec.pod.spec.hostname ?? rec.pod.metadata.name ?? '', HOME: '/', ...this.options.baseEnv, ...volumeEnv},
        nodeAllocatable: this.options.nodeAllocatable,
      });
    } catch (err) {
      if (!(err instanceof EnvConfigError)) throw err;
      return this.configError(rec, c, err.message);
    }
    if (rec.terminal) return;
    const identity = runAsIdentity(rec.pod, spec);
    const identityError = identityProblem(identity, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
    if (identityError) return this.configError(rec, c, identityError);

    const isRestart = c.runs > 0;
    if (isRestart) {
      if (!c.restartNow) this.backoff.next(this.backoffKey(rec, c), this.clock.now());
      c.restartCount++;
      const previous = c.state.terminated ?? c.lastState.terminated;
      if (previous) c.lastState = {terminated: previous};
    }
    c.restartNow = false;
    const run = c.runs++;
    const logDir = path.join(rec.dir, spec.name);
    this.pruneOldLogs(logDir, run);
    const startedAt = this.timestamp();

    if (spec.workingDir && !isDirectory(spec.workingDir)) {
      this.terminated(rec, c, {exitCode: 128, startError: `working directory "${spec.workingDir}" does not exist (the process runtime does not create it)`}, startedAt);
      return;
    }
    const command = expandCommand(spec, env);
    let proc: ContainerProcess;
    try {
      proc = new ContainerProcess(this.spawn, {command, env, cwd: spec.workingDir, uid: identity.uid, gid: identity.gid, stdin: spec.stdin === true, tty: spec.tty === true});
    } catch (err) {
      // spawn throws at once for some refusals (EPERM on setuid, bad arguments).
      this.terminated(rec, c, {exitCode: 128, startError: (err as Error).message}, startedAt);
      return;
    }
    if (proc.pid === undefined) {
      const exit = await proc.exited;
      const notFound = exit.startError?.includes('ENOENT');
      this.terminated(rec, c, {...exit, startError: notFound ? `exec: "${command[0]}": executable file not found in $PATH` : exit.startError}, startedAt);
      return;
    }
    c.process = proc;
    c.containerID = `process://${proc.pid}`;
    c.execEnv = {env, cwd: spec.workingDir, uid: identity.uid, gid: identity.gid};
    if (rec.cgroup) {
      // Moved right after spawn: a child forked in the first instant stays outside the pod cgroup.
      // (A wrapper that joins the cgroup before exec would close that gap, but cannot write
      // cgroup.procs once it runs as a non-root runAsUser.)
      try {
        this.cgroups?.addProcess(rec.uid, proc.pid);
      } catch (err) {
        this.log.warning('Could not move the container into the pod cgroup', 'pod', this.podRef(rec), 'container', spec.name, 'err', err);
      }
    }
    const drained = this.captureLogs(proc, path.join(logDir, `${run}.log`));
    c.state = {running: {startedAt}};
    c.started = !spec.startupProbe;
    c.ready = c.started && !spec.readinessProbe;
    this.event(rec, 'Normal', 'Started', `Started container ${spec.name}`, spec.name);
    this.startProbes(rec, c);
    const oomBefore = rec.cgroup ? this.cgroups?.oomKills(rec.uid) ?? 0 : 0;
    c.done = proc.exited.then(async (exit) => {
      await drained;
      if (c.process !== proc) return;
      const oom = rec.cgroup !== undefined && exit.signal === 'SIGKILL' && (this.cgroups?.oomKills(rec.uid) ?? 0) > oomBefore;
      this.terminated(rec, c, exit, startedAt, oom);
    });
  }

  /** Records how an instance ended and lets the pod's next pass decide about a restart. */
  private terminated(rec: PodRecord, c: ContainerRecord, exit: ProcessExit, startedAt: string, oom = false): void {
    this.stopProbes(c);
    if (c.killTimer) this.clock.clearTimeout(c.killTimer);
    c.killTimer = undefined;
    c.process = undefined;
    c.started = false;
    c.ready = false;
    const state: ContainerStateTerminated = {
      exitCode: exit.exitCode,
      reason: exit.startError ? 'StartError' : oom ? 'OOMKilled' : exit.exitCode === 0 ? 'Completed' : 'Error',
      startedAt,
      finishedAt: this.timestamp(),
    };
    if (exit.startError) state.message = exit.startError;
    if (c.containerID && !exit.startError) state.containerID = c.containerID;
    c.state = {terminated: state};
    c.finishedAtMs = this.clock.now();
    if (exit.startError) this.event(rec, 'Warning', 'Failed', `Error: ${exit.startError}`, c.spec.name);
    void this.requestSync(rec);
  }

  /** SIGTERM to the container's process group, SIGKILL after the grace period; resolves when it is gone. */
  private async killContainer(rec: PodRecord, c: ContainerRecord, graceSeconds: number, why: string): Promise<void> {
    const proc = c.process;
    if (!proc) return;
    const graceMs = Math.max(graceSeconds, this.options.minGracePeriodSeconds) * 1000;
    this.event(rec, 'Normal', 'Killing', why === 'Stopping container' ? `Stopping container ${c.spec.name}` : why, c.spec.name);
    proc.signalGroup('SIGTERM');
    const kill = this.clock.setTimeout(() => proc.signalGroup('SIGKILL'), graceMs);
    // A second, shorter termination (eviction after a deletion, say) wins over a longer one.
    if (c.killTimer) this.clock.clearTimeout(c.killTimer);
    c.killTimer = kill;
    // Resolves once the exit handler recorded the state, so callers read the final status.
    await c.done;
    this.clock.clearTimeout(kill);
  }

  private graceFor(rec: PodRecord, probeGrace?: number): number {
    return probeGrace ?? rec.pod.spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
  }

  private captureLogs(proc: ContainerProcess, file: string): Promise<void> {
    const writer = new RotatingLogWriter(file, {maxSize: this.options.logMaxSize, maxFiles: this.options.logMaxFiles, now: () => this.clock.now()});
    const streams = [['stdout', proc.stdout], ['stderr', proc.stderr]] as const;
    const ended = streams.map(([name, stream]) => new Promise<void>((resolve) => {
      if (!stream) return resolve();
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => writer.write(name, chunk));
      stream.once('close', () => {
        writer.end(name);
        resolve();
      });
    }));
    // A process that handed its output to a daemon of its own must not hold the status back.
    return proc.exited.then(() => Promise.race([
      Promise.all(ended),
      new Promise<void>((resolve) => setTimeout(resolve, STREAM_DRAIN_MS).unref()),
    ])).then(() => writer.close());
  }

  /** Keeps the logs of the previous instance (for `logs --previous`) and deletes older ones. */
  private pruneOldLogs(dir: string, run: number): void {
    if (!fs.existsSync(dir)) return;
    for (const name of fs.readdirSync(dir)) {
      const n = Number(/^(\d+)\.log/.exec(name)?.[1] ?? NaN);
      if (n < run - 1) fs.rmSync(path.join(dir, name), {force: true});
    }
  }

  // ---- probes -----------------------------------------------------------------------------

  private startProbes(rec: PodRecord, c: ContainerRecord): void {
    const startedAt = this.clock.now();
    const probes: Record<ProbeKind, Probe | undefined> = {startup: c.spec.startupProbe, liveness: c.spec.livenessProbe, readiness: c.spec.readinessProbe};
    const launch = (kind: ProbeKind): void => {
      const probe = probes[kind];
      if (!probe) return;
      const timing = probeTiming(probe, kind);
      const worker = new ProbeWorker({
        kind, timing, clock: this.clock,
        probe: () => runProbe(probe, c.spec, c.execEnv ?? {env: {}}, this.spawn, timing.timeoutMs),
        onChange: (result, outcome) => this.probeChanged(rec, c, kind, result, outcome.message, probe.terminationGracePeriodSeconds),
      });
      c.probes.set(kind, worker);
      // The initial delay counts from the container's start, also for probes gated by startup.
      worker.start(startedAt + timing.initialDelayMs - this.clock.now());
    };
    const livenessAndReadiness = (): void => {
      launch('liveness');
      launch('readiness');
    };
    if (probes.startup) {
      launch('startup');
      c.startGated = livenessAndReadiness;
    } else {
      livenessAndReadiness();
    }
  }

  private stopProbes(c: ContainerRecord): void {
    for (const worker of c.probes.values()) worker.stop();
    c.probes.clear();
    c.startGated = undefined;
  }

  private probeChanged(rec: PodRecord, c: ContainerRecord, kind: ProbeKind, result: ProbeResult, message: string | undefined, probeGrace?: number): void {
    if (!c.process) return;
    if (result === 'failure') {
      this.event(rec, 'Warning', 'Unhealthy', `${kind[0].toUpperCase()}${kind.slice(1)} probe failed: ${message ?? ''}`.trim(), c.spec.name);
    }
    if (kind === 'readiness') {
      c.ready = c.started && result === 'success';
    } else if (kind === 'startup' && result === 'success') {
      c.started = true;
      c.ready = !c.spec.readinessProbe;
      c.probes.get('startup')?.stop();
      c.startGated?.();
      c.startGated = undefined;
    } else if (result === 'failure') {
      // Liveness or startup failed: the container is killed; the restart policy decides what follows.
      void this.killContainer(rec, c, this.graceFor(rec, probeGrace), `Container ${c.spec.name} failed ${kind} probe, will be restarted`);
    }
    this.notify(rec);
  }

  // ---- status -----------------------------------------------------------------------------

  private containerStatus(rec: PodRecord, c: ContainerRecord): ContainerStatus {
    let state = c.state;
    if (!state.waiting && !state.running && !state.terminated) {
      const initPending = rec.init.some((i) => i.state.terminated?.exitCode !== 0);
      state = {waiting: {reason: c.init || initPending ? 'PodInitializing' : 'ContainerCreating'}};
    }
    const status: ContainerStatus = {
      name: c.spec.name,
      state,
      lastState: c.lastState,
      ready: c.ready,
      restartCount: c.restartCount,
      image: c.spec.image ?? '',
      imageID: '',
      started: c.started,
    };
    if (c.containerID) status.containerID = c.containerID;
    return status;
  }

  private computeStatus(rec: PodRecord): PodStatus {
    return buildPodStatus({
      pod: rec.pod,
      nodeIP: this.options.nodeIP,
      startTime: rec.startTime,
      now: this.timestamp(),
      initContainers: rec.init.map((c) => this.containerStatus(rec, c)),
      containers: rec.app.map((c) => this.containerStatus(rec, c)),
      terminal: rec.terminal,
      failure: rec.failure,
      previousConditions: rec.conditions,
    });
  }

  /** Emits 'status' when the pod's status differs from the last one emitted. */
  private notify(rec: PodRecord): void {
    if (!this.pods.has(rec.uid)) return;
    const status = this.computeStatus(rec);
    rec.conditions = status.conditions;
    const text = JSON.stringify(status);
    if (text === rec.lastEmitted) return;
    rec.lastEmitted = text;
    this.emit('status', rec.uid, status, rec.pod);
  }

  private event(rec: PodRecord, type: RuntimeEvent['type'], reason: string, message: string, container?: string): void {
    this.emit('event', {uid: rec.uid, pod: rec.pod, type, reason, message, ...(container ? {container} : {})});
  }

  private podRef(rec: PodRecord): string {
    return `${rec.pod.metadata.name ?? ''}_${rec.pod.metadata.namespace ?? 'default'}(${rec.uid})`;
  }

  /** RFC 3339 to the second, as Kubernetes status times are written. */
  private timestamp(): string {
    return new Date(this.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
