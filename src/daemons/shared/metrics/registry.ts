/**
 * A prom-client Registry with upstream's metric framework rules (component-base/metrics) applied as
 * metrics are created, so every module that registers metrics gets them:
 * - stability levels in the help text (`[STABLE] ...`, `[ALPHA] ...`), as upstream exports them;
 * - deprecated metrics: `(Deprecated since X.Y.Z)` in the help; hidden (not registered) once the
 *   release is past their deprecation minor, unless `--show-hidden-metrics-for-version` is given;
 * - `--disabled-metrics`: never registered (the metric object still works, it is just not exported);
 * - `--allow-metric-labels`: a label value outside its allow-list is recorded as "unexpected".
 * Plus upstream's own bookkeeping counters: disabled_metrics_total, hidden_metrics_total and
 * cardinality_enforcement_unexpected_categorizations_total.
 */
import {Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type CounterConfiguration, type GaugeConfiguration, type HistogramConfiguration} from 'prom-client';
import {NO_METRICS_OPTIONS, type MetricsOptions} from './options.js';

/** Pause buckets fine enough to tell a 50 ms collection from a 100 ms one (a watch delivery's budget). */
const GC_DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export type StabilityLevel = 'ALPHA' | 'BETA' | 'STABLE' | 'INTERNAL';

interface FrameworkOptions {
  /** Default ALPHA, as upstream. */
  stabilityLevel?: StabilityLevel;
  /** `major.minor.patch` the metric was deprecated in. */
  deprecatedVersion?: string;
}

type Opts<C> = Omit<C, 'registers'> & FrameworkOptions;

export class MetricsRegistry {
  readonly registry = new Registry();
  private readonly unexpected?: Counter;
  private readonly hiddenTotal?: Counter;

  constructor(
    private readonly options: MetricsOptions = NO_METRICS_OPTIONS,
    /** The release the daemon reports, for deciding which deprecated metrics are hidden. */
    private readonly current: {major: number; minor: number} = {major: 1, minor: 0},
    /** Upstream's bookkeeping counters live in the main (legacy) registry only, not in /metrics/slis. */
    bookkeeping = true,
  ) {
    if (!bookkeeping) return;
    const disabledTotal = this.counter({name: 'disabled_metrics_total', help: 'The count of disabled metrics.', stabilityLevel: 'BETA'});
    this.hiddenTotal = this.counter({name: 'hidden_metrics_total', help: 'The count of hidden metrics.', stabilityLevel: 'BETA'});
    this.unexpected = this.counter({name: 'cardinality_enforcement_unexpected_categorizations_total', help: 'The count of unexpected categorizations during cardinality enforcement.'});
    disabledTotal.inc(options.disabled.size);
  }

  counter<T extends string = string>(opts: Opts<CounterConfiguration<T>>): Counter<T> {
    return this.prepare(opts, (c) => new Counter<T>(c));
  }

  gauge<T extends string = string>(opts: Opts<GaugeConfiguration<T>>): Gauge<T> {
    return this.prepare(opts, (c) => new Gauge<T>(c));
  }

  histogram<T extends string = string>(opts: Opts<HistogramConfiguration<T>>): Histogram<T> {
    return this.prepare(opts, (c) => new Histogram<T>(c));
  }

  /**
   * The process and runtime metrics every upstream component exports (its Prometheus process and Go
   * collectors): process_resident_memory_bytes, process_cpu_seconds_total, process_open_fds, ...;
   * Node's runtime stands in for Go's (nodejs_heap_size_used_bytes for go_memstats_heap_inuse_bytes,
   * nodejs_gc_duration_seconds for go_gc_duration_seconds). Once per registry; --disabled-metrics
   * applies to them as to the others.
   */
  collectProcessMetrics(): void {
    collectDefaultMetrics({register: this.registry, gcDurationBuckets: GC_DURATION_BUCKETS});
    for (const name of this.options.disabled) this.registry.removeSingleMetric(name);
  }

  /** Whether a metric of this name is exported (not disabled, not hidden). */
  isExported(name: string): boolean {
    return this.registry.getSingleMetric(name) !== undefined;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  private prepare<M extends object, C extends {name: string; help: string; labelNames?: readonly string[]; registers?: Registry[]}>(opts: C & FrameworkOptions, make: (c: C) => M): M {
    const {stabilityLevel = 'ALPHA', deprecatedVersion, ...rest} = opts;
    let help = `[${stabilityLevel}] ${rest.help}`;
    let hidden = false;
    if (deprecatedVersion) {
      help = `[${stabilityLevel}] (Deprecated since ${deprecatedVersion}) ${rest.help}`;
      hidden = isHidden(deprecatedVersion, this.current) && !this.options.showHidden;
    }
    const disabled = this.options.disabled.has(rest.name);
    if (hidden && !disabled) this.hiddenTotal?.inc();
    const metric = make({...(rest as unknown as C), help, registers: disabled || hidden ? [] : [this.registry]});
    const allow = this.options.allowLists.get(rest.name);
    return allow ? constrainLabels(metric, rest.labelNames ?? [], allow, () => this.unexpected?.inc()) : metric;
  }
}

/** Upstream's shouldHide: deprecated in an earlier minor than the current release. */
export function isHidden(deprecatedVersion: string, current: {major: number; minor: number}): boolean {
  const [major = 0, minor = 0] = deprecatedVersion.replace(/^v/, '').split('.').map(Number);
  return major < current.major || (major === current.major && minor < current.minor);
}

// Not `labels`: the child it returns calls the instance's own (patched) inc/set/observe, which constrain.
const LABELLED = ['inc', 'dec', 'set', 'observe', 'remove', 'startTimer'] as const;

/**
 * Rewrites label values outside their allow-lists to "unexpected" before the metric sees them
 * (upstream's ConstrainToAllowedList), for every method that takes labels, as an object or (remove)
 * positionally.
 */
function constrainLabels<M extends object>(metric: M, labelNames: readonly string[], allow: ReadonlyMap<string, ReadonlySet<string>>, counted: () => void): M {
  const constrain = (labels: Record<string, string | number>) => {
    let out = labels;
    for (const [name, values] of allow) {
      const value = labels[name];
      if (value !== undefined && !values.has(String(value))) {
        if (out === labels) out = {...labels};
        out[name] = 'unexpected';
        counted();
      }
    }
    return out;
  };
  const target = metric as unknown as Record<string, ((...args: unknown[]) => unknown) | undefined>;
  for (const method of LABELLED) {
    const original = target[method];
    if (typeof original !== 'function') continue;
    target[method] = function (this: unknown, ...args: unknown[]) {
      const first = args[0];
      if (first && typeof first === 'object' && !('labels' in first && 'value' in first)) {
        args[0] = constrain(first as Record<string, string>);
      } else if (method === 'remove' && args.length > 0 && typeof first === 'string') {
        const labels = Object.fromEntries(labelNames.map((n, i) => [n, args[i] as string]));
        const constrained = constrain(labels);
        args = labelNames.map((n) => constrained[n]);
      }
      return original.apply(this, args);
    };
  }
  return metric;
}
