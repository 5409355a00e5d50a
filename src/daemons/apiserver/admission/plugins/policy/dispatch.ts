/**
 * What both policy plugins do per request before evaluating (upstream's policy dispatcher): for
 * every policy with bindings, match its constraints, then each binding's matchResources, collect
 * the binding's params, and hand each (policy, binding, param) on; configuration problems
 * (`failed to configure policy: ...`, `failed to configure binding: ...`) are collected for the
 * failure policy to weigh.
 */
import { CelAuthorizer } from '../../../../../api/cel/admission.js';
import { builtinResources } from '../../../../../api/resources.js';
import { failureStatus, ApiError } from '../../../../../api/status.js';
import { admissionForbidden } from '../../errors.js';
import { isJsonObject, type JsonObject } from '../../../../../patch/types.js';
import { stringAt } from '../../../rest/objects.js';
import { fromStorage, toStorage } from '../../../rest/conversion.js';
import type { AdmissionAttributes, AdmissionObjects } from '../../interfaces.js';
import type { CompiledPolicy } from './compile.js';
import { admissionRequest, collectParams, namespaceObject } from './invocation.js';
import { matchesResources, type MatchEnvironment, type MatchResult } from './matching.js';
import type { PolicyHook } from './source.js';

export interface Invocation {
  policy: JsonObject;
  compiled: CompiledPolicy;
  binding: JsonObject;
  param: JsonObject | null;
  match: MatchResult;
  request: JsonObject;
  namespaceObject: JsonObject | null;
}

export interface ConfigurationError {
  policy: JsonObject;
  compiled: CompiledPolicy;
  binding?: JsonObject;
  message: string;
}

export const nameOf = (o: JsonObject) => stringAt(o, 'metadata', 'name') ?? '';

/**
 * The object as the version a policy matched (matchPolicy Equivalent: an autoscaling/v1 request
 * seen by a policy on autoscaling/v2), through the conversions the registry uses; `back` turns a
 * mutated object into the request's version again. Identity when the versions are the same.
 */
export function versionedObject(attributes: AdmissionAttributes, match: MatchResult): { to(o: JsonObject): JsonObject; back(o: JsonObject): JsonObject } {
  const requested = attributes.resource;
  const target = match.resource;
  const same = !target || (target.group === requested.group && target.version === requested.version);
  const info = same ? undefined : builtinResources().find((r) => r.group === target!.group && r.version === target!.version && r.plural === target!.resource);
  if (!info) return { to: (o) => o, back: (o) => o };
  return {
    to: (o) => fromStorage(info, toStorage(requested, o)),
    back: (o) => fromStorage(requested, toStorage(info, o)),
  };
}

/** The environment matching needs, on the server's objects and served resources. */
export function matchEnvironment(objects: AdmissionObjects): MatchEnvironment {
  return {
    namespace: (name) => objects.get('', 'namespaces', '', name),
    equivalents: (r) => builtinResources()
      .filter((info) => info.group === r.group && info.plural === r.resource && info.version !== r.version)
      .map((info) => ({ group: info.group, version: info.version, resource: info.plural, kind: info.kind })),
  };
}

export async function dispatch(
  hooks: ReadonlyArray<PolicyHook<CompiledPolicy>>,
  attributes: AdmissionAttributes,
  objects: AdmissionObjects,
  env: MatchEnvironment,
): Promise<{ invocations: Invocation[]; errors: ConfigurationError[] }> {
  const invocations: Invocation[] = [];
  const errors: ConfigurationError[] = [];
  let namespace: Promise<JsonObject | null> | undefined;
  // The Namespace object's own requests carry no namespace (upstream unsets it the same way).
  const namespaceName = attributes.resource.group === '' && attributes.resource.plural === 'namespaces' ? '' : attributes.namespace;
  for (const { policy, compiled, bindings } of hooks) {
    let match: MatchResult;
    try {
      match = await matchesResources(compiled.matchConstraints, attributes, env);
    } catch (error) {
      errors.push({ policy, compiled, message: `failed to configure policy: ${(error as Error).message}` });
      continue;
    }
    if (!match.matches) continue;
    if (compiled.errors.length) {
      errors.push({ policy, compiled, message: `failed to configure policy: ${compiled.errors.map((e) => `${e.field}: ${e.detail ?? e.type}`).join(', ')}` });
      continue;
    }
    for (const binding of bindings) {
      const spec = isJsonObject(binding.spec) ? binding.spec : {};
      try {
        if (spec.matchResources !== undefined && !(await matchesResources(spec.matchResources, attributes, env)).matches) continue;
        const params = await collectParams(compiled.paramKind, spec.paramRef, attributes.namespace, objects);
        namespace ??= namespaceName ? objects.get('', 'namespaces', '', namespaceName).then((n) => namespaceObject(n)) : Promise.resolve(null);
        const ns = await namespace;
        const request = admissionRequest(attributes, match);
        for (const param of params) invocations.push({ policy, compiled, binding, param, match, request, namespaceObject: ns });
      } catch (error) {
        errors.push({ policy, compiled, binding, message: `failed to configure binding: ${(error as Error).message}` });
      }
    }
  }
  return { invocations, errors };
}

/** Upstream's reasonToCode for a policy's denial. */
function reasonToCode(reason: string): number {
  switch (reason) {
    case 'Forbidden': return 403;
    case 'Unauthorized': return 401;
    case 'RequestEntityTooLarge': return 413;
    case 'Invalid': return 422;
    default: return 422;
  }
}

/**
 * Upstream's admission.NewForbidden (`<resource> "<name>" is forbidden: <message>`) with the
 * denial's reason and code and the message as a cause.
 */
export function policyDenial(attributes: AdmissionAttributes, message: string, reason: string | undefined): ApiError {
  const error = admissionForbidden(attributes, message);
  const r = reason || 'Forbidden';
  const details = { ...error.status.details, causes: [...(error.status.details?.causes ?? []), { message }] };
  return new ApiError(failureStatus(reasonToCode(r), r, error.status.message ?? message, details));
}

/** Upstream's refusal while the policies are not listed yet. */
export function notReady(attributes: AdmissionAttributes): ApiError {
  return admissionForbidden(attributes, 'not yet ready to handle request');
}

/** The `authorizer` variable for a request: checks as the request's user through the server's authorizer. */
export function celAuthorizer(attributes: AdmissionAttributes, resource?: { group: string; resource: string }): CelAuthorizer | undefined {
  const authorize = attributes.authorize;
  if (!authorize) return undefined;
  return new CelAuthorizer(
    async (r) => {
      const result = await authorize({
        verb: r.verb, resourceRequest: r.resourceRequest, apiGroup: r.apiGroup, resource: r.resource, subresource: r.subresource,
        namespace: r.namespace, name: r.name, path: r.path, user: r.user ? { ...r.user } : undefined,
      });
      return { allowed: result.allowed, reason: result.reason };
    },
    undefined,
    {
      group: resource?.group ?? attributes.resource.group,
      resource: resource?.resource ?? attributes.resource.plural,
      subresource: attributes.subresource,
      namespace: attributes.namespace,
      name: attributes.name,
    },
  );
}
