/**
 * Server-side apply at the REST layer (upstream's applyPatcher and fieldmanager.Apply): the
 * `application/apply-patch+yaml` body (YAML or JSON) checked as upstream checks it, applied over the
 * live object (or over nothing: apply creates) with the apply engine of src/api/apply/, and its
 * errors as upstream's Status: 409 with one `FieldManagerConflict` cause per conflicting field,
 * 400 for a malformed configuration. Pure apart from the type lookup.
 */
import { parse as parseYaml } from 'yaml';
import type { ResourceInfo } from '../../../api/resources.js';
import { ApiError, badRequest, failureStatus } from '../../../api/status.js';
import { FieldSet, pathString } from '../../../api/apply/field-set.js';
import { names, nameSet } from '../../../api/names.js';
import type { TypeNode } from '../../../api/apply/schema.js';
import { builtinTypes, openApiTypes } from '../../../api/apply/types.js';
import { ApplyStructureError, toFieldSet } from '../../../api/apply/typed.js';
import {
  ApplyConflictError, applyConfig, decodeManagers, describeManager, encodeManagers, ignoredFields,
} from '../../../api/apply/updater.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../patch/types.js';
import { checkDepth } from './http-io.js';
import { metadataOf, stringAt, valueAt } from './objects.js';

/** The apply type of a resource: a custom resource's from its CRD schema, a built-in's from the built-in provider. */
export function applyTypeOf(info: ResourceInfo): TypeNode {
  if (info.custom) return openApiTypes(info.openAPIV3Schema as JsonObject | undefined).root(`${info.group}/${info.version}`, info.kind);
  return builtinTypes.root(info.group ? `${info.group}/${info.version}` : info.version, info.kind);
}

export function hasStatusSubresource(info: ResourceInfo): boolean {
  return info.subresources.some((s) => s.name === 'status');
}

/** The applied configuration: a YAML (or JSON) object with apiVersion and kind and no managedFields. */
export function parseApplyBody(body: Buffer): JsonObject {
  let config: unknown;
  try {
    // Repeated keys are the field-validation stage's to report (validation/index.ts).
    config = parseYaml(body.toString('utf8'), { maxAliasCount: 100, uniqueKeys: false });
  } catch (error) {
    throw badRequest(`error decoding YAML: ${(error as Error).message}`);
  }
  if (!isJsonObject(config)) throw badRequest(`error decoding YAML: the applied configuration must be an object, got ${JSON.stringify(config ?? null)}`);
  checkDepth(config as JsonValue);
  if (typeof config.kind !== 'string' || config.kind === '') throw badRequest(`Object 'Kind' is missing in '${body.toString('utf8').trim()}'`);
  if (typeof config.apiVersion !== 'string' || config.apiVersion === '') throw badRequest(`Object 'apiVersion' is missing in '${body.toString('utf8').trim()}'`);
  if (valueAt(config, 'metadata', 'managedFields') !== undefined) throw badRequest('metadata.managedFields must be nil');
  return config;
}

export interface ApplyRequest {
  info: ResourceInfo;
  namespace: string;
  name: string;
  config: JsonObject;
  manager: string;
  force: boolean;
  subresource?: string;
  time: string;
}

/** upstream's objectGVKNN: `ns/name; group/version, Kind=Kind`. */
function describeObject(req: ApplyRequest): string {
  return `${req.namespace}/${req.name}; ${req.info.group}/${req.info.version}, Kind=${req.info.kind}`;
}

/**
 * The fields of the live object's client-side apply annotation: the conflicts kubectl's own apply may
 * override when it takes over from `kubectl apply` without --server-side (upstream's lastAppliedManager).
 */
function lastAppliedFields(live: JsonObject, type: TypeNode): FieldSet | undefined {
  const annotations = valueAt(live, 'metadata', 'annotations');
  if (!isJsonObject(annotations)) return undefined;
  const keys = [nameSet('kubernetes').annotations.lastAppliedConfiguration, names().annotations.lastAppliedConfiguration];
  const text = keys.map((k) => annotations[k]).find((v): v is string => typeof v === 'string' && v !== '');
  if (!text) return undefined;
  try {
    const lastApplied = JSON.parse(text) as JsonValue;
    return isJsonObject(lastApplied) ? toFieldSet(lastApplied, type) : undefined;
  } catch {
    return undefined;
  }
}

/** The object after the apply, with its managedFields; `live` undefined when the apply creates the object. */
export function applyToObject(live: JsonObject | undefined, req: ApplyRequest): JsonObject {
  try {
    try {
      return applyOnce(live, req);
    } catch (error) {
      // kubectl's server-side apply taking over from client-side apply: conflicts only on fields of
      // the last-applied configuration are forced (upstream does this for the manager "kubectl" only).
      if (!(error instanceof ApplyConflictError) || req.manager !== 'kubectl' || req.force || !live) throw error;
      const allowed = lastAppliedFields(live, applyTypeOf(req.info));
      if (!allowed || !error.conflicts.every((c) => allowed.has(c.path))) throw error;
      return applyOnce(live, { ...req, force: true });
    }
  } catch (error) {
    if (error instanceof ApplyConflictError) throw applyConflict(error);
    if (error instanceof ApplyStructureError) throw badRequest(`failed to create typed patch object (${describeObject(req)}): ${error.message}`);
    throw error;
  }
}

/** JSON as Go encodes a map (keys sorted) with the encoder's trailing newline: the annotation kubectl compares. */
function goJson(value: JsonValue): string {
  const sorted = (v: JsonValue): JsonValue =>
    Array.isArray(v) ? v.map(sorted) : isJsonObject(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k]!)])) : v;
  return `${JSON.stringify(sorted(value))}\n`;
}

/**
 * Upstream's lastAppliedUpdater: kubectl's server-side apply keeps an existing client-side apply
 * annotation equal to the applied configuration, so kubectl need not rewrite it itself.
 */
function syncLastApplied(object: JsonObject, config: JsonObject): void {
  const annotations = valueAt(object, 'metadata', 'annotations');
  if (!isJsonObject(annotations)) return;
  const key = [nameSet('kubernetes').annotations.lastAppliedConfiguration, names().annotations.lastAppliedConfiguration].find((k) => k in annotations);
  if (!key) return;
  const copy = JSON.parse(JSON.stringify(config)) as JsonObject;
  const configAnnotations = valueAt(copy, 'metadata', 'annotations');
  if (isJsonObject(configAnnotations)) {
    delete configAnnotations[key];
    if (Object.keys(configAnnotations).length === 0) delete (copy.metadata as JsonObject).annotations;
  }
  annotations[key] = goJson(copy);
}

function applyOnce(live: JsonObject | undefined, req: ApplyRequest): JsonObject {
  const apiVersion = req.info.group ? `${req.info.group}/${req.info.version}` : req.info.version;
  const liveMeta = live ? metadataOf(live) : undefined;
  const { object, managers } = applyConfig({
    live,
    config: req.config,
    managers: decodeManagers(liveMeta?.managedFields),
    manager: req.manager,
    apiVersion,
    subresource: req.subresource || undefined,
    force: req.force,
    type: applyTypeOf(req.info),
    ignored: ignoredFields(req.subresource || undefined, hasStatusSubresource(req.info)),
    time: req.time,
  });
  const meta = metadataOf(object);
  if (stringAt(object, 'metadata', 'name') === undefined) meta.name = req.name;
  if (req.manager === 'kubectl') syncLastApplied(object, req.config);
  meta.managedFields = encodeManagers(managers) as unknown as JsonValue;
  return object;
}

/** Upstream's NewApplyConflict: 409, reason Conflict, one FieldManagerConflict cause per field. */
export function applyConflict(error: ApplyConflictError): ApiError {
  const causes = error.conflicts.map((c) => ({ type: 'FieldManagerConflict', message: `conflict with ${describeManager(c.manager)}`, field: pathString(c.path) }));
  const status = failureStatus(409, 'Conflict', error.message);
  // Built by hand: the details carry only causes (no name or kind), as upstream's.
  status.details = { causes } as never;
  return new ApiError(status);
}
