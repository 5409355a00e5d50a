/**
 * Subresources that write part of an object (upstream's per-subresource update strategies):
 * `status` (everything but status kept), CSR `approval` (status.conditions only), pods'
 * `ephemeralcontainers` (spec.ephemeralContainers only) and `resize` (the containers' resources
 * and resize policies only). Each takes the desired object (the body, or the patched object) and
 * the stored one, and returns what is written. Pure.
 */
import {field, invalid} from '../../../api/status.js';
import {isJsonObject, jsonEqual, type JsonObject, type JsonValue} from '../../../patch/types.js';
import {deepCopy, metadataOf, rfc3339, stringAt, valueAt} from './objects.js';

/** The stored object with the body's status (and resourceVersion, for the precondition). */
export function statusOnly(body: JsonObject, current: JsonObject): JsonObject {
  const next = deepCopy(current);
  if (body.status === undefined) delete next.status;
  else next.status = body.status;
  return carryPreconditions(next, body);
}

function carryPreconditions(next: JsonObject, body: JsonObject): JsonObject {
  const meta = metadataOf(next);
  const rv = stringAt(body, 'metadata', 'resourceVersion');
  if (rv !== undefined) meta.resourceVersion = rv;
  if (valueAt(body, 'metadata', 'managedFields') !== undefined) meta.managedFields = valueAt(body, 'metadata', 'managedFields')!;
  return next;
}

const objects = (v: JsonValue | undefined): JsonObject[] => (Array.isArray(v) ? (v.filter(isJsonObject) as JsonObject[]) : []);
const nameOf = (o: JsonObject) => stringAt(o, 'metadata', 'name') ?? '';

/**
 * CSR approval (upstream's csrApprovalStrategy): only status.conditions change; Approved and Denied
 * exclude each other and, once set, stay; new conditions get their timestamps and `True`.
 */
export function approvalOnly(body: JsonObject, current: JsonObject, now: Date): JsonObject {
  const next = deepCopy(current);
  const status = isJsonObject(next.status) ? next.status : (next.status = {});
  const previous = objects(valueAt(current, 'status', 'conditions'));
  const conditions = objects(valueAt(body, 'status', 'conditions')).map((c) => {
    const copy = deepCopy(c);
    const before = previous.find((p) => p.type === copy.type);
    if (copy.status === undefined || copy.status === '') copy.status = 'True';
    if (copy.lastUpdateTime === undefined || copy.lastUpdateTime === null) copy.lastUpdateTime = before?.lastUpdateTime ?? rfc3339(now);
    if (copy.lastTransitionTime === undefined || copy.lastTransitionTime === null) {
      copy.lastTransitionTime = before && before.status === copy.status ? before.lastTransitionTime ?? rfc3339(now) : rfc3339(now);
    }
    return copy;
  });
  const errors = [];
  for (const kept of ['Approved', 'Denied']) {
    if (previous.some((p) => p.type === kept) && !conditions.some((c) => c.type === kept)) {
      errors.push(field.forbidden('status.conditions', `updates may not remove a condition of type ${JSON.stringify(kept)}`));
    }
  }
  const types = conditions.map((c) => c.type);
  if (types.includes('Approved') && types.includes('Denied')) errors.push(field.invalid('status.conditions', 'Approved', 'Approved and Denied conditions are mutually exclusive'));
  conditions.forEach((c, i) => {
    if (typeof c.type !== 'string' || c.type === '') errors.push(field.required(`status.conditions[${i}].type`));
  });
  if (errors.length) throw invalid({group: groupOf(current), kind: 'CertificateSigningRequest'}, nameOf(current), errors);
  if (conditions.length) status.conditions = conditions;
  else delete status.conditions;
  return carryPreconditions(next, body);
}

function groupOf(object: JsonObject): string {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  return apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
}

/** Pods' ephemeralcontainers: only spec.ephemeralContainers changes, and only by additions (upstream). */
export function ephemeralContainersOnly(body: JsonObject, current: JsonObject): JsonObject {
  const next = deepCopy(current);
  const spec = isJsonObject(next.spec) ? next.spec : (next.spec = {});
  const wanted = objects(valueAt(body, 'spec', 'ephemeralContainers'));
  const existing = objects(valueAt(current, 'spec', 'ephemeralContainers'));
  const errors = [];
  for (const [i, old] of existing.entries()) {
    const match = wanted.find((c) => c.name === old.name);
    if (!match) errors.push(field.forbidden('spec.ephemeralContainers', `existing ephemeral containers ${JSON.stringify(old.name)} may not be removed`));
    else if (!jsonEqual(match, old)) errors.push(field.forbidden(`spec.ephemeralContainers[${i}]`, 'existing ephemeral containers may not be changed'));
  }
  const taken = new Set([...objects(spec.containers), ...objects(spec.initContainers)].map((c) => c.name));
  wanted.forEach((c, i) => {
    if (typeof c.name !== 'string' || c.name === '') errors.push(field.required(`spec.ephemeralContainers[${i}].name`));
    else if (taken.has(c.name)) errors.push(field.duplicate(`spec.ephemeralContainers[${i}].name`, c.name));
    if (typeof c.image !== 'string' || c.image === '') errors.push(field.required(`spec.ephemeralContainers[${i}].image`));
    for (const forbidden of ['ports', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'resources']) {
      if (c[forbidden] !== undefined && !existing.some((e) => e.name === c.name)) {
        errors.push(field.forbidden(`spec.ephemeralContainers[${i}].${forbidden}`, `cannot be set for an Ephemeral Container`));
      }
    }
  });
  if (errors.length) throw invalid({group: '', kind: 'Pod'}, nameOf(current), errors);
  for (const c of wanted) {
    if (c.terminationMessagePath === undefined) c.terminationMessagePath = '/dev/termination-log';
    if (c.terminationMessagePolicy === undefined) c.terminationMessagePolicy = 'File';
    if (c.imagePullPolicy === undefined) c.imagePullPolicy = String(c.image ?? '').includes(':') && !String(c.image).endsWith(':latest') ? 'IfNotPresent' : 'Always';
  }
  if (wanted.length) spec.ephemeralContainers = wanted;
  else delete spec.ephemeralContainers;
  return carryPreconditions(next, body);
}

/** Pods' resize: only each container's resources (and resizePolicy) change, matched by name. */
export function resizeOnly(body: JsonObject, current: JsonObject): JsonObject {
  const next = deepCopy(current);
  const errors = [];
  const wanted = objects(valueAt(body, 'spec', 'containers'));
  const containers = objects(valueAt(next, 'spec', 'containers'));
  for (const [i, c] of wanted.entries()) {
    const target = containers.find((t) => t.name === c.name);
    if (!target) {
      errors.push(field.notSupported(`spec.containers[${i}].name`, c.name ?? '', containers.map((t) => String(t.name))));
      continue;
    }
    if (c.resources !== undefined) target.resources = deepCopy(c.resources);
    if (c.resizePolicy !== undefined) target.resizePolicy = deepCopy(c.resizePolicy);
  }
  if (errors.length) throw invalid({group: '', kind: 'Pod'}, nameOf(current), errors);
  return carryPreconditions(next, body);
}

/** What a write through `subresource` stores; the main resource (and scale, finalize) write as is. */
export function subresourceWrite(subresource: string | undefined, body: JsonObject, current: JsonObject, now: Date): JsonObject {
  switch (subresource) {
    case 'status':
      return statusOnly(body, current);
    case 'approval':
      return approvalOnly(body, current, now);
    case 'ephemeralcontainers':
      return ephemeralContainersOnly(body, current);
    case 'resize':
      return resizeOnly(body, current);
    default:
      return body;
  }
}
