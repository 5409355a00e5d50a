/**
 * Records core/v1 Events in the API server for a daemon, as client-go's record.EventRecorder with
 * its EventCorrelator does:
 * - `event()` never blocks the caller: events queue up (at most `maxQueued`; beyond that they are
 *   dropped and counted, as the broadcaster's DropIfChannelFull queue does) and one sender writes
 *   them in order;
 * - the sender takes a token of its own rate limiter first (the agent's --event-qps and
 *   --event-burst), so a storm of events cannot crowd out heartbeats and status writes;
 * - the same event again (same source, object, type, reason and message) updates the first one's
 *   `count` and `lastTimestamp` instead of creating another object; when that object has gone
 *   (the API server's --event-ttl), it is created again with the count it had;
 * - a write that fails for a reason worth retrying (no connection, 5xx, 429) is retried a few
 *   times, a little later; an event the server refuses is logged and dropped.
 *
 * Hand-written: this is client-go's recorder behavior; no npm package records Kubernetes events.
 */
import {createRateLimiter, type LimiterClock, type RateLimiter, systemClock as systemLimiterClock} from './rate-limiter.js';
import {ApiStatusError} from './errors.js';
import type {RequestOptions} from './rest-client.js';

export interface EventSource {
  /** The reporting component (`agent`, `default-scheduler`). */
  component: string;
  /** The node it runs on, for the agent. */
  host?: string;
}

export interface InvolvedObject {
  apiVersion?: string;
  kind: string;
  name: string;
  /** Absent for cluster-scoped objects (their events go to `default`, as upstream's). */
  namespace?: string;
  uid?: string;
  /** The part of the object, e.g. `spec.containers{web}`. */
  fieldPath?: string;
}

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderLogger {
  warning(message: string, ...keysAndValues: unknown[]): void;
}

export interface EventRecorderOptions {
  client: {request(o: RequestOptions): Promise<unknown>};
  source: EventSource;
  /** Events written per second; 0 or less: no limit. */
  qps: number;
  burst: number;
  /** Wall-clock time for the event timestamps (ms since the epoch). */
  now?: () => number;
  /** The limiter's time and the retry waits. */
  limiterClock?: LimiterClock;
  log?: EventRecorderLogger;
  maxQueued?: number;
  /** Attempts per write before the event is dropped (client-go: 12). */
  maxAttempts?: number;
  retryDelayMs?: number;
}

interface Aggregate {
  name: string;
  namespace: string;
  count: number;
  firstTimestamp: string;
}

interface Pending {
  object: InvolvedObject;
  type: EventType;
  reason: string;
  message: string;
  at: number;
}

/** Upstream bounds its correlation cache at 4096 entries. */
const MAX_AGGREGATES = 4096;

export class EventRecorder {
  private readonly queue: Pending[] = [];
  private readonly aggregates = new Map<string, Aggregate>();
  private readonly limiter: RateLimiter;
  private readonly now: () => number;
  private readonly clock: LimiterClock;
  private draining?: Promise<void>;
  private closed = false;
  private sequence = 0;
  /** Events dropped because the queue was full. */
  dropped = 0;
  /** Events written (created or counted up). */
  written = 0;

  constructor(private readonly options: EventRecorderOptions) {
    this.clock = options.limiterClock ?? systemLimiterClock;
    this.limiter = createRateLimiter({qps: options.qps, burst: Math.max(1, options.burst), clock: this.clock});
    this.now = options.now ?? Date.now;
  }

  /** Queues one event; returns at once. */
  event(object: InvolvedObject, type: EventType, reason: string, message: string): void {
    if (this.closed) return;
    if (this.queue.length >= (this.options.maxQueued ?? 1000)) {
      if (this.dropped++ === 0) this.options.log?.warning('Event queue full, dropping events', 'reason', reason, 'object', `${object.kind}/${object.name}`);
      return;
    }
    this.queue.push({object, type, reason, message, at: this.now()});
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  /** Resolves once every queued event has been written or dropped. */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Stops recording; queued events not yet sent are dropped. */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
  }

  private async drain(): Promise<void> {
    for (let next = this.queue.shift(); next && !this.closed; next = this.queue.shift()) {
      await this.limiter.acquire();
      if (this.closed) return;
      await this.write(next);
    }
  }

  private async write(event: Pending): Promise<void> {
    const key = aggregateKey(this.options.source, event);
    const timestamp = rfc3339(event.at);
    const known = this.aggregates.get(key);
    const maxAttempts = this.options.maxAttempts ?? 12;
    for (let attempt = 1; ; attempt++) {
      try {
        if (known) {
          known.count++;
          try {
            await this.options.client.request({
              method: 'PATCH',
              path: eventPath(known.namespace, known.name),
              contentType: 'application/merge-patch+json',
              body: {count: known.count, lastTimestamp: timestamp},
            });
          } catch (error) {
            if (statusCode(error) !== 404) {
              known.count--;
              throw error;
            }
            // The event expired (--event-ttl): write it again, keeping its count.
            await this.create(event, known, timestamp);
          }
        } else {
          const created: Aggregate = {name: this.eventName(event), namespace: event.object.namespace || 'default', count: 1, firstTimestamp: timestamp};
          await this.create(event, created, timestamp);
          this.remember(key, created);
        }
        this.written++;
        return;
      } catch (error) {
        if (!retryable(error) || attempt >= maxAttempts || this.closed) {
          this.options.log?.warning('Could not record an event', 'reason', event.reason, 'object', `${event.object.kind}/${event.object.name}`, 'err', String(error));
          return;
        }
        await this.clock.sleep(this.options.retryDelayMs ?? 10_000);
      }
    }
  }

  private async create(event: Pending, aggregate: Aggregate, lastTimestamp: string): Promise<void> {
    const {component, host} = this.options.source;
    await this.options.client.request({
      method: 'POST',
      path: eventPath(aggregate.namespace, ''),
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: {name: aggregate.name, namespace: aggregate.namespace},
        involvedObject: {...event.object},
        reason: event.reason,
        message: event.message,
        source: host ? {component, host} : {component},
        firstTimestamp: aggregate.firstTimestamp,
        lastTimestamp,
        count: aggregate.count,
        type: event.type,
        reportingComponent: component,
        reportingInstance: host ?? '',
      },
    });
  }

  /** Upstream's name: the object's name, a dot, and the time in nanoseconds in hex (unique per recorder). */
  private eventName(event: Pending): string {
    const nanos = BigInt(Math.floor(event.at)) * 1_000_000n + BigInt(this.sequence++ % 1_000_000);
    return `${event.object.name}.${nanos.toString(16)}`;
  }

  private remember(key: string, aggregate: Aggregate): void {
    if (this.aggregates.size >= MAX_AGGREGATES) this.aggregates.delete(this.aggregates.keys().next().value!);
    this.aggregates.set(key, aggregate);
  }
}

function aggregateKey(source: EventSource, e: Pending): string {
  const o = e.object;
  return JSON.stringify([source.component, source.host ?? '', o.kind, o.namespace ?? '', o.name, o.uid ?? '', o.fieldPath ?? '', e.type, e.reason, e.message]);
}

function eventPath(namespace: string, name: string): string {
  const base = `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
  return name ? `${base}/${encodeURIComponent(name)}` : base;
}

/** The HTTP status of an API answer; undefined when there was none (no connection). */
function statusCode(error: unknown): number | undefined {
  return error instanceof ApiStatusError ? error.code : undefined;
}

/** No answer, an overloaded or failing server: worth another try. A refusal (4xx) is not. */
function retryable(error: unknown): boolean {
  const code = statusCode(error);
  return code === undefined || code === 429 || code >= 500;
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
