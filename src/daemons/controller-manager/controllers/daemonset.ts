/**
 * The `daemonset` controller (apps/v1 DaemonSet): informers on daemon sets, pods and nodes, a
 * rate-limited queue of daemon set keys (--concurrent-daemonset-syncs workers), and a sync that
 * keeps one pod on each eligible node: it creates the missing ones (bound to their node by a
 * required node affinity, as upstream since 1.12; the scheduler binds them), deletes those on nodes
 * no longer eligible, the surplus, and failed ones (which are then replaced), rolls a changed
 * template out within maxUnavailable, and writes status through the status subresource. A node
 * added or changed re-queues every daemon set. Decisions in daemonset-core.ts.
 *
 * Left out against upstream: ControllerRevisions (no history, so no `kubectl rollout undo`; the
 * template's hash is kept in the pod annotation orch.io/daemonset-template-hash, and pods carry no
 * `controller-revision-hash` or `pod-template-generation` label), RollingUpdate with maxSurge (a
 * daemon set asking for it is updated as with maxSurge 0 and the controller logs it), and adoption
 * or release of pods by the selector (only pods whose controller reference names the daemon set
 * count). Pods bound to a node that was deleted are left to pod GC, as upstream does.
 */
import {
  deletedObject,
  RateLimitingQueue,
  resourcePath,
  type DeletedFinalStateUnknown,
  type HandlerRegistration,
  type ResourceRef,
} from '../../../client/informers/index.js';
import type { ControllerContext, ControllerDescriptor, RunningController } from './types.js';
import { runQueueWorkers } from './queue-workers.js';
import { controlledBy, controllerOf, isNamespaceTerminating, objectKey, ownerEvents, ownerHandlers, podControl } from './owners.js';
import { controllerRefTo, Expectations, isPodReady, podKey, slowStartBatch, BURST_REPLICAS, SLOW_START_INITIAL_BATCH_SIZE, type Pod } from './replica-set-core.js';
import { PODS } from './replicaset.js';
import type { Node } from './scheduler.js';
import {
  availabilityRecheckMs,
  daemonPodFor,
  daemonSetStatus,
  daemonSetStatusChanged,
  FailedPodBackoff,
  failedPodBackoffKey,
  planDaemonPods,
  planRollingUpdate,
  templateHash,
  type DaemonSet,
  type DaemonSetStatus,
} from './daemonset-core.js';

export const DAEMON_SETS: ResourceRef = { group: 'apps', version: 'v1', resource: 'daemonsets' };
export const NODES: ResourceRef = { group: '', version: 'v1', resource: 'nodes' };

/** What of a node decides where daemons run: labels, taints, cordon, and the conditions' status. */
function nodeSchedulingView(node: Node): string {
  const conditions = (node.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`);
  return JSON.stringify([node.metadata?.labels ?? {}, node.spec?.taints ?? [], Boolean(node.spec?.unschedulable), conditions]);
}

export function startDaemonSetController(ctx: ControllerContext, signal: AbortSignal): RunningController {
  const workers = Math.max(1, Number(ctx.options['concurrent-daemonset-syncs'] ?? 2));
  const log = ctx.logger;
  const daemonSets = ctx.informers.informerFor<DaemonSet>(DAEMON_SETS);
  const pods = ctx.informers.informerFor<Pod>(PODS);
  const nodes = ctx.informers.informerFor<Node>(NODES);
  const queue = new RateLimitingQueue<string>({ name: 'daemonset', metrics: ctx.metrics });
  // Creations and deletions of one sync are awaited together (upstream sets both at once); the
  // shared Expectations keeps one kind per key, so each kind has its own.
  const creations = new Expectations(() => ctx.now());
  const deletions = new Expectations(() => ctx.now());
  const satisfied = (key: string) => creations.satisfied(key) && deletions.satisfied(key);
  const failedBackoff = new FailedPodBackoff();
  const stats = { created: 0, deleted: 0, syncs: 0 };
  const warned = new Set<string>();
  const keyOf = objectKey;
  const record = ownerEvents<DaemonSet>(ctx, 'daemonset-controller', 'apps/v1', 'DaemonSet');
  const daemonSetOf = (pod: Pod) => controllerOf(daemonSets, 'DaemonSet', pod);
  const podsOf = (ds: DaemonSet) => controlledBy(pods, ds);
  const control = podControl<DaemonSet>(ctx, record);
  const enqueueAll = () => {
    for (const ds of daemonSets.indexer.list()) queue.add(keyOf(ds));
  };

  const onPodDeleted = (pod: Pod) => {
    const ds = daemonSetOf(pod);
    if (!ds) return;
    deletions.deletionObserved(keyOf(ds), podKey(pod));
    queue.add(keyOf(ds));
  };
  const registrations: HandlerRegistration[] = [
    pods.addEventHandler({
      onAdd: (pod) => {
        if (pod.metadata.deletionTimestamp) return onPodDeleted(pod);
        const ds = daemonSetOf(pod);
        if (!ds) return;
        creations.creationObserved(keyOf(ds));
        queue.add(keyOf(ds));
      },
      onUpdate: (old, pod) => {
        if (old.metadata.resourceVersion === pod.metadata.resourceVersion) return;
        if (pod.metadata.deletionTimestamp) return onPodDeleted(pod);
        const ds = daemonSetOf(pod);
        if (!ds) return;
        queue.add(keyOf(ds));
        // A pod that just became ready becomes available minReadySeconds later: look again then.
        const minReady = ds.spec?.minReadySeconds ?? 0;
        if (!isPodReady(old) && isPodReady(pod) && minReady > 0) queue.addAfter(keyOf(ds), minReady * 1000 + 1000);
      },
      onDelete: (object) => onPodDeleted(deletedObject(object as Pod | DeletedFinalStateUnknown<Pod>)),
    }),
    daemonSets.addEventHandler(
      ownerHandlers<DaemonSet>(queue, (key, ds) => {
        creations.delete(key);
        deletions.delete(key);
        failedBackoff.forget(`${ds.metadata.uid ?? ''}/`);
      }),
    ),
    // Any node change that may move daemons re-queues every daemon set; heartbeats do not.
    nodes.addEventHandler({
      onAdd: () => enqueueAll(),
      onUpdate: (old, node) => {
        if (nodeSchedulingView(old) !== nodeSchedulingView(node)) enqueueAll();
      },
      onDelete: () => enqueueAll(),
    }),
  ];

  const dsPath = (ds: DaemonSet) => `${resourcePath({ ...DAEMON_SETS, namespace: ds.metadata.namespace })}/${encodeURIComponent(ds.metadata.name ?? '')}`;

  /** Upstream's syncNodes: creations in slow-start batches, then the deletions, at most a burst of each. */
  const syncNodes = async (ds: DaemonSet, key: string, createOn: string[], remove: Pod[], hash: string): Promise<void> => {
    const nodesToCreate = createOn.slice(0, BURST_REPLICAS);
    const podsToDelete = remove.slice(0, BURST_REPLICAS);
    if (nodesToCreate.length > 0) creations.expectCreations(key, nodesToCreate.length);
    if (podsToDelete.length > 0) deletions.expectDeletions(key, podsToDelete.map(podKey));
    const errors: unknown[] = [];

    const ref = controllerRefTo(ds, 'apps/v1', 'DaemonSet');
    let next = 0;
    const { successes, error } = await slowStartBatch(nodesToCreate.length, SLOW_START_INITIAL_BATCH_SIZE, async () => {
      const node = nodesToCreate[next++]!;
      try {
        await control.createPod(ds, daemonPodFor(ds, node, ref, hash));
        stats.created++;
      } catch (err) {
        // A terminating namespace takes no pods; that is not this controller's failure.
        if (!isNamespaceTerminating(err)) throw err;
        creations.creationObserved(key);
      }
    });
    // Creations that failed or were never tried will never be observed: stop expecting them.
    for (let i = successes; i < nodesToCreate.length; i++) creations.creationObserved(key);
    if (error) errors.push(error);

    const removed = await control.deletePods(ds, podsToDelete, (pod) => deletions.deletionObserved(key, podKey(pod)));
    stats.deleted += removed.deleted;
    if (removed.error) errors.push(removed.error);
    if (errors.length > 0) throw errors[0];
  };

  /** Upstream's manage: what each node needs, failed pods deleted no faster than their back-off allows. */
  const manage = async (ds: DaemonSet, key: string, ownPods: Pod[], nodeList: Node[], hash: string): Promise<void> => {
    const plan = planDaemonPods(ds, nodeList, ownPods);
    const remove = [...plan.remove];
    const now = ctx.now();
    for (const { pod, node } of plan.failed) {
      const backoffKey = failedPodBackoffKey(ds, node);
      const waitMs = failedBackoff.remainingMs(backoffKey, now);
      if (waitMs > 0) {
        queue.addAfter(key, waitMs);
        continue;
      }
      failedBackoff.next(backoffKey, now);
      record(ds, 'Warning', 'FailedDaemonPod', `Found failed daemon pod ${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''} on node ${node}, will try to kill it`);
      remove.push(pod);
    }
    for (const { pod, node } of plan.succeeded) {
      record(ds, 'Normal', 'SucceededDaemonPod', `Found succeeded daemon pod ${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''} on node ${node}, will try to delete it`);
      remove.push(pod);
    }
    if (plan.create.length > 0 || remove.length > 0) await syncNodes(ds, key, plan.create, remove, hash);
  };

  const writeStatus = async (ds: DaemonSet, status: DaemonSetStatus): Promise<void> => {
    if (!daemonSetStatusChanged(ds, status)) return;
    // Conditions and collisionCount are not this controller's to compute: they are kept as stored.
    const kept = { conditions: ds.status?.conditions, collisionCount: ds.status?.collisionCount };
    await ctx.client.request({ method: 'PUT', path: `${dsPath(ds)}/status`, body: { ...ds, status: { ...kept, ...status } } });
  };

  const warnUnsupported = (ds: DaemonSet, key: string) => {
    const surge = ds.spec?.updateStrategy?.rollingUpdate?.maxSurge;
    if (ds.spec?.updateStrategy?.type === 'RollingUpdate' && surge !== undefined && surge !== 0 && surge !== '0%' && !warned.has(key)) {
      warned.add(key);
      log.warning('DaemonSet uses fields orch does not implement yet; updating it with maxSurge 0', 'daemonset', key, 'fields', 'updateStrategy.rollingUpdate.maxSurge');
    }
  };

  const sync = async (key: string): Promise<void> => {
    if (signal.aborted) return;
    stats.syncs++;
    const ds = daemonSets.indexer.getByKey(key);
    if (!ds) {
      creations.delete(key);
      deletions.delete(key);
      return;
    }
    // The garbage collector deletes a daemon set's pods; nothing more to do.
    if (ds.metadata.deletionTimestamp) return;
    warnUnsupported(ds, key);
    const nodeList = nodes.indexer.list();
    const ownPods = podsOf(ds);
    const hash = templateHash(ds);
    if (!satisfied(key)) {
      // Earlier creations or deletions not yet seen: report only, without claiming this generation.
      await writeStatus(ds, daemonSetStatus(ds, nodeList, ownPods, hash, ctx.now(), false));
      return;
    }
    let syncError: unknown;
    try {
      await manage(ds, key, ownPods, nodeList, hash);
      // A rolling update waits until manage's own creations and deletions have been observed.
      if (satisfied(key) && (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
        const old = planRollingUpdate(ds, nodeList, ownPods, hash, ctx.now());
        if (old.length > 0) await syncNodes(ds, key, [], old, hash);
      }
    } catch (error) {
      syncError = error;
    }
    const status = daemonSetStatus(ds, nodeList, ownPods, hash, ctx.now(), true);
    await writeStatus(ds, status);
    const recheck = availabilityRecheckMs(ds, status);
    if (recheck !== undefined) queue.addAfter(key, recheck);
    if (syncError) throw syncError;
  };

  const done = runQueueWorkers({ ctx, signal, queue, workers, sync, name: 'daemonset', registrations });

  return {
    done,
    snapshot: () => ({
      name: 'daemonset',
      workers,
      queueDepth: queue.len(),
      details: { daemonSets: daemonSets.indexer.size, nodes: nodes.indexer.size, podsCreated: stats.created, podsDeleted: stats.deleted, syncs: stats.syncs },
    }),
  };
}

export const daemonSetController: ControllerDescriptor = {
  name: 'daemonset',
  enabledByDefault: true,
  start: startDaemonSetController,
};
