/**
 * The `statefulset` controller (apps/v1 StatefulSet): informers on sets and pods, a rate-limited
 * queue of set keys (--concurrent-statefulset-syncs workers), and a sync that claims the set's pods
 * (adopting orphans named `<set>-<ordinal>`, releasing pods it no longer selects), creates and
 * deletes pods as statefulset-core.ts decides (stable names, ordered or parallel, rolling updates
 * by revision), and writes the set's status through the status subresource.
 *
 * Left out against upstream:
 * - volumeClaimTemplates and persistentVolumeClaimRetentionPolicy: orch has no volumes; a set that
 *   has claim templates runs without them and the controller logs it once.
 * - ControllerRevision objects (so `kubectl rollout history/undo` of a set): the revision is the
 *   name `<set>-<template hash>`, kept in the pods' `controller-revision-hash` label and the
 *   status. Without the old templates, a pod below the partition that must be recreated gets the
 *   set's current template, where upstream recreates it at the current (old) revision.
 * - Repairing a pod's identity (upstream relabels a pod whose pod-name/pod-index labels were
 *   edited away, event SuccessfulUpdate) and rollingUpdate.maxUnavailable (behind an alpha gate
 *   in 1.32, off by default there too).
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
import type { ControllerContext, ControllerDescriptor, RunningController } from './types.js';
import { runQueueWorkers } from './queue-workers.js';
import { isNotFound, objectKey, ownerEvents, ownerHandlers } from './owners.js';
import {
  adoptionPatch,
  claimPods,
  controllerRefOf,
  controllerRefTo,
  Expectations,
  podKey,
  releasePatch,
  selectorMatches,
  slowStartBatch,
  SLOW_START_INITIAL_BATCH_SIZE,
  type OwnerReference,
  type Pod,
  type Selector,
} from './replica-set-core.js';
import { labelSelectorRequirements, PODS } from './replicaset.js';
import { isMemberOf, planStatefulSet, statusChanged, type RemoveReason, type StatefulSet, type StatefulSetStatus } from './statefulset-core.js';

export const STATEFUL_SETS: ResourceRef = { group: 'apps', version: 'v1', resource: 'statefulsets' };
const STRATEGIC = 'application/strategic-merge-patch+json';
/** Upstream's retry.DefaultRetry allows 5 attempts; conflicts here come from one lagging cache, so fewer do. */
const STATUS_UPDATE_RETRIES = 3;

export function startStatefulSetController(ctx: ControllerContext, signal: AbortSignal): RunningController {
  const workers = Math.max(1, Number(ctx.options['concurrent-statefulset-syncs'] ?? 5));
  const log = ctx.logger;
  const sets = ctx.informers.informerFor<StatefulSet>(STATEFUL_SETS);
  const pods = ctx.informers.informerFor<Pod>(PODS);
  const queue = new RateLimitingQueue<string>({ name: 'statefulset', metrics: ctx.metrics });
  const expectations = new Expectations(() => ctx.now());
  const stats = { created: 0, deleted: 0, syncs: 0 };
  const warned = new Set<string>();
  const keyOf = objectKey;
  const record = ownerEvents<StatefulSet>(ctx, 'statefulset-controller', 'apps/v1', 'StatefulSet');
  /** Upstream's recordPodEvent: `<verb> Pod <pod> in StatefulSet <set> successful`, or `failed error: <err>`. */
  const recordPodEvent = (verb: 'create' | 'delete', set: StatefulSet, pod: Pod, error?: unknown) => {
    const action = `${verb} Pod ${pod.metadata.name ?? ''} in StatefulSet ${set.metadata.name ?? ''}`;
    const title = verb === 'create' ? 'Create' : 'Delete';
    if (error === undefined) record(set, 'Normal', `Successful${title}`, `${action} successful`);
    else record(set, 'Warning', `Failed${title}`, `${action} failed error: ${(error as Error).message ?? String(error)}`);
  };

  /** The set a pod's controller reference names, when it is still that set. */
  const setOf = (namespace: string, ref: OwnerReference | undefined): StatefulSet | undefined => {
    if (!ref || ref.kind !== 'StatefulSet' || !ref.apiVersion.startsWith('apps/')) return undefined;
    const set = sets.indexer.getByKey(`${namespace}/${ref.name}`);
    return set?.metadata.uid === ref.uid ? set : undefined;
  };
  /** Sets that could adopt an orphan pod (upstream's getPodStatefulSets). */
  const setsSelecting = (pod: Pod): StatefulSet[] =>
    sets.indexer.byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? '').filter((s) => selectorMatches(labelSelectorRequirements(s.spec?.selector), pod.metadata.labels));

  const onPodGone = (pod: Pod) => {
    const set = setOf(pod.metadata.namespace ?? '', controllerRefOf(pod));
    if (!set) return;
    expectations.deletionObserved(keyOf(set), podKey(pod));
    queue.add(keyOf(set));
  };

  const registrations: HandlerRegistration[] = [
    pods.addEventHandler({
      onAdd: (pod) => {
        if (pod.metadata.deletionTimestamp) return onPodGone(pod);
        const ref = controllerRefOf(pod);
        if (!ref) {
          for (const set of setsSelecting(pod)) queue.add(keyOf(set));
          return;
        }
        const set = setOf(pod.metadata.namespace ?? '', ref);
        if (!set) return;
        expectations.creationObserved(keyOf(set));
        queue.add(keyOf(set));
      },
      onUpdate: (old, pod) => {
        if (old.metadata.resourceVersion === pod.metadata.resourceVersion) return;
        // A graceful deletion starting is the deletion this controller waits for.
        if (pod.metadata.deletionTimestamp) return onPodGone(pod);
        const oldRef = controllerRefOf(old);
        const ref = controllerRefOf(pod);
        if (oldRef && JSON.stringify(oldRef) !== JSON.stringify(ref)) {
          const previous = setOf(old.metadata.namespace ?? '', oldRef);
          if (previous) queue.add(keyOf(previous));
        }
        if (ref) {
          const set = setOf(pod.metadata.namespace ?? '', ref);
          if (set) queue.add(keyOf(set));
          return;
        }
        if (JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(pod.metadata.labels ?? {}) || oldRef) {
          for (const set of setsSelecting(pod)) queue.add(keyOf(set));
        }
      },
      onDelete: (object) => onPodGone(deletedObject(object as Pod | DeletedFinalStateUnknown<Pod>)),
    }),
    sets.addEventHandler(ownerHandlers<StatefulSet>(queue, (key) => expectations.delete(key))),
  ];

  const setPath = (set: StatefulSet) => `${resourcePath({ ...STATEFUL_SETS, namespace: set.metadata.namespace })}/${encodeURIComponent(set.metadata.name ?? '')}`;
  const podPath = (pod: Pod) => `/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace ?? '')}/pods/${encodeURIComponent(pod.metadata.name ?? '')}`;

  /** Upstream's RecheckDeletionTimestamp: adopt only for a live set that is still the same object. */
  const checkCanAdopt = async (set: StatefulSet): Promise<void> => {
    const fresh = await ctx.client.get<StatefulSet>(setPath(set));
    if (fresh.metadata.uid !== set.metadata.uid) throw new Error(`original StatefulSet ${keyOf(set)} is gone: got uid ${fresh.metadata.uid}, wanted ${set.metadata.uid}`);
    if (fresh.metadata.deletionTimestamp) throw new Error(`StatefulSet ${keyOf(set)} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
  };

  /**
   * Upstream's getPodsForStatefulSet: a pod belongs to the set when the selector matches and its
   * name is `<set>-<ordinal>`; orphans that do are adopted, owned pods that do not are released.
   */
  const claim = async (set: StatefulSet, selector: Selector): Promise<Pod[]> => {
    const decision = claimPods(set, selector, pods.indexer.byIndex(NAMESPACE_INDEX, set.metadata.namespace ?? ''));
    const owned = decision.owned.filter((p) => isMemberOf(set, p));
    const release = [...decision.release, ...decision.owned.filter((p) => !isMemberOf(set, p))];
    const adopt = set.metadata.deletionTimestamp ? [] : decision.adopt.filter((p) => isMemberOf(set, p));
    if (adopt.length > 0) {
      await checkCanAdopt(set);
      const ref = controllerRefTo(set, 'apps/v1', 'StatefulSet');
      for (const pod of adopt) {
        try {
          owned.push(await ctx.client.patch<Pod>(podPath(pod), STRATEGIC, adoptionPatch(pod, ref)));
          log.info('Adopted pod', 'statefulSet', keyOf(set), 'pod', podKey(pod));
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
      }
    }
    for (const pod of release) {
      try {
        await ctx.client.patch(podPath(pod), STRATEGIC, releasePatch(pod, set.metadata.uid!));
        log.info('Released pod', 'statefulSet', keyOf(set), 'pod', podKey(pod));
      } catch (error) {
        // Gone, or replaced by a pod with another uid (422): nothing left to release.
        if (!isNotFound(error) && !(error instanceof ApiStatusError && error.code === 422)) throw error;
      }
    }
    return owned;
  };

  const createPods = async (set: StatefulSet, key: string, create: Pod[]): Promise<void> => {
    expectations.expectCreations(key, create.length);
    const path = `/api/v1/namespaces/${encodeURIComponent(set.metadata.namespace ?? '')}/pods`;
    let next = 0;
    // Parallel sets create many pods at once: slow start keeps a rejected template to a few requests.
    const { successes, error } = await slowStartBatch(create.length, SLOW_START_INITIAL_BATCH_SIZE, async () => {
      const pod = create[next++]!;
      try {
        await ctx.client.request<Pod>({ method: 'POST', path, body: pod });
        stats.created++;
        recordPodEvent('create', set, pod);
      } catch (err) {
        // Upstream records no event for AlreadyExists (a cache behind the API) and retries the sync.
        if (!(err instanceof ApiStatusError && err.code === 409)) recordPodEvent('create', set, pod, err);
        throw err;
      }
    });
    for (let i = successes; i < create.length; i++) expectations.creationObserved(key);
    if (error) throw error;
  };

  const deletePods = async (set: StatefulSet, key: string, remove: { pod: Pod; reason: RemoveReason }[]): Promise<void> => {
    expectations.expectDeletions(key, remove.map((r) => podKey(r.pod)));
    const results = await Promise.allSettled(
      remove.map(async ({ pod, reason }) => {
        log.info('Deleting pod of StatefulSet', 'statefulSet', key, 'pod', pod.metadata.name ?? '', 'reason', reason);
        try {
          await ctx.client.request({ method: 'DELETE', path: podPath(pod) });
          stats.deleted++;
          recordPodEvent('delete', set, pod);
        } catch (err) {
          expectations.deletionObserved(key, podKey(pod));
          if (isNotFound(err)) return;
          recordPodEvent('delete', set, pod, err);
          throw err;
        }
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  };

  /**
   * Writes status through the status subresource. The cached set often lags the previous sync's
   * own write; on a conflict, retry on a fresh copy (upstream's RetryOnConflict), which also skips
   * the write when that copy already has this status.
   */
  const writeStatus = async (set: StatefulSet, status: StatefulSetStatus): Promise<void> => {
    let current = set;
    for (let attempt = 0; statusChanged(current, status); attempt++) {
      try {
        await ctx.client.request({ method: 'PUT', path: `${setPath(current)}/status`, body: { ...current, status } });
        return;
      } catch (error) {
        if (attempt >= STATUS_UPDATE_RETRIES || !(error instanceof ApiStatusError && error.code === 409)) throw error;
        current = await ctx.client.get<StatefulSet>(setPath(set));
        if (current.metadata.uid !== set.metadata.uid) return;
      }
    }
  };

  const sync = async (key: string): Promise<void> => {
    if (signal.aborted) return;
    stats.syncs++;
    const set = sets.indexer.getByKey(key);
    if (!set) {
      expectations.delete(key);
      warned.delete(key);
      return;
    }
    if ((set.spec?.volumeClaimTemplates?.length ?? 0) > 0 && !warned.has(key)) {
      warned.add(key);
      log.warning('StatefulSet has volumeClaimTemplates, which orch does not support (no volumes); running its pods without them', 'statefulSet', key);
    }
    const selector = labelSelectorRequirements(set.spec?.selector);
    // An empty or invalid selector would release every pod; upstream stops at it too.
    if (selector.length === 0) {
      log.error('StatefulSet has an empty or invalid selector; not syncing it', 'statefulSet', key);
      return;
    }
    const owned = await claim(set, selector);
    const plan = planStatefulSet(set, owned, controllerRefTo(set, 'apps/v1', 'StatefulSet'), ctx.now());
    let manageError: unknown;
    if (expectations.satisfied(key) && !set.metadata.deletionTimestamp) {
      try {
        // One kind of change per sync: the expectations record one batch, and a pod deleted now is
        // recreated (or the next ordinal created) by the sync its deletion triggers.
        if (plan.remove.length > 0) {
          await deletePods(set, key, plan.remove);
          // A pod already gone sends no event: make sure the creations are not left waiting for one.
          if (plan.create.length > 0) queue.add(key);
        } else if (plan.create.length > 0) await createPods(set, key, plan.create);
      } catch (error) {
        manageError = error;
      }
    }
    // The status is written even when a change failed, as upstream does.
    await writeStatus(set, plan.status);
    if (manageError) throw manageError;
    if (plan.requeueAfterMs !== undefined) queue.addAfter(key, plan.requeueAfterMs + 100);
  };

  const done = runQueueWorkers({ ctx, signal, queue, workers, sync, name: 'statefulset', registrations });

  return {
    done,
    snapshot: () => ({
      name: 'statefulset',
      workers,
      queueDepth: queue.len(),
      details: { statefulSets: sets.indexer.size, podsCreated: stats.created, podsDeleted: stats.deleted, syncs: stats.syncs },
    }),
  };
}

export const statefulSetController: ControllerDescriptor = {
  name: 'statefulset',
  enabledByDefault: true,
  start: startStatefulSetController,
};
