/**
 * LimitRanger: the LimitRange objects of a namespace give new pods' containers their default
 * requests and limits (recorded in the `<labelDomain>/limit-ranger` annotation), and refuse pods,
 * containers and persistent volume claims outside their min, max and maxLimitRequestRatio, with
 * upstream's messages (plugin/pkg/admission/limitranger). Pods are only looked at on create: their
 * containers' resources cannot change afterwards.
 */
import {names} from '../../../../api/names.js';
import {parseQuantity} from '../../../../options/quantity.js';
import {isJsonObject, type JsonObject, type JsonValue} from '../../../../patch/types.js';
import {formatAmount, parseAmount, type Amount} from '../../../../api/quantities.js';
import {defaultPodRequestsFromLimits} from '../../rest/strategies.js';
import {stringAt} from '../../rest/objects.js';
import type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin, AdmissionPluginContext} from '../interfaces.js';
import {admissionForbidden} from '../errors.js';
import {containersOf, isCoreResource, objectsAt, specOf} from './pod-helpers.js';

type Quantities = Record<string, string>;

const quantitiesAt = (value: JsonValue | undefined): Quantities =>
  isJsonObject(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)])) : {};

/** Upstream's Quantity.String(): the canonical text (`0.5` prints `500m`). */
function canonical(text: string): string {
  try {
    return parseQuantity(text).text;
  } catch {
    return text;
  }
}

function milli(text: string): bigint {
  try {
    return parseAmount(text).milli;
  } catch {
    return 0n;
  }
}

/** A container's resources object, created when missing (defaults are written into it). */
function resourcesOf(container: JsonObject): JsonObject {
  if (!isJsonObject(container.resources)) container.resources = {};
  return container.resources as JsonObject;
}

/** The Container items' defaults: `default` are limits, `defaultRequest` are requests. */
export function containerDefaults(limitRange: JsonObject): {limits: Quantities; requests: Quantities} {
  const out = {limits: {} as Quantities, requests: {} as Quantities};
  for (const item of objectsAt(isJsonObject(limitRange.spec) ? limitRange.spec.limits : undefined)) {
    if (item.type !== 'Container') continue;
    Object.assign(out.requests, quantitiesAt(item.defaultRequest));
    Object.assign(out.limits, quantitiesAt(item.default));
  }
  return out;
}

/** Sets the defaults a container lacks; returns the annotation's parts for it ("cpu request for container app"). */
function mergeContainer(container: JsonObject, defaults: {limits: Quantities; requests: Quantities}, kind: string): string[] {
  const resources = resourcesOf(container);
  const limits = isJsonObject(resources.limits) ? resources.limits : (resources.limits = {});
  const requests = isJsonObject(resources.requests) ? resources.requests : (resources.requests = {});
  const setLimits = Object.keys(defaults.limits).filter((k) => !(k in limits));
  const setRequests = Object.keys(defaults.requests).filter((k) => !(k in requests));
  for (const k of setLimits) (limits as JsonObject)[k] = defaults.limits[k]!;
  for (const k of setRequests) (requests as JsonObject)[k] = defaults.requests[k]!;
  const name = String(container.name ?? '');
  const parts: string[] = [];
  if (setRequests.length) parts.push(`${setRequests.sort().join(', ')} request for ${kind} ${name}`);
  if (setLimits.length) parts.push(`${setLimits.sort().join(', ')} limit for ${kind} ${name}`);
  return parts;
}

/** Upstream's PodMutateLimitFunc: the range's container defaults into every container and init container. */
export function mutatePod(limitRange: JsonObject, pod: JsonObject): void {
  const defaults = containerDefaults(limitRange);
  const spec = specOf(pod);
  const parts: string[] = [];
  for (const {container, list} of containersOf(spec, ['containers', 'initContainers'])) {
    parts.push(...mergeContainer(container, defaults, list === 'containers' ? 'container' : 'init container'));
  }
  if (parts.length === 0) return;
  const meta = isJsonObject(pod.metadata) ? pod.metadata : (pod.metadata = {});
  const annotations = isJsonObject(meta.annotations) ? meta.annotations : (meta.annotations = {});
  annotations[names().podAdmission.limitRangerAnnotation] = `LimitRanger plugin set: ${parts.join('; ')}`;
}

export function minConstraint(type: string, resource: string, enforced: string, requests: Quantities, limits: Quantities): string | undefined {
  const req = requests[resource];
  const lim = limits[resource];
  const min = canonical(enforced);
  if (req === undefined) return `minimum ${resource} usage per ${type} is ${min}.  No request is specified`;
  if (milli(req) < milli(enforced)) return `minimum ${resource} usage per ${type} is ${min}, but request is ${canonical(req)}`;
  if (lim !== undefined && milli(lim) < milli(enforced)) return `minimum ${resource} usage per ${type} is ${min}, but limit is ${canonical(lim)}`;
  return undefined;
}

export function maxConstraint(type: string, resource: string, enforced: string, requests: Quantities, limits: Quantities): string | undefined {
  const req = requests[resource];
  const lim = limits[resource];
  const max = canonical(enforced);
  if (lim === undefined) return `maximum ${resource} usage per ${type} is ${max}.  No limit is specified`;
  if (milli(lim) > milli(enforced)) return `maximum ${resource} usage per ${type} is ${max}, but limit is ${canonical(lim)}`;
  if (req !== undefined && milli(req) > milli(enforced)) return `maximum ${resource} usage per ${type} is ${max}, but request is ${canonical(req)}`;
  return undefined;
}

/** A claim's max applies to what it requests (its limits are not user input). */
export function maxRequestConstraint(type: string, resource: string, enforced: string, requests: Quantities): string | undefined {
  const req = requests[resource];
  const max = canonical(enforced);
  if (req === undefined) return `maximum ${resource} usage per ${type} is ${max}.  No request is specified`;
  if (milli(req) > milli(enforced)) return `maximum ${resource} usage per ${type} is ${max}, but request is ${canonical(req)}`;
  return undefined;
}

export function limitRequestRatioConstraint(type: string, resource: string, enforced: string, requests: Quantities, limits: Quantities): string | undefined {
  const req = requests[resource] === undefined ? 0n : milli(requests[resource]!);
  const lim = limits[resource] === undefined ? 0n : milli(limits[resource]!);
  const ratio = canonical(enforced);
  if (req === 0n) return `${resource} max limit to request ratio per ${type} is ${ratio}, but no request is specified or request is 0`;
  if (lim === 0n) return `${resource} max limit to request ratio per ${type} is ${ratio}, but no limit is specified or limit is 0`;
  const observed = Number(lim) / Number(req);
  if (observed * 1000 > Number(milli(enforced))) {
    return `${resource} max limit to request ratio per ${type} is ${ratio}, but provided ratio is ${observed.toFixed(6)}`;
  }
  return undefined;
}

const add = (list: Record<string, Amount>, more: Quantities) => {
  for (const [k, v] of Object.entries(more)) {
    const amount = safeAmount(v);
    const had = list[k];
    list[k] = had ? {milli: had.milli + amount.milli, format: had.format} : amount;
  }
};
const max = (list: Record<string, Amount>, other: Record<string, Amount>) => {
  for (const [k, v] of Object.entries(other)) if (!list[k] || v.milli > list[k].milli) list[k] = {...v};
};
function safeAmount(text: string): Amount {
  try {
    return parseAmount(text);
  } catch {
    return {milli: 0n, format: 'DecimalSI'};
  }
}

/**
 * Upstream's podRequests / podLimits: the containers' sum, at least the largest init container
 * (restartable init containers, sidecars, count with the containers and under the later init containers).
 */
export function podTotal(pod: JsonObject, which: 'requests' | 'limits'): Quantities {
  const spec = specOf(pod);
  const of = (c: JsonObject) => quantitiesAt(isJsonObject(c.resources) ? c.resources[which] : undefined);
  const total: Record<string, Amount> = {};
  for (const c of objectsAt(spec.containers)) add(total, of(c));
  const sidecars: Record<string, Amount> = {};
  const init: Record<string, Amount> = {};
  for (const c of objectsAt(spec.initContainers)) {
    let effective: Record<string, Amount>;
    if (c.restartPolicy === 'Always') {
      add(total, of(c));
      add(sidecars, of(c));
      effective = sidecars;
    } else {
      effective = {};
      add(effective, of(c));
      for (const [k, v] of Object.entries(sidecars)) effective[k] = effective[k] ? {milli: effective[k].milli + v.milli, format: effective[k].format} : {...v};
    }
    max(init, effective);
  }
  max(total, init);
  return Object.fromEntries(Object.entries(total).map(([k, v]) => [k, formatAmount(v)]));
}

type Check = (type: string, resource: string, enforced: string, requests: Quantities, limits: Quantities) => string | undefined;

function checkItem(item: JsonObject, requests: Quantities, limits: Quantities): string[] {
  const type = String(item.type ?? '');
  const errors: string[] = [];
  const run = (field: string, check: Check) => {
    for (const [resource, enforced] of Object.entries(quantitiesAt(item[field]))) {
      const problem = check(type, resource, enforced, requests, limits);
      if (problem) errors.push(problem);
    }
  };
  run('min', minConstraint);
  run('max', maxConstraint);
  run('maxLimitRequestRatio', limitRequestRatioConstraint);
  return errors;
}

/** Upstream's PodValidateLimitFunc: every container against Container items, the pod's totals against Pod items. */
export function validatePod(limitRange: JsonObject, pod: JsonObject): string[] {
  const errors: string[] = [];
  for (const item of objectsAt(isJsonObject(limitRange.spec) ? limitRange.spec.limits : undefined)) {
    if (item.type === 'Container') {
      for (const {container} of containersOf(specOf(pod), ['containers', 'initContainers'])) {
        const resources = isJsonObject(container.resources) ? container.resources : {};
        errors.push(...checkItem(item, quantitiesAt(resources.requests), quantitiesAt(resources.limits)));
      }
    } else if (item.type === 'Pod') {
      errors.push(...checkItem(item, podTotal(pod, 'requests'), podTotal(pod, 'limits')));
    }
  }
  return errors;
}

/** Upstream's PersistentVolumeClaimValidateLimitFunc: the claim's requested storage within min and max. */
export function validateClaim(limitRange: JsonObject, claim: JsonObject): string[] {
  const errors: string[] = [];
  const requests = quantitiesAt(isJsonObject(claim.spec) && isJsonObject(claim.spec.resources) ? claim.spec.resources.requests : undefined);
  for (const item of objectsAt(isJsonObject(limitRange.spec) ? limitRange.spec.limits : undefined)) {
    if (item.type !== 'PersistentVolumeClaim') continue;
    for (const [resource, enforced] of Object.entries(quantitiesAt(item.min))) {
      const problem = minConstraint('PersistentVolumeClaim', resource, enforced, requests, {});
      if (problem) errors.push(problem);
    }
    for (const [resource, enforced] of Object.entries(quantitiesAt(item.max))) {
      const problem = maxRequestConstraint('PersistentVolumeClaim', resource, enforced, requests);
      if (problem) errors.push(problem);
    }
  }
  return errors;
}

/** Upstream's utilerrors aggregate text: one message alone, several in brackets. */
export const aggregate = (errors: readonly string[]): string => (errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`);

export class LimitRanger implements AdmissionPlugin {
  readonly name = 'LimitRanger';

  constructor(private readonly listLimitRanges: (namespace: string) => Promise<JsonObject[]>) {}

  handles(operation: AdmissionOperation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  /** Pods on create and claims: upstream's SupportsAttributes (no subresources; pod updates cannot change resources). */
  private supports(attributes: AdmissionAttributes): 'pod' | 'claim' | undefined {
    if (attributes.subresource !== '' || !isJsonObject(attributes.object)) return undefined;
    if (attributes.oldObject && stringAt(attributes.oldObject, 'metadata', 'deletionTimestamp')) return undefined;
    if (isCoreResource(attributes, 'pods')) return attributes.operation === 'CREATE' ? 'pod' : undefined;
    if (isCoreResource(attributes, 'persistentvolumeclaims')) return 'claim';
    return undefined;
  }

  async admit(attributes: AdmissionAttributes): Promise<void> {
    if (this.supports(attributes) !== 'pod') return;
    const pod = attributes.object!;
    // Upstream's API defaulting (requests from limits) runs before admission; here it runs after, so apply it first.
    defaultPodRequestsFromLimits(pod);
    for (const range of await this.listLimitRanges(attributes.namespace)) mutatePod(range, pod);
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const kind = this.supports(attributes);
    if (!kind) return;
    for (const range of await this.listLimitRanges(attributes.namespace)) {
      const errors = kind === 'pod' ? validatePod(range, attributes.object!) : validateClaim(range, attributes.object!);
      if (errors.length) throw admissionForbidden(attributes, aggregate(errors));
    }
  }
}

export const createLimitRanger = (context: AdmissionPluginContext): LimitRanger =>
  new LimitRanger((namespace) => context.objects.list('', 'limitranges', namespace));
