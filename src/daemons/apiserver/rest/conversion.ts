/**
 * Conversion between the served versions of a resource and the version it is stored in, for the
 * built-in resources served under more than one shape (upstream's conversion functions):
 * - autoscaling/v1 HorizontalPodAutoscaler <-> autoscaling/v2 (stored): what v1 cannot say (other
 *   metrics, their statuses, conditions, behavior) round-trips through upstream's
 *   `autoscaling.alpha.<labelDomain>/*` annotations, as pkg/apis/autoscaling/v1/conversion.go does;
 * - events/v1 Event <-> core v1 Event (stored): renamed fields;
 * - resource/v1beta1 DRA kinds <-> resource/v1 (stored): conversion-dra.ts;
 * - the betas with the GA schema (storage/v1beta1, networking/v1beta1, resource/v1beta2): as is.
 * Pure: objects in, new objects out.
 */
import type {ResourceInfo} from '../../../api/resources.js';
import {names} from '../../../api/names.js';
import {isJsonObject, type JsonObject, type JsonValue} from '../../../patch/types.js';
import {convertDra, DRA_KINDS} from './conversion-dra.js';
import {deepCopy} from './objects.js';

type GVK = {group: string; version: string; kind: string};

const apiVersionOf = (gvk: {group: string; version: string}) => (gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version);

/** The stored shape of an object served as `info` (unchanged when the resource has no other storage version). */
export function toStorage(info: ResourceInfo, object: JsonObject): JsonObject {
  const target = info.storageVersion;
  if (!target) return object;
  return convert(object, info, target);
}

/** The object as served by `info`, from its stored shape. */
export function fromStorage(info: ResourceInfo, object: JsonObject): JsonObject {
  const source = info.storageVersion;
  if (!source) return object;
  return convert(object, source, info);
}

function convert(object: JsonObject, from: GVK, to: GVK): JsonObject {
  let out: JsonObject;
  if (from.kind === 'HorizontalPodAutoscaler') out = from.version === 'v1' ? hpaV1ToV2(object) : hpaV2ToV1(object);
  else if (from.kind === 'Event') out = from.group === '' ? coreEventToEvents(object) : eventsToCoreEvent(object);
  else if (DRA_KINDS.has(from.kind) && from.group === names().groups.resource && (from.version === 'v1beta1') !== (to.version === 'v1beta1')) {
    out = convertDra(from.kind, object, from.version === 'v1beta1' ? 'toV1' : 'fromV1');
  }
  else out = deepCopy(object);
  return {apiVersion: apiVersionOf(to), kind: to.kind, ...withoutTypeMeta(out)};
}

function withoutTypeMeta(object: JsonObject): JsonObject {
  const {apiVersion: _a, kind: _k, ...rest} = object;
  return rest;
}

const obj = (v: JsonValue | undefined): JsonObject | undefined => (isJsonObject(v) ? v : undefined);
const arr = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);
/** Copies the keys that are set, renaming them: [from, to] pairs or same-named keys. */
function pick(source: JsonObject | undefined, keys: (string | [string, string])[]): JsonObject {
  const out: JsonObject = {};
  if (!source) return out;
  for (const key of keys) {
    const [from, to] = typeof key === 'string' ? [key, key] : key;
    if (source[from] !== undefined) out[to] = deepCopy(source[from]!);
  }
  return out;
}

// -------------------------------------------------------------------------------------------------
// Events: core/v1 <-> events/v1 (pkg/apis/events/v1 conversion).

const EVENT_RENAMES: [string, string][] = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['reportingComponent', 'reportingController'],
];
const EVENT_SAME = ['metadata', 'eventTime', 'series', 'action', 'reason', 'related', 'type', 'reportingInstance'];

function coreEventToEvents(event: JsonObject): JsonObject {
  return pick(event, [...EVENT_SAME, ...EVENT_RENAMES]);
}

function eventsToCoreEvent(event: JsonObject): JsonObject {
  const out = pick(event, [...EVENT_SAME, ...EVENT_RENAMES.map(([core, v1]): [string, string] => [v1, core])]);
  // Core events always carry these (Go's non-pointer structs), so clients reading either shape agree.
  if (out.involvedObject === undefined) out.involvedObject = {};
  if (out.source === undefined) out.source = {};
  return out;
}

// -------------------------------------------------------------------------------------------------
// HorizontalPodAutoscaler: autoscaling/v1 <-> autoscaling/v2.

function hpaAnnotations() {
  const prefix = `autoscaling.alpha.${names().labelDomain}`;
  return {
    metrics: `${prefix}/metrics`,
    currentMetrics: `${prefix}/current-metrics`,
    conditions: `${prefix}/conditions`,
    behavior: `${prefix}/behavior`,
  };
}

/** Upstream's DefaultCPUUtilization: v1 objects without a target scale on 80% CPU. */
export const DEFAULT_CPU_UTILIZATION = 80;

const isCpuUtilization = (metric: JsonValue): boolean =>
  isJsonObject(metric) && metric.type === 'Resource' && obj(metric.resource)?.name === 'cpu' &&
  typeof obj(obj(metric.resource)?.target)?.averageUtilization === 'number';

/** A v2 MetricTarget's fields as the v1 (v2beta1-style) `target*` fields. */
function v1TargetFields(target: JsonObject | undefined, kind: 'average' | 'object' | 'external'): JsonObject {
  const out: JsonObject = {};
  if (!target) return out;
  if (kind === 'average') {
    if (target.averageUtilization !== undefined) out.targetAverageUtilization = target.averageUtilization;
    if (target.averageValue !== undefined) out.targetAverageValue = target.averageValue;
  } else if (kind === 'object') {
    if (target.value !== undefined) out.targetValue = target.value;
    if (target.averageValue !== undefined) out.averageValue = target.averageValue;
  } else {
    if (target.value !== undefined) out.targetValue = target.value;
    if (target.averageValue !== undefined) out.targetAverageValue = target.averageValue;
  }
  return out;
}

function v2MetricToV1(metric: JsonObject): JsonObject {
  const out: JsonObject = {type: metric.type ?? ''};
  const r = obj(metric.resource);
  const cr = obj(metric.containerResource);
  const p = obj(metric.pods);
  const o = obj(metric.object);
  const e = obj(metric.external);
  if (r) out.resource = {name: r.name ?? '', ...v1TargetFields(obj(r.target), 'average')};
  if (cr) out.containerResource = {name: cr.name ?? '', container: cr.container ?? '', ...v1TargetFields(obj(cr.target), 'average')};
  if (p) {
    out.pods = {metricName: obj(p.metric)?.name ?? '', ...v1TargetFields(obj(p.target), 'average')};
    delete (out.pods as JsonObject).targetAverageUtilization;
    if (obj(p.metric)?.selector !== undefined) (out.pods as JsonObject).selector = deepCopy(obj(p.metric)!.selector!);
  }
  if (o) {
    out.object = {target: deepCopy(o.describedObject ?? {}), metricName: obj(o.metric)?.name ?? '', ...v1TargetFields(obj(o.target), 'object')};
    if (obj(o.metric)?.selector !== undefined) (out.object as JsonObject).selector = deepCopy(obj(o.metric)!.selector!);
  }
  if (e) {
    out.external = {metricName: obj(e.metric)?.name ?? '', ...v1TargetFields(obj(e.target), 'external')};
    if (obj(e.metric)?.selector !== undefined) (out.external as JsonObject).metricSelector = deepCopy(obj(e.metric)!.selector!);
  }
  return out;
}

/** A v1 MetricSpec's `target*` fields as a v2 MetricTarget (its type from which one is set). */
function v2Target(source: JsonObject, kind: 'average' | 'object' | 'external'): JsonObject {
  if (kind === 'average') {
    if (source.targetAverageUtilization !== undefined) return {type: 'Utilization', averageUtilization: source.targetAverageUtilization};
    return {type: 'AverageValue', ...(source.targetAverageValue !== undefined ? {averageValue: source.targetAverageValue} : {})};
  }
  const average = kind === 'object' ? source.averageValue : source.targetAverageValue;
  if (average !== undefined) return {type: 'AverageValue', averageValue: average};
  return {type: 'Value', ...(source.targetValue !== undefined ? {value: source.targetValue} : {})};
}

function metricIdentifier(name: JsonValue | undefined, selector: JsonValue | undefined): JsonObject {
  return {name: name ?? '', ...(selector !== undefined ? {selector: deepCopy(selector)} : {})};
}

function v1MetricToV2(metric: JsonObject): JsonObject {
  const out: JsonObject = {type: metric.type ?? ''};
  const r = obj(metric.resource);
  const cr = obj(metric.containerResource);
  const p = obj(metric.pods);
  const o = obj(metric.object);
  const e = obj(metric.external);
  if (r) out.resource = {name: r.name ?? '', target: v2Target(r, 'average')};
  if (cr) out.containerResource = {name: cr.name ?? '', container: cr.container ?? '', target: v2Target(cr, 'average')};
  if (p) out.pods = {metric: metricIdentifier(p.metricName, p.selector), target: v2Target(p, 'average')};
  if (o) out.object = {describedObject: deepCopy(o.target ?? {}), metric: metricIdentifier(o.metricName, o.selector), target: v2Target(o, 'object')};
  if (e) out.external = {metric: metricIdentifier(e.metricName, e.metricSelector), target: v2Target(e, 'external')};
  return out;
}

function v2StatusToV1(status: JsonObject): JsonObject {
  const out: JsonObject = {type: status.type ?? ''};
  const current = (s: JsonObject | undefined) => obj(s?.current) ?? {};
  const r = obj(status.resource);
  const cr = obj(status.containerResource);
  const p = obj(status.pods);
  const o = obj(status.object);
  const e = obj(status.external);
  const averages = (c: JsonObject) => ({
    ...(c.averageUtilization !== undefined ? {currentAverageUtilization: c.averageUtilization} : {}),
    currentAverageValue: c.averageValue ?? '0',
  });
  if (r) out.resource = {name: r.name ?? '', ...averages(current(r))};
  if (cr) out.containerResource = {name: cr.name ?? '', container: cr.container ?? '', ...averages(current(cr))};
  if (p) out.pods = {metricName: obj(p.metric)?.name ?? '', currentAverageValue: current(p).averageValue ?? '0', ...pick(obj(p.metric), ['selector'])};
  if (o) {
    out.object = {
      target: deepCopy(o.describedObject ?? {}), metricName: obj(o.metric)?.name ?? '', currentValue: current(o).value ?? '0',
      ...pick(obj(o.metric), ['selector']), ...pick(current(o), ['averageValue']),
    };
  }
  if (e) {
    out.external = {
      metricName: obj(e.metric)?.name ?? '', currentValue: current(e).value ?? '0',
      ...pick(obj(e.metric), [['selector', 'metricSelector']]), ...pick(current(e), [['averageValue', 'currentAverageValue']]),
    };
  }
  return out;
}

function v1StatusToV2(status: JsonObject): JsonObject {
  const out: JsonObject = {type: status.type ?? ''};
  const r = obj(status.resource);
  const cr = obj(status.containerResource);
  const p = obj(status.pods);
  const o = obj(status.object);
  const e = obj(status.external);
  const averages = (s: JsonObject) => pick(s, [['currentAverageUtilization', 'averageUtilization'], ['currentAverageValue', 'averageValue']]);
  if (r) out.resource = {name: r.name ?? '', current: averages(r)};
  if (cr) out.containerResource = {name: cr.name ?? '', container: cr.container ?? '', current: averages(cr)};
  if (p) out.pods = {metric: metricIdentifier(p.metricName, p.selector), current: pick(p, [['currentAverageValue', 'averageValue']])};
  if (o) out.object = {describedObject: deepCopy(o.target ?? {}), metric: metricIdentifier(o.metricName, o.selector), current: pick(o, [['currentValue', 'value'], 'averageValue'])};
  if (e) out.external = {metric: metricIdentifier(e.metricName, e.metricSelector), current: pick(e, [['currentValue', 'value'], ['currentAverageValue', 'averageValue']])};
  return out;
}

function parseAnnotation(annotations: JsonObject, key: string): JsonValue | undefined {
  const text = annotations[key];
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined; // upstream ignores a bad round-trip annotation
  }
}

function hpaV2ToV1(hpa: JsonObject): JsonObject {
  const keys = hpaAnnotations();
  const out = pick(hpa, ['metadata']);
  const meta = obj(out.metadata) ?? (out.metadata = {});
  const annotations: JsonObject = {...(obj(meta.annotations) ?? {})};
  for (const key of Object.values(keys)) delete annotations[key];

  const spec = obj(hpa.spec) ?? {};
  const metrics = arr(spec.metrics);
  const cpu = metrics.find(isCpuUtilization) as JsonObject | undefined;
  out.spec = {
    ...pick(spec, ['scaleTargetRef', 'minReplicas', 'maxReplicas']),
    ...(cpu ? {targetCPUUtilizationPercentage: obj(obj(cpu.resource)?.target)!.averageUtilization!} : {}),
  };
  const others = metrics.filter((m) => !isCpuUtilization(m) && isJsonObject(m)).map((m) => v2MetricToV1(m as JsonObject));
  if (others.length) annotations[keys.metrics] = JSON.stringify(others);
  if (spec.behavior !== undefined) annotations[keys.behavior] = JSON.stringify(spec.behavior);

  const status = obj(hpa.status);
  if (status) {
    const current = arr(status.currentMetrics).filter(isJsonObject) as JsonObject[];
    const cpuStatus = current.find((m) => m.type === 'Resource' && obj(m.resource)?.name === 'cpu' && obj(obj(m.resource)?.current)?.averageUtilization !== undefined);
    out.status = {
      ...pick(status, ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas']),
      ...(cpuStatus ? {currentCPUUtilizationPercentage: obj(obj(cpuStatus.resource)?.current)!.averageUtilization!} : {}),
    };
    if (current.length) annotations[keys.currentMetrics] = JSON.stringify(current.map(v2StatusToV1));
    const conditions = arr(status.conditions);
    if (conditions.length) annotations[keys.conditions] = JSON.stringify(conditions);
  }
  if (Object.keys(annotations).length) meta.annotations = annotations;
  else delete meta.annotations;
  return out;
}

function hpaV1ToV2(hpa: JsonObject): JsonObject {
  const keys = hpaAnnotations();
  const out = pick(hpa, ['metadata']);
  const meta = obj(out.metadata) ?? (out.metadata = {});
  const annotations: JsonObject = {...(obj(meta.annotations) ?? {})};

  const spec = obj(hpa.spec) ?? {};
  const v2spec: JsonObject = pick(spec, ['scaleTargetRef', 'minReplicas', 'maxReplicas']);
  const metrics: JsonValue[] = [];
  const others = parseAnnotation(annotations, keys.metrics);
  if (Array.isArray(others)) for (const m of others) if (isJsonObject(m)) metrics.push(v1MetricToV2(m));
  const cpu = typeof spec.targetCPUUtilizationPercentage === 'number' ? spec.targetCPUUtilizationPercentage : undefined;
  if (cpu !== undefined) metrics.push(cpuMetric(cpu));
  // v1 scaled on 80% CPU implicitly; v2 says so (upstream applies it here, with every metric at hand).
  if (metrics.length === 0) metrics.push(cpuMetric(DEFAULT_CPU_UTILIZATION));
  v2spec.metrics = metrics;
  const behavior = parseAnnotation(annotations, keys.behavior);
  if (isJsonObject(behavior)) v2spec.behavior = behavior;
  out.spec = v2spec;

  const status = obj(hpa.status);
  if (status) {
    const v2status: JsonObject = pick(status, ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas']);
    const current = parseAnnotation(annotations, keys.currentMetrics);
    if (Array.isArray(current)) v2status.currentMetrics = current.filter(isJsonObject).map((s) => v1StatusToV2(s as JsonObject));
    else if (typeof status.currentCPUUtilizationPercentage === 'number') {
      v2status.currentMetrics = [{type: 'Resource', resource: {name: 'cpu', current: {averageUtilization: status.currentCPUUtilizationPercentage}}}];
    }
    const conditions = parseAnnotation(annotations, keys.conditions);
    if (Array.isArray(conditions)) v2status.conditions = conditions;
    out.status = v2status;
  }
  for (const key of Object.values(keys)) delete annotations[key];
  if (Object.keys(annotations).length) meta.annotations = annotations;
  else delete meta.annotations;
  return out;
}

function cpuMetric(utilization: number): JsonObject {
  return {type: 'Resource', resource: {name: 'cpu', target: {type: 'Utilization', averageUtilization: utilization}}};
}
