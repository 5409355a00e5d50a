/**
 * Work queue metrics as client-go's workqueue records them (k8s.io/client-go/util/workqueue
 * metrics.go): depth, adds, retries, queue latency (added -> handed out), work duration (handed
 * out -> done), unfinished work and the longest running processor. The queue keeps its own counts
 * (`QueueStats`, for the dashboard) and also reports to a pluggable provider; the Prometheus one
 * registers the upstream metric names on a prom-client registry for the controller manager's /metrics.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What one queue reports; the provider decides where it goes. */
export interface QueueMetricsSink {
  setDepth(depth: number): void;
  add(): void;
  retry(): void;
  /** Seconds an item waited in the queue before a worker got it. */
  observeLatency(seconds: number): void;
  /** Seconds a worker spent on an item. */
  observeWorkDuration(seconds: number): void;
}

/** Read on demand: work in progress, not yet seen by observeWorkDuration. */
export interface InFlightProbe {
  unfinishedWorkSeconds(): number;
  longestRunningProcessorSeconds(): number;
}

export interface WorkqueueMetricsProvider {
  forQueue(name: string, probe: InFlightProbe): QueueMetricsSink;
}

export const noopMetricsProvider: WorkqueueMetricsProvider = {
  forQueue: () => ({ setDepth() {}, add() {}, retry() {}, observeLatency() {}, observeWorkDuration() {} }),
};

/** The counts a queue keeps about itself. */
export interface QueueStats {
  name: string;
  /** Items waiting to be handed out (client-go's depth gauge). */
  depth: number;
  /** Items being processed by a worker. */
  processing: number;
  /** Items waiting for addAfter/addRateLimited delays. */
  waiting: number;
  adds: number;
  retries: number;
  /** Items handed to workers. */
  gets: number;
  /** Sums over `gets`/done items, for averages. */
  queueLatencySecondsTotal: number;
  workDurationSecondsTotal: number;
  unfinishedWorkSeconds: number;
  longestRunningProcessorSeconds: number;
}

/** prometheus.ExponentialBuckets(10e-9, 10, 10): 10ns to 10s, as client-go's queue histograms. */
export const WORKQUEUE_BUCKETS = Array.from({ length: 10 }, (_, i) => 1e-8 * 10 ** i);

/** client-go's workqueue metrics on a prom-client registry, one `name` label value per queue. */
export class PrometheusWorkqueueMetrics implements WorkqueueMetricsProvider {
  private readonly depth: Gauge<'name'>;
  private readonly adds: Counter<'name'>;
  private readonly retries: Counter<'name'>;
  private readonly latency: Histogram<'name'>;
  private readonly workDuration: Histogram<'name'>;
  private readonly probes = new Map<string, InFlightProbe>();

  constructor(registry: Registry) {
    const registers = [registry];
    const probes = this.probes;
    this.depth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name'], registers });
    this.adds = new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name'], registers });
    this.retries = new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name'], registers });
    this.latency = new Histogram({
      name: 'workqueue_queue_duration_seconds', help: 'How long in seconds an item stays in workqueue before being requested.',
      labelNames: ['name'], buckets: WORKQUEUE_BUCKETS, registers,
    });
    this.workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds', help: 'How long in seconds processing an item from workqueue takes.',
      labelNames: ['name'], buckets: WORKQUEUE_BUCKETS, registers,
    });
    // Read at scrape time instead of client-go's 500ms ticker: the same values without a timer.
    new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      labelNames: ['name'], registers,
      collect() {
        for (const [name, probe] of probes) this.set({ name }, probe.unfinishedWorkSeconds());
      },
    });
    new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: ['name'], registers,
      collect() {
        for (const [name, probe] of probes) this.set({ name }, probe.longestRunningProcessorSeconds());
      },
    });
  }

  forQueue(name: string, probe: InFlightProbe): QueueMetricsSink {
    this.probes.set(name, probe);
    const labels = { name };
    // Present from the start (at 0), as client-go's metrics are once a queue exists.
    this.depth.set(labels, 0);
    this.adds.inc(labels, 0);
    this.retries.inc(labels, 0);
    return {
      setDepth: (depth) => this.depth.set(labels, depth),
      add: () => this.adds.inc(labels),
      retry: () => this.retries.inc(labels),
      observeLatency: (seconds) => this.latency.observe(labels, seconds),
      observeWorkDuration: (seconds) => this.workDuration.observe(labels, seconds),
    };
  }
}
