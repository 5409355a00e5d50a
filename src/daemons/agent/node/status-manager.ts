/**
 * NodeStatusManager: the node's life in the API server, independent of the rest of the agent.
 *
 * - Registration (--register-node): POST the Node built from this machine; if it exists, put the
 *   agent's own labels back (upstream tryRegisterWithAPIServer). Retried while it fails, waiting
 *   100 ms, doubling up to 7 s, as upstream's registerWithAPIServer.
 * - Status: every --node-status-update-frequency (4 % jitter) or on requestStatusUpdate(): GET the Node,
 *   compute its status, and PATCH nodes/<name>/status when anything but heartbeats changed or when
 *   nodeStatusReportFrequency has passed since the last post; up to 5 tries per round.
 * - Lease: NodeLeaseController, on its own interval.
 *
 * Its observable state (NodeStatusSnapshot) is the dashboard's ApiServerLink plus the node's name and
 * conditions, given to `onSnapshot` after every change.
 */
import os from 'node:os';
import { ApiConnectionError, ApiStatusError } from '../../../client/errors.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import type { PressureCondition } from '../eviction/signals.js';
import type { ApiServerLink } from '../state.js';
import { isAlreadyExists, isConflict, isNotFound, type NodeApiClient } from './client.js';
import type { NodeConditionEvent } from './conditions.js';
import { NodeLeaseController } from './lease.js';
import { LoopTimer, jittered } from './loop-timer.js';
import { readMachineFacts, type MachineFacts } from './machine.js';
import { defaultLabelsPatch, initialNode, resolveNodeName } from './node-object.js';
import type { NodeSettings } from './settings.js';
import { computeNodeStatus, nodeStatusHasChanged, nodeStatusPatch, type StatusComputation } from './status.js';
import type { NodeCondition, NodeObject } from './types.js';

/** Upstream's nodeStatusUpdateRetry. */
export const NODE_STATUS_UPDATE_RETRY = 5;
export const NODE_STATUS_JITTER = 0.04;
export const REGISTRATION_INITIAL_BACKOFF_MS = 100;
export const REGISTRATION_MAX_BACKOFF_MS = 7_000;

const NO_PRESSURE: Readonly<Record<PressureCondition, boolean>> = { MemoryPressure: false, DiskPressure: false, PIDPressure: false };

export interface NodeEvent {
  type: 'Normal';
  reason: NodeConditionEvent;
  /** Upstream's text: `Node <name> status is now: <reason>`. */
  message: string;
}

export interface NodeStatusSnapshot extends ApiServerLink {
  nodeName: string;
  /** The conditions as last computed. */
  conditions: NodeCondition[];
  /** Parts of the status that could not be computed last time (e.g. no address found). */
  statusErrors: string[];
}

export interface NodeStatusManagerOptions {
  client: NodeApiClient;
  settings: NodeSettings;
  clock?: Clock;
  /** The system host name (default os.hostname()); --hostname-override wins over it. */
  hostname?: string;
  /** Measures the machine every status round; default readMachineFacts(settings.rootDir). */
  readMachine?: () => Promise<MachineFacts>;
  /** The eviction manager's pressure conditions (EvictionManager.conditions()); none by default. */
  pressure?: () => Readonly<Record<PressureCondition, boolean>>;
  /** Errors that make the node not ready (runtime, network); none by default. */
  notReadyReasons?: () => readonly string[];
  /** For the jitter of both loops; tests pass `() => 0`. */
  random?: () => number;
  recordEvent?: (event: NodeEvent) => void;
  log?: (message: string) => void;
  onSnapshot?: (snapshot: NodeStatusSnapshot) => void;
}

export class NodeStatusManager {
  readonly nodeName: string;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly timer: LoopTimer;
  private readonly lease: NodeLeaseController;
  private readonly client: NodeApiClient;
  private link: ApiServerLink;
  private conditions: NodeCondition[] = [];
  private statusErrors: string[] = [];
  private lastStatusReportAt: number | undefined;
  private running = false;
  private stopped = false;
  private loopDone: Promise<void> | undefined;

  constructor(private readonly options: NodeStatusManagerOptions) {
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.timer = new LoopTimer(this.clock);
    this.nodeName = resolveNodeName(options.settings.hostnameOverride, options.hostname ?? os.hostname());
    this.link = { registerNode: options.settings.registerNode, registered: false, connected: false };
    this.client = this.tracked(options.client);
    this.lease = new NodeLeaseController({
      client: this.client,
      nodeName: this.nodeName,
      leaseDurationSeconds: options.settings.nodeLeaseDurationSeconds,
      clock: this.clock,
      random: this.random,
      log: options.log,
      onRenew: (at) => this.update({ lastLeaseRenewAt: at }),
    });
  }

  snapshot(): NodeStatusSnapshot {
    return { ...this.link, nodeName: this.nodeName, conditions: structuredClone(this.conditions), statusErrors: [...this.statusErrors] };
  }

  /**
   * Starts registration and the status loop, and the lease loop: right after the Node is registered
   * (so the lease is created at once, owned by the Node), or at once when this agent registers none.
   */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
    if (!this.options.settings.registerNode) this.lease.start();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopped = true;
    this.timer.wake();
    await Promise.all([this.loopDone, this.lease.stop()]);
  }

  /** Computes and posts the status now instead of at the next period (e.g. when a pressure condition changed). */
  requestStatusUpdate(): void {
    this.timer.wake();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      await this.syncNodeStatus();
      if (!this.running) break;
      await this.timer.wait(jittered(this.options.settings.nodeStatusUpdateFrequencyMs, NODE_STATUS_JITTER, this.random));
    }
  }

  /** One round: register if still needed (blocking, with back-off), then update the status. Never throws. */
  async syncNodeStatus(): Promise<void> {
    if (this.options.settings.registerNode && !this.link.registered) {
      await this.registerWithApiServer();
      if (!this.link.registered) return;
    }
    try {
      await this.updateNodeStatus();
    } catch (error) {
      this.options.log?.(`Unable to update node status: ${(error as Error).message}`);
    }
  }

  /** Upstream's registerWithAPIServer: wait, try, double the wait (at most 7 s), until registered or stopped. */
  private async registerWithApiServer(): Promise<void> {
    let wait = REGISTRATION_INITIAL_BACKOFF_MS;
    for (;;) {
      // Upstream waits before the first attempt too; a direct call (tests, not started) does not.
      if (this.running) {
        await this.timer.wait(wait);
        if (!this.running) return;
      }
      wait = Math.min(wait * 2, REGISTRATION_MAX_BACKOFF_MS);
      try {
        const computed = await this.computeInitialNode();
        this.options.log?.(`Attempting to register node ${this.nodeName}`);
        if (await this.tryRegister(computed.node)) {
          this.options.log?.(`Successfully registered node ${this.nodeName}`);
          this.update({ registered: true });
          if (this.running) this.lease.start();
          // The first conditions (NodeHasSufficientMemory...), as upstream's initialNode records them.
          this.recordConditionEvents(computed.events);
          return;
        }
      } catch (error) {
        this.options.log?.(`Unable to register node ${this.nodeName} with API server: ${(error as Error).message}`);
      }
      // Called directly (not started) or stopped meanwhile: no more attempts.
      if (!this.running) return;
    }
  }

  private async computeInitialNode(): Promise<StatusComputation> {
    const computed = initialNode({ ...(await this.statusInputs()), now: this.clock.now() });
    this.recordStatus(computed);
    return computed;
  }

  /** Create, or reconcile an existing Node's agent-owned labels. True when the Node is there. */
  private async tryRegister(node: NodeObject): Promise<boolean> {
    try {
      await this.client.createNode(node);
      return true;
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
    const existing = await this.client.getNode(this.nodeName);
    this.options.log?.(`Node ${this.nodeName} was previously registered`);
    const labels = defaultLabelsPatch(node, existing);
    if (labels) await this.client.patchNode(this.nodeName, { metadata: { labels } });
    return true;
  }

  /** Upstream's updateNodeStatus: up to 5 tries of GET, compute, PATCH when needed. */
  private async updateNodeStatus(): Promise<void> {
    let lastError: unknown;
    for (let attempt = 0; attempt < NODE_STATUS_UPDATE_RETRY; attempt++) {
      try {
        await this.tryUpdateNodeStatus();
        return;
      } catch (error) {
        lastError = error;
        this.options.log?.(`Error updating node status, will retry: ${(error as Error).message}`);
        if (this.stopped) break;
      }
    }
    throw new Error(`update node status exceeds retry count: ${(lastError as Error | undefined)?.message ?? ''}`);
  }

  private async tryUpdateNodeStatus(): Promise<void> {
    const original = await this.client.getNode(this.nodeName);
    if (!this.link.registered) this.update({ registered: true });
    const now = this.clock.now();
    const computed = computeNodeStatus(original, { ...(await this.statusInputs()), now });
    this.recordStatus(computed);
    const changed = nodeStatusHasChanged(original.status, computed.node.status);
    const reportDue = this.lastStatusReportAt === undefined || now - this.lastStatusReportAt >= this.options.settings.nodeStatusReportFrequencyMs;
    if (!changed && !reportDue) return;
    await this.client.patchNodeStatus(this.nodeName, nodeStatusPatch(original, computed.node));
    this.lastStatusReportAt = now;
    this.recordConditionEvents(computed.events);
    this.update({ lastStatusAt: now });
  }

  private recordConditionEvents(reasons: readonly NodeConditionEvent[]): void {
    for (const reason of reasons) {
      this.options.recordEvent?.({ type: 'Normal', reason, message: `Node ${this.nodeName} status is now: ${reason}` });
    }
  }

  private async statusInputs() {
    const { settings } = this.options;
    return {
      settings,
      facts: await (this.options.readMachine ?? (() => readMachineFacts(settings.rootDir)))(),
      nodeName: this.nodeName,
      pressure: this.options.pressure?.() ?? NO_PRESSURE,
      notReadyReasons: this.options.notReadyReasons?.() ?? [],
    };
  }

  private recordStatus(computed: StatusComputation): void {
    this.conditions = computed.node.status?.conditions ?? [];
    this.statusErrors = computed.errors;
    for (const error of computed.errors) this.options.log?.(`Failed to set some node status fields: ${error}`);
  }

  private update(change: Partial<ApiServerLink>): void {
    this.link = { ...this.link, ...change };
    this.options.onSnapshot?.(this.snapshot());
  }

  /**
   * The client, watched for the connection state: an answer from the server (including the expected
   * AlreadyExists, NotFound and Conflict) means connected; a transport failure or any other error
   * status is the last error, kept until a request succeeds.
   */
  private tracked(client: NodeApiClient): NodeApiClient {
    const wrap = <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        try {
          const result = await call(...args);
          this.connectionOk();
          return result;
        } catch (error) {
          if (isAlreadyExists(error) || isNotFound(error) || isConflict(error)) this.connectionOk();
          else this.connectionFailed(error);
          throw error;
        }
      };
    return {
      createNode: wrap(client.createNode.bind(client)),
      getNode: wrap(client.getNode.bind(client)),
      patchNode: wrap(client.patchNode.bind(client)),
      patchNodeStatus: wrap(client.patchNodeStatus.bind(client)),
      getLease: wrap(client.getLease.bind(client)),
      createLease: wrap(client.createLease.bind(client)),
      updateLease: wrap(client.updateLease.bind(client)),
    };
  }

  private connectionOk(): void {
    if (this.link.connected && this.link.lastError === undefined) return;
    this.update({ connected: true, lastError: undefined, lastErrorAt: undefined });
  }

  private connectionFailed(error: unknown): void {
    // Only a transport failure or a server error means the link is down; a refusal (403, 422) is an error on a working link.
    const down = error instanceof ApiConnectionError || !(error instanceof ApiStatusError) || error.code >= 500 || error.code === 429;
    this.update({ connected: !down, lastError: (error as Error).message, lastErrorAt: this.clock.now() });
  }
}
