/**
 * pods/eviction (upstream's pkg/registry/core/pod/storage/eviction.go): a pod is deleted unless
 * that would violate the PodDisruptionBudget selecting it; an allowed eviction takes one of the
 * budget's disruptionsAllowed and records the pod in status.disruptedPods (for the disruption
 * controller), a disallowed one answers 429 with the budget's message.
 */
import {ApiError, badRequest, failureStatus, successStatus} from '../../../api/status.js';
import {labelSelectorString, matchesLabels, parseLabelSelector, type LabelSelectorObject} from '../../../api/selectors.js';
import {isJsonObject, type JsonObject, type JsonValue} from '../../../patch/types.js';
import type {DeleteOptions, RegistryStore, WriteContext} from './registry-store.js';
import {labelsOf, metadataOf, rfc3339, stringAt, valueAt} from './objects.js';

/** Upstream's MaxDisruptedPodSize. */
const MAX_DISRUPTED_PODS = 2000;

export interface EvictionDeps {
  pods: RegistryStore;
  budgets: RegistryStore;
  now: () => Date;
}

const conditionTrue = (o: JsonObject, type: string) =>
  (Array.isArray(valueAt(o, 'status', 'conditions')) ? (valueAt(o, 'status', 'conditions') as JsonValue[]) : []).some(
    (c) => isJsonObject(c) && c.type === type && c.status === 'True',
  );
const num = (v: JsonValue | undefined) => (typeof v === 'number' ? v : 0);

function tooManyRequests(message: string, cause?: string): ApiError {
  return new ApiError(failureStatus(429, 'TooManyRequests', message, cause ? {causes: [{reason: 'DisruptionBudget', message: cause}]} : {}));
}

function forbiddenBudget(name: string, reason: string): ApiError {
  return new ApiError(failureStatus(403, 'Forbidden', `poddisruptionbudgets.policy "${name}" is forbidden: ${reason}`, {name, group: 'policy', kind: 'poddisruptionbudgets'}));
}

const VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget.";

/** Whether a budget's selector selects the pod (policy/v1: an empty selector selects every pod, none selects none). */
function selects(budget: JsonObject, pod: JsonObject): boolean {
  const selector = valueAt(budget, 'spec', 'selector');
  if (!isJsonObject(selector)) return false;
  try {
    return matchesLabels(parseLabelSelector(labelSelectorString(selector as LabelSelectorObject)), labelsOf(pod));
  } catch {
    return false;
  }
}

/** Evicts `name`; resolves with the Status to answer (201 Success), or throws the refusal. */
export async function evict(deps: EvictionDeps, namespace: string, name: string, body: unknown, ctx: WriteContext): Promise<JsonObject> {
  if (!isJsonObject(body)) throw badRequest('the body of the request must be an Eviction object');
  const bodyName = stringAt(body, 'metadata', 'name');
  if (bodyName && bodyName !== name) throw badRequest(`name in URL does not match name in Eviction object`);
  const deleteOptions = isJsonObject(body.deleteOptions) ? body.deleteOptions : {};
  const dryRun = ctx.dryRun || (Array.isArray(deleteOptions.dryRun) && deleteOptions.dryRun.includes('All'));
  const context: WriteContext = {...ctx, dryRun, subresource: ''};
  const options: DeleteOptions = {};
  if (typeof deleteOptions.gracePeriodSeconds === 'number') options.gracePeriodSeconds = deleteOptions.gracePeriodSeconds;
  if (isJsonObject(deleteOptions.preconditions)) {
    options.preconditions = {uid: stringAt(deleteOptions, 'preconditions', 'uid'), resourceVersion: stringAt(deleteOptions, 'preconditions', 'resourceVersion')};
  }
  const pod = await deps.pods.get(namespace, name);
  const remove = async () => {
    await deps.pods.delete(namespace, name, options, context);
    return successStatus(201) as unknown as JsonObject;
  };
  // Pods that are done, not started or already going do not count against a budget (canIgnorePDB).
  const phase = stringAt(pod, 'status', 'phase');
  if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || stringAt(pod, 'metadata', 'deletionTimestamp')) return remove();

  const budgets = (await deps.budgets.list(namespace, {labelSelector: [], fieldSelector: [], limit: 0, allowWatchBookmarks: false})).items.filter((b) => selects(b, pod));
  if (budgets.length > 1) {
    throw new ApiError(failureStatus(500, 'InternalError', 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.', {}));
  }
  const budget = budgets[0];
  if (!budget) return remove();
  const ready = conditionTrue(pod, 'Ready');
  const policy = stringAt(budget, 'spec', 'unhealthyPodEvictionPolicy') ?? 'IfHealthyBudget';
  if (!ready && policy === 'AlwaysAllow') return remove();
  const status = isJsonObject(budget.status) ? budget.status : {};
  if (!ready && num(status.currentHealthy) >= num(status.desiredHealthy) && num(status.desiredHealthy) > 0) return remove();

  const budgetName = stringAt(budget, 'metadata', 'name') ?? '';
  await deps.budgets.update(namespace, budgetName, {...context, subresource: 'status'}, (current) => {
    const s = isJsonObject(current.status) ? current.status : (current.status = {});
    if (num(s.observedGeneration) < num(valueAt(current, 'metadata', 'generation'))) {
      throw tooManyRequests(VIOLATION, `The disruption budget ${budgetName} is still being processed by the server.`);
    }
    const allowed = num(s.disruptionsAllowed);
    if (allowed < 0) throw forbiddenBudget(budgetName, 'pdb disruptions allowed is negative');
    const disrupted = isJsonObject(s.disruptedPods) ? s.disruptedPods : {};
    if (Object.keys(disrupted).length > MAX_DISRUPTED_PODS) throw forbiddenBudget(budgetName, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
    if (allowed === 0) {
      throw tooManyRequests(VIOLATION, `The disruption budget ${budgetName} needs ${num(s.desiredHealthy)} healthy pods and has ${num(s.currentHealthy)} currently`);
    }
    s.disruptionsAllowed = allowed - 1;
    if (allowed - 1 === 0) setCondition(s, current, deps.now());
    s.disruptedPods = {...disrupted, [name]: rfc3339(deps.now())};
    // The budget's resourceVersion is not a precondition here: retries re-read it (GuaranteedUpdate).
    delete metadataOf(current).resourceVersion;
    return current;
  });
  return remove();
}

/** Upstream's UpdateDisruptionAllowedCondition for a budget that has no disruption left. */
function setCondition(status: JsonObject, budget: JsonObject, now: Date): void {
  const conditions = (Array.isArray(status.conditions) ? status.conditions : []).filter((c) => !(isJsonObject(c) && c.type === 'DisruptionAllowed'));
  conditions.push({
    type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '',
    observedGeneration: num(valueAt(budget, 'metadata', 'generation')), lastTransitionTime: rfc3339(now),
  });
  status.conditions = conditions;
}
