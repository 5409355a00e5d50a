/**
 * The agent's eviction manager: every cycle it measures the signals, asks evaluate() what to do, and
 * evicts at most one pod. Clock, signal source, pods and the kill are injected (as upstream's kubelet
 * eviction manager is built), so the whole loop runs on a fake clock in tests.
 */
import { systemClock, type Clock, type TimerHandle } from '../../shared/clock.js';
import { evaluate, type EvictionDecision, type EvictionPlan } from './evaluate.js';
import type { EvictedPodStatus } from './message.js';
import { offendingContainers } from './message.js';
import type { CollectedSignals } from './observations.js';
import { isDiskSignal, type EvictionSignal, type PressureCondition, type ReclaimableResource } from './signals.js';
import { buildSnapshot, type EvictionRecord, type EvictionSnapshot } from './snapshot.js';
import { thresholdsMet } from './thresholds.js';
import { INITIAL_EVICTION_STATE, type EvictionConfig, type EvictionPod, type EvictionState, type Observations } from './types.js';

/** Upstream's evictionMonitoringPeriod. */
export const MONITORING_INTERVAL_MS = 10_000;
/** After an eviction, upstream polls for the pod's cleanup this often, for at most this long. */
export const POD_CLEANUP_POLL_MS = 1_000;
export const POD_CLEANUP_TIMEOUT_MS = 30_000;
const EVICTIONS_KEPT = 10;

export interface EvictionEvent {
  /** `node` for EvictionThresholdMet, else the pod the event is about. */
  involved: 'node' | EvictionPod;
  type: 'Warning';
  reason: 'EvictionThresholdMet' | 'Evicted';
  message: string;
  annotations?: Record<string, string>;
}

export interface EvictionManagerOptions {
  config: EvictionConfig;
  clock?: Clock;
  /** One measurement of the signals, e.g. `() => collectSignals({rootDir})`. */
  collectSignals: () => Promise<CollectedSignals>;
  /** The pods running on this node, with their usage. */
  listActivePods: () => EvictionPod[] | Promise<EvictionPod[]>;
  /** Stops the pod's processes with the grace period and records the status; throws if it could not. */
  killPod: (pod: EvictionPod, gracePeriodSeconds: number, status: EvictedPodStatus) => Promise<void>;
  /** Node-level reclaim for disk signals (container and image GC); none for the process runtime yet. */
  reclaimNodeLevel?: (signal: EvictionSignal, resource: ReclaimableResource) => Promise<void>;
  /** Whether an evicted pod's resources are released; the loop waits for it before measuring again. */
  podCleanedUp?: (pod: EvictionPod) => boolean | Promise<boolean>;
  recordEvent?: (event: EvictionEvent) => void;
  log?: (message: string) => void;
  /** Called after every cycle with the new snapshot (the dashboard's StateEmitter.update). */
  onSnapshot?: (snapshot: EvictionSnapshot) => void;
}

export class EvictionManager {
  private state: EvictionState = INITIAL_EVICTION_STATE;
  private decision: EvictionDecision | undefined;
  private observations: Observations = {};
  private signalErrors: Partial<Record<string, string>> = {};
  private evictions: EvictionRecord[] = [];
  private lastSyncAt: number | undefined;
  private lastSyncError: string | undefined;
  private readonly clock: Clock;
  private running = false;
  private timer: TimerHandle | undefined;
  private wake: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;

  constructor(private readonly options: EvictionManagerOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** One cycle: measure, decide, evict at most one pod. Returns the pods evicted (0 or 1). */
  async synchronize(): Promise<EvictionPod[]> {
    const now = this.clock.now();
    try {
      const collected = await this.options.collectSignals();
      this.observations = collected.observations;
      this.signalErrors = collected.errors;
      const pods = await this.options.listActivePods();
      const decision = evaluate(this.state, collected.observations, this.options.config, now, pods);
      this.state = decision.nextState;
      this.decision = decision;
      this.lastSyncAt = now;
      this.lastSyncError = undefined;
      return await this.act(decision);
    } catch (error) {
      this.lastSyncError = (error as Error).message;
      this.options.log?.(`eviction manager: failed to synchronize: ${this.lastSyncError}`);
      return [];
    } finally {
      this.options.onSnapshot?.(this.snapshot());
    }
  }

  /** The pressure conditions as of the last cycle, for the node status and admission. */
  conditions(): Record<PressureCondition, boolean> {
    return this.decision?.conditions ?? { MemoryPressure: false, DiskPressure: false, PIDPressure: false };
  }

  snapshot(): EvictionSnapshot {
    return buildSnapshot({
      now: this.clock.now(),
      config: this.options.config,
      observations: this.observations,
      signalErrors: this.signalErrors,
      decision: this.decision,
      state: this.state,
      evictions: this.evictions,
      lastSyncAt: this.lastSyncAt,
      lastSyncError: this.lastSyncError,
    });
  }

  /** Runs cycles every 10 s, or right after an evicted pod is cleaned up, until stop(). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.wake?.();
    await this.loopDone;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const evicted = await this.synchronize();
      if (!this.running) break;
      if (evicted.length > 0 && this.options.podCleanedUp) await this.waitForCleanup(evicted[0]);
      else await this.sleep(MONITORING_INTERVAL_MS);
    }
  }

  private async waitForCleanup(pod: EvictionPod): Promise<void> {
    const deadline = this.clock.now() + POD_CLEANUP_TIMEOUT_MS;
    while (this.running && this.clock.now() < deadline) {
      if (await this.options.podCleanedUp!(pod)) return;
      await this.sleep(POD_CLEANUP_POLL_MS);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = this.clock.setTimeout(resolve, ms);
      this.timer.unref?.();
    });
  }

  private async act(decision: EvictionDecision): Promise<EvictionPod[]> {
    if (!decision.reclaim) return [];
    const { threshold, resource } = decision.reclaim;
    this.options.recordEvent?.({ involved: 'node', type: 'Warning', reason: 'EvictionThresholdMet', message: `Attempting to reclaim ${resource}` });
    if (await this.reclaimedOnNode(threshold.signal, resource)) return [];
    if (!decision.evict) {
      this.options.log?.(`eviction manager: unable to evict any pod to reclaim ${resource}`);
      return [];
    }
    await this.evict(decision.evict);
    return [decision.evict.pod];
  }

  /** Disk pressure is first relieved on the node; eviction follows only if that did not free enough. */
  private async reclaimedOnNode(signal: EvictionSignal, resource: ReclaimableResource): Promise<boolean> {
    if (!this.options.reclaimNodeLevel || !isDiskSignal(signal)) return false;
    await this.options.reclaimNodeLevel(signal, resource);
    const { observations } = await this.options.collectSignals();
    return thresholdsMet(this.options.config.thresholds, observations, true).length === 0;
  }

  /**
   * Like upstream's evictPod, a failed kill still counts as this cycle's eviction (logged and shown):
   * the next cycle measures again rather than killing a second pod on the same stats.
   */
  private async evict(plan: EvictionPlan): Promise<void> {
    const offenders = offendingContainers(plan.resource, plan.pod);
    this.options.recordEvent?.({
      involved: plan.pod,
      type: 'Warning',
      reason: 'Evicted',
      message: plan.message,
      annotations: {
        offending_containers: offenders.map((o) => o.name).join(','),
        offending_containers_usage: offenders.map((o) => o.usage).join(','),
        starved_resource: plan.resource,
      },
    });
    let error: string | undefined;
    try {
      await this.options.killPod(plan.pod, plan.gracePeriodSeconds, plan.status);
    } catch (thrown) {
      error = (thrown as Error).message;
      this.options.log?.(`eviction manager: pod ${plan.pod.namespace}/${plan.pod.name} failed to evict: ${error}`);
    }
    this.evictions = [
      {
        at: this.clock.now(),
        namespace: plan.pod.namespace,
        name: plan.pod.name,
        uid: plan.pod.uid,
        signal: plan.signal,
        resource: plan.resource,
        thresholdId: plan.threshold.id,
        gracePeriodSeconds: plan.gracePeriodSeconds,
        message: plan.message,
        error,
      },
      ...this.evictions,
    ].slice(0, EVICTIONS_KEPT);
  }
}
