/**
 * The node agent as a library: pods from their sources (static files, a manifest URL, the API
 * server) run as process groups by the process runtime, their status written back to the API
 * server, the eviction manager watching this machine's signals, the node registered and reported,
 * and the agent's HTTP servers. Standalone without an orchconfig (static pods only).
 */
import {readFile} from 'node:fs/promises';
import {cpus, hostname} from 'node:os';
import {ProcessRuntime, type Pod as RuntimePod, type PodStatus} from './runtime/index.js';
import {EvictionManager, buildEvictionConfig, collectSignals, type EvictionPod, type PressureCondition} from './eviction/index.js';
import type {EvictionContainer} from './eviction/types.js';
import {parseQuantity} from '../../options/quantity.js';
import {AgentServers, AgentMetrics, serverConfigFromOptions} from './server/index.js';
import type {StreamingProviders} from './streaming/server.js';
import {runtimeStreamingProviders} from './streaming/providers.js';
import {StatsCollector} from './stats/index.js';
import {PodSources, podSource, isStaticPod, type PodUpdate, type SourcePod} from './sources/index.js';
import {podFromRuntime, type AgentSnapshot, type AgentPodSnapshot} from './state.js';
import type {LoadedAgentConfiguration} from './config/index.js';
import {RestClient} from '../../client/rest-client.js';
import {EventRecorder, type EventType, type InvolvedObject} from '../../client/event-recorder.js';
import {podEventObject} from './event-objects.js';
import {resolveClientConfig} from '../../client/orchconfig.js';
import {SharedInformerFactory, clientListWatcher} from '../../client/informers/index.js';
import {Registry} from 'prom-client';
import {klog} from '../../lib/klog.js';
import {names} from '../../api/names.js';
import {ApiStatusError} from '../../client/errors.js';
import {systemClock} from '../shared/clock.js';
import {VolumeManager} from './volumes/manager.js';
import {VolumeError} from './volumes/projection.js';
import {ServiceAccountTokens, type TokenRequestSpec} from './volumes/service-account-tokens.js';
import {serviceEnvironment} from './runtime/service-env.js';
import type {VersionInfo} from '../../lib/version.js';

const log = klog('agent/agent.ts');
const SYNC_LOOP_THRESHOLD_MS = 120_000;

/** Why the `syncloop` check fails (no cycle for 2 minutes since the last one, or since start), or undefined. */
export function syncLoopProblem(lastSyncAt: number | undefined, startedAt: number, now: number): string | undefined {
  const since = lastSyncAt ?? startedAt;
  return now - since > SYNC_LOOP_THRESHOLD_MS
    ? `sync loop is not running: last cycle ${Math.round((now - since) / 1000)}s ago (threshold ${SYNC_LOOP_THRESHOLD_MS / 1000}s)`
    : undefined;
}
const STATIC_STATUS_RETRIES = 60;
const ms = (v: unknown, fallback: number) => (v && typeof v === 'object' && 'ms' in v ? (v as {ms: number}).ms : fallback);
const quantityBytes = (v: unknown, fallback: number) => (v && typeof v === 'object' && 'value' in v ? (v as {value: number}).value : fallback);

export interface AgentDeps {
  version: VersionInfo;
  /** The node's status part (registration, status, lease); added by the node module in API server mode. */
  nodeStatus?: (ctx: {
    client: RestClient;
    nodeName: string;
    conditions: () => Record<PressureCondition, boolean>;
    /** Records an event about this node (NodeReady, NodeHasSufficientMemory...). */
    recordNodeEvent: (type: EventType, reason: string, message: string) => void;
  }) => {
    start(): Promise<void> | void;
    stop(): Promise<void> | void;
    snapshot(): AgentSnapshot['apiServer'];
  };
}

export class Agent {
  readonly nodeName: string;
  private runtime!: ProcessRuntime;
  private volumes?: VolumeManager;
  private eviction?: EvictionManager;
  private servers?: AgentServers;
  private sources?: PodSources;
  private client?: RestClient;
  private informers?: SharedInformerFactory;
  /** Events in the API server (Started, Killing, BackOff, Evicted, NodeReady...), at --event-qps/--event-burst. */
  private events?: EventRecorder;
  private eventsClient?: RestClient;
  private node?: ReturnType<NonNullable<AgentDeps['nodeStatus']>>;
  private readonly registry = new Registry();
  private metrics!: AgentMetrics;
  /** Every pod the sources gave us, by uid, with the source it came from. */
  private readonly pods = new Map<string, SourcePod>();
  private serverUrl?: string;
  /** Static pods whose status write failed (no mirror pod yet), retried on a timer. */
  private readonly statusRetries = new Map<string, NodeJS.Timeout>();
  private stopping = false;
  /** Pods refused at admission (--max-pods): never run, whatever updates follow. */
  private readonly rejected = new Set<string>();

  constructor(
    readonly loaded: LoadedAgentConfiguration,
    private readonly deps: AgentDeps,
  ) {
    const o = loaded.options;
    this.nodeName = ((o['hostname-override'] as string | undefined) || hostname()).toLowerCase();
  }

  private get o(): Record<string, unknown> {
    return this.loaded.options;
  }

  get mode(): 'standalone' | 'apiserver' {
    return this.o.orchconfig ? 'apiserver' : 'standalone';
  }

  async start(): Promise<void> {
    const o = this.o;
    const rootDir = (o['root-dir'] as string) ?? '/var/lib/agent';
    const clientConfig = this.mode === 'apiserver' ? await resolveClientConfig({orchconfig: o.orchconfig as string}) : undefined;
    this.volumes = new VolumeManager({
      sources: {
        nodeIP: '127.0.0.1',
        configMap: async (ns, name) => {
          const cm = await this.getForVolume(`/api/v1/namespaces/${ns}/configmaps/${name}`);
          if (!cm) return undefined;
          const text = Object.entries((cm.data ?? {}) as Record<string, string>).map(([k, v]) => [k, Buffer.from(v)] as const);
          const binary = Object.entries((cm.binaryData ?? {}) as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64')] as const);
          return Object.fromEntries([...text, ...binary]);
        },
        secret: async (ns, name) => {
          const secret = await this.getForVolume(`/api/v1/namespaces/${ns}/secrets/${name}`);
          return secret && Object.fromEntries(Object.entries((secret.data ?? {}) as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
        },
      },
      tokens: clientConfig ? new ServiceAccountTokens((spec) => this.requestToken(spec), systemClock) : undefined,
      clock: systemClock,
      logger: log,
    });
    this.runtime = new ProcessRuntime({
      volumes: this.volumes,
      baseEnv: clientConfig ? serviceEnvironment(clientConfig.server) : undefined,
      rootDir,
      logMaxSize: quantityBytes(o['container-log-max-size'], 10 * 1024 * 1024),
      logMaxFiles: (o['container-log-max-files'] as number) ?? 5,
      resolveEnv: {
        configMap: async (ns, name) => (await this.getObject(`/api/v1/namespaces/${ns}/configmaps/${name}`))?.data as Record<string, string> | undefined,
        secret: async (ns, name) => {
          const data = (await this.getObject(`/api/v1/namespaces/${ns}/secrets/${name}`))?.data as Record<string, string> | undefined;
          return data && Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
        },
      },
      logger: log,
    });
    this.runtime.on('status', (uid, status) => void this.reportPodStatus(uid, status));
    this.runtime.on('event', (e) => this.events?.event(podEventObject(e.pod, e.container), e.type, e.reason, e.message));
    this.metrics = new AgentMetrics(this.registry, {runningPods: () => this.runningPods()});
    this.metrics.setNodeName(this.nodeName);

    if (this.mode === 'apiserver') {
      const config = clientConfig!;
      this.serverUrl = config.server;
      this.client = new RestClient({config, qps: (o['orch-api-qps'] as number) || 50, burst: (o['orch-api-burst'] as number) || 100, userAgent: `orch-agent/${this.deps.version.gitVersion}`});
      const client = this.client;
      this.informers = new SharedInformerFactory({listWatcherFor: (_ref, path) => clientListWatcher(client, path), logger: log});
      // Events have a client of their own: --event-qps limits them, and they never wait behind
      // (or hold up) the --orch-api-qps budget of heartbeats and status writes, as upstream's.
      this.eventsClient = new RestClient({config, userAgent: `orch-agent/${this.deps.version.gitVersion}`});
      this.events = new EventRecorder({
        client: this.eventsClient,
        source: {component: 'agent', host: this.nodeName},
        qps: (o['event-qps'] as number | undefined) ?? 50,
        burst: (o['event-burst'] as number | undefined) || 100,
        log,
      });
      this.events.event(this.nodeEventObject(), 'Normal', 'Starting', 'Starting agent.');
    }

    this.eviction = new EvictionManager({
      config: buildEvictionConfig({
        hard: o['eviction-hard'] as never,
        soft: o['eviction-soft'] as never,
        softGracePeriods: o['eviction-soft-grace-period'] as never,
        minimumReclaim: o['eviction-minimum-reclaim'] as never,
        pressureTransitionPeriodMs: ms(o['eviction-pressure-transition-period'], 300_000),
        maxPodGracePeriodSeconds: (o['eviction-max-pod-grace-period'] as number) ?? 0,
      }),
      collectSignals: () => collectSignals({rootDir}),
      listActivePods: () => this.activePodsForEviction(),
      killPod: async (pod, grace, status) => {
        this.metrics.recordEviction('eviction');
        await this.runtime.killPod(pod.uid, grace, {reason: status.reason, message: status.message});
      },
      log: (message) => log.info(message),
      recordEvent: (e) =>
        this.events?.event(e.involved === 'node' ? this.nodeEventObject() : {apiVersion: 'v1', kind: 'Pod', name: e.involved.name, namespace: e.involved.namespace, uid: e.involved.uid}, e.type, e.reason, e.message),
    });
    this.eviction.start();

    if (this.client && this.deps.nodeStatus && o['register-node'] !== false) {
      this.node = this.deps.nodeStatus({
        client: this.client,
        nodeName: this.nodeName,
        conditions: () => this.eviction?.conditions() ?? {MemoryPressure: false, DiskPressure: false, PIDPressure: false},
        recordNodeEvent: (type, reason, message) => this.events?.event(this.nodeEventObject(), type, reason, message),
      });
      await this.node.start();
    }

    this.sources = new PodSources({
      nodeName: this.nodeName,
      staticPodPath: (o['pod-manifest-path'] as string) || undefined,
      fileCheckFrequencyMs: ms(o['file-check-frequency'], 20_000),
      staticPodURL: (o['manifest-url'] as string) || undefined,
      staticPodURLHeader: o['manifest-url-header'] as Record<string, string[]> | undefined,
      httpCheckFrequencyMs: ms(o['http-check-frequency'], 20_000),
      api: this.client && this.informers ? {factory: this.informers, client: this.client} : undefined,
      listener: (update) => void this.handle(update),
      onProblem: (p) => log.warning('Pod source problem', 'source', p.source, 'origin', p.origin, 'problem', p.message),
      logger: log,
    });
    await this.sources.start();
    this.informers?.start();

    const stats = this.statsCollector(rootDir);
    this.servers = new AgentServers({
      config: serverConfigFromOptions(o),
      providers: {
        pods: () => [...this.pods.values()].map((p) => ({...p, status: this.runtime.podStatus(p.metadata.uid as string) ?? p.status})) as never,
        runningPods: () => this.runningPods(),
        logPath: (ns, name, container, previous) => {
          const pod = [...this.pods.values()].find((p) => p.metadata.namespace === ns && p.metadata.name === name);
          return pod ? this.runtime.logPath(pod.metadata.uid as string, container, previous) : undefined;
        },
        stats: () => stats.summary(),
        health: () => this.syncLoopHealth(),
        streaming: this.streamingProviders(),
      },
      metricsRegistry: this.registry,
      apiClient: this.client,
      nodeName: this.nodeName,
    });
    await this.servers.start();
    log.info('Agent started', 'node', this.nodeName, 'mode', this.mode, 'sources', this.sources.sources.join(','));
  }

  private readonly startedAt = new Date().toISOString();

  /** exec, attach and port-forward reach the runtime through the pods this agent runs. */
  private streamingProviders(): StreamingProviders {
    return runtimeStreamingProviders(this.runtime, (namespace, name) =>
      [...this.pods.values()].find((p) => p.metadata.namespace === namespace && p.metadata.name === name)?.metadata.uid as string | undefined,
    );
  }

  /** Upstream's node reference for events: the node's name as its uid too. */
  private nodeEventObject(): InvolvedObject {
    return {kind: 'Node', name: this.nodeName, uid: this.nodeName};
  }

  /**
   * The `syncloop` health check, as upstream's: the agent's periodic loop (here the eviction
   * manager's 10 s cycle, which also measures the node) must have run within the last 2 minutes.
   */
  private syncLoopHealth(): void {
    const problem = syncLoopProblem(this.eviction?.snapshot().lastSyncAt, Date.parse(this.startedAt), Date.now());
    if (problem) throw new Error(problem);
  }

  /** /stats/summary and /metrics/resource: CPU and memory of the node, each pod and container, from /proc. */
  private statsCollector(rootDir: string): StatsCollector {
    return new StatsCollector({
      nodeName: this.nodeName,
      startTime: this.startedAt,
      pods: () =>
        this.runtime.snapshot().map((snap) => ({
          uid: snap.uid,
          name: snap.name,
          namespace: snap.namespace,
          startTime: snap.status.startTime,
          containers: snap.containers.map((c) => ({name: c.name, pid: c.pid, startTime: c.status?.state?.running?.startedAt})),
        })),
      signals: async () => {
        const {observations, time} = await collectSignals({rootDir});
        return {time, memory: observations['memory.available'], fs: observations['nodefs.available'], inodes: observations['nodefs.inodesFree']};
      },
    });
  }

  /** An object a volume needs: undefined only when it does not exist; other failures retry the mount. */
  private async getForVolume(path: string): Promise<Record<string, unknown> | undefined> {
    if (!this.client) throw new VolumeError('config maps and secrets need an API server (the agent runs standalone)');
    try {
      return await this.client.get<Record<string, unknown>>(path);
    } catch (error) {
      if (error instanceof ApiStatusError && error.code === 404) return undefined;
      throw new VolumeError(`reading ${path}: ${(error as Error).message}`);
    }
  }

  /** A TokenRequest for a pod's service account, bound to the pod (the Node authorizer allows it for pods on this node). */
  private async requestToken(spec: TokenRequestSpec): Promise<{token: string; expiresAt: number}> {
    if (!this.client) throw new VolumeError('service account tokens need an API server');
    const path = `/api/v1/namespaces/${encodeURIComponent(spec.namespace)}/serviceaccounts/${encodeURIComponent(spec.serviceAccount)}/token`;
    try {
      const {body} = await this.client.request({
        method: 'POST', path,
        body: {
          apiVersion: `${names().groups.authentication}/v1`, kind: 'TokenRequest',
          spec: {audiences: spec.audiences, expirationSeconds: spec.expirationSeconds, boundObjectRef: {apiVersion: 'v1', kind: 'Pod', name: spec.pod.name, uid: spec.pod.uid}},
        },
      });
      const status = (body as {status?: {token?: string; expirationTimestamp?: string}}).status;
      if (!status?.token || !status.expirationTimestamp) throw new Error('the TokenRequest answer has no token');
      return {token: status.token, expiresAt: Date.parse(status.expirationTimestamp)};
    } catch (error) {
      if (error instanceof VolumeError) throw error;
      throw new VolumeError(`failed to fetch token for service account "${spec.serviceAccount}": ${(error as Error).message}`);
    }
  }

  private async getObject(path: string): Promise<Record<string, unknown> | undefined> {
    if (!this.client) return undefined;
    try {
      return await this.client.get<Record<string, unknown>>(path);
    } catch {
      return undefined;
    }
  }

  private runningPods() {
    return (this.runtime?.snapshot() ?? []).map((p) => ({
      uid: p.uid,
      name: p.name,
      namespace: p.namespace,
      containers: p.containers.map((c) => ({name: c.name, state: c.status?.state?.running ? ('running' as const) : c.status?.state?.terminated ? ('exited' as const) : ('created' as const)})),
    }));
  }

  /** Pod changes from the sources: run, update, stop or forget, with --max-pods admission. */
  private async handle(update: PodUpdate): Promise<void> {
    for (const pod of update.pods) {
      const uid = pod.metadata.uid as string;
      try {
        if (update.op === 'REMOVE') {
          this.pods.delete(uid);
          this.rejected.delete(uid);
          await this.runtime.removePod(uid);
          continue;
        }
        if (this.rejected.has(uid)) {
          // A rejected pod never runs: its later updates (its own Failed status coming back as an
          // UPDATE or RECONCILE) must not start it, and its deletion has nothing to wait for.
          if (update.op === 'DELETE') await this.finishApiDeletion(pod);
          continue;
        }
        const used = this.activePodCount();
        if (update.op === 'ADD' && !this.pods.has(uid) && used >= this.maxPods()) {
          // Admission: a pod over capacity fails with reason OutOfpods, as upstream's predicate says.
          log.warning('Pod rejected: node is at capacity', 'pod', `${pod.metadata.namespace}/${pod.metadata.name}`);
          this.rejected.add(uid);
          await this.writeStatus(pod, {phase: 'Failed', reason: 'OutOfpods', message: `Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: ${used}, capacity: ${this.maxPods()}`});
          continue;
        }
        this.pods.set(uid, pod);
        await this.runtime.syncPod(pod as unknown as RuntimePod);
        // The pod's processes are gone: finish the API deletion, as the kubelet does.
        if (update.op === 'DELETE') await this.finishApiDeletion(pod);
      } catch (error) {
        log.error('Unable to sync pod', 'pod', `${pod.metadata.namespace}/${pod.metadata.name}`, 'err', error);
      }
    }
  }

  private async finishApiDeletion(pod: SourcePod): Promise<void> {
    if (podSource(pod) !== 'api' || !this.client) return;
    await this.client
      .request({method: 'DELETE', path: `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`, body: {gracePeriodSeconds: 0, preconditions: {uid: pod.metadata.uid}}})
      .catch(() => undefined);
  }

  /** Pods that hold a place on the node: admitted and not finished (upstream admits against active pods). */
  private activePodCount(): number {
    let n = 0;
    for (const uid of this.pods.keys()) {
      const phase = this.runtime.podStatus(uid)?.phase;
      if (phase !== 'Succeeded' && phase !== 'Failed') n++;
    }
    return n;
  }

  private maxPods(): number {
    const max = (this.o['max-pods'] as number) ?? 110;
    const perCore = (this.o['pods-per-core'] as number) ?? 0;
    return perCore > 0 ? Math.min(max, perCore * cpus().length) : max;
  }

  private async reportPodStatus(uid: string, status: PodStatus): Promise<void> {
    const pod = this.pods.get(uid);
    if (pod) await this.writeStatus(pod, status as unknown as Record<string, unknown>);
  }

  /** Status goes to the API pod, or to the mirror pod of a static pod. */
  private async writeStatus(pod: SourcePod, status: Record<string, unknown>, attempt = 0): Promise<void> {
    if (!this.client) return;
    const path = `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`;
    try {
      await this.client.patch(path, 'application/merge-patch+json', {status});
    } catch (error) {
      if (isStaticPod(pod)) this.retryStaticStatus(pod.metadata.uid as string, attempt + 1);
      else log.v(2).info('Unable to write pod status', 'pod', pod.metadata.name, 'err', error);
    }
  }

  /**
   * A static pod's first status usually races its mirror pod's creation and loses; a pod whose
   * status then never changes (a long sleep) would show Pending for good. So the write is retried
   * with the pod's current status every second, for a minute at most (upstream's status manager
   * resyncs every status on a timer for the same reason).
   */
  private retryStaticStatus(uid: string, attempt: number): void {
    if (this.statusRetries.has(uid) || attempt > STATIC_STATUS_RETRIES || this.stopping) return;
    const timer = setTimeout(() => {
      this.statusRetries.delete(uid);
      const pod = this.pods.get(uid);
      const status = this.runtime.podStatus(uid);
      if (pod && status) void this.writeStatus(pod, status as unknown as Record<string, unknown>, attempt);
    }, 1000);
    timer.unref();
    this.statusRetries.set(uid, timer);
  }

  private async activePodsForEviction(): Promise<EvictionPod[]> {
    const out: EvictionPod[] = [];
    for (const snap of this.runtime.snapshot()) {
      if (snap.status.phase !== 'Running' && snap.status.phase !== 'Pending') continue;
      const pod = this.pods.get(snap.uid);
      const spec = (pod?.spec ?? {}) as {priority?: number; terminationGracePeriodSeconds?: number; containers?: PodSpecContainer[]; initContainers?: PodSpecContainer[]};
      // Per container, as upstream's stats: the ranking compares usage with requests, and the eviction
      // message names each container using more than it requested.
      const containers = await Promise.all(
        snap.containers.filter((c) => !c.init && c.pid !== undefined).map(async (c) => ({name: c.name, memoryBytes: await rssBytesOf(c.pid!)})),
      );
      out.push({
        namespace: snap.namespace,
        name: snap.name,
        uid: snap.uid,
        priority: spec.priority,
        // Static pods are critical to upstream's eviction manager: never evicted.
        critical: pod ? isStaticPod(pod) : false,
        terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds,
        containers: (spec.containers ?? []).map(evictionContainer),
        initContainers: (spec.initContainers ?? []).map(evictionContainer),
        usage: {memoryBytes: containers.reduce((sum, c) => sum + c.memoryBytes, 0), processes: this.runtime.podPids(snap.uid).length, containers},
      });
    }
    return out;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const timer of this.statusRetries.values()) clearTimeout(timer);
    await this.sources?.stop();
    this.eviction?.stop();
    this.volumes?.stop();
    await this.node?.stop();
    await this.servers?.stop();
    await this.runtime?.shutdown();
    // The Killing events of the shutdown get a moment to reach the API server, not more.
    if (this.events) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.events.flush(), new Promise((resolve) => (timer = setTimeout(resolve, 2000)))]);
      clearTimeout(timer);
      this.events.close();
    }
    this.informers?.shutdown();
    this.client?.close();
    this.eventsClient?.close();
  }

  private servingEndpoints(): AgentSnapshot['serving'] {
    const ports = this.servers?.ports ?? {};
    const address = (this.o.address as string) || '0.0.0.0';
    const host = ['0.0.0.0', '::', ''].includes(address) ? '127.0.0.1' : address;
    const out: AgentSnapshot['serving'] = [];
    if (ports.main) out.push({name: 'server', url: `https://${host}:${ports.main}`});
    if (ports.readOnly) out.push({name: 'read-only', url: `http://${host}:${ports.readOnly}`});
    if (ports.healthz) out.push({name: 'healthz', url: `http://${(this.o['healthz-bind-address'] as string) || '127.0.0.1'}:${ports.healthz}/healthz`});
    return out;
  }

  private sourcesSnapshot(): AgentSnapshot['sources'] {
    const o = this.o;
    const pods = [...this.pods.values()];
    return {
      ...(this.client ? {api: {watching: true}} : {}),
      ...(o['pod-manifest-path'] ? {file: {path: o['pod-manifest-path'] as string, pods: countBy(pods, (p) => podSource(p) === 'file')}} : {}),
      ...(o['manifest-url'] ? {http: {url: o['manifest-url'] as string, pods: countBy(pods, (p) => podSource(p) === 'http')}} : {}),
    };
  }

  snapshot(): AgentSnapshot {
    const source = (uid: string): AgentPodSnapshot['source'] => (podSource(this.pods.get(uid) ?? ({metadata: {}} as SourcePod)) as AgentPodSnapshot['source']) ?? 'file';
    return {
      version: this.deps.version.gitVersion,
      nodeName: this.nodeName,
      mode: this.mode,
      server: this.serverUrl,
      serving: this.servingEndpoints(),
      apiServer: this.node?.snapshot(),
      sources: this.sourcesSnapshot(),
      pods: (this.runtime?.snapshot() ?? []).map((p) => podFromRuntime(p, source(p.uid))),
      maxPods: this.maxPods(),
      cgroups: this.runtime?.cgroupsEnabled,
      eviction: this.eviction?.snapshot(),
      startedAt: Date.parse(this.startedAt),
      at: Date.now(),
    };
  }
}

function countBy<T>(items: Iterable<T>, test: (t: T) => boolean): number {
  let n = 0;
  for (const item of items) if (test(item)) n++;
  return n;
}

interface PodSpecContainer {
  name: string;
  resources?: {requests?: Record<string, string>};
}

/** A container's name and its memory and ephemeral-storage requests, for the eviction ranking. */
function evictionContainer(c: PodSpecContainer): EvictionContainer {
  const requests: EvictionContainer['requests'] = {};
  for (const resource of ['memory', 'ephemeral-storage'] as const) {
    const text = c.resources?.requests?.[resource];
    if (text === undefined) continue;
    try {
      requests[resource] = parseQuantity(String(text));
    } catch {
      // The API server validated it; a static pod's bad quantity counts as no request.
    }
  }
  return {name: c.name, requests};
}

async function rssBytesOf(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}
