/**
 * The pod garbage collector (upstream pkg/controller/podgc): every gcCheckPeriod it deletes
 * - finished pods (Succeeded/Failed) beyond `--terminated-pod-gc-threshold`, evicted ones first, then
 *   oldest first (0 or less keeps them all);
 * - terminating pods on nodes that are not Ready and carry the `node.orch.io/out-of-service` taint;
 * - pods bound to nodes that no longer exist, once the node has been missing for a quarantine
 *   (the informer may lag a node's creation) and the API server confirms it is gone; they are first
 *   marked Failed with a DisruptionTarget condition;
 * - pods being deleted that were never scheduled (no agent will ever finish them).
 * Deletions are forced (grace period 0); a pod not finished yet is marked Failed first, as upstream
 * does so that job controllers see it fail.
 *
 * The selection rules are pure functions, exported for tests.
 */
import { names } from '../../../api/names.js';
import { ApiStatusError } from '../../../client/errors.js';
import { RateLimitingQueue, realClock, sleep, type ApiObject, type ResourceRef, type TimerClock } from '../../../client/informers/index.js';
import type { ControllerContext, ControllerDescriptor, RunningController } from './types.js';

/** Upstream's gcCheckPeriod. */
export const GC_CHECK_PERIOD_MS = 20_000;
/** Upstream's quarantineTime: how long a node must be missing before its pods are collected. */
export const QUARANTINE_MS = 40_000;
export const outOfServiceTaint = (): string => names().taints.outOfService;

const PODS: ResourceRef = { group: '', version: 'v1', resource: 'pods' };
const NODES: ResourceRef = { group: '', version: 'v1', resource: 'nodes' };
/** Deletions in flight at once within one pass (upstream starts a goroutine per pod). */
const DELETE_CONCURRENCY = 20;

export interface Pod extends ApiObject {
  metadata?: ApiObject['metadata'] & { creationTimestamp?: string; deletionTimestamp?: string };
  spec?: { nodeName?: string };
  status?: { phase?: string; reason?: string };
}

export interface Node extends ApiObject {
  spec?: { taints?: { key: string; effect?: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

// ---------------------------------------------------------------------------------------------
// Pure: which pods go.

export function isTerminated(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

function isEvicted(pod: Pod): boolean {
  return pod.status?.phase === 'Failed' && pod.status?.reason === 'Evicted';
}

/** Upstream's byEvictionAndCreationTimestamp: evicted first, then oldest, then by name. */
export function byEvictionAndCreation(a: Pod, b: Pod): number {
  const evicted = Number(isEvicted(b)) - Number(isEvicted(a));
  if (evicted !== 0) return evicted;
  const ta = Date.parse(a.metadata?.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata?.creationTimestamp ?? '') || 0;
  if (ta !== tb) return ta - tb;
  const na = a.metadata?.name ?? '';
  const nb = b.metadata?.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/** The finished pods over the threshold, in deletion order; none when the threshold is 0 or less. */
export function terminatedPodsToDelete(pods: readonly Pod[], threshold: number): Pod[] {
  if (threshold <= 0) return [];
  const terminated = pods.filter(isTerminated);
  const excess = terminated.length - threshold;
  if (excess <= 0) return [];
  return terminated.sort(byEvictionAndCreation).slice(0, excess);
}

function isReady(node: Node): boolean {
  return (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Terminating pods on nodes declared out of service (not Ready, with the out-of-service taint). */
export function outOfServiceTerminatingPods(pods: readonly Pod[], nodes: ReadonlyMap<string, Node>): Pod[] {
  return pods
    .filter((pod) => {
      if (isTerminated(pod) || !pod.metadata?.deletionTimestamp) return false;
      const node = nodes.get(pod.spec?.nodeName ?? '');
      return node !== undefined && !isReady(node) && (node.spec?.taints ?? []).some((t) => t.key === outOfServiceTaint());
    })
    .sort(byEvictionAndCreation);
}

/** Names of nodes pods are bound to that the node cache does not know. */
export function unknownNodeNames(pods: readonly Pod[], nodes: ReadonlyMap<string, Node>): string[] {
  const names = new Set<string>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (node && !nodes.has(node)) names.add(node);
  }
  return [...names];
}

/** Pods being deleted that were never bound to a node. */
export function unscheduledTerminatingPods(pods: readonly Pod[]): Pod[] {
  return pods.filter((pod) => pod.metadata?.deletionTimestamp && !pod.spec?.nodeName).sort(byEvictionAndCreation);
}

// ---------------------------------------------------------------------------------------------
// The controller.

export interface PodGcTiming {
  /** Time between passes (default upstream's 20s). */
  gcCheckPeriodMs?: number;
  /** How long a node must stay missing before its pods go (default upstream's 40s). */
  quarantineMs?: number;
  clock?: TimerClock;
}

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
}

function isNotFound(error: unknown): boolean {
  return error instanceof ApiStatusError && error.code === 404;
}

class PodGc {
  readonly pods;
  readonly nodes;
  /** Nodes seen missing, each released once its quarantine is over (upstream's orphaned_pods_nodes queue). */
  readonly nodeQueue: RateLimitingQueue<string>;
  deletedTotal = 0;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly threshold: number,
    private readonly quarantineMs: number,
    clock: TimerClock,
  ) {
    this.pods = ctx.informers.informerFor<Pod>(PODS);
    this.nodes = ctx.informers.informerFor<Node>(NODES);
    this.nodeQueue = new RateLimitingQueue<string>({ name: 'orphaned_pods_nodes', metrics: ctx.metrics, clock });
  }

  async gc(): Promise<void> {
    const pods = this.pods.indexer.list();
    const nodes = new Map(this.nodes.indexer.list().map((n) => [n.metadata?.name ?? '', n]));
    await this.deleteAll(terminatedPodsToDelete(pods, this.threshold), 'terminated');
    await this.deleteAll(outOfServiceTerminatingPods(pods, nodes), 'out-of-service');
    await this.gcOrphaned(pods, nodes);
    await this.deleteAll(unscheduledTerminatingPods(pods), 'unscheduled terminating');
  }

  private async gcOrphaned(pods: Pod[], nodes: Map<string, Node>): Promise<void> {
    for (const name of unknownNodeNames(pods, nodes)) this.nodeQueue.addAfter(name, this.quarantineMs);
    const deletedNodes = await this.discoverDeletedNodes(nodes);
    if (deletedNodes.size === 0) return;
    const condition: Condition = {
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'DeletionByPodGC',
      message: 'PodGC: node no longer exists',
      lastTransitionTime: new Date(this.ctx.now()).toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    const orphaned = pods.filter((pod) => deletedNodes.has(pod.spec?.nodeName ?? ''));
    await this.deleteAll(orphaned, 'orphaned', condition);
  }

  /** The quarantined nodes whose time is up and that the API server confirms are gone. */
  private async discoverDeletedNodes(nodes: Map<string, Node>): Promise<Set<string>> {
    const deleted = new Set<string>();
    while (this.nodeQueue.len() > 0) {
      const name = await this.nodeQueue.get();
      if (name === undefined) break;
      try {
        if (nodes.has(name)) continue;
        await this.ctx.client.get(`/api/v1/nodes/${encodeURIComponent(name)}`);
      } catch (error) {
        if (isNotFound(error)) deleted.add(name);
        // Any other failure: the node comes back to the queue on a later pass if still needed.
        else this.ctx.logger.error('Error while getting node', 'node', name, 'err', String(error));
      } finally {
        this.nodeQueue.done(name);
      }
    }
    return deleted;
  }

  private async deleteAll(pods: Pod[], why: string, condition?: Condition): Promise<void> {
    if (pods.length === 0) return;
    this.ctx.logger.info('Garbage collecting pods', 'reason', why, 'numPods', pods.length);
    for (let i = 0; i < pods.length; i += DELETE_CONCURRENCY) {
      await Promise.all(pods.slice(i, i + DELETE_CONCURRENCY).map((pod) => this.markFailedAndDelete(pod, condition).then(
        () => void this.deletedTotal++,
        (error: unknown) => this.ctx.logger.error('Failed to delete pod', 'pod', `${pod.metadata?.namespace}/${pod.metadata?.name}`, 'err', String(error)),
      )));
    }
  }

  /** Marks an unfinished pod Failed (so owners see it fail), then deletes it without grace. */
  private async markFailedAndDelete(pod: Pod, condition?: Condition): Promise<void> {
    const path = `/api/v1/namespaces/${encodeURIComponent(pod.metadata?.namespace ?? '')}/pods/${encodeURIComponent(pod.metadata?.name ?? '')}`;
    this.ctx.logger.info('PodGC is force deleting Pod', 'pod', `${pod.metadata?.namespace}/${pod.metadata?.name}`);
    try {
      if (!isTerminated(pod)) {
        const status = { phase: 'Failed', ...(condition ? { conditions: [condition] } : {}) };
        await this.ctx.client.patch(`${path}/status`, 'application/strategic-merge-patch+json', { status });
      }
      await this.ctx.client.request({ method: 'DELETE', path, body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}

/** The podgc descriptor; tests shorten the period and the quarantine. */
export function createPodGcController(timing: PodGcTiming = {}): ControllerDescriptor {
  const periodMs = timing.gcCheckPeriodMs ?? GC_CHECK_PERIOD_MS;
  const quarantineMs = timing.quarantineMs ?? QUARANTINE_MS;
  const clock = timing.clock ?? realClock;

  function start(ctx: ControllerContext, signal: AbortSignal): RunningController {
    const value = ctx.options['terminated-pod-gc-threshold'];
    const threshold = typeof value === 'number' ? value : 12500;
    const gc = new PodGc(ctx, threshold, quarantineMs, clock);

    const done = (async () => {
      ctx.informers.start();
      const synced = await Promise.all([gc.pods.waitForSync({ signal }), gc.nodes.waitForSync({ signal })]);
      // As upstream's wait.Until: a pass, then the period, until stopped.
      while (!signal.aborted && synced.every(Boolean)) {
        try {
          await gc.gc();
        } catch (error) {
          ctx.logger.error('Pod garbage collection failed', 'err', String(error));
        }
        await sleep(clock, periodMs, signal);
      }
      gc.nodeQueue.shutDown();
    })();

    return {
      done,
      snapshot: () => ({
        name: 'podgc',
        workers: 1,
        queueDepth: gc.nodeQueue.len() + gc.nodeQueue.waitingLen(),
        details: { threshold, deleted: gc.deletedTotal, quarantinedNodes: gc.nodeQueue.waitingLen() },
      }),
    };
  }

  return { name: 'podgc', enabledByDefault: true, start };
}

export const podGcController = createPodGcController();

export default podGcController;
