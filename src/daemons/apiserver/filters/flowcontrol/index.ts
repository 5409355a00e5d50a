/**
 * API priority and fairness, assembled for the API server (--enable-priority-and-fairness): the
 * decision state (FlowControl), the config controller on the store, the request gate, the debug
 * dumps, the metrics and the dashboard's view of the levels.
 */
import {Registry} from 'prom-client';
import type {Clock} from '../../../shared/clock.js';
import type {ResponseLike} from '../../../shared/http/http-types.js';
import type {Store} from '../../storage/store.js';
import {resourceKeyPrefix} from '../../storage-keys.js';
import {ConfigController} from './config-controller.js';
import {DEBUG_PREFIX, debugDump} from './debug.js';
import {priorityAndFairness, type PriorityAndFairnessGate} from './filter.js';
import {FlowControl} from './flow-control.js';
import {flowcontrolMetrics} from './metrics.js';

export {DEBUG_PREFIX} from './debug.js';
export {FLOW_SCHEMA_UID_HEADER, PRIORITY_LEVEL_UID_HEADER} from './filter.js';

/** One priority level as the dashboard shows it. */
export interface PriorityLevelView {
  name: string;
  exempt: boolean;
  /** Seats held (requests for the exempt level). */
  seatsInUse: number;
  /** Nominal seats (0 for exempt). */
  limit: number;
  queued: number;
}

export interface PriorityAndFairnessOptions {
  store: Store;
  keyPrefix: string;
  /** --max-requests-inflight + --max-mutating-requests-inflight. */
  serverConcurrency: number;
  clock: Clock;
  /** Objects the watch caches hold under a key prefix (the list work estimate). */
  objectCount: (prefix: string) => number | undefined;
  /** Where the apiserver_flowcontrol_* metrics go (a registry of their own when not given). */
  registry?: Registry;
  /** How often the bootstrap objects are checked besides on changes (default a minute). */
  ensureIntervalMs?: number;
  log: (message: string, ...kv: unknown[]) => void;
}

export interface PriorityAndFairness {
  readonly flowControl: FlowControl;
  readonly gate: PriorityAndFairnessGate;
  readonly registry: Registry;
  /** Writes the dump a debug path names; false when the path names none. */
  serveDebug(path: string, query: URLSearchParams, res: ResponseLike): boolean;
  levels(): PriorityLevelView[];
  start(): void;
  stop(): void;
}

export function createPriorityAndFairness(options: PriorityAndFairnessOptions): PriorityAndFairness {
  const flowControl = new FlowControl({clock: options.clock, serverConcurrency: options.serverConcurrency});
  const registry = options.registry ?? new Registry();
  const metrics = flowcontrolMetrics(registry, flowControl);
  const controller = new ConfigController({store: options.store, keyPrefix: options.keyPrefix, flowControl, clock: options.clock, ensureIntervalMs: options.ensureIntervalMs, log: options.log});
  const gate = priorityAndFairness({
    flowControl,
    clock: options.clock,
    metrics,
    storedCount: (group, resource) => options.objectCount(resourceKeyPrefix(options.keyPrefix, group, resource)),
  });
  return {
    flowControl,
    gate,
    registry,
    serveDebug(path, query, res) {
      if (!path.startsWith(DEBUG_PREFIX)) return false;
      const text = debugDump(flowControl, path, query, options.clock.now());
      if (text === undefined) return false;
      res.statusCode = 200;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end(text);
      return true;
    },
    levels() {
      return [...flowControl.levels.values()]
        .map((level) => ({
          name: level.name,
          exempt: level.exempt,
          seatsInUse: level.queues ? flowControl.pool.inUse(level.name) : level.exemptExecuting,
          limit: flowControl.limitsOf(level.name)?.nominal ?? 0,
          queued: level.queues?.waitingRequests ?? 0,
        }))
        .sort((a, b) => (a.name < b.name ? -1 : 1));
    },
    start: () => controller.start(),
    stop: () => controller.stop(),
  };
}
