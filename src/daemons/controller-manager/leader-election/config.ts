/**
 * The elector's settings and their validation, with client-go's defaults and error texts
 * (leaderelection.go NewLeaderElector; component-base defaults).
 */
import { names } from '../../../api/names.js';
import type { Logger } from '../../../lib/klog.js';
import type { ElectionClock } from './clock.js';
import type { LeaseLock } from './lock.js';

/** wait.JitterUntil's factor for the acquire loop: waits of retryPeriod * [1, 2.2). */
export const JITTER_FACTOR = 1.2;

export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;
export const defaultLeaseNamespace = (): string => names().namespaces.system;
export const defaultLeaseName = (): string => names().leases.controllerManager;

export interface LeaderElectionCallbacks {
  /**
   * Called (not awaited by the election loop) once leadership is won. `signal` aborts when
   * leadership ends. A returned promise should settle once the leader's work has stopped: the
   * elector waits for it before releasing the lease, so a standby never starts while it runs.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called whenever `run` finishes: lost lease, stop, or never acquired. */
  onStoppedLeading(): void;
  /** Called when the observed holder changes, including to this candidate and to `''` (released). */
  onNewLeader?(identity: string): void;
}

export interface LeaderElectorConfig {
  lock: LeaseLock;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  callbacks: LeaderElectionCallbacks;
  /**
   * Follow the API server's coordinated leader election (client-go `Coordinated: true`): renew the
   * lease only once the coordinated controller names this identity, never take it.
   */
  coordinated?: boolean;
  /** Clear the lease on a clean stop so a standby takes over at once. */
  releaseOnCancel?: boolean;
  /** Defaults to the system clock. */
  clock?: ElectionClock;
  /** [0, 1) source for the acquire loop's jitter; defaults to Math.random. */
  random?: () => number;
  /** Defaults to klog for module `leaderelection`. */
  logger?: Logger;
}

/** Throws client-go's error for the first setting that is out of range. */
export function validateElectorConfig(config: LeaderElectorConfig): void {
  const fail = (message: string): never => {
    throw new Error(message);
  };
  if (config.leaseDurationMs <= config.renewDeadlineMs) fail('leaseDuration must be greater than renewDeadline');
  if (config.renewDeadlineMs <= JITTER_FACTOR * config.retryPeriodMs) fail('renewDeadline must be greater than retryPeriod*JitterFactor');
  if (!(config.leaseDurationMs > 0)) fail('leaseDuration must be greater than zero');
  if (!(config.renewDeadlineMs > 0)) fail('renewDeadline must be greater than zero');
  if (!(config.retryPeriodMs > 0)) fail('retryPeriod must be greater than zero');
  if (!config.callbacks?.onStartedLeading) fail('OnStartedLeading callback must not be nil');
  if (!config.callbacks?.onStoppedLeading) fail('OnStoppedLeading callback must not be nil');
  if (!config.lock) fail('Lock must not be nil.');
  if (!config.identity) fail('Lock identity is empty');
}
