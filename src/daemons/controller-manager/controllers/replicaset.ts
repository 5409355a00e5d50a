/**
 * The `replicaset` controller (apps/v1 ReplicaSet) and the runner it shares with the
 * `replicationcontroller` controller, as upstream's RC manager is the RS manager over another kind:
 * informers on the owners and on pods, a rate-limited queue of owner keys, and a sync that claims
 * pods, creates or deletes the difference (decisions in replica-set-core.ts) and writes status
 * through the status subresource.
 */
import { ApiStatusError } from '../../../client/errors.js';
import {
  deletedObject,
  NAMESPACE_INDEX,
  RateLimitingQueue,
  resourcePath,
  type DeletedFinalStateUnknown,
  type HandlerRegistration,
  type ResourceRef,
} from '../../../client/informers/index.js';
import { parseLabelSelector, labelSelectorString, type LabelSelectorObject } from '../../../api/selectors.js';
import type { ControllerContext, ControllerDescriptor, RunningController } from './types.js';
import { runQueueWorkers } from './queue-workers.js';
import { isNamespaceTerminating, isNotFound, objectKey, ownerEvents, podControl } from './owners.js';
import {
  adoptionPatch,
  availabilityRecheckMs,
  calculateReplicaStatus,
  claimPods,
  controllerRefOf,
  controllerRefTo,
  Expectations,
  isPodActive,
  isPodReady,
  planReplicas,
  podFromTemplate,
  podKey,
  releasePatch,
  selectorMatches,
  slowStartBatch,
  SLOW_START_INITIAL_BATCH_SIZE,
  statusChanged,
  type OwnerReference,
  type Pod,
  type ReplicaOwner,
  type ReplicaStatus,
  type Selector,
} from './replica-set-core.js';

/** What differs between the kinds one runner serves. */
export interface ReplicaKind {
  /** The controller's name (`replicaset`), also its queue's metrics name. */
  controllerName: string;
  /** The option giving the worker count (`concurrent-replicaset-syncs`). */
  workersOption: string;
  /** The reporting component of its events (upstream's `replicaset-controller`). */
  eventComponent: string;
  ref: ResourceRef;
  apiVersion: string;
  kind: string;
  /** The owner's selector as requirements; empty when invalid or empty (selects nothing). */
  selectorOf(owner: ReplicaOwner): Selector;
}

export const PODS: ResourceRef = { group: '', version: 'v1', resource: 'pods' };
const STATUS_UPDATE_RETRIES = 1;
const STRATEGIC = 'application/strategic-merge-patch+json';

/** A metav1.LabelSelector (matchLabels and matchExpressions) as requirements. */
export function labelSelectorRequirements(selector: unknown): Selector {
  if (typeof selector !== 'object' || selector === null) return [];
  try {
    const text = labelSelectorString(selector as LabelSelectorObject);
    return text === '' ? [] : parseLabelSelector(text);
  } catch {
    return [];
  }
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function ownerPath(kind: ReplicaKind, namespace: string, name?: string): string {
  const base = resourcePath({ ...kind.ref, namespace });
  return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
}

/** Starts one controller of `kind`; see the module comment. */
export function startReplicaController(ctx: ControllerContext, signal: AbortSignal, kind: ReplicaKind): RunningController {
  const workers = Math.max(1, Number(ctx.options[kind.workersOption] ?? 5));
  const log = ctx.logger;
  const owners = ctx.informers.informerFor<ReplicaOwner>(kind.ref);
  const pods = ctx.informers.informerFor<Pod>(PODS);
  const queue = new RateLimitingQueue<string>({ name: kind.controllerName, metrics: ctx.metrics });
  const expectations = new Expectations(() => ctx.now());
  const keyOf = objectKey;
  const stats = { creates: 0, deletes: 0, syncs: 0 };
  const control = podControl<ReplicaOwner>(ctx, ownerEvents<ReplicaOwner>(ctx, kind.eventComponent, kind.apiVersion, kind.kind));

  /** The owner a controller reference points at, when it is of this kind and still the same object. */
  const resolveRef = (namespace: string, ref: OwnerReference): ReplicaOwner | undefined => {
    if (ref.kind !== kind.kind || groupOf(ref.apiVersion) !== kind.ref.group) return undefined;
    const owner = owners.indexer.getByKey(`${namespace}/${ref.name}`);
    return owner?.metadata.uid === ref.uid ? owner : undefined;
  };
  const ownersMatching = (pod: Pod): ReplicaOwner[] =>
    owners.indexer.byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? '').filter((o) => selectorMatches(kind.selectorOf(o), pod.metadata.labels));

  // --- event handlers: upstream's addPod/updatePod/deletePod.
  const onPodDeleted = (pod: Pod) => {
    const ref = controllerRefOf(pod);
    const owner = ref && resolveRef(pod.metadata.namespace ?? '', ref);
    if (!owner) return;
    const key = keyOf(owner);
    expectations.deletionObserved(key, podKey(pod));
    queue.add(key);
  };
  const registrations: HandlerRegistration[] = [];
  registrations.push(
    pods.addEventHandler({
      onAdd: (pod) => {
        if (pod.metadata.deletionTimestamp) return onPodDeleted(pod);
        const ref = controllerRefOf(pod);
        if (ref) {
          const owner = resolveRef(pod.metadata.namespace ?? '', ref);
          if (!owner) return;
          expectations.creationObserved(keyOf(owner));
          queue.add(keyOf(owner));
          return;
        }
        for (const owner of ownersMatching(pod)) queue.add(keyOf(owner));
      },
      onUpdate: (old, pod) => {
        if (old.metadata.resourceVersion === pod.metadata.resourceVersion) return;
        const labelsChanged = JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(pod.metadata.labels ?? {});
        if (pod.metadata.deletionTimestamp) {
          onPodDeleted(pod);
          if (labelsChanged) onPodDeleted(old);
          return;
        }
        const oldRef = controllerRefOf(old);
        const ref = controllerRefOf(pod);
        const refChanged = JSON.stringify(oldRef) !== JSON.stringify(ref);
        if (refChanged && oldRef) {
          const previous = resolveRef(old.metadata.namespace ?? '', oldRef);
          if (previous) queue.add(keyOf(previous));
        }
        if (ref) {
          const owner = resolveRef(pod.metadata.namespace ?? '', ref);
          if (!owner) return;
          queue.add(keyOf(owner));
          // A pod that just became ready becomes available minReadySeconds later: look again then.
          const minReady = owner.spec?.minReadySeconds ?? 0;
          if (!isPodReady(old) && isPodReady(pod) && minReady > 0) queue.addAfter(keyOf(owner), minReady * 1000 + 1000);
          return;
        }
        if (labelsChanged || refChanged) for (const owner of ownersMatching(pod)) queue.add(keyOf(owner));
      },
      onDelete: (object) => onPodDeleted(deletedObject(object as Pod | DeletedFinalStateUnknown<Pod>)),
    }),
    owners.addEventHandler({
      onAdd: (owner) => queue.add(keyOf(owner)),
      onUpdate: (_old, owner) => queue.add(keyOf(owner)),
      onDelete: (object) => {
        const owner = deletedObject(object as ReplicaOwner | DeletedFinalStateUnknown<ReplicaOwner>);
        expectations.delete(keyOf(owner));
        queue.add(keyOf(owner));
      },
    }),
  );

  // --- the sync of one owner.

  /** Upstream's RecheckDeletionTimestamp: adopt only for a live owner that is still the same object. */
  const canAdopt = async (owner: ReplicaOwner): Promise<void> => {
    const fresh = await ctx.client.get<ReplicaOwner>(ownerPath(kind, owner.metadata.namespace!, owner.metadata.name!));
    if (fresh.metadata.uid !== owner.metadata.uid) {
      throw new Error(`original ${kind.kind} ${keyOf(owner)} is gone: got uid ${fresh.metadata.uid}, wanted ${owner.metadata.uid}`);
    }
    if (fresh.metadata.deletionTimestamp) throw new Error(`${kind.kind} ${keyOf(owner)} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
  };

  const podPath = (pod: Pod) => `/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace!)}/pods/${encodeURIComponent(pod.metadata.name!)}`;

  /** Claims the owner's pods (adopting and releasing through the API); returns the pods it owns. */
  const claim = async (owner: ReplicaOwner, selector: Selector, candidates: Pod[]): Promise<Pod[]> => {
    const decision = claimPods(owner, selector, candidates);
    const owned = [...decision.owned];
    if (decision.adopt.length > 0) {
      await canAdopt(owner);
      const ref = controllerRefTo(owner, kind.apiVersion, kind.kind);
      for (const pod of decision.adopt) {
        try {
          owned.push(await ctx.client.patch<Pod>(podPath(pod), STRATEGIC, adoptionPatch(pod, ref)));
          log.info('Adopted pod', kind.controllerName, keyOf(owner), 'pod', podKey(pod));
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
      }
    }
    for (const pod of decision.release) {
      try {
        await ctx.client.patch(podPath(pod), STRATEGIC, releasePatch(pod, owner.metadata.uid!));
        log.info('Released pod', kind.controllerName, keyOf(owner), 'pod', podKey(pod));
      } catch (error) {
        // Gone, or replaced by a pod with another uid (422): nothing left to release.
        if (!isNotFound(error) && !(error instanceof ApiStatusError && error.code === 422)) throw error;
      }
    }
    return owned;
  };

  /** Pods of the owner's siblings (replica sets of one deployment), for the same-node ranking. */
  const relatedPods = (owner: ReplicaOwner, namespacePods: Pod[]): Pod[] => {
    const parent = controllerRefOf(owner);
    const uids = new Set([owner.metadata.uid]);
    if (parent) {
      for (const sibling of owners.indexer.byIndex(NAMESPACE_INDEX, owner.metadata.namespace ?? '')) {
        if (controllerRefOf(sibling)?.uid === parent.uid) uids.add(sibling.metadata.uid);
      }
    }
    return namespacePods.filter((p) => uids.has(controllerRefOf(p)?.uid));
  };

  const manageReplicas = async (owner: ReplicaOwner, key: string, active: Pod[], namespacePods: Pod[]): Promise<void> => {
    const plan = planReplicas(owner.spec?.replicas ?? 1, active, relatedPods(owner, namespacePods), ctx.now());
    if (plan.action === 'create') {
      expectations.expectCreations(key, plan.count);
      const ref = controllerRefTo(owner, kind.apiVersion, kind.kind);
      const { successes, error } = await slowStartBatch(plan.count, SLOW_START_INITIAL_BATCH_SIZE, async () => {
        try {
          await control.createPod(owner, podFromTemplate(owner, ref));
          stats.creates++;
        } catch (err) {
          // A terminating namespace takes no pods; that is not this controller's failure.
          if (!isNamespaceTerminating(err)) throw err;
        }
      });
      // Creations never attempted will never be observed: stop expecting them.
      for (let i = successes; i < plan.count; i++) expectations.creationObserved(key);
      if (error) throw error;
    } else if (plan.action === 'delete') {
      expectations.expectDeletions(key, plan.pods.map(podKey));
      const { deleted, error } = await control.deletePods(owner, plan.pods, (pod) => expectations.deletionObserved(key, podKey(pod)));
      stats.deletes += deleted;
      if (error) throw error;
    }
  };

  /** Writes status through the status subresource; one retry on a fresh copy, as upstream. */
  const writeStatus = async (owner: ReplicaOwner, status: ReplicaStatus): Promise<ReplicaOwner> => {
    if (!statusChanged(owner, status)) return owner;
    let current = owner;
    for (let attempt = 0; ; attempt++) {
      const path = `${ownerPath(kind, current.metadata.namespace!, current.metadata.name!)}/status`;
      try {
        const next: ReplicaStatus = { ...status };
        if (current.metadata.generation) next.observedGeneration = current.metadata.generation;
        const body = { ...current, status: next };
        return (await ctx.client.request<ReplicaOwner>({ method: 'PUT', path, body })).body;
      } catch (error) {
        if (attempt >= STATUS_UPDATE_RETRIES) throw error;
        current = await ctx.client.get<ReplicaOwner>(ownerPath(kind, current.metadata.namespace!, current.metadata.name!));
      }
    }
  };

  const sync = async (key: string): Promise<void> => {
    if (signal.aborted) return;
    stats.syncs++;
    const owner = owners.indexer.getByKey(key);
    if (!owner) {
      expectations.delete(key);
      return;
    }
    const needsSync = expectations.satisfied(key);
    const selector = kind.selectorOf(owner);
    const namespacePods = pods.indexer.byIndex(NAMESPACE_INDEX, owner.metadata.namespace ?? '').filter(isPodActive);
    const active = await claim(owner, selector, namespacePods);
    let manageError: unknown;
    if (needsSync && !owner.metadata.deletionTimestamp) {
      try {
        await manageReplicas(owner, key, active, namespacePods);
      } catch (error) {
        manageError = error;
      }
    }
    const status = calculateReplicaStatus(owner, active, manageError, ctx.now());
    const updated = await writeStatus(owner, status);
    const recheck = manageError ? undefined : availabilityRecheckMs(updated, status);
    if (recheck !== undefined) queue.addAfter(key, recheck);
    if (manageError) throw manageError;
  };

  const done = runQueueWorkers({ ctx, signal, queue, workers, sync, name: kind.controllerName, registrations });

  return {
    done,
    snapshot: () => ({
      name: kind.controllerName,
      workers,
      queueDepth: queue.len(),
      details: { owners: owners.indexer.size, podsCreated: stats.creates, podsDeleted: stats.deletes, syncs: stats.syncs },
    }),
  };
}

export const REPLICA_SET_KIND: ReplicaKind = {
  controllerName: 'replicaset',
  eventComponent: 'replicaset-controller',
  workersOption: 'concurrent-replicaset-syncs',
  ref: { group: 'apps', version: 'v1', resource: 'replicasets' },
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  selectorOf: (owner) => labelSelectorRequirements(owner.spec?.selector),
};

export const replicaSetController: ControllerDescriptor = {
  name: 'replicaset',
  enabledByDefault: true,
  start: (ctx, signal) => startReplicaController(ctx, signal, REPLICA_SET_KIND),
};

export default replicaSetController;
