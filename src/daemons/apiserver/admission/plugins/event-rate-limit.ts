/**
 * EventRateLimit (upstream's plugin/pkg/admission/eventratelimit): token buckets on the writes of
 * core Events, one bucket for the whole server (Server), or one per namespace, user, or
 * source-and-involved-object kept in an LRU cache of `cacheSize` buckets (default 4096; an evicted
 * bucket comes back full). Every configured limit takes its token; any empty bucket refuses the
 * event with upstream's 429 "Too many requests: limit reached on type <type> for key <key>".
 * Buckets refill on the plugin's clock, so tests walk time instead of sleeping.
 */
import {names} from '../../../../api/names.js';
import {tooManyRequests} from '../../../../api/status.js';
import type {JsonObject, JsonValue} from '../../../../patch/types.js';
import type {Clock} from '../../../shared/clock.js';
import {TokenBucket} from '../../lifecycle/token-bucket.js';
import type {AdmissionAttributes, AdmissionPlugin, AdmissionPluginContext} from '../interfaces.js';

export type LimitType = 'Server' | 'Namespace' | 'User' | 'SourceAndObject';
export const LIMIT_TYPES: readonly LimitType[] = ['Server', 'Namespace', 'User', 'SourceAndObject'];

export interface EventLimit {
  type: LimitType;
  qps: number;
  burst: number;
  cacheSize: number;
}

export const DEFAULT_CACHE_SIZE = 4096;

const isObject = (v: JsonValue | undefined): v is JsonObject => Boolean(v) && typeof v === 'object' && !Array.isArray(v);
const obj = (v: JsonValue | undefined): JsonObject => (isObject(v) ? v : {});
const str = (v: JsonValue | undefined): string => (typeof v === 'string' ? v : '');

/**
 * The configuration (`eventratelimit.admission.<domain>/v1alpha1`, kind Configuration), validated as
 * upstream's ValidateConfiguration: at least one limit; each with a known type, positive qps and
 * burst, a cacheSize not negative. Throws an Error naming the plugin, the source and every problem.
 */
export function parseEventRateLimitConfiguration(configuration: JsonObject | undefined, source = 'configuration'): EventLimit[] {
  const problems: string[] = [];
  const apiVersion = `eventratelimit.admission.${names().domain}/v1alpha1`;
  if (!configuration) {
    // Upstream needs a configuration: without one there is no limit, which its validation refuses.
    throw new Error(`admission plugin EventRateLimit: ${source}: a configuration is required (${apiVersion} Configuration with at least one limit)`);
  }
  if (configuration.apiVersion !== apiVersion || configuration.kind !== 'Configuration') {
    problems.push(`no kind ${JSON.stringify(configuration.kind ?? '')} is registered for version ${JSON.stringify(configuration.apiVersion ?? '')}; expected ${apiVersion} Configuration`);
  }
  for (const key of Object.keys(configuration)) if (!['apiVersion', 'kind', 'limits'].includes(key)) problems.push(`unknown field "${key}"`);
  const list = Array.isArray(configuration.limits) ? configuration.limits : [];
  if (list.length === 0) problems.push('limits: Invalid value: null: must not be empty');
  const limits = list.map((entry, i): EventLimit => {
    const path = `limits[${i}]`;
    const limit = obj(entry);
    for (const key of Object.keys(limit)) if (!['type', 'qps', 'burst', 'cacheSize'].includes(key)) problems.push(`unknown field "${path}.${key}"`);
    const type = str(limit.type) as LimitType;
    if (!LIMIT_TYPES.includes(type)) {
      problems.push(`${path}.type: Unsupported value: ${JSON.stringify(limit.type ?? '')}: supported values: ${LIMIT_TYPES.map((t) => `"${t}"`).join(', ')}`);
    }
    const integer = (field: string): number => {
      const value = limit[field];
      if (value === undefined) return 0;
      if (typeof value !== 'number' || !Number.isInteger(value)) {
        problems.push(`${path}.${field}: must be an integer, got ${JSON.stringify(value)}`);
        return 0;
      }
      return value;
    };
    const qps = integer('qps');
    const burst = integer('burst');
    const cacheSize = integer('cacheSize');
    if (burst <= 0) problems.push(`${path}.burst: Invalid value: ${burst}: must be positive`);
    if (qps <= 0) problems.push(`${path}.qps: Invalid value: ${qps}: must be positive`);
    if (type !== 'Server' && cacheSize < 0) problems.push(`${path}.cacheSize: Invalid value: ${cacheSize}: must not be negative`);
    return {type, qps, burst, cacheSize: cacheSize === 0 ? DEFAULT_CACHE_SIZE : cacheSize};
  });
  if (problems.length) throw new Error(`admission plugin EventRateLimit: ${source}: ${problems.join('; ')}`);
  return limits;
}

/** The bucket key of an event write for a limit type (upstream's key functions). */
export function limitKey(type: LimitType, attributes: Pick<AdmissionAttributes, 'namespace' | 'user' | 'object'>): string {
  switch (type) {
    case 'Server':
      return '';
    case 'Namespace':
      return attributes.namespace;
    case 'User':
      return attributes.user?.name ?? '';
    case 'SourceAndObject': {
      const event = attributes.object;
      if (!event) return '';
      const source = obj(event.source);
      const involved = obj(event.involvedObject);
      return [source.component, source.host, involved.kind, involved.namespace, involved.name, involved.uid, involved.apiVersion].map(str).join('');
    }
  }
}

/** Buckets by key, least recently used evicted first (a Map keeps insertion order: re-inserting on use moves a key last). */
class BucketCache {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(private readonly size: number, private readonly create: () => TokenBucket) {}

  get(key: string): TokenBucket {
    let bucket = this.buckets.get(key);
    if (bucket) this.buckets.delete(key);
    else bucket = this.create();
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.size) this.buckets.delete(this.buckets.keys().next().value as string);
    return bucket;
  }
}

class LimitEnforcer {
  private readonly cache: BucketCache;

  constructor(readonly limit: EventLimit) {
    // Server has one bucket whatever the key.
    this.cache = new BucketCache(limit.type === 'Server' ? 1 : limit.cacheSize, () => new TokenBucket(limit.qps, limit.burst));
  }

  /** Takes a token; the refusal when the bucket is empty. */
  accept(attributes: AdmissionAttributes, now: number): Error | undefined {
    const key = limitKey(this.limit.type, attributes);
    if (this.cache.get(key).allow(now)) return undefined;
    return tooManyRequests(`limit reached on type ${this.limit.type} for key ${key}`);
  }
}

export class EventRateLimit implements AdmissionPlugin {
  readonly name = 'EventRateLimit';
  private readonly enforcers: LimitEnforcer[];

  constructor(limits: readonly EventLimit[], private readonly clock: Pick<Clock, 'now'>) {
    this.enforcers = limits.map((limit) => new LimitEnforcer(limit));
  }

  handles(operation: AdmissionAttributes['operation']): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  validate(attributes: AdmissionAttributes): void {
    if (attributes.resource.group !== '' || attributes.resource.kind !== 'Event') return;
    const now = this.clock.now();
    let refusal: Error | undefined;
    // Every enforcer takes its token, even after one refused, as upstream's loop does.
    for (const enforcer of this.enforcers) refusal = enforcer.accept(attributes, now) ?? refusal;
    if (refusal) throw refusal;
  }
}

export function createEventRateLimit(context: AdmissionPluginContext): EventRateLimit {
  return new EventRateLimit(parseEventRateLimitConfiguration(context.configuration, context.configurationSource), context.clock);
}
