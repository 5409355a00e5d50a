/**
 * The node lifecycle controller (upstream pkg/controller/nodelifecycle + the taint eviction
 * controller), written against small interfaces: listers over the informers' caches and a client
 * for the few writes it makes. The decisions live in the pure modules next to this one; this class
 * holds the per-node and per-zone memory, sequences the passes and performs the writes.
 *
 * Three passes, as upstream runs them:
 * - monitorNodeHealth, every --node-monitor-period: node health (Ready -> Unknown), NoSchedule
 *   taints, queueing nodes for their NoExecute taint, marking pods not ready, zone states and rates;
 * - the NoExecute tainting pass, every 100 ms: each zone's queue hands out nodes at the zone's rate
 *   and they get `node.orch.io/unreachable` or `node.orch.io/not-ready` with effect NoExecute;
 * - the taint eviction pass (same cadence): pods on NoExecute-tainted nodes that do not tolerate
 *   the taints are evicted (client.evictPod) at once, tolerating pods after their
 *   tolerationSeconds. So pods leave failed nodes at the zone's rate: one node per 1/rate seconds.
 *
 * The caller drives the passes (tick(), processQueues()) or lets start() run them on the clock.
 * Passes never overlap: each waits for the previous one.
 */
import {klog, type Logger} from '../../../lib/klog.js';
import {systemClock, type Clock, type TimerHandle} from '../../shared/clock.js';
import {assessNodeHealth, type NodeHealthData} from './health.js';
import {
  DEFAULT_NODE_LIFECYCLE_OPTIONS,
  NODE_HEALTH_UPDATE_RETRY,
  NO_EXECUTE_TAINTING_PERIOD_MS,
  TAINT_RETRY_AFTER_MS,
  type NodeLifecycleOptions,
} from './options.js';
import {RateLimitedTimedQueue} from './rate-limited-queue.js';
import {TaintEvictionScheduler} from './taint-eviction.js';
import {notReadyNoExecute, unreachableNoExecute, noExecuteTaintFor, noScheduleTaintChange, swapTaints, taintExists} from './taints.js';
import {findCondition, formatTime, type Lease, type Node, type NodeCondition, type Pod, type Taint} from './types.js';
import {excludedFromDisruption, handleDisruption, zoneDisplayName, zoneKey, type ZoneCounts, type ZoneState} from './zones.js';

export interface NodeLister {
  /** Every node, from the informer's cache. */
  list(): Node[];
}

export interface LeaseLister {
  /** The node's Lease in `orch-node-lease` (name = node name), from the informer's cache. */
  get(nodeName: string): Lease | undefined;
}

export interface PodLister {
  /** Pods whose spec.nodeName is `nodeName`, from the informer's cache. */
  listOnNode(nodeName: string): Pod[];
}

export interface ControllerEvent {
  involvedObject: {kind: 'Node' | 'Pod'; name: string; namespace?: string; uid?: string};
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** The writes. Each may return a promise; a rejection counts as a failed write and is retried later. */
export interface NodeLifecycleClient {
  /** PUT /api/v1/nodes/<name>/status with this object. */
  updateNodeStatus(node: Node): unknown;
  /**
   * Sets spec.taints of the node to exactly this list (computed from the controller's latest view).
   * May resolve to the updated Node: its resourceVersion tells when the cache has caught up.
   */
  setTaints(nodeName: string, taints: Taint[]): unknown;
  /**
   * Evicts a pod for a NoExecute taint: upstream first sets DISRUPTION_TARGET_CONDITION on the pod
   * status, then DELETEs it with the default grace period.
   */
  evictPod(namespace: string, name: string): unknown;
  /** PUT .../pods/<name>/status: used to set pods' Ready condition False when their node stops being ready. */
  updatePodStatus?(pod: Pod): unknown;
  /** Records an Event (source `node-controller`). */
  recordEvent?(event: ControllerEvent): void;
}

export interface NodeLifecycleDeps {
  nodes: NodeLister;
  leases: LeaseLister;
  pods: PodLister;
  client: NodeLifecycleClient;
  /** Epoch milliseconds and timers; FakeClock in tests. */
  clock?: Clock;
  options?: Partial<NodeLifecycleOptions>;
  logger?: Logger;
}

export interface ZoneSnapshot {
  /** The zone key (`region:\0:zone`, "" for the unlabelled zone). */
  zone: string;
  /** The key for people: `region/zone` or `(cluster)`. */
  displayName: string;
  state: ZoneState;
  nodesReady: number;
  nodesNotReady: number;
  /** Nodes per second tainted for eviction in this zone now (0: stopped). */
  evictionRate: number;
  /** Nodes waiting in the zone's tainting queue. */
  queuedNodes: number;
}

export interface NodeSnapshot {
  name: string;
  zone: string;
  /** Status of the Ready condition as last seen ('Unknown' also when the node has none). */
  ready: string;
  /** Time since the controller last saw a sign of life (status heartbeat or Lease renewal); null before the first pass. */
  lastHeartbeatAgeMs: number | null;
  /** `key[=value]:effect`, as kubectl prints taints. */
  taints: string[];
  /** Waiting in its zone's queue for the NoExecute taint. */
  queuedForTainting: boolean;
  /** Pods of this node scheduled for eviction (deletion time not reached, or retrying). */
  pendingEvictions: number;
}

export interface NodeLifecycleSnapshot {
  /** Clock time of the snapshot, ms. */
  at: number;
  /** Every zone is fully disrupted: evictions are stopped everywhere. */
  allZonesFullyDisrupted: boolean;
  zones: ZoneSnapshot[];
  nodes: NodeSnapshot[];
}

export type SnapshotListener = (snapshot: NodeLifecycleSnapshot) => void;

interface TaintOverlay {
  /** resourceVersion of the cached node the write was computed from. */
  baseResourceVersion: string;
  /** resourceVersion the write produced, when the client returned it. */
  writtenResourceVersion?: string;
  taints: Taint[];
}

/**
 * Whether the cached node predates our taint write. Revisions are global and monotonic in orch, so
 * a numeric comparison with the written revision is exact; without one, any change of the cached
 * revision counts as caught up.
 */
function cacheIsBehind(cached: Node, overlay: TaintOverlay): boolean {
  const rv = cached.metadata.resourceVersion;
  const written = overlay.writtenResourceVersion;
  if (rv !== undefined && written !== undefined && /^\d+$/.test(rv) && /^\d+$/.test(written)) return BigInt(rv) < BigInt(written);
  return rv === overlay.baseResourceVersion;
}

function resourceVersionOf(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const rv = (result as {metadata?: {resourceVersion?: unknown}}).metadata?.resourceVersion;
  return typeof rv === 'string' ? rv : undefined;
}

function formatTaint(taint: Taint): string {
  return `${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class NodeLifecycleController {
  readonly options: Readonly<NodeLifecycleOptions>;
  private readonly clock: Clock;
  private readonly log: Logger;

  private readonly knownNodes = new Map<string, Node>();
  private readonly health = new Map<string, NodeHealthData>();
  private zoneStates = new Map<string, ZoneState>();
  private readonly tainters = new Map<string, RateLimitedTimedQueue>();
  private readonly evictions = new TaintEvictionScheduler();
  /** Nodes whose pods could not all be marked not ready; retried on the next pass. */
  private readonly nodesToRetry = new Set<string>();
  /**
   * Our own taint writes not yet visible in the cache: without this a pass working on a stale
   * cached node would write back its old taint list and drop a taint added moments before.
   */
  private readonly taintOverlays = new Map<string, TaintOverlay>();
  /** The cache as read at the start of the current pass. */
  private cache = new Map<string, Node>();
  private lastCounts = new Map<string, ZoneCounts>();
  private readonly lastReady = new Map<string, string>();

  private chain: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<SnapshotListener>();
  private timers: TimerHandle[] = [];
  private running = false;

  constructor(private readonly deps: NodeLifecycleDeps) {
    this.options = {...DEFAULT_NODE_LIFECYCLE_OPTIONS, ...deps.options};
    this.clock = deps.clock ?? systemClock;
    this.log = deps.logger ?? klog('node_lifecycle_controller.go');
  }

  /** One monitor pass followed by one tainting and eviction pass. */
  tick(): Promise<void> {
    return this.serialize(async () => {
      await this.monitorNodeHealth();
      await this.doNoExecuteTaintingPass();
      await this.doTaintEvictionPass();
    });
  }

  /** One health monitor pass alone (what runs every --node-monitor-period). */
  monitor(): Promise<void> {
    return this.serialize(() => this.monitorNodeHealth());
  }

  /** One tainting pass and one eviction pass (what runs every 100 ms). */
  processQueues(): Promise<void> {
    return this.serialize(async () => {
      await this.doNoExecuteTaintingPass();
      await this.doTaintEvictionPass();
    });
  }

  /** Runs the passes on the clock's timers until stop(). */
  start(): void {
    if (this.running) return;
    this.running = true;
    // The first monitor pass runs at once, as upstream's wait.Until does; then one per period.
    const every = (periodMs: number, pass: () => Promise<void>, firstDelayMs = periodMs) => {
      const schedule = (delayMs = periodMs) => {
        const handle = this.clock.setTimeout(() => {
          this.timers = this.timers.filter((t) => t !== handle);
          if (!this.running) return;
          pass().then(
            () => schedule(),
            (error) => {
              this.log.error('Node lifecycle pass failed', 'err', describeError(error));
              schedule();
            },
          );
        }, delayMs);
        handle.unref?.();
        this.timers.push(handle);
      };
      schedule(firstDelayMs);
    };
    every(this.options.nodeMonitorPeriodMs, () => this.monitor(), 0);
    every(NO_EXECUTE_TAINTING_PERIOD_MS, () => this.processQueues());
  }

  /** Stops the timers and waits for a pass in progress. */
  async stop(): Promise<void> {
    this.running = false;
    for (const handle of this.timers) this.clock.clearTimeout(handle);
    this.timers = [];
    await this.chain;
  }

  /** Called after every pass with a fresh snapshot; returns the unsubscribe function. */
  subscribe(listener: SnapshotListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  snapshot(): NodeLifecycleSnapshot {
    const now = this.clock.now();
    const zones: ZoneSnapshot[] = [...this.zoneStates].map(([zone, state]) => ({
      zone,
      displayName: zoneDisplayName(zone),
      state,
      nodesReady: this.lastCounts.get(zone)?.ready ?? 0,
      nodesNotReady: this.lastCounts.get(zone)?.notReady ?? 0,
      evictionRate: this.tainters.get(zone)?.qps ?? 0,
      queuedNodes: this.tainters.get(zone)?.length ?? 0,
    }));
    const nodes: NodeSnapshot[] = [...this.knownNodes.keys()].sort().map((name) => {
      const node = this.view(name) ?? this.knownNodes.get(name)!;
      const zone = zoneKey(node);
      const probe = this.health.get(name)?.probeTimestamp;
      return {
        name,
        zone,
        ready: this.lastReady.get(name) ?? 'Unknown',
        lastHeartbeatAgeMs: probe === undefined ? null : Math.max(0, now - probe),
        taints: (node.spec?.taints ?? []).map(formatTaint),
        queuedForTainting: this.tainters.get(zone)?.isQueued(name) ?? false,
        pendingEvictions: this.evictions.pendingOn(name),
      };
    });
    const allZonesFullyDisrupted = zones.length > 0 && zones.every((z) => z.state === 'FullDisruption');
    return {at: now, allZonesFullyDisrupted, zones, nodes};
  }

  // ---- passes ----

  private serialize(pass: () => Promise<void>): Promise<void> {
    const run = this.chain.then(pass);
    this.chain = run.catch(() => undefined);
    return run.finally(() => this.publish());
  }

  private publish(): void {
    if (this.listeners.size === 0) return;
    const snapshot = this.snapshot();
    for (const listener of [...this.listeners]) listener(snapshot);
  }

  /** Upstream monitorNodeHealth. */
  private async monitorNodeHealth(): Promise<void> {
    const nodes = this.refreshCache();
    const now = this.clock.now();
    const present = new Set(nodes.map((n) => n.metadata.name));

    for (const node of nodes) {
      const name = node.metadata.name;
      if (!this.knownNodes.has(name)) {
        this.nodeEvent(node, 'Normal', 'RegisteredNode', `Registered Node ${name} in Controller`);
        this.knownNodes.set(name, node);
        this.ensureZone(node, now);
        // A node seen for the first time starts without controller NoExecute taints; it is queued
        // again if it still is not ready (as upstream does after a controller restart).
        await this.markNodeAsReachable(node);
      } else {
        this.ensureZone(node, now);
      }
    }
    for (const name of [...this.knownNodes.keys()]) {
      if (present.has(name)) continue;
      this.nodeEvent(this.knownNodes.get(name)!, 'Normal', 'RemovingNode', `Removing Node ${name} from Controller`);
      this.forgetNode(name);
    }

    const counts = new Map<string, ZoneCounts>();
    for (const cached of nodes) {
      const name = cached.metadata.name;
      const checked = await this.updateNodeHealth(this.view(name) ?? cached);
      if (!checked) continue;
      const {node, observedReady, currentReady} = checked;
      this.knownNodes.set(name, node);
      this.lastReady.set(name, currentReady?.status ?? 'Unknown');

      if (!excludedFromDisruption(node)) {
        const zone = zoneKey(node);
        const zoneCounts = counts.get(zone) ?? {ready: 0, notReady: 0};
        if (currentReady?.status === 'True') zoneCounts.ready++;
        else zoneCounts.notReady++;
        counts.set(zone, zoneCounts);
      }

      // Upstream reconciles NoSchedule taints on every node event; here once per pass, right after
      // the health update, which is when conditions can have changed on our side.
      await this.reconcileNoScheduleTaints(name);

      if (currentReady) await this.processNodeReadiness(name, observedReady, currentReady);
    }

    this.lastCounts = counts;
    await this.applyDisruption(counts, nodes.map((n) => n.metadata.name));
  }

  /** tryUpdateNodeHealth with upstream's retries; undefined when the status could not be written. */
  private async updateNodeHealth(
    start: Node,
  ): Promise<{node: Node; observedReady: NodeCondition; currentReady: NodeCondition | undefined} | undefined> {
    const name = start.metadata.name;
    let node = start;
    for (let attempt = 1; attempt <= NODE_HEALTH_UPDATE_RETRY; attempt++) {
      const now = this.clock.now();
      const lease = this.deps.leases.get(name);
      const assessment = assessNodeHealth(node, lease, this.health.get(name), now, this.options);
      if (!assessment.statusUpdate) {
        this.health.set(name, assessment.health);
        return {node, observedReady: assessment.observedReady, currentReady: assessment.currentReady};
      }
      try {
        await this.deps.client.updateNodeStatus(assessment.statusUpdate);
        this.health.set(name, assessment.health);
        // The rest of this pass works with the conditions just written.
        const cached = this.cache.get(name);
        if (cached) this.cache.set(name, {...cached, status: assessment.statusUpdate.status});
        this.log.v(2).info('Node became unresponsive, conditions set to Unknown', 'node', name);
        return {node: assessment.statusUpdate, observedReady: assessment.observedReady, currentReady: assessment.currentReady};
      } catch (error) {
        this.health.set(name, assessment.healthIfWriteFails);
        this.log.error('Error updating node', 'node', name, 'err', describeError(error));
        const fresh = this.deps.nodes.list().find((n) => n.metadata.name === name);
        if (!fresh) return undefined;
        this.cache.set(name, fresh);
        node = this.view(name)!;
      }
    }
    this.log.error('Update health of Node from Controller error, Skipping - no pods will be evicted', 'node', name);
    return undefined;
  }

  /** processTaintBaseEviction plus the pod readiness marking of upstream's monitor loop. */
  private async processNodeReadiness(name: string, observedReady: NodeCondition, currentReady: NodeCondition): Promise<void> {
    const node = this.view(name);
    if (!node) return;
    const taints = node.spec?.taints;
    switch (observedReady.status) {
      case 'False':
        // Already tainted as unreachable: swap at once, no rate limit (the node was evicted already).
        if (taintExists(taints, unreachableNoExecute())) await this.writeTaints(name, [notReadyNoExecute()], [unreachableNoExecute()]);
        else this.markNodeForTainting(node, notReadyNoExecute());
        break;
      case 'Unknown':
        if (taintExists(taints, notReadyNoExecute())) await this.writeTaints(name, [unreachableNoExecute()], [notReadyNoExecute()]);
        else this.markNodeForTainting(node, unreachableNoExecute());
        break;
      case 'True':
        await this.markNodeAsReachable(node);
        break;
    }

    const becameNotReady = observedReady.status === 'True' && currentReady.status !== 'True';
    if (becameNotReady) this.nodeEvent(node, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
    if (becameNotReady || (this.nodesToRetry.has(name) && currentReady.status !== 'True')) {
      if (!(await this.markPodsNotReady(name))) {
        this.nodesToRetry.add(name);
        return;
      }
    }
    this.nodesToRetry.delete(name);
  }

  /**
   * Queues the node for its NoExecute taint. A node handed out earlier whose taint is missing now
   * (removed by someone) is queued afresh; one still waiting keeps its place in line.
   */
  private markNodeForTainting(node: Node, wanted: Taint): void {
    const name = node.metadata.name;
    const queue = this.tainters.get(zoneKey(node));
    if (!queue) return;
    if (!taintExists(node.spec?.taints, wanted) && !queue.isQueued(name)) queue.remove(name);
    if (queue.add(name, this.clock.now())) this.log.v(2).info('Node added to the taint queue', 'node', name, 'taint', wanted.key);
  }

  private async markNodeAsReachable(node: Node): Promise<void> {
    const name = node.metadata.name;
    await this.writeTaints(name, [], [unreachableNoExecute(), notReadyNoExecute()]);
    this.tainters.get(zoneKey(node))?.remove(name);
  }

  /** Upstream MarkPodsNotReady: each pod's Ready condition set False; false when a write failed. */
  private async markPodsNotReady(nodeName: string): Promise<boolean> {
    const update = this.deps.client.updatePodStatus;
    if (!update) return true;
    let ok = true;
    for (const pod of this.deps.pods.listOnNode(nodeName)) {
      if (pod.spec?.nodeName !== undefined && pod.spec.nodeName !== nodeName) continue;
      const ready = findCondition(pod.status?.conditions, 'Ready');
      if (!ready || ready.status === 'False') continue;
      const updated: Pod = structuredClone(pod);
      const condition = findCondition(updated.status!.conditions, 'Ready')!;
      condition.status = 'False';
      condition.lastTransitionTime = formatTime(this.clock.now());
      try {
        await update.call(this.deps.client, updated);
        this.podEvent({namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name, uid: pod.metadata.uid}, 'Warning', 'NodeNotReady', 'Node is not ready');
      } catch (error) {
        this.log.error('Failed to mark pod not ready', 'pod', `${pod.metadata.namespace}/${pod.metadata.name}`, 'err', describeError(error));
        ok = false;
      }
    }
    return ok;
  }

  private async reconcileNoScheduleTaints(name: string): Promise<void> {
    const node = this.view(name);
    if (!node) return;
    const change = noScheduleTaintChange(node);
    if (change.add.length > 0 || change.remove.length > 0) await this.writeTaints(name, change.add, change.remove);
  }

  /** handleDisruption: zone states, limiter rates, and the all-zones-down mode. */
  private async applyDisruption(counts: Map<string, ZoneCounts>, nodeNames: string[]): Promise<void> {
    const decision = handleDisruption(this.zoneStates, counts, this.options);
    const now = this.clock.now();
    for (const [zone, state] of decision.zoneStates) {
      if (this.zoneStates.get(zone) !== state) this.log.info('Controller detected that zone is now in new state', 'zone', zoneDisplayName(zone), 'newState', state);
    }
    if (decision.enterMasterDisruption) {
      this.log.info('Controller detected that all Nodes are not-Ready. Entering master disruption mode');
      for (const name of nodeNames) {
        const node = this.view(name);
        if (node) await this.markNodeAsReachable(node);
      }
    }
    if (decision.exitMasterDisruption) {
      this.log.info('Controller detected that some Nodes are Ready. Exiting master disruption mode');
      for (const name of nodeNames) {
        const health = this.health.get(name);
        if (health) this.health.set(name, {...health, probeTimestamp: now, readyTransitionTimestamp: now});
      }
    }
    for (const [zone, qps] of decision.limiterRates) this.tainters.get(zone)?.swapLimiter(qps, now);
    this.zoneStates = decision.zoneStates;
  }

  /** Upstream doNoExecuteTaintingPass: each zone's queue hands out nodes at the zone's rate. */
  private async doNoExecuteTaintingPass(): Promise<void> {
    this.refreshCache();
    const now = this.clock.now();
    for (const queue of this.tainters.values()) {
      for (const name of queue.process(now)) {
        const node = this.view(name);
        if (!node) continue; // deleted meanwhile
        const ready = findCondition(node.status?.conditions, 'Ready');
        const {taint, opposite} = noExecuteTaintFor(ready?.status);
        // Ready again, or no condition to mirror: nothing to taint.
        if (!ready || !taint || !opposite) continue;
        const taints = node.spec?.taints;
        if (taintExists(taints, taint) && !taintExists(taints, opposite)) continue;
        if (await this.writeTaints(name, [taint], [opposite])) {
          this.log.v(2).info('Node tainted for eviction', 'node', name, 'taint', taint.key);
        } else {
          queue.requeue(name, now + TAINT_RETRY_AFTER_MS);
        }
      }
    }
  }

  /** The taint eviction controller's work, for every node with NoExecute taints or pending evictions. */
  private async doTaintEvictionPass(): Promise<void> {
    const now = this.clock.now();
    for (const name of this.cache.keys()) {
      const node = this.view(name)!;
      const noExecute = (node.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');
      if (noExecute.length === 0 && this.evictions.pendingOn(name) === 0) continue;
      const pods = this.deps.pods.listOnNode(name).filter((p) => !p.metadata.deletionTimestamp);
      const result = this.evictions.reconcileNode(name, noExecute, pods, now);
      for (const ref of result.cancelled) {
        this.podEvent(ref, 'Normal', 'TaintManagerEviction', `Cancelling deletion of Pod ${ref.namespace}/${ref.name}`);
      }
    }
    for (const ref of this.evictions.due(now)) {
      this.podEvent(ref, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${ref.namespace}/${ref.name}`);
      try {
        await this.deps.client.evictPod(ref.namespace, ref.name);
        this.evictions.done(ref);
      } catch (error) {
        // Kept scheduled: retried on the next pass.
        this.log.error('Failed to evict pod', 'pod', `${ref.namespace}/${ref.name}`, 'err', describeError(error));
      }
    }
  }

  // ---- state helpers ----

  private ensureZone(node: Node, now: number): void {
    const zone = zoneKey(node);
    if (this.zoneStates.has(zone)) return;
    this.zoneStates.set(zone, 'Initial');
    this.tainters.set(zone, new RateLimitedTimedQueue(this.options.nodeEvictionRate, now));
    this.log.info('Initializing eviction metric for zone', 'zone', zoneDisplayName(zone));
  }

  private forgetNode(name: string): void {
    this.knownNodes.delete(name);
    this.health.delete(name);
    this.lastReady.delete(name);
    this.nodesToRetry.delete(name);
    this.taintOverlays.delete(name);
    for (const queue of this.tainters.values()) queue.remove(name);
    this.evictions.forgetNode(name);
  }

  private refreshCache(): Node[] {
    const nodes = this.deps.nodes.list();
    this.cache = new Map(nodes.map((n) => [n.metadata.name, n]));
    for (const [name, overlay] of this.taintOverlays) {
      const cached = this.cache.get(name);
      if (!cached || !cacheIsBehind(cached, overlay)) this.taintOverlays.delete(name);
    }
    return nodes;
  }

  /** The cached node with our own not-yet-visible taint writes applied. */
  private view(name: string): Node | undefined {
    const cached = this.cache.get(name);
    if (!cached) return undefined;
    const overlay = this.taintOverlays.get(name);
    if (!overlay || !cacheIsBehind(cached, overlay)) return cached;
    return {...cached, spec: {...cached.spec, taints: overlay.taints}};
  }

  /** Adds and removes taints (by key and effect) on the node; true when written or nothing to do. */
  private async writeTaints(name: string, add: Taint[], remove: Taint[]): Promise<boolean> {
    const node = this.view(name);
    if (!node) return true;
    const current = node.spec?.taints ?? [];
    if (add.length === 0 && !remove.some((r) => taintExists(current, r))) return true;
    const taints = swapTaints(current, add, remove, this.clock.now());
    let written: string | undefined;
    try {
      written = resourceVersionOf(await this.deps.client.setTaints(name, taints));
    } catch (error) {
      this.log.error('Failed to update node taints', 'node', name, 'err', describeError(error));
      return false;
    }
    const cached = this.cache.get(name)!;
    const rv = cached.metadata.resourceVersion;
    if (rv !== undefined) this.taintOverlays.set(name, {baseResourceVersion: rv, writtenResourceVersion: written, taints});
    else this.cache.set(name, {...cached, spec: {...cached.spec, taints}});
    return true;
  }

  private nodeEvent(node: Node, type: ControllerEvent['type'], reason: string, message: string): void {
    this.deps.client.recordEvent?.({involvedObject: {kind: 'Node', name: node.metadata.name, uid: node.metadata.uid}, type, reason, message});
  }

  private podEvent(ref: {namespace: string; name: string; uid?: string}, type: ControllerEvent['type'], reason: string, message: string): void {
    this.deps.client.recordEvent?.({involvedObject: {kind: 'Pod', name: ref.name, namespace: ref.namespace, uid: ref.uid}, type, reason, message});
  }
}
