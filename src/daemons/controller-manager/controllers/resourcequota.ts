/**
 * The `resourcequota` controller (upstream's pkg/controller/resourcequota): recomputes every
 * quota's usage from what is stored and writes status.hard (a copy of spec.hard) and status.used.
 * A quota is synced when it is created or its spec.hard changes, when an object it counts is
 * deleted or changes what it uses (a pod that finished frees its compute: upstream's quota
 * monitor's replenishment), and every --resource-quota-sync-period for all quotas, by
 * --concurrent-resource-quota-syncs workers. Admission charges usage as writes arrive; this
 * controller gives it back. Status writes carry the cached resourceVersion, so a charge admission
 * made meanwhile is never overwritten with an older count (409, retried once the caches caught up).
 */
import {ApiStatusError} from '../../../client/errors.js';
import {
  deletedObject, NAMESPACE_INDEX, namespaceIndexFunc, RateLimitingQueue, realClock, resourcePath,
  type ApiObject, type ResourceRef, type SharedIndexInformer, type TimerClock,
} from '../../../client/informers/index.js';
import type {JsonObject, JsonValue} from '../../../patch/types.js';
import {
  builtinEvaluators, objectCountEvaluator, scopeSelectorsOf, type QuotaEvaluator,
} from '../../shared/quota/evaluators.js';
import {add, equals, formatResourceList, mask, parseResourceList, type ResourceList} from '../../shared/quota/resources.js';
import {runQueueWorkers} from './queue-workers.js';
import type {ControllerContext, ControllerDescriptor, RunningController} from './types.js';

export const RESOURCE_QUOTAS: ResourceRef = {group: '', version: 'v1', resource: 'resourcequotas'};

type Quota = ApiObject & JsonObject;

const objectKey = (object: ApiObject): string => `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

const obj = (v: JsonValue | undefined): JsonObject => (v && typeof v === 'object' && !Array.isArray(v) ? v : {});

/** `count/<resource>` or `count/<resource>.<group>` as group and resource. */
export function parseObjectCountName(name: string): {group: string; resource: string} | undefined {
  const match = /^count\/([^.]+)(?:\.(.+))?$/.exec(name);
  return match ? {resource: match[1]!, group: match[2] ?? ''} : undefined;
}

/**
 * The evaluators a quota needs: the built-in ones, plus an object count for each `count/<resource>`
 * it limits that none of them tracks (upstream's quota monitor has one for every listable resource).
 */
export function evaluatorsFor(hardNames: readonly string[]): QuotaEvaluator[] {
  const builtins = builtinEvaluators();
  const extra = hardNames
    .filter((name) => !builtins.some((e) => e.matchingResources([name]).length > 0))
    .map(parseObjectCountName)
    .filter((gr): gr is {group: string; resource: string} => gr !== undefined)
    .map((gr) => objectCountEvaluator(gr.group, gr.resource));
  return [...builtins, ...extra];
}

/**
 * Pure: the usage of a quota from the objects of its namespace (upstream's CalculateUsage and
 * CalculateUsageStats): every limited name the evaluators track starts at zero, and each object
 * in all of the quota's scopes adds what it uses. `objectsOf` lists the namespace's objects of an
 * evaluator's resource; undefined when they cannot be listed (that evaluator's names keep their
 * previous usage).
 */
export function calculateUsage(
  quota: JsonObject,
  objectsOf: (evaluator: QuotaEvaluator) => JsonObject[] | undefined,
  now: number,
  evaluators: readonly QuotaEvaluator[] = evaluatorsFor(Object.keys(parseResourceList(obj(quota.spec).hard))),
): ResourceList {
  const hardNames = Object.keys(parseResourceList(obj(quota.spec).hard));
  const scopes = scopeSelectorsOf(quota);
  let usage: ResourceList = {};
  for (const evaluator of evaluators) {
    const tracked = evaluator.matchingResources(hardNames);
    if (tracked.length === 0) continue;
    const objects = objectsOf(evaluator);
    if (!objects) continue;
    let used: ResourceList = Object.fromEntries(tracked.map((name) => [name, {milli: 0n, format: 'DecimalSI' as const}]));
    for (const object of objects) {
      let inScope: boolean;
      try {
        inScope = scopes.every((scope) => evaluator.matchesScope(scope, object));
      } catch {
        // Upstream stops counting this evaluator's objects at a scope it cannot evaluate.
        break;
      }
      if (inScope) used = add(used, evaluator.usage(object, now));
    }
    usage = add(usage, mask(used, tracked));
  }
  return usage;
}

/**
 * Pure: the status the quota should have (upstream's syncResourceQuota): hard mirrors spec.hard,
 * used is the previous usage overlaid with the new count, masked to the hard names; undefined
 * when the stored status already says so.
 */
export function desiredStatus(quota: JsonObject, newUsage: ResourceList): {hard: Record<string, string>; used: Record<string, string>} | undefined {
  const status = obj(quota.status);
  const specHard = parseResourceList(obj(quota.spec).hard);
  const previous = parseResourceList(status.used);
  const used = mask({...previous, ...newUsage}, Object.keys(specHard));
  const statusHard = parseResourceList(status.hard);
  const dirty = status.hard === undefined || status.used === undefined || !equals(specHard, statusHard) || !equals(used, previous);
  return dirty ? {hard: formatResourceList(specHard), used: formatResourceList(used)} : undefined;
}

/**
 * Pure: the quota's status does not cover its spec yet (a hard limit not mirrored, or one without
 * usage that some evaluator can count): upstream's test for the priority queue.
 */
export function lacksUsage(quota: JsonObject): boolean {
  const spec = parseResourceList(obj(quota.spec).hard);
  const status = obj(quota.status);
  if (status.hard === undefined || !equals(spec, parseResourceList(status.hard))) return true;
  const used = parseResourceList(status.used);
  const evaluators = evaluatorsFor(Object.keys(spec));
  return Object.keys(spec).some((name) => !used[name] && evaluators.some((e) => e.matchingResources([name]).length > 0));
}

/** The duration option in ms (`{ms}` as the option parser gives it). */
function durationMs(options: Record<string, unknown>, name: string, fallback: number): number {
  const value = options[name] as {ms?: unknown} | undefined;
  return typeof value?.ms === 'number' ? value.ms : fallback;
}

export interface ResourceQuotaControllerOptions {
  /** Timers of the full resync and of the queue's back-off (tests pass a FakeClock). */
  clock?: TimerClock;
}

export function startResourceQuotaController(ctx: ControllerContext, signal: AbortSignal, options: ResourceQuotaControllerOptions = {}): RunningController {
  const clock = options.clock ?? realClock;
  const workers = Math.max(1, Number(ctx.options['concurrent-resource-quota-syncs'] ?? 5));
  const syncPeriodMs = durationMs(ctx.options, 'resource-quota-sync-period', 5 * 60_000);
  const queue = new RateLimitingQueue<string>({name: 'resourcequota_primary', metrics: ctx.metrics, clock});
  // Quotas whose status lacks what their spec asks for go first (upstream's missingUsageQueue): a
  // new quota blocks the pods of its namespace ("status unknown") until it has usage.
  const missingUsage = new RateLimitingQueue<string>({name: 'resourcequota_priority', metrics: ctx.metrics, clock});
  const indexers = {[NAMESPACE_INDEX]: namespaceIndexFunc};
  const quotas = ctx.informers.informerFor<Quota>(RESOURCE_QUOTAS, {indexers});
  const stats = {syncs: 0, statusWrites: 0};

  /** Informers of the counted kinds, by `group/resource`. */
  const monitors = new Map<string, SharedIndexInformer<Quota>>();
  const addQuota = (quota: Quota) => (lacksUsage(quota) ? missingUsage : queue).add(objectKey(quota));
  const registrations = [
    quotas.addEventHandler({
      onAdd: addQuota,
      // Status writes (admission's charges, ours) do not call for a recount; a new spec.hard does.
      onUpdate: (old, quota) => {
        if (!equals(parseResourceList(obj(old.spec).hard), parseResourceList(obj(quota.spec).hard))) addQuota(quota);
      },
    }),
  ];

  /** Upstream's replenishQuota: recount the namespace's quotas that limit something this kind uses. */
  const replenish = (evaluator: QuotaEvaluator, namespace: string | undefined) => {
    if (!namespace) return;
    for (const quota of quotas.indexer.byIndex(NAMESPACE_INDEX, namespace)) {
      if (evaluator.matchingResources(Object.keys(parseResourceList(obj(quota.status).hard))).length > 0) queue.add(objectKey(quota));
    }
  };

  const monitor = (evaluator: QuotaEvaluator, version: string): SharedIndexInformer<Quota> => {
    const key = `${evaluator.group}/${evaluator.resource}`;
    let informer = monitors.get(key);
    if (informer) return informer;
    informer = ctx.informers.informerFor<Quota>({group: evaluator.group, version, resource: evaluator.resource}, {indexers});
    monitors.set(key, informer);
    registrations.push(
      informer.addEventHandler({
        onUpdate: (old, object) => {
          const now = ctx.now();
          if (!equals(evaluator.usage(old, now), evaluator.usage(object, now))) replenish(evaluator, object.metadata?.namespace);
        },
        onDelete: (object) => replenish(evaluator, deletedObject(object).metadata?.namespace),
      }),
    );
    return informer;
  };
  for (const evaluator of builtinEvaluators()) monitor(evaluator, 'v1');

  /** An informer for a `count/<resource>.<group>` a quota names, found through discovery; undefined if not served. */
  const monitorFor = async (evaluator: QuotaEvaluator): Promise<SharedIndexInformer<Quota> | undefined> => {
    const existing = monitors.get(`${evaluator.group}/${evaluator.resource}`);
    if (existing) return existing;
    const mapper = await ctx.client.discover();
    const mapping = mapper.resources.find((r) => r.group === evaluator.group && r.resource === evaluator.resource && r.namespaced);
    if (!mapping) return undefined;
    const informer = monitor(evaluator, mapping.version);
    ctx.informers.start();
    await informer.waitForSync({signal});
    return informer;
  };

  const sync = async (key: string): Promise<void> => {
    const quota = quotas.indexer.getByKey(key);
    if (!quota) return;
    stats.syncs++;
    const namespace = quota.metadata?.namespace ?? '';
    const evaluators = evaluatorsFor(Object.keys(parseResourceList(obj(quota.spec).hard)));
    const listed = new Map<QuotaEvaluator, JsonObject[] | undefined>();
    for (const evaluator of evaluators) {
      const informer = await monitorFor(evaluator);
      listed.set(evaluator, informer?.indexer.byIndex(NAMESPACE_INDEX, namespace));
    }
    const status = desiredStatus(quota, calculateUsage(quota, (e) => listed.get(e), ctx.now(), evaluators));
    if (!status) return;
    const body = {...quota, status: {...obj(quota.status), ...status}};
    const path = `${resourcePath({...RESOURCE_QUOTAS, namespace})}/${encodeURIComponent(quota.metadata?.name ?? '')}/status`;
    try {
      await ctx.client.request({method: 'PUT', path, body});
      stats.statusWrites++;
    } catch (error) {
      // Gone meanwhile: nothing to count. A conflict is retried with back-off, after the caches caught up.
      if (error instanceof ApiStatusError && error.code === 404) return;
      throw error;
    }
  };

  // --resource-quota-sync-period: a full recount of every quota (upstream's enqueueAll).
  let resync: ReturnType<TimerClock['setTimer']> | undefined;
  const scheduleResync = () => {
    if (syncPeriodMs <= 0 || signal.aborted) return;
    resync = clock.setTimer(() => {
      for (const quota of quotas.indexer.list()) queue.add(objectKey(quota));
      scheduleResync();
    }, syncPeriodMs);
  };
  scheduleResync();
  signal.addEventListener('abort', () => resync?.cancel(), {once: true});

  const done = Promise.all([
    runQueueWorkers({ctx, signal, queue, workers, sync, name: 'resourcequota', registrations}),
    runQueueWorkers({ctx, signal, queue: missingUsage, workers, sync, name: 'resourcequota', registrations: []}),
  ]).then(() => undefined);
  return {
    done,
    snapshot: () => ({name: 'resourcequota', workers, queueDepth: queue.len() + missingUsage.len(), details: {quotas: quotas.indexer.size, syncs: stats.syncs, statusWrites: stats.statusWrites}}),
  };
}

export const resourceQuotaController: ControllerDescriptor = {
  name: 'resourcequota',
  enabledByDefault: true,
  start: (ctx, signal) => startResourceQuotaController(ctx, signal),
};
