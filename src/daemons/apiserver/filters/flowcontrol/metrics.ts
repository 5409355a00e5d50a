/**
 * Upstream's apiserver_flowcontrol_* metrics (util/flowcontrol/metrics), on a prom-client Registry
 * handed in by the server (so serving them on /metrics is one registration there). Per-level seat
 * gauges are read from the flow control state at scrape time; request counts move as requests do.
 */
import {Counter, Gauge, Histogram, type Registry} from 'prom-client';
import type {FlowControl} from './flow-control.js';
import type {RejectReason} from './queue-set.js';

export interface FlowcontrolMetrics {
  queued(level: string, schema: string, delta: number): void;
  executing(level: string, schema: string, delta: number): void;
  dispatched(level: string, schema: string, waitedMs: number): void;
  rejected(level: string, schema: string, reason: RejectReason, waitedMs: number): void;
}

export function flowcontrolMetrics(registry: Registry, flowControl: FlowControl): FlowcontrolMetrics {
  const registers = [registry];
  const inqueue = new Gauge({name: 'apiserver_flowcontrol_current_inqueue_requests', help: 'Number of requests currently pending in queues of the API Priority and Fairness subsystem', labelNames: ['priority_level', 'flow_schema'], registers});
  const executing = new Gauge({name: 'apiserver_flowcontrol_current_executing_requests', help: 'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem', labelNames: ['priority_level', 'flow_schema'], registers});
  const rejected = new Counter({name: 'apiserver_flowcontrol_rejected_requests_total', help: 'Number of requests rejected by API Priority and Fairness subsystem', labelNames: ['priority_level', 'flow_schema', 'reason'], registers});
  const dispatched = new Counter({name: 'apiserver_flowcontrol_dispatched_requests_total', help: 'Number of requests executed by API Priority and Fairness subsystem', labelNames: ['priority_level', 'flow_schema'], registers});
  const wait = new Histogram({
    name: 'apiserver_flowcontrol_request_wait_duration_seconds',
    help: 'Length of time a request spent waiting in its queue',
    labelNames: ['priority_level', 'flow_schema', 'execute'],
    buckets: [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30],
    registers,
  });
  new Gauge({
    name: 'apiserver_flowcontrol_nominal_limit_seats',
    help: 'Nominal number of execution seats configured for each priority level',
    labelNames: ['priority_level'],
    registers,
    collect() {
      this.reset();
      for (const level of flowControl.levels.values()) this.set({priority_level: level.name}, flowControl.limitsOf(level.name)?.nominal ?? 0);
    },
  });
  new Gauge({
    name: 'apiserver_flowcontrol_current_executing_seats',
    help: 'Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem',
    labelNames: ['priority_level'],
    registers,
    collect() {
      this.reset();
      for (const level of flowControl.levels.values()) this.set({priority_level: level.name}, level.queues ? flowControl.pool.inUse(level.name) : level.exemptExecuting);
    },
  });
  // Label children per (level, schema), made once: a labels lookup per request costs more than the update.
  const children = new Map<string, {inqueue: ReturnType<typeof inqueue.labels>; executing: ReturnType<typeof executing.labels>; dispatched: ReturnType<typeof dispatched.labels>; waited: ReturnType<typeof wait.labels>}>();
  const of = (level: string, schema: string) => {
    const key = `${level}\u0000${schema}`;
    let child = children.get(key);
    if (!child) {
      child = {inqueue: inqueue.labels(level, schema), executing: executing.labels(level, schema), dispatched: dispatched.labels(level, schema), waited: wait.labels(level, schema, 'true')};
      children.set(key, child);
    }
    return child;
  };
  return {
    queued: (level, schema, delta) => of(level, schema).inqueue.inc(delta),
    executing: (level, schema, delta) => of(level, schema).executing.inc(delta),
    dispatched: (level, schema, waitedMs) => {
      const child = of(level, schema);
      child.dispatched.inc();
      child.waited.observe(waitedMs / 1000);
    },
    rejected: (level, schema, reason, waitedMs) => {
      rejected.inc({priority_level: level, flow_schema: schema, reason});
      wait.observe({priority_level: level, flow_schema: schema, execute: 'false'}, waitedMs / 1000);
    },
  };
}
