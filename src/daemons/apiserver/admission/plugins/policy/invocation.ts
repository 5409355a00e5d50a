/**
 * What one policy-binding evaluation is given, as upstream's policy dispatcher builds it: the
 * `request` variable (CreateAdmissionRequest), the params the binding's paramRef selects
 * (CollectParams, with its messages), and `namespaceObject` (the namespace with the fields
 * upstream exposes).
 */
import { builtinResources } from '../../../../../api/resources.js';
import { names } from '../../../../../api/names.js';
import { matchesLabels, parseLabelSelector, labelSelectorString, type LabelSelectorObject } from '../../../../../api/selectors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../../../patch/types.js';
import type { AdmissionAttributes, AdmissionObjects } from '../../interfaces.js';
import type { MatchResult } from './matching.js';

/** The `request` variable: the AdmissionRequest of a webhook, without object and oldObject. */
export function admissionRequest(attributes: AdmissionAttributes, match: MatchResult): JsonObject {
  const r = attributes.resource;
  const user: JsonObject = { username: attributes.user.name, groups: attributes.user.groups };
  if (attributes.user.uid) user.uid = attributes.user.uid;
  if (attributes.user.extra && Object.keys(attributes.user.extra).length) user.extra = attributes.user.extra;
  const request: JsonObject = {
    kind: { ...(match.kind ?? { group: r.group, version: r.version, kind: r.kind }) },
    resource: { ...(match.resource ?? { group: r.group, version: r.version, resource: r.plural }) },
    requestKind: { group: r.group, version: r.version, kind: r.kind },
    requestResource: { group: r.group, version: r.version, resource: r.plural },
    name: attributes.name,
    namespace: attributes.namespace,
    operation: attributes.operation,
    userInfo: user,
    dryRun: attributes.dryRun,
  };
  if (attributes.subresource) {
    request.subResource = attributes.subresource;
    request.requestSubResource = attributes.subresource;
  }
  if (attributes.operationOptions) request.options = attributes.operationOptions;
  return request;
}

/** The fields of the namespace a policy sees (upstream's CreateNamespaceObject). */
export function namespaceObject(namespace: JsonObject | undefined): JsonObject | null {
  if (!namespace) return null;
  const meta = isJsonObject(namespace.metadata) ? namespace.metadata : {};
  const kept: JsonObject = {};
  for (const key of ['name', 'generateName', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'finalizers']) {
    if (meta[key] !== undefined) kept[key] = meta[key]!;
  }
  const out: JsonObject = { metadata: kept };
  if (namespace.spec !== undefined) out.spec = namespace.spec;
  if (namespace.status !== undefined) out.status = namespace.status;
  return out;
}

export interface ParamResource {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

/** The resource of a paramKind: a built-in, or a custom resource from its definition. */
export async function resolveParamKind(paramKind: JsonObject, objects: AdmissionObjects): Promise<ParamResource | undefined> {
  const apiVersion = typeof paramKind.apiVersion === 'string' ? paramKind.apiVersion : '';
  const kind = typeof paramKind.kind === 'string' ? paramKind.kind : '';
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const builtin = builtinResources().find((r) => r.group === group && r.version === version && r.kind === kind);
  if (builtin) return { group, version, plural: builtin.plural, namespaced: builtin.namespaced };
  const crds = await objects.list(names().groups.apiextensions, 'customresourcedefinitions');
  for (const crd of crds) {
    const spec = isJsonObject(crd.spec) ? crd.spec : {};
    const crdNames = isJsonObject(spec.names) ? spec.names : {};
    if (spec.group !== group || crdNames.kind !== kind) continue;
    const served = Array.isArray(spec.versions) && spec.versions.some((v) => isJsonObject(v) && v.name === version && v.served !== false);
    if (!served || typeof crdNames.plural !== 'string') continue;
    return { group, version, plural: crdNames.plural, namespaced: spec.scope === 'Namespaced' };
  }
  return undefined;
}

/** A configuration problem of a binding or its params (upstream's errors from CollectParams). */
export class ParamError extends Error {}

/**
 * The params of one binding: `[null]` when the policy has no paramKind or the binding no paramRef;
 * an empty list when none is found and parameterNotFoundAction is Allow (the binding is skipped).
 */
export async function collectParams(
  paramKind: JsonValue | undefined,
  paramRef: JsonValue | undefined,
  requestNamespace: string,
  objects: AdmissionObjects,
): Promise<Array<JsonObject | null>> {
  if (!isJsonObject(paramKind) || !isJsonObject(paramRef)) return [null];
  const resource = await resolveParamKind(paramKind, objects);
  if (!resource) throw new ParamError(`paramKind kind \`${String(paramKind.apiVersion)}, Kind=${String(paramKind.kind)}\` not known`);
  const refNamespace = typeof paramRef.namespace === 'string' ? paramRef.namespace : '';
  let namespace = '';
  if (resource.namespaced) {
    namespace = refNamespace || requestNamespace;
    if (!namespace) throw new ParamError('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
  } else if (refNamespace) {
    throw new ParamError('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
  }
  let params: JsonObject[];
  const name = typeof paramRef.name === 'string' ? paramRef.name : '';
  if (name) {
    if (paramRef.selector !== undefined) throw new ParamError('paramRef.name and paramRef.selector are mutually exclusive');
    const param = await objects.get(resource.group, resource.plural, namespace, name);
    params = param ? [param] : [];
  } else if (isJsonObject(paramRef.selector)) {
    const requirements = parseLabelSelector(labelSelectorString(paramRef.selector as LabelSelectorObject));
    const all = await objects.list(resource.group, resource.plural, namespace);
    params = all.filter((p) => matchesLabels(requirements, (isJsonObject(p.metadata) && isJsonObject(p.metadata.labels) ? p.metadata.labels : {}) as Record<string, string>));
  } else {
    throw new ParamError('one of name or selector must be provided');
  }
  if (params.length === 0 && paramRef.parameterNotFoundAction === 'Deny') {
    throw new ParamError('no params found for policy binding with `Deny` parameterNotFoundAction');
  }
  return params.map((p) => (p.apiVersion === undefined ? { apiVersion: String(paramKind.apiVersion), kind: String(paramKind.kind), ...p } : p));
}
