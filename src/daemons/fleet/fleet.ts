/**
 * `orch fleet`: N simulated nodes in one process against any API server (kwok's idea). Each node is
 * registered as the agent registers, renews its Lease through the agent's lease controller (each
 * node at its own fixed offset in the renew interval, so renewals arrive at an even rate), posts its Ready status
 * every node-status-update-frequency when it changed or a report is due, and "runs" the pods bound to
 * it: a Running/Ready status (or Failed, for pods matching --fail-pods-matching), and the pod object
 * deleted once its grace period is over.
 *
 * Memory stays small at 5,000 nodes: one watch of pods for the whole fleet (a field selector on
 * spec.nodeName takes one node only), filtered by node name, keeping per pod only what its timers
 * need; one watch of the fleet's nodes (by label) for their conditions and the state annotation;
 * a pod object is held only while its status post waits in the queue.
 *
 * The API calls go through a work queue with a fixed number of workers, so a slow server sees at
 * most that many requests at once from the fleet (leases aside: each renews on its own timer).
 */
import { ApiStatusError } from '../../client/errors.js';
import type { RestClient } from '../../client/rest-client.js';
import { clientListWatcher } from '../../client/informers/client-list-watcher.js';
import { Reflector, type ReflectorStore } from '../../client/informers/reflector.js';
import { WorkQueue } from '../../client/informers/workqueue/queue.js';
import { names } from '../../api/names.js';
import { matchesLabels, type LabelRequirement } from '../../api/selectors.js';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { isAlreadyExists, isNotFound, restNodeClient, type NodeApiClient } from '../agent/node/client.js';
import { NodeLeaseController, nodeLeaseNamespace, RENEW_INTERVAL_FRACTION } from '../agent/node/lease.js';
import type { NodeCondition, NodeObject } from '../agent/node/types.js';
import { decidePod, podStatus, slimPod, type FleetPod } from './pods.js';
import { fleetNode, nodeConditions, nodeIndex, nodeIP, nodeName, podIP, requestedHealth, spreadOffset, statusPostDue, type FleetSettings, type NodeHealth } from './nodes.js';

export interface FleetOptions {
  client: RestClient;
  settings: FleetSettings;
  /** --fail-pods-matching, parsed: pods whose labels match are set Failed instead of Running. */
  failPods?: LabelRequirement[];
  /** Concurrent API calls for registration, node status and pods. */
  workers: number;
  /** --complete-pods-after: run time of pods with restartPolicy Never or OnFailure; undefined: they run until deleted. */
  completeAfterMs?: number;
  clock?: Clock;
  log?: (message: string) => void;
}

/** Counters, for the command's progress lines and for tests. */
export interface FleetSnapshot {
  nodes: number;
  registered: number;
  leaseRenewals: number;
  statusPosts: number;
  podsRunning: number;
  podsFailed: number;
  podsSucceeded: number;
  podsDeleted: number;
  errors: number;
  lastError?: string;
}

interface SimNode {
  index: number;
  name: string;
  /** As the node watch or our last status post saw them. */
  conditions?: NodeCondition[];
  health: NodeHealth;
  lastReportAt?: number;
  lease: NodeLeaseController;
  statusTimer?: TimerHandle;
  leaseTimer?: TimerHandle;
  /** The renewal in flight, if any: a tick that finds one skips its turn rather than pile up. */
  leaseSync?: Promise<void>;
  /** Pods given an IP so far (the next pod IP). */
  podSequence: number;
  /** While Silent, the pods it would have acted on: an unreachable node does nothing; handled when it comes back. */
  held?: Map<string, FleetPod>;
}

/** Per pod on a fleet node: what its deletion timer needs. */
interface PodEntry {
  uid?: string;
  nodeIndex: number;
  deleteTimer?: TimerHandle;
  /** Set while a running pod waits for its end (run time or active deadline). */
  finishTimer?: TimerHandle;
}

type WorkItem = `node-register/${number}` | `node-status/${number}` | `pod/${string}`;

export class Fleet {
  private readonly clock: Clock;
  private readonly nodes: SimNode[] = [];
  private readonly api: NodeApiClient;
  private readonly queue: WorkQueue<WorkItem>;
  /** The latest object of each pod waiting in the queue; dropped once handled. */
  private readonly pendingPods = new Map<string, FleetPod>();
  private readonly pods = new Map<string, PodEntry>();
  private podReflector: Reflector<FleetPod> | undefined;
  private nodeReflector: Reflector<NodeObject> | undefined;
  private workers: Promise<void>[] = [];
  private stopped = false;
  private readonly counts: FleetSnapshot;

  constructor(private readonly options: FleetOptions) {
    this.clock = options.clock ?? systemClock;
    this.api = restNodeClient(options.client);
    this.queue = new WorkQueue<WorkItem>({ name: 'fleet' });
    this.counts = { nodes: options.settings.nodes, registered: 0, leaseRenewals: 0, statusPosts: 0, podsRunning: 0, podsFailed: 0, podsSucceeded: 0, podsDeleted: 0, errors: 0 };
    const { settings } = options;
    for (let index = 0; index < settings.nodes; index++) {
      const name = nodeName(settings, index);
      this.nodes.push({
        index,
        name,
        health: 'Ready',
        podSequence: 0,
        lease: new NodeLeaseController({
          client: this.api,
          nodeName: name,
          leaseDurationSeconds: settings.nodeLeaseDurationSeconds,
          clock: this.clock,
          onRenew: () => this.counts.leaseRenewals++,
          onError: (error) => this.failed(`lease ${name}`, error),
        }),
      });
    }
  }

  get renewIntervalMs(): number {
    return this.options.settings.nodeLeaseDurationSeconds * 1000 * RENEW_INTERVAL_FRACTION;
  }

  snapshot(): FleetSnapshot {
    return { ...this.counts };
  }

  /** The node names, in index order. */
  nodeNames(): string[] {
    return this.nodes.map((n) => n.name);
  }

  /**
   * Registers every node (through the workers), then starts the node and pod watches. Resolves once
   * every node has been registered or has failed to (failures are retried by the status loop).
   */
  async start(): Promise<void> {
    await this.ensureLeaseNamespace();
    for (let i = 0; i < this.options.workers; i++) this.workers.push(this.work());
    const registered = this.nodes.map((node) => this.register(node));
    await Promise.all(registered);
    this.nodeReflector = new Reflector<NodeObject>({
      listWatcher: clientListWatcher<NodeObject>(this.options.client, '/api/v1/nodes'),
      store: this.nodeStore(),
      name: 'nodes',
      labelSelector: `${names().fleet.nodeLabel}=${this.options.settings.name}`,
    });
    this.nodeReflector.run();
    this.podReflector = new Reflector<FleetPod>({
      listWatcher: clientListWatcher<FleetPod>(this.options.client, '/api/v1/pods'),
      store: this.podStore(),
      name: 'pods',
      transform: (pod) => slimPod(pod, (node) => nodeIndex(this.options.settings, node) !== undefined),
    });
    this.podReflector.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.shutDown();
    await Promise.all([this.podReflector?.stop(), this.nodeReflector?.stop()]);
    for (const node of this.nodes) {
      if (node.statusTimer) this.clock.clearTimeout(node.statusTimer);
      if (node.leaseTimer) this.clock.clearTimeout(node.leaseTimer);
    }
    for (const entry of this.pods.values()) {
      if (entry.deleteTimer) this.clock.clearTimeout(entry.deleteTimer);
      if (entry.finishTimer) this.clock.clearTimeout(entry.finishTimer);
    }
    await Promise.all(this.nodes.map((n) => n.leaseSync));
    await Promise.all(this.workers);
  }

  /** Sets a node's health as the state annotation would (for a program driving the fleet). */
  setHealth(name: string, health: NodeHealth): void {
    const index = nodeIndex(this.options.settings, name);
    if (index !== undefined) this.applyHealth(this.nodes[index]!, health);
  }

  // ---- nodes ----

  private async ensureLeaseNamespace(): Promise<void> {
    try {
      await this.options.client.request({
        method: 'POST',
        path: '/api/v1/namespaces',
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: nodeLeaseNamespace() } },
        context: { resource: 'namespaces', name: nodeLeaseNamespace() },
      });
    } catch (error) {
      // AlreadyExists is the usual answer; Forbidden when the fleet may not create namespaces (then it must exist).
      if (!isAlreadyExists(error) && !(error instanceof ApiStatusError && error.code === 403)) throw error;
    }
  }

  private registrationWaiters = new Map<number, () => void>();

  private register(node: SimNode): Promise<void> {
    return new Promise((resolve) => {
      this.registrationWaiters.set(node.index, resolve);
      this.queue.add(`node-register/${node.index}`);
    });
  }

  private async registerNow(node: SimNode): Promise<void> {
    const now = this.clock.now();
    try {
      const created = await this.api.createNode(fleetNode(this.options.settings, node.index, now));
      node.conditions = created.status?.conditions;
      node.lastReportAt = now;
    } catch (error) {
      // A fleet restarted keeps its nodes: the status loop takes over their conditions.
      if (!isAlreadyExists(error)) throw error;
      const existing = await this.api.getNode(node.name);
      node.conditions = existing.status?.conditions;
      node.health = requestedHealth(existing.metadata.annotations);
    }
    // The first Lease right away (as the agent's lease controller starts at registration), so a
    // node counts as healthy from the start; the renewals then follow at the node's own offset.
    if (node.health !== 'Silent') await node.lease.sync();
    this.counts.registered++;
    const settings = this.options.settings;
    if (node.health !== 'Silent') this.scheduleLease(node, spreadOffset(node.index, settings.nodes, this.renewIntervalMs));
    this.scheduleStatus(node, spreadOffset(node.index, settings.nodes, settings.nodeStatusUpdateFrequencyMs));
  }

  /**
   * Renewals at a fixed rate from the node's offset (the lease controller's own loop is sliding: it
   * counts each period from the end of the last renewal, so under a slow server the nodes whose
   * renewals end together would go on renewing together, and the even spread would clump).
   */
  private scheduleLease(node: SimNode, delayMs: number): void {
    if (node.leaseTimer) this.clock.clearTimeout(node.leaseTimer);
    node.leaseTimer = this.clock.setTimeout(() => {
      node.leaseTimer = undefined;
      if (this.stopped || node.health === 'Silent') return;
      this.scheduleLease(node, this.renewIntervalMs);
      if (node.leaseSync) return;
      node.leaseSync = node.lease.sync().finally(() => (node.leaseSync = undefined));
    }, delayMs);
  }

  private scheduleStatus(node: SimNode, delayMs: number): void {
    if (node.statusTimer) this.clock.clearTimeout(node.statusTimer);
    node.statusTimer = this.clock.setTimeout(() => {
      node.statusTimer = undefined;
      if (this.stopped) return;
      this.queue.add(`node-status/${node.index}`);
      this.scheduleStatus(node, this.options.settings.nodeStatusUpdateFrequencyMs);
    }, delayMs);
  }

  private async postStatus(node: SimNode): Promise<void> {
    if (node.health === 'Silent') return;
    const now = this.clock.now();
    const { conditions } = nodeConditions(node.conditions, node.health, now);
    if (!statusPostDue(node.conditions, conditions, node.lastReportAt, now, this.options.settings.nodeStatusReportFrequencyMs)) return;
    // Conditions merge by type: conditions the fleet does not own (NetworkUnavailable...) stay.
    const updated = await this.api.patchNodeStatus(node.name, { status: { conditions } });
    node.conditions = updated.status?.conditions;
    node.lastReportAt = now;
    this.counts.statusPosts++;
  }

  private applyHealth(node: SimNode, health: NodeHealth): void {
    if (node.health === health) return;
    const was = node.health;
    node.health = health;
    this.options.log?.(`Node ${node.name} is now ${health}`);
    if (health === 'Silent') {
      // Neither lease nor status: the node lifecycle controller sees it as unreachable.
      if (node.leaseTimer) this.clock.clearTimeout(node.leaseTimer);
      node.leaseTimer = undefined;
    } else {
      if (was === 'Silent') {
        this.scheduleLease(node, 0);
        for (const [k, pod] of node.held ?? []) {
          if (!this.pods.has(k)) continue;
          if (!this.pendingPods.has(k)) this.pendingPods.set(k, pod);
          this.queue.add(`pod/${k}`);
        }
        node.held = undefined;
      }
      this.queue.add(`node-status/${node.index}`);
    }
  }

  private nodeStore(): ReflectorStore<NodeObject> {
    const seen = (node: NodeObject) => {
      const index = nodeIndex(this.options.settings, node.metadata.name);
      if (index === undefined) return;
      const sim = this.nodes[index]!;
      sim.conditions = node.status?.conditions;
      this.applyHealth(sim, requestedHealth(node.metadata.annotations));
    };
    return {
      replace: (items) => items.forEach(seen),
      add: seen,
      update: seen,
      delete: () => undefined,
      resync: () => undefined,
    };
  }

  // ---- pods ----

  private podStore(): ReflectorStore<FleetPod> {
    const key = (pod: FleetPod) => `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
    const seen = (pod: FleetPod) => {
      const nodeName = pod.spec?.nodeName;
      const index = nodeName ? nodeIndex(this.options.settings, nodeName) : undefined;
      if (index === undefined) return;
      const k = key(pod);
      const entry = this.pods.get(k);
      if (!entry || entry.uid !== pod.metadata.uid) this.pods.set(k, { uid: pod.metadata.uid, nodeIndex: index });
      // A pod with nothing to do (running, no end ahead) is not queued: after a relist of 150,000
      // running pods the queue would hold them all.
      if (decidePod(pod, this.fails(pod), { now: this.clock.now(), completeAfterMs: this.options.completeAfterMs }).kind === 'none') {
        // An older version waiting would be acted on: the latest says there is nothing to do.
        this.pendingPods.delete(k);
        this.nodes[index]!.held?.delete(k);
        return;
      }
      this.pendingPods.set(k, pod);
      this.queue.add(`pod/${k}`);
    };
    const gone = (k: string) => {
      const entry = this.pods.get(k);
      if (entry?.deleteTimer) this.clock.clearTimeout(entry.deleteTimer);
      if (entry?.finishTimer) this.clock.clearTimeout(entry.finishTimer);
      if (entry) this.nodes[entry.nodeIndex]!.held?.delete(k);
      this.pods.delete(k);
      this.pendingPods.delete(k);
    };
    return {
      replace: (items) => {
        const present = new Set<string>();
        for (const pod of items) {
          present.add(key(pod));
          seen(pod);
        }
        for (const k of [...this.pods.keys()]) if (!present.has(k)) gone(k);
      },
      add: seen,
      update: seen,
      delete: (pod) => gone(key(pod)),
      resync: () => undefined,
    };
  }

  private async handlePod(k: string): Promise<void> {
    const pod = this.pendingPods.get(k);
    this.pendingPods.delete(k);
    const entry = this.pods.get(k);
    if (!pod || !entry) return;
    const node = this.nodes[entry.nodeIndex]!;
    if (this.holdWhileSilent(node, k, pod)) return;
    const action = decidePod(pod, this.fails(pod), { now: this.clock.now(), completeAfterMs: this.options.completeAfterMs });
    if (action.kind === 'none') return;
    if (action.kind === 'finish') {
      if (entry.finishTimer) return;
      entry.finishTimer = this.clock.setTimeout(() => {
        entry.finishTimer = undefined;
        if (this.stopped || this.pods.get(k) !== entry || this.holdWhileSilent(node, k, pod)) return;
        void this.finishPod(pod, node, action).catch((error) => this.failed(`finish pod ${k}`, error));
      }, action.afterMs);
      return;
    }
    if (action.kind === 'delete') {
      if (entry.deleteTimer) return;
      entry.deleteTimer = this.clock.setTimeout(() => {
        if (this.holdWhileSilent(node, k, pod)) {
          entry.deleteTimer = undefined;
          return;
        }
        void this.deletePod(pod).catch((error) => this.failed(`delete pod ${k}`, error));
      }, action.afterMs);
      return;
    }
    const patch = podStatus(pod, action.phase, { now: this.clock.now(), hostIP: nodeIP(node.index), podIP: podIP(node.index, node.podSequence) });
    if (!pod.status?.podIP) node.podSequence++;
    try {
      await this.options.client.patch(`${podPath(pod)}/status`, 'application/merge-patch+json', patch, undefined, { resource: 'pods', name: pod.metadata.name });
    } catch (error) {
      // Deleted meanwhile: its DELETED event is on the way, nothing to run.
      if (isNotFound(error)) return;
      throw error;
    }
    if (action.phase === 'Running') this.counts.podsRunning++;
    else this.counts.podsFailed++;
  }

  /** Posts the end of a running pod: Succeeded, or Failed past its active deadline. */
  private async finishPod(pod: FleetPod, node: SimNode, action: { phase: 'Succeeded' | 'Failed'; reason?: string }): Promise<void> {
    const patch = podStatus(pod, action.phase, { now: this.clock.now(), hostIP: nodeIP(node.index), podIP: pod.status?.podIP ?? podIP(node.index, node.podSequence), reason: action.reason });
    try {
      await this.options.client.patch(`${podPath(pod)}/status`, 'application/merge-patch+json', patch, undefined, { resource: 'pods', name: pod.metadata.name });
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    if (action.phase === 'Succeeded') this.counts.podsSucceeded++;
    else this.counts.podsFailed++;
  }

  /** Whether the user asked for this pod to fail (--fail-pods-matching). */
  private fails(pod: FleetPod): boolean {
    return this.options.failPods !== undefined && this.options.failPods.length > 0 && matchesLabels(this.options.failPods, pod.metadata.labels);
  }

  /** A silent node keeps the pod for later (its latest version) and does nothing now. */
  private holdWhileSilent(node: SimNode, k: string, pod: FleetPod): boolean {
    if (node.health !== 'Silent') return false;
    (node.held ??= new Map()).set(k, pod);
    return true;
  }

  /** Removes the pod object as the agent does once its containers are gone: grace 0, only this uid. */
  private async deletePod(pod: FleetPod): Promise<void> {
    const k = `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
    try {
      await this.options.client.request({
        method: 'DELETE',
        path: podPath(pod),
        body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, ...(pod.metadata.uid ? { preconditions: { uid: pod.metadata.uid } } : {}) },
        context: { resource: 'pods', name: pod.metadata.name },
      });
      this.counts.podsDeleted++;
    } catch (error) {
      // Already gone, or a new pod of the same name (the uid precondition): nothing of ours to delete.
      if (!isNotFound(error) && !(error instanceof ApiStatusError && error.code === 409)) throw error;
    } finally {
      const entry = this.pods.get(k);
      if (entry?.uid === pod.metadata.uid && entry) entry.deleteTimer = undefined;
    }
  }

  // ---- the workers ----

  private async work(): Promise<void> {
    for (;;) {
      const item = await this.queue.get();
      if (item === undefined) return;
      try {
        await this.process(item);
      } catch (error) {
        this.failed(item, error);
        if (!this.stopped && item.startsWith('node-register/')) {
          // Registration is retried until it works (upstream retries with a growing wait; one period here).
          const index = Number(item.slice('node-register/'.length));
          this.clock.setTimeout(() => this.queue.add(`node-register/${index}`), Math.min(7000, this.options.settings.nodeStatusUpdateFrequencyMs));
        }
      } finally {
        this.queue.done(item);
      }
    }
  }

  private async process(item: WorkItem): Promise<void> {
    if (this.stopped) return;
    if (item.startsWith('pod/')) return this.handlePod(item.slice(4));
    const [kind, index] = item.split('/') as [string, string];
    const node = this.nodes[Number(index)]!;
    if (kind === 'node-register') {
      await this.registerNow(node);
      this.registrationWaiters.get(node.index)?.();
      this.registrationWaiters.delete(node.index);
      return;
    }
    await this.postStatus(node);
  }

  private failed(what: string, error: unknown): void {
    this.counts.errors++;
    this.counts.lastError = `${what}: ${(error as Error).message}`;
    this.options.log?.(this.counts.lastError);
  }
}

function podPath(pod: FleetPod): string {
  return `/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace ?? 'default')}/pods/${encodeURIComponent(pod.metadata.name)}`;
}
