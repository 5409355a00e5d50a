/**
 * Lease-based leader election with client-go's semantics (leaderelection.go), on an injected
 * clock and lock so the whole state machine runs in tests on a manual clock.
 *
 * The safety argument, which the timings below must keep: a candidate takes a lease over only
 * after seeing its record unchanged for the holder's lease duration on its own clock, while the
 * holder gives up once no renewal succeeded for the renew deadline (< lease duration). Lease
 * timestamps are never compared with the local clock, so clock offsets between hosts do not matter.
 *
 * Written by hand: no npm package implements client-go's algorithm against a Lease object.
 */
import { klog, type Logger } from '../../../lib/klog.js';
import { systemClock, type ElectionClock } from './clock.js';
import { JITTER_FACTOR, validateElectorConfig, type LeaderElectorConfig } from './config.js';
import { ConflictError, type LockedRecord } from './lock.js';
import { serializeRecord, type LeaderElectionRecord } from './record.js';

export type ElectionStateName = 'candidate' | 'leader' | 'lost' | 'stopped';

/** What the dashboard shows; times are epoch ms. */
export interface ElectionState {
  /** This candidate. */
  identity: string;
  state: ElectionStateName;
  /** The observed holder (`''` once released); undefined before the lease was first seen. */
  holder?: string;
  acquireTime?: number;
  renewTime?: number;
  transitions?: number;
  /** Local time at which the observed record last changed (or was written by us). */
  observedAt?: number;
  /** Time left before the observed record expires on the local clock; negative once expired. */
  expiresInMs?: number;
}

/** How `run` ended: the lease was lost (the controller manager exits 1) or the run was stopped. */
export type ElectionOutcome = 'lost' | 'stopped';

type Raced<T> = { value: T } | 'aborted' | 'timeout';

export class LeaderElector {
  private readonly clock: ElectionClock;
  private readonly random: () => number;
  private readonly log: Logger;
  private readonly listeners = new Set<(state: ElectionState) => void>();

  private state: ElectionStateName = 'stopped';
  private observed?: LeaderElectionRecord;
  private observedRaw?: string;
  private observedTime?: number;
  /** The resourceVersion of the lease as last read or written, for the leader's renewal without a read. */
  private observedResourceVersion?: string;
  private reportedLeader = '';
  /**
   * Bumped when an attempt is abandoned (deadline or stop), so a lock call that answers late
   * changes nothing: upstream cancels the request's context to the same effect.
   */
  private attemptEpoch = 0;
  private stopController?: AbortController;

  constructor(private readonly config: LeaderElectorConfig) {
    validateElectorConfig(config);
    this.clock = config.clock ?? systemClock;
    this.random = config.random ?? Math.random;
    this.log = config.logger ?? klog('leaderelection');
  }

  get identity(): string {
    return this.config.identity;
  }

  /** Whether the last observed record names this candidate (upstream IsLeader). */
  isLeader(): boolean {
    return this.observed?.holderIdentity === this.config.identity;
  }

  /** The last observed holder; `''` when none. */
  getLeader(): string {
    return this.observed?.holderIdentity ?? '';
  }

  snapshot(): ElectionState {
    const state: ElectionState = { identity: this.config.identity, state: this.state };
    if (this.observed && this.observedTime !== undefined) {
      state.holder = this.observed.holderIdentity;
      state.acquireTime = this.observed.acquireTime;
      state.renewTime = this.observed.renewTime;
      state.transitions = this.observed.leaderTransitions;
      state.observedAt = this.observedTime;
      state.expiresInMs = this.observedTime + this.observed.leaseDurationSeconds * 1000 - this.clock.now();
    }
    return state;
  }

  /** Calls `listener` with a snapshot on every change of state or observed record; returns an unsubscribe. */
  onChange(listener: (state: ElectionState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The `leaderElection` health check (healthzadaptor.go): an error text when this process leads
   * but has not renewed for the lease duration plus the tolerance, else undefined.
   */
  healthCheck(maxTolerableExpiredLeaseMs: number): string | undefined {
    if (!this.isLeader() || this.observedTime === undefined) return undefined;
    if (this.clock.now() > this.observedTime + this.config.leaseDurationMs + maxTolerableExpiredLeaseMs) {
      return `failed election to renew leadership on lease ${this.config.lock.describe()}`;
    }
    return undefined;
  }

  /** Stops a running election as aborting its signal would. */
  stop(): void {
    this.stopController?.abort();
  }

  /**
   * Campaigns until leadership is won, leads until it is lost or the run is stopped, then (with
   * releaseOnCancel) releases the lease. Always calls onStoppedLeading before resolving.
   */
  async run(signal?: AbortSignal): Promise<ElectionOutcome> {
    if (this.stopController) throw new Error('leader election is already running');
    const stop = new AbortController();
    this.stopController = stop;
    const forwardAbort = () => stop.abort();
    if (signal?.aborted) stop.abort();
    signal?.addEventListener('abort', forwardAbort, { once: true });
    let outcome: ElectionOutcome = 'stopped';
    try {
      this.setState('candidate');
      if (!(await this.acquire(stop.signal))) return outcome;
      this.setState('leader');
      const leading = new AbortController();
      // Not awaited: upstream starts OnStartedLeading in a goroutine and renews alongside it.
      const work = (async () => this.config.callbacks.onStartedLeading(leading.signal))().catch((error: unknown) => {
        this.log.error('leading work failed', 'err', String(error));
      });
      outcome = await this.renew(stop.signal);
      this.setState(outcome);
      leading.abort();
      await work;
      if (this.config.releaseOnCancel) await this.release();
      return outcome;
    } finally {
      if (this.state === 'candidate') this.setState('stopped');
      signal?.removeEventListener('abort', forwardAbort);
      this.stopController = undefined;
      this.config.callbacks.onStoppedLeading();
    }
  }

  // -------------------------------------------------------------------------------------------

  private get description(): string {
    return this.config.lock.describe();
  }

  /** wait.JitterUntil(tryAcquireOrRenew, RetryPeriod, 1.2, sliding): the first attempt at once. */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log.info(`attempting to acquire leader lease ${this.description}...`);
    while (!signal.aborted) {
      const result = await this.race(this.tryAcquireOrRenew(this.attemptEpoch), signal);
      this.maybeReportTransition();
      if (result === 'aborted') return false;
      if (result !== 'timeout' && result.value) {
        this.log.info(`successfully acquired lease ${this.description}`);
        return true;
      }
      this.log.v(4).info(`failed to acquire lease ${this.description}`);
      const period = this.config.retryPeriodMs;
      await this.clock.sleep(period + this.random() * JITTER_FACTOR * period, signal);
    }
    return false;
  }

  /**
   * Rounds of wait.PollUntilContextTimeout(RetryPeriod, RenewDeadline, immediate) every
   * RetryPeriod: a round that cannot renew before its deadline ends leadership.
   */
  private async renew(signal: AbortSignal): Promise<ElectionOutcome> {
    const { retryPeriodMs, renewDeadlineMs } = this.config;
    for (;;) {
      const deadline = this.clock.now() + renewDeadlineMs;
      let renewed = false;
      while (!renewed) {
        const remaining = deadline - this.clock.now();
        if (remaining <= 0) break;
        const result = await this.race(this.tryAcquireOrRenew(this.attemptEpoch), signal, remaining);
        if (result === 'aborted') return this.stoppedWhileLeading();
        if (result === 'timeout') break;
        renewed = result.value;
        if (!renewed) {
          const left = deadline - this.clock.now();
          if (left <= 0) break;
          await this.clock.sleep(Math.min(retryPeriodMs, left), signal);
          if (signal.aborted) return this.stoppedWhileLeading();
        }
      }
      this.maybeReportTransition();
      if (!renewed) {
        this.log.info(`failed to renew lease ${this.description}: context deadline exceeded`);
        return 'lost';
      }
      this.log.v(5).info(`successfully renewed lease ${this.description}`);
      await this.clock.sleep(retryPeriodMs, signal);
      if (signal.aborted) return this.stoppedWhileLeading();
    }
  }

  private stoppedWhileLeading(): ElectionOutcome {
    this.maybeReportTransition();
    return 'stopped';
  }

  /** One attempt (leader-election.md §4); false on any failure, which the loops retry. */
  private async tryAcquireOrRenew(epoch: number): Promise<boolean> {
    if (this.config.coordinated) return this.tryCoordinatedRenew(epoch);
    const { lock, identity } = this.config;
    const now = this.clock.now();
    const desired: LeaderElectionRecord = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.floor(this.config.leaseDurationMs / 1000),
      acquireTime: now,
      renewTime: now,
      leaderTransitions: 0,
    };
    const abandoned = () => epoch !== this.attemptEpoch;

    // 1. Fast path: the leader renews from its cached copy, without a read.
    if (this.isLeader() && this.isLeaseValid(now) && this.observedResourceVersion !== undefined) {
      desired.acquireTime = this.observed!.acquireTime;
      desired.leaderTransitions = this.observed!.leaderTransitions;
      try {
        const resourceVersion = await lock.update(desired, this.observedResourceVersion);
        if (abandoned()) return false;
        this.setObserved(desired, resourceVersion);
        return true;
      } catch (error) {
        if (abandoned()) return false;
        this.log.error(`Failed to update lock optimistically: ${describeError(error)}, falling back to slow path`);
      }
    }

    // 2. Read the lease; create it when there is none.
    let current: LockedRecord | undefined;
    try {
      current = await lock.get();
    } catch (error) {
      if (!abandoned()) this.log.error(`error retrieving resource lock ${this.description}: ${describeError(error)}`);
      return false;
    }
    if (abandoned()) return false;
    if (!current) {
      try {
        const resourceVersion = await lock.create(desired);
        if (abandoned()) return false;
        this.setObserved(desired, resourceVersion);
        return true;
      } catch (error) {
        if (!abandoned()) this.log.error(`error initially creating leader election record: ${describeError(error)}`);
        return false;
      }
    }

    // 3. A changed record restarts the wait for its expiry, measured on the local clock.
    this.observeFetched(current);

    // 4. Someone else holds a lease that has not expired here.
    if (current.record.holderIdentity !== '' && this.isLeaseValid(now) && !this.isLeader()) {
      this.log.v(4).info(`lock is held by ${current.record.holderIdentity} and has not yet expired`);
      return false;
    }

    // 5. Keep acquireTime and transitions while we hold it; a change of holder is a transition.
    if (this.isLeader()) {
      desired.acquireTime = current.record.acquireTime;
      desired.leaderTransitions = current.record.leaderTransitions;
    } else {
      desired.leaderTransitions = current.record.leaderTransitions + 1;
    }

    // 6. Write conditionally on what we read: a concurrent writer makes this a conflict.
    try {
      const resourceVersion = await lock.update(desired, current.resourceVersion);
      if (abandoned()) return false;
      this.setObserved(desired, resourceVersion);
      return true;
    } catch (error) {
      if (!abandoned()) this.log.error(`Failed to update lock: ${describeError(error)}`);
      return false;
    }
  }

  /**
   * client-go's tryCoordinatedRenew: the coordinated leader election controller of the API server
   * writes the holder; a candidate only renews a lease that names it, never takes one, and stops
   * renewing once the controller marks another `preferredHolder` (end of term).
   */
  private async tryCoordinatedRenew(epoch: number): Promise<boolean> {
    const { lock, identity } = this.config;
    const abandoned = () => epoch !== this.attemptEpoch;
    const now = this.clock.now();
    let current: LockedRecord | undefined;
    try {
      current = await lock.get();
    } catch (error) {
      if (!abandoned()) this.log.error(`error retrieving resource lock ${this.description}: ${describeError(error)}`);
      return false;
    }
    if (abandoned()) return false;
    if (!current) {
      this.log.info(`lease lock not found: ${this.description}`);
      return false;
    }
    this.observeFetched(current);
    if (!this.isLeaseValid(now)) {
      this.log.info(`lock has expired: ${this.description}`);
      return false;
    }
    if (!this.isLeader()) {
      this.log.v(6).info(`lock is held by ${current.record.holderIdentity} and has not yet expired: ${this.description}`);
      return false;
    }
    if (current.record.preferredHolder) {
      this.log.v(4).info(`lock is marked as 'end of term': ${this.description}`);
      return false;
    }
    const desired: LeaderElectionRecord = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.floor(this.config.leaseDurationMs / 1000),
      acquireTime: current.record.acquireTime,
      renewTime: now,
      leaderTransitions: current.record.leaderTransitions,
      ...(current.record.strategy !== undefined ? { strategy: current.record.strategy } : {}),
    };
    try {
      const resourceVersion = await lock.update(desired, current.resourceVersion);
      if (abandoned()) return false;
      this.setObserved(desired, resourceVersion);
      return true;
    } catch (error) {
      if (!abandoned()) this.log.error(`Failed to update lock: ${describeError(error)}`);
      return false;
    }
  }

  /**
   * Clears the lease (holder `''`, duration 1s) so a standby takes it at once; retried within
   * the renew deadline, conflicts at once (someone wrote in between: read again).
   */
  private async release(): Promise<void> {
    if (!this.isLeader()) return;
    const never = new AbortController().signal;
    const deadline = this.clock.now() + this.config.renewDeadlineMs;
    for (;;) {
      const remaining = deadline - this.clock.now();
      if (remaining <= 0) break;
      const result = await this.race(this.tryRelease(this.attemptEpoch), never, remaining);
      if (result === 'timeout' || result === 'aborted') break;
      if (result.value === 'done') {
        this.maybeReportTransition();
        return;
      }
      if (result.value === 'retry') {
        const left = deadline - this.clock.now();
        if (left <= 0) break;
        await this.clock.sleep(Math.min(this.config.retryPeriodMs, left));
      }
    }
    this.log.error(`Failed to release lease ${this.description}: context deadline exceeded`);
  }

  private async tryRelease(epoch: number): Promise<'done' | 'conflict' | 'retry'> {
    const abandoned = () => epoch !== this.attemptEpoch;
    try {
      const current = await this.config.lock.get();
      if (abandoned()) return 'done';
      if (!current) return 'done';
      this.observeFetched(current);
      if (current.record.holderIdentity !== this.config.identity) return 'done';
      const now = this.clock.now();
      const released: LeaderElectionRecord = {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaderTransitions: current.record.leaderTransitions,
      };
      const resourceVersion = await this.config.lock.update(released, current.resourceVersion);
      if (abandoned()) return 'done';
      this.setObserved(released, resourceVersion);
      return 'done';
    } catch (error) {
      if (abandoned()) return 'done';
      if (error instanceof ConflictError) return 'conflict';
      this.log.error(`Failed to release lease: ${describeError(error)}`);
      return 'retry';
    }
  }

  /**
   * Races a lock attempt with the stop signal and an optional timeout. A lost race abandons
   * the attempt: its late answer is ignored.
   */
  private async race<T>(attempt: Promise<T>, signal: AbortSignal, timeoutMs?: number): Promise<Raced<T>> {
    // A listener rather than AbortSignal.any: the stop signal lives as long as the run and
    // would otherwise collect a dependent signal per attempt.
    const settled = new AbortController();
    let onAbort = (): void => undefined;
    const contenders: Promise<Raced<T>>[] = [
      attempt.then((value) => ({ value })),
      new Promise((resolve) => {
        onAbort = () => resolve('aborted');
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }),
    ];
    if (timeoutMs !== undefined) contenders.push(this.clock.sleep(timeoutMs, settled.signal).then(() => 'timeout' as const));
    let result: Raced<T>;
    try {
      result = await Promise.race(contenders);
    } finally {
      settled.abort();
      signal.removeEventListener('abort', onAbort);
    }
    if (typeof result === 'string') this.attemptEpoch++;
    return result;
  }

  private isLeaseValid(now: number): boolean {
    return this.observed !== undefined && this.observedTime !== undefined
      && this.observedTime + this.observed.leaseDurationSeconds * 1000 > now;
  }

  /** Step 3: only a change of the record's content resets the observed time. */
  private observeFetched(current: LockedRecord): void {
    const raw = serializeRecord(current.record);
    if (raw !== this.observedRaw) {
      this.setObserved(current.record, current.resourceVersion);
    } else {
      this.observedResourceVersion = current.resourceVersion;
    }
  }

  private setObserved(record: LeaderElectionRecord, resourceVersion: string): void {
    this.observed = { ...record };
    this.observedRaw = serializeRecord(record);
    this.observedTime = this.clock.now();
    this.observedResourceVersion = resourceVersion;
    this.emitChange();
  }

  private setState(state: ElectionStateName): void {
    if (state === this.state) return;
    this.state = state;
    this.emitChange();
  }

  private emitChange(): void {
    if (!this.listeners.size) return;
    const snapshot = this.snapshot();
    for (const listener of this.listeners) {
      try {
        listener(snapshot);
      } catch (error) {
        this.log.error('leader election state listener failed', 'err', String(error));
      }
    }
  }

  /** Upstream runs OnNewLeader in a goroutine; a microtask keeps user code out of the loop. */
  private maybeReportTransition(): void {
    const holder = this.getLeader();
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    const { onNewLeader } = this.config.callbacks;
    if (onNewLeader) {
      queueMicrotask(() => {
        try {
          onNewLeader(holder);
        } catch (error) {
          this.log.error('OnNewLeader callback failed', 'err', String(error));
        }
      });
    }
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
