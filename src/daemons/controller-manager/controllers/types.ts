/**
 * The contract between the controller manager and its controllers. Each controller is a module
 * exporting a ControllerDescriptor; the manager starts the ones `--controllers` selects, only after
 * leadership is gained, hands each the shared informers, a rate-limited REST client and its own
 * options, and reads each one's snapshot for the dashboard and /metrics.
 */
import type {RestClient} from '../../../client/rest-client.js';
import type {EventRecorder} from '../../../client/event-recorder.js';
import type {SharedInformerFactory, WorkqueueMetricsProvider} from '../../../client/informers/index.js';
import type {Logger} from '../../../lib/klog.js';

export interface ControllerContext {
  /** Rate-limited by --orch-api-qps/--orch-api-burst; talks to the API server only. */
  client: RestClient;
  /** Shared informers: each resource is watched once per process, whoever asks for it. */
  informers: SharedInformerFactory;
  /** Typed option values of `orch controller-manager` (src/options/controller-manager.ts), by long name. */
  options: Record<string, unknown>;
  /** Work queue metrics for /metrics (one provider per process). */
  metrics: WorkqueueMetricsProvider;
  logger: Logger;
  /** Milliseconds since the epoch; injected so controllers can be tested on a fake clock. */
  now(): number;
  /** The CA the controller manager trusts the API server with (its orchconfig's), the root CA publisher's default. */
  clientCaPem?: string;
  /**
   * The event recorder of a reporting component (`replicaset-controller`...), one per component;
   * absent where nobody reads events (some unit tests).
   */
  events?(component: string): EventRecorder;
}

export interface ControllerSnapshot {
  name: string;
  workers: number;
  queueDepth: number;
  /** Free-form figures a controller wants on the dashboard (e.g. {pods: 12}). */
  details?: Record<string, number | string>;
}

export interface RunningController {
  /** Resolves when the controller has stopped after `signal` aborted (within --controller-shutdown-timeout). */
  done: Promise<void>;
  snapshot(): ControllerSnapshot;
}

export interface ControllerDescriptor {
  /** The name used by --controllers (upstream's names: namespace, serviceaccount, replicaset...). */
  name: string;
  /** Part of `*` (the default set). */
  enabledByDefault: boolean;
  /** Starts the controller: register informer handlers, start workers; stop when `signal` aborts. */
  start(ctx: ControllerContext, signal: AbortSignal): RunningController | Promise<RunningController>;
}
