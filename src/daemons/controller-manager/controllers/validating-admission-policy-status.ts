/**
 * The `validatingadmissionpolicy-status-controller`: writes each ValidatingAdmissionPolicy's status
 * for its new generations, `observedGeneration` and `typeChecking.expressionWarnings` (the
 * expressions type-checked against the schemas of the kinds the policy names, as upstream's
 * controller does), with --concurrent-validating-admission-policy-status-syncs workers.
 */
import { ApiStatusError } from '../../../client/errors.js';
import { RateLimitingQueue, resourcePath, type DeletedFinalStateUnknown, deletedObject, type ResourceRef } from '../../../client/informers/index.js';
import { typeCheckPolicy } from '../../../api/cel/policy-typecheck.js';
import { names } from '../../../api/names.js';
import type { JsonObject, JsonValue } from '../../../patch/types.js';
import type { ControllerContext, ControllerDescriptor, RunningController } from './types.js';
import { runQueueWorkers } from './queue-workers.js';
import { isNotFound } from './owners.js';

interface Policy {
  metadata: { name?: string; generation?: number; resourceVersion?: string };
  status?: { observedGeneration?: number };
  [key: string]: unknown;
}

const policies = (): ResourceRef => ({ group: names().groups.admissionregistration, version: 'v1', resource: 'validatingadmissionpolicies' });

/** The status a policy should have, or undefined when its generation is already observed. */
export function desiredStatus(policy: Policy): JsonObject | undefined {
  const generation = policy.metadata.generation ?? 1;
  if (policy.status?.observedGeneration === generation) return undefined;
  const warnings = typeCheckPolicy(policy as unknown as JsonObject);
  return { observedGeneration: generation, typeChecking: warnings.length ? { expressionWarnings: warnings as unknown as JsonValue } : {} };
}

function start(ctx: ControllerContext, signal: AbortSignal): RunningController {
  const workers = Math.max(1, Number(ctx.options['concurrent-validating-admission-policy-status-syncs'] ?? 5));
  const ref = policies();
  const informer = ctx.informers.informerFor<Policy>(ref);
  const queue = new RateLimitingQueue<string>({ name: 'validatingadmissionpolicy-status', metrics: ctx.metrics });
  const stats = { written: 0 };
  const enqueue = (p: Policy) => {
    if (p.metadata.name && p.status?.observedGeneration !== (p.metadata.generation ?? 1)) queue.add(p.metadata.name);
  };
  const registrations = [
    informer.addEventHandler({
      onAdd: enqueue,
      onUpdate: (_old, p) => enqueue(p),
      onDelete: (object) => queue.forget(deletedObject(object as Policy | DeletedFinalStateUnknown<Policy>).metadata.name ?? ''),
    }),
  ];

  const sync = async (name: string): Promise<void> => {
    const policy = informer.indexer.getByKey(name);
    if (!policy) return;
    const status = desiredStatus(policy);
    if (!status) return;
    try {
      await ctx.client.request({
        method: 'PUT',
        path: `${resourcePath(ref)}/${encodeURIComponent(name)}/status`,
        body: { ...policy, apiVersion: `${ref.group}/${ref.version}`, kind: 'ValidatingAdmissionPolicy', status },
      });
      stats.written++;
    } catch (error) {
      // Gone, or changed since the cache saw it (409): its next event brings it back here.
      if (isNotFound(error) || (error instanceof ApiStatusError && error.code === 409)) return;
      throw error;
    }
  };

  const done = runQueueWorkers({ ctx, signal, queue, workers, sync, name: 'validatingadmissionpolicy-status', registrations });
  return {
    done,
    snapshot: () => ({ name: validatingAdmissionPolicyStatusController.name, workers, queueDepth: queue.len(), details: { statusesWritten: stats.written } }),
  };
}

export const validatingAdmissionPolicyStatusController: ControllerDescriptor = {
  name: 'validatingadmissionpolicy-status-controller',
  enabledByDefault: true,
  start,
};
