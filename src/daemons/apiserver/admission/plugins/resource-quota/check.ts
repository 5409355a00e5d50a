/**
 * The decision of ResourceQuota admission for one write against the namespace's quotas (upstream's
 * CheckRequest in k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go): which quotas
 * apply, whether the object fits in all of them, and the usage each would record if the write
 * succeeds. Pure: quotas and the request in, new usage out or an ApiError thrown with upstream's
 * message ("exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3").
 */
import {ApiError, failureStatus, forbidden} from '../../../../../api/status.js';
import type {JsonObject, JsonValue} from '../../../../../patch/types.js';
import {
  matchingScopes, quotaMatches, scopeSelectorsOf, uncoveredScopes, type Operation, type QuotaEvaluator, type ScopeRequirement,
} from '../../../../shared/quota/evaluators.js';
import {
  add, exceeded, mask, negativeNames, parseResourceList, prettyPrint, removeZeros, subtractNonNegative, type ResourceList,
} from '../../../../shared/quota/resources.js';

/** A resource whose consumption needs a covering quota (the plugin configuration's limitedResources). */
export interface LimitedResource {
  apiGroup: string;
  resource: string;
  matchContains: string[];
  matchScopes: ScopeRequirement[];
}

/** A quota as admission works on it: the object, and its status parsed. */
export interface QuotaState {
  quota: JsonObject;
  name: string;
  hard: ResourceList;
  used: ResourceList;
}

export interface QuotaRequest {
  operation: Operation;
  subresource: string;
  group: string;
  resource: string;
  namespace: string;
  name: string;
  object?: JsonObject;
  oldObject?: JsonObject;
}

const obj = (v: JsonValue | undefined): JsonObject => (v && typeof v === 'object' && !Array.isArray(v) ? v : {});

export function quotaState(quota: JsonObject): QuotaState {
  const status = obj(quota.status);
  return {quota, name: String(obj(quota.metadata).name ?? ''), hard: parseResourceList(status.hard), used: parseResourceList(status.used)};
}

/** The name admission errors give the object: the request's, else the object's, else its generateName (upstream's extractResourceName). */
function subjectName(request: QuotaRequest): string {
  if (request.name) return request.name;
  const meta = obj(request.object?.metadata);
  if (typeof meta.name === 'string' && meta.name) return meta.name;
  if (typeof meta.generateName === 'string' && meta.generateName) return meta.generateName;
  return 'Unknown';
}

function forbid(request: QuotaRequest, reason: string): ApiError {
  return forbidden({group: request.group, resource: request.resource}, subjectName(request), reason);
}

/** The names the limited resources of this kind say need a covering quota (upstream's limitedByDefault). */
function limitedByDefault(usage: ResourceList, limited: readonly LimitedResource[]): string[] {
  const result: string[] = [];
  for (const limit of limited) {
    for (const [name, amount] of Object.entries(usage)) {
      if (amount.milli > 0n && limit.matchContains.some((fragment) => name.includes(fragment))) result.push(name);
    }
  }
  return result;
}

const sortedNames = (names: Iterable<string>) => [...new Set(names)].sort().join(',');

function scopeText(scope: ScopeRequirement): string {
  return `{${scope.scopeName} ${scope.operator} [${(scope.values ?? []).join(' ')}]}`;
}

/**
 * Checks the request against every quota; answers the quotas with the usage they would have
 * after it (the same objects when nothing applies), or throws the refusal.
 */
export function checkRequest(
  quotas: readonly QuotaState[],
  request: QuotaRequest,
  evaluator: QuotaEvaluator,
  limited: readonly LimitedResource[],
  now: number,
): QuotaState[] {
  if (!evaluator.handles(request.operation, request.subresource, request.object, request.oldObject) || !request.object) return [...quotas];
  const input = request.object;

  // Scopes the configuration limits that this object is in; an object that cannot be matched passes, as upstream.
  let limitedScopes: ScopeRequirement[];
  try {
    limitedScopes = limited.flatMap((l) => matchingScopes(evaluator, input, l.matchScopes));
  } catch {
    return [...quotas];
  }
  const limitedOfKind = limited.filter((l) => l.apiGroup === request.group && l.resource === request.resource);
  const limitedNames = new Set(limitedOfKind.length ? limitedByDefault(evaluator.usage(input, now), limitedOfKind) : []);

  const interesting: number[] = [];
  const restrictedNames = new Set<string>();
  const restrictedScopes: ScopeRequirement[] = [];
  quotas.forEach((state, i) => {
    let matched: boolean;
    try {
      restrictedScopes.push(...matchingScopes(evaluator, input, scopeSelectorsOf(state.quota)));
      matched = quotaMatches(evaluator, state.quota, input);
    } catch (error) {
      throw new ApiError(failureStatus(500, undefined, `error matching scopes of quota ${state.name}, err: ${(error as Error).message}`));
    }
    if (!matched) return;
    const restricted = evaluator.matchingResources(Object.keys(state.hard));
    const problem = evaluator.constraints(restricted, input);
    if (problem) throw forbid(request, `failed quota: ${state.name}: ${problem}`);
    if (restricted.some((name) => state.hard[name] && !state.used[name])) {
      throw forbid(request, `status unknown for quota: ${state.name}, resources: ${sortedNames(restricted)}`);
    }
    interesting.push(i);
    for (const name of restricted) restrictedNames.add(name);
  });

  const inputUsage = evaluator.usage(input, now);
  const negative = negativeNames(inputUsage);
  if (negative.length) throw forbid(request, `quota usage is negative for resource(s): ${sortedNames(negative)}`);

  const deltas = new Map<number, ResourceList>(interesting.map((i) => [i, inputUsage]));
  let deltaWithoutQuota: ResourceList = request.operation === 'CREATE' && interesting.length === 0 ? inputUsage : {};
  if (request.operation === 'UPDATE') {
    const previous = request.oldObject;
    if (!previous) throw forbid(request, 'unable to get previous usage since prior version of object was not found');
    // An update charges the growth only, for quotas the old object was already counted in;
    // without a resourceVersion it may be a create-on-update and pays in full.
    if (obj(previous.metadata).resourceVersion) {
      const delta = subtractNonNegative(inputUsage, evaluator.usage(previous, now));
      if (interesting.length === 0) deltaWithoutQuota = delta;
      for (const i of interesting) if (quotaMatches(evaluator, quotas[i]!.quota, previous)) deltas.set(i, delta);
    } else if (interesting.length === 0) {
      deltaWithoutQuota = inputUsage;
    }
  }
  for (const [i, delta] of deltas) {
    const nonZero = removeZeros(delta);
    if (Object.keys(nonZero).length === 0) deltas.delete(i);
    else deltas.set(i, nonZero);
  }
  if (interesting.length > 0 ? deltas.size === 0 : Object.keys(removeZeros(deltaWithoutQuota)).length === 0) return [...quotas];

  const uncovered = [...limitedNames].filter((name) => !restrictedNames.has(name));
  if (uncovered.length) throw forbid(request, `insufficient quota to consume: ${sortedNames(uncovered)}`);
  const scopesUncovered = uncoveredScopes(evaluator, limitedScopes, restrictedScopes);
  if (scopesUncovered.length) {
    // Upstream returns this one as a plain error, which reaches the client as a 500 with the text as is.
    throw new ApiError(failureStatus(500, undefined, `insufficient quota to match these scopes: [${scopesUncovered.map(scopeText).join(' ')}]`));
  }
  if (interesting.length === 0) return [...quotas];

  const out = [...quotas];
  for (const i of interesting) {
    const delta = deltas.get(i);
    if (!delta) continue;
    const state = quotas[i]!;
    const requested = mask(delta, Object.keys(state.hard));
    const newUsed = add(state.used, requested);
    if (request.subresource !== 'status') {
      const over = exceeded(mask(newUsed, Object.keys(requested)), state.hard);
      if (over.length) {
        throw forbid(
          request,
          `exceeded quota: ${state.name}, requested: ${prettyPrint(mask(requested, over))}, used: ${prettyPrint(mask(state.used, over))}, limited: ${prettyPrint(mask(state.hard, over))}`,
        );
      }
    }
    out[i] = {...state, used: newUsed};
  }
  return out;
}
