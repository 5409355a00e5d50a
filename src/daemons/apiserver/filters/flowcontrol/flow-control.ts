/**
 * Priority and fairness's decision (upstream's util/flowcontrol apf_controller + apf_filter), apart
 * from HTTP and the store: the configuration in effect (FlowSchemas in matching order, priority levels
 * with their seats and queues), the classification of a request, and its admission: exempt levels
 * run at once, limited levels go through their QueueSet. Pure state on an injected clock.
 */
import type {Clock} from '../../../shared/clock.js';
import {flowDistinguisher, matchesSchema, sortSchemas, type RequestDigest} from './matching.js';
import {QueueSet, type QueuingConfig, type RejectReason, type RequestDescription, type Ticket} from './queue-set.js';
import {computeLimits, SeatPool, type LevelLimits} from './seat-pool.js';
import {hashFlowId} from './shuffle-shard.js';
import type {FlowSchema, PriorityLevelConfiguration} from './types.js';
import {mandatoryFlowSchemas, mandatoryPriorityLevels} from './bootstrap.js';

export interface PriorityLevelState {
  readonly name: string;
  config: PriorityLevelConfiguration;
  readonly exempt: boolean;
  /** Limited levels only. */
  queues?: QueueSet;
  /** Requests executing on an exempt level (they take no seats, but are counted). */
  exemptExecuting: number;
  /** Requests dispatched since start, rejected by reason (debug dump, metrics). */
  dispatched: number;
  rejected: Record<RejectReason, number>;
}

export interface Classification {
  schema: FlowSchema;
  level: PriorityLevelState;
  distinguisher: string;
}

export interface AdmitCallbacks {
  onDispatch(waitedMs: number): void;
  onReject(reason: RejectReason): void;
}

export interface FlowControlOptions {
  clock: Clock;
  /** --max-requests-inflight + --max-mutating-requests-inflight. */
  serverConcurrency: number;
}

/** Upstream's DefaultQueuing values for a Queue response that leaves fields out. */
const DEFAULT_QUEUING: QueuingConfig = {queues: 64, handSize: 8, queueLengthLimit: 50};
const DEFAULT_SHARES = 30;

export class FlowControl {
  private schemas: FlowSchema[] = [];
  readonly levels = new Map<string, PriorityLevelState>();
  readonly pool = new SeatPool();
  /** Flow hashes by schema and distinguisher (a BigInt FNV per request would cost more than the map). */
  private hashes = new Map<string, bigint>();

  constructor(private readonly options: FlowControlOptions) {
    // Until the store's objects are read, the mandatory ones are in effect (as upstream's filter
    // starts with them before its informers sync).
    this.applyConfig(mandatoryFlowSchemas(), mandatoryPriorityLevels());
  }

  get serverConcurrency(): number {
    return this.options.serverConcurrency;
  }

  flowSchemas(): readonly FlowSchema[] {
    return this.schemas;
  }

  limitsOf(level: string): LevelLimits | undefined {
    return this.pool.limitsOf(level);
  }

  /**
   * Puts a configuration in effect. Levels keep their queues and running requests across changes;
   * a deleted level keeps serving what it admitted, then goes.
   */
  applyConfig(schemas: FlowSchema[], levels: PriorityLevelConfiguration[]): void {
    const limits = computeLimits(
      this.options.serverConcurrency,
      levels.map((l) => ({
        name: l.metadata.name,
        nominalConcurrencyShares: l.spec.type === 'Exempt' ? (l.spec.exempt?.nominalConcurrencyShares ?? 0) : (l.spec.limited?.nominalConcurrencyShares ?? DEFAULT_SHARES),
        lendablePercent: (l.spec.type === 'Exempt' ? l.spec.exempt?.lendablePercent : l.spec.limited?.lendablePercent) ?? 0,
        borrowingLimitPercent: l.spec.type === 'Exempt' ? 0 : l.spec.limited?.borrowingLimitPercent,
      })),
    );
    const seen = new Set<string>();
    for (const config of levels) {
      const name = config.metadata.name;
      seen.add(name);
      const exempt = config.spec.type === 'Exempt';
      let state = this.levels.get(name);
      if (state && state.exempt !== exempt) {
        // A level that changed type starts over (its running requests end on the old state).
        this.levels.delete(name);
        state = undefined;
      }
      if (!exempt) this.pool.configure(name, limits.get(name)!);
      const queuing = exempt ? undefined : queuingOf(config);
      if (!state) {
        state = {name, config, exempt, exemptExecuting: 0, dispatched: 0, rejected: {'queue-full': 0, 'concurrency-limit': 0, 'time-out': 0, cancelled: 0}};
        if (!exempt) {
          state.queues = new QueueSet(this.options.clock, this.pool.limiter(name), queuing);
          state.queues.onRelease = () => this.dispatchBorrowers(name);
        }
        this.levels.set(name, state);
      } else {
        state.config = config;
        state.queues?.reconfigure(queuing);
      }
    }
    for (const name of [...this.levels.keys()]) {
      if (seen.has(name)) continue;
      this.levels.delete(name);
      this.pool.remove(name);
    }
    this.schemas = sortSchemas(schemas);
    this.hashes.clear();
    // New limits may let waiting requests run.
    for (const level of this.levels.values()) level.queues?.dispatchAsMuchAsPossible();
  }

  /** Seats freed on one level may be borrowed by the others' waiting requests. */
  private dispatchBorrowers(freed: string): void {
    for (const level of this.levels.values()) if (level.name !== freed && level.queues && level.queues.waitingRequests > 0) level.queues.dispatchAsMuchAsPossible();
  }

  /**
   * The first matching schema whose level exists (a dangling schema is skipped, as upstream); the
   * catch-all schema and level otherwise (they always exist once the mandatory objects are kept).
   */
  classify(digest: RequestDigest): Classification | undefined {
    for (const schema of this.schemas) {
      if (!matchesSchema(schema, digest)) continue;
      const level = this.levels.get(schema.spec.priorityLevelConfiguration.name);
      if (!level) continue;
      return {schema, level, distinguisher: flowDistinguisher(schema, digest)};
    }
    return undefined;
  }

  /**
   * Admits a classified request taking `seats`; exactly one of the callbacks runs (perhaps before
   * this returns). The ticket's finish() must be called once the request is done executing.
   */
  admit(c: Classification, seats: number, waitLimitMs: number, callbacks: AdmitCallbacks, describe?: RequestDescription): Ticket {
    const level = c.level;
    if (level.exempt || !level.queues) {
      level.exemptExecuting++;
      level.dispatched++;
      callbacks.onDispatch(0);
      let done = false;
      return {
        cancel: () => undefined,
        finish: () => {
          if (done) return;
          done = true;
          level.exemptExecuting--;
        },
      };
    }
    const key = `${c.schema.metadata.name}\u0000${c.distinguisher}`;
    let hash = this.hashes.get(key);
    if (hash === undefined) {
      hash = hashFlowId(c.schema.metadata.name, c.distinguisher);
      if (this.hashes.size > 10_000) this.hashes.clear();
      this.hashes.set(key, hash);
    }
    return level.queues.enqueue({
      flowHash: hash,
      seats,
      waitLimitMs,
      onDispatch: (waited) => {
        level.dispatched++;
        callbacks.onDispatch(waited);
      },
      onReject: (reason) => {
        level.rejected[reason]++;
        callbacks.onReject(reason);
      },
      describe: describe && {flowSchema: c.schema.metadata.name, flowDistinguisher: c.distinguisher, ...describe},
    });
  }
}

function queuingOf(config: PriorityLevelConfiguration): QueuingConfig | undefined {
  const response = config.spec.limited?.limitResponse;
  if (response?.type !== 'Queue') return undefined;
  const q = response.queuing ?? {};
  return {queues: q.queues ?? DEFAULT_QUEUING.queues, handSize: q.handSize ?? DEFAULT_QUEUING.handSize, queueLengthLimit: q.queueLengthLimit ?? DEFAULT_QUEUING.queueLengthLimit};
}
