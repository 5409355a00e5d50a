/**
 * The controller manager as a library: a rate-limited REST client to the API server, shared
 * informers, its HTTPS endpoint (health with a leaderElection check, /metrics), leader election on
 * a Lease, and the controllers --controllers selects, started only while this process leads. A
 * leader that loses its lease stops its controllers and run() resolves 'lost' (the command exits
 * non-zero, as upstream); a clean stop releases the lease so a standby takes over at once.
 */
import {setMaxListeners} from 'node:events';
import {Registry, Gauge, collectDefaultMetrics} from 'prom-client';
import {RestClient} from '../../client/rest-client.js';
import {ApiStatusError} from '../../client/errors.js';
import {EventRecorder} from '../../client/event-recorder.js';
import {resolveClientConfig} from '../../client/orchconfig.js';
import {SharedInformerFactory, PrometheusWorkqueueMetrics, clientListWatcher, randomResyncPeriod} from '../../client/informers/index.js';
import {LeaderElector, HttpLeaseLock, newIdentity, type ElectionState, type JsonHttp} from './leader-election/index.js';
import {LeaseCandidate} from './leader-election/lease-candidate.js';
import {servesLeaseCandidates, candidateVersions} from './coordinated.js';
import {selectControllers} from './controllers/index.js';
import {nodeLifecycleSnapshots} from './controllers/node-lifecycle.js';
import {ControllerManagerServing, type ServingConfig} from './serving.js';
import type {ControllerContext, RunningController} from './controllers/types.js';
import type {ControllerManagerSnapshot} from './state.js';
import {klog} from '../../lib/klog.js';
import type {VersionInfo} from '../../lib/version.js';

const log = klog('controller-manager/manager.ts');

export interface ControllerManagerConfig {
  /** Typed option values, handed to the controllers. */
  values: Record<string, unknown>;
  orchconfig?: string;
  master?: string;
  qps: number;
  burst: number;
  serving: ServingConfig;
  leaderElect: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  leaseNamespace: string;
  leaseName: string;
  controllers: string[];
  controllerStartIntervalMs: number;
  controllerShutdownTimeoutMs: number;
  minResyncPeriodMs: number;
  version: VersionInfo;
  identity?: string;
}

/** The leader election lock's HTTP over the REST client: statuses come back as values. */
function jsonHttpOver(client: RestClient): JsonHttp {
  const call = async (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) => {
    try {
      const r = await client.request({method, path, body});
      return {status: r.statusCode, body: r.body};
    } catch (error) {
      if (error instanceof ApiStatusError) return {status: error.code, body: error.status};
      throw error;
    }
  };
  return {get: (p) => call('GET', p), post: (p, b) => call('POST', p, b), put: (p, b) => call('PUT', p, b)};
}

export class ControllerManager {
  readonly identity: string;
  private client?: RestClient;
  /** The lease's own client; see start(). */
  private electionClient?: RestClient;
  private informers?: SharedInformerFactory;
  private serving?: ControllerManagerServing;
  private elector?: LeaderElector;
  private candidate?: LeaseCandidate;
  private readonly registry = new Registry();
  private readonly metrics = new PrometheusWorkqueueMetrics(this.registry);
  private running: {name: string; controller: RunningController}[] = [];
  private readonly recorders = new Map<string, EventRecorder>();
  private readonly createdAt = Date.now();
  private election: ElectionState;
  private stopController = new AbortController();
  private serverUrl = '';
  private clientCaPem: string | undefined;

  constructor(readonly config: ControllerManagerConfig) {
    this.identity = config.identity ?? newIdentity();
    this.election = {identity: this.identity, state: config.leaderElect ? 'candidate' : 'leader'};
    collectDefaultMetrics({register: this.registry});
  }

  async start(): Promise<void> {
    const c = this.config;
    // Validate --controllers before touching the network.
    selectControllers(c.controllers);
    const clientConfig = await resolveClientConfig({orchconfig: c.orchconfig, server: c.master});
    for (const warning of clientConfig.warnings ?? []) log.warning(warning);
    this.serverUrl = clientConfig.server;
    this.clientCaPem = clientConfig.caPem;
    this.client = new RestClient({config: clientConfig, qps: c.qps, burst: c.burst, userAgent: `orch-controller-manager/${c.version.gitVersion}`});
    const client = this.client;
    this.informers = new SharedInformerFactory({
      listWatcherFor: (_ref, path) => clientListWatcher(client, path),
      resyncPeriodMs: () => randomResyncPeriod(c.minResyncPeriodMs),
      logger: log,
    });
    const leaderGauge = new Gauge({name: 'leader_election_master_status', help: 'Whether this process leads (1) or not (0).', labelNames: ['name'], registers: [this.registry]});
    leaderGauge.set({name: c.leaseName}, c.leaderElect ? 0 : 1);

    if (c.leaderElect) {
      // Its own client, as upstream's "leader-election" clientset: with the controllers' client,
      // renewals would queue behind their writes in the shared rate limiter (a replication
      // controller creating 1,000 pods at 20 qps held them past the renew deadline and the leader
      // lost its lease), and a request to a hung API server must not outlive the renew deadline.
      this.electionClient = new RestClient({
        config: clientConfig,
        qps: c.qps,
        burst: c.burst,
        timeoutMs: c.renewDeadlineMs,
        userAgent: `orch-controller-manager/${c.version.gitVersion}/leader-election`,
      });
      const http = jsonHttpOver(this.electionClient);
      // Coordinated leader election (upstream: the CoordinatedLeaderElection gate; here: the API
      // server serving LeaseCandidates, which it does only with that gate on): register as a
      // candidate and follow the lease the API server's controller assigns.
      const coordinated = await servesLeaseCandidates(http).catch(() => false);
      if (coordinated) {
        const versions = candidateVersions(c.version);
        this.candidate = new LeaseCandidate({
          http, namespace: c.leaseNamespace, name: this.identity, leaseName: c.leaseName, ...versions,
          strategy: 'OldestEmulationVersion',
          onError: (error) => log.error('LeaseCandidate error', 'err', String(error)),
        });
        log.info('Coordinated leader election: registering as a LeaseCandidate', 'lease', c.leaseName, 'binaryVersion', versions.binaryVersion);
      }
      this.elector = new LeaderElector({
        lock: new HttpLeaseLock(http, c.leaseNamespace, c.leaseName),
        coordinated,
        identity: this.identity,
        leaseDurationMs: c.leaseDurationMs,
        renewDeadlineMs: c.renewDeadlineMs,
        retryPeriodMs: c.retryPeriodMs,
        releaseOnCancel: true,
        logger: log,
        callbacks: {
          onStartedLeading: (signal) => this.runControllers(signal),
          onStoppedLeading: () => leaderGauge.set({name: c.leaseName}, 0),
          onNewLeader: (holder) => log.info('New leader elected', 'identity', holder),
        },
      });
      this.elector.onChange((state) => {
        this.election = state;
        leaderGauge.set({name: c.leaseName}, state.state === 'leader' ? 1 : 0);
      });
    }
    const elector = this.elector;
    this.serving = new ControllerManagerServing(
      c.serving,
      this.registry,
      elector
        ? {
            name: 'leaderElection',
            check: () => {
              const problem = elector.healthCheck(20_000);
              if (problem) throw new Error(problem);
            },
          }
        : undefined,
      (message) => log.warning(message),
    );
    await this.serving.start();
    log.info('Serving securely', 'address', this.serving.url, 'apiserver', this.serverUrl, 'identity', this.identity);
  }

  /** Runs until a clean stop ('stopped') or a lost lease ('lost'). */
  async run(): Promise<'lost' | 'stopped'> {
    if (!this.elector) {
      await this.runControllers(this.stopController.signal);
      return 'stopped';
    }
    const candidate = this.candidate?.run(this.stopController.signal);
    try {
      return await this.elector.run(this.stopController.signal);
    } finally {
      this.stopController.abort();
      await candidate;
    }
  }

  /** Starts the selected controllers and keeps them until `signal` aborts; then stops them within the shutdown timeout. */
  private async runControllers(signal: AbortSignal): Promise<void> {
    const c = this.config;
    const informers = this.informers as SharedInformerFactory;
    const ctx: ControllerContext = {
      client: this.client as RestClient,
      informers,
      options: c.values,
      metrics: this.metrics,
      logger: log,
      now: () => Date.now(),
      clientCaPem: this.clientCaPem,
      events: (component) => this.recorderFor(component),
    };
    const controllerSignal = new AbortController();
    // This signal fans out to every controller, each listening for its stop for as long as it runs
    // (and briefly while its caches sync): a few listeners a controller is the expected load, not a
    // leak, so the limit of Node's leak warning follows the number of controllers.
    const selected = selectControllers(c.controllers);
    setMaxListeners(Math.max(10, selected.length * 4), controllerSignal.signal);
    const abort = () => controllerSignal.abort();
    signal.addEventListener('abort', abort, {once: true});
    for (const descriptor of selected) {
      if (signal.aborted) break;
      log.info('Starting controller', 'name', descriptor.name);
      const controller = await descriptor.start(ctx, controllerSignal.signal);
      this.running.push({name: descriptor.name, controller});
      if (c.controllerStartIntervalMs > 0) await new Promise((r) => setTimeout(r, c.controllerStartIntervalMs));
    }
    // As client-go's informer factory: every controller registers its informers (and indexers)
    // first, then they all start, so no controller adds an index to an informer already running.
    informers.start();
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), {once: true}));
    const stopping = Promise.all(this.running.map((r) => r.controller.done));
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), c.controllerShutdownTimeoutMs).unref());
    if ((await Promise.race([stopping, timeout])) === 'timeout') {
      log.warning('Controllers did not stop within --controller-shutdown-timeout', 'timeout', `${c.controllerShutdownTimeoutMs}ms`);
    }
    for (const r of this.running) log.info('Stopped controller', 'name', r.name);
    this.running = [];
    await this.closeRecorders();
    informers.shutdown();
    this.informers = new SharedInformerFactory({
      listWatcherFor: (_ref, path) => clientListWatcher(this.client as RestClient, path),
      resyncPeriodMs: () => randomResyncPeriod(c.minResyncPeriodMs),
      logger: log,
    });
  }

  /**
   * Events go through the controller manager's own client, whose --orch-api-qps budget they share
   * (upstream's controllers record through the same client), so the recorders add no limit of their own.
   */
  private recorderFor(component: string): EventRecorder {
    let recorder = this.recorders.get(component);
    if (!recorder) {
      recorder = new EventRecorder({client: this.client as RestClient, source: {component}, qps: 0, burst: 1, log});
      this.recorders.set(component, recorder);
    }
    return recorder;
  }

  /** Lets the last events out (for a moment at most), then stops recording. */
  private async closeRecorders(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const flushed = Promise.all([...this.recorders.values()].map((r) => r.flush()));
    await Promise.race([flushed, new Promise((resolve) => (timer = setTimeout(resolve, 2000)))]);
    clearTimeout(timer);
    for (const recorder of this.recorders.values()) recorder.close();
    this.recorders.clear();
  }

  /** A clean stop: controllers stop, the lease is released (a standby takes over at once), serving stops. */
  async stop(): Promise<void> {
    this.stopController.abort();
    this.elector?.stop();
  }

  async close(): Promise<void> {
    await this.serving?.stop();
    this.client?.close();
    this.electionClient?.close();
  }

  snapshot(): ControllerManagerSnapshot {
    return {
      version: this.config.version.gitVersion,
      identity: this.identity,
      server: this.serverUrl,
      servingUrl: this.serving?.url ?? '',
      lease: this.config.leaderElect ? `${this.config.leaseNamespace}/${this.config.leaseName}` : undefined,
      election: this.elector ? this.elector.snapshot() : this.election,
      controllers: this.running.map((r) => r.controller.snapshot()),
      nodeLifecycle: this.running.some((r) => r.name === 'nodelifecycle') ? nodeLifecycleSnapshots.latest?.() : undefined,
      startedAt: this.createdAt,
      at: Date.now(),
    };
  }
}
