/**
 * The node's heartbeat Lease (upstream component-helpers lease controller, as the kubelet runs it):
 * `orch-node-lease/<node>`, holderIdentity = the node, leaseDurationSeconds = nodeLeaseDurationSeconds,
 * an owner reference to the Node, and renewTime = now written every leaseDuration * 0.25 (plus up to 4 %
 * jitter).
 *
 * Each sync first updates the lease last written (no GET, as upstream: nobody else writes it); if that
 * fails it falls back to "ensure": GET, and create if missing, retried with doubling waits up to 7 s.
 * An update is tried 5 times in a row (a Conflict re-reads the lease first); then the sync gives up
 * until the next interval. A lease created while the Node is missing has no owner reference (it needs
 * the Node's uid); each renewal tries to add it until it is there. The status manager starts this
 * loop right after the Node is registered, so the lease appears at once, owned.
 */
import { names } from '../../../api/names.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { leaseApiVersion, isConflict, isNotFound, type NodeApiClient } from './client.js';
import { LoopTimer, jittered } from './loop-timer.js';
import { formatMicroTime } from './time.js';
import type { LeaseObject } from './types.js';

export const nodeLeaseNamespace = (): string => names().namespaces.nodeLease;
/** Upstream's renewIntervalFraction: renew four times per lease duration. */
export const RENEW_INTERVAL_FRACTION = 0.25;
export const LEASE_RENEW_JITTER = 0.04;
export const LEASE_MAX_BACKOFF_MS = 7_000;
export const LEASE_INITIAL_BACKOFF_MS = 100;
export const LEASE_MAX_UPDATE_RETRIES = 5;

export interface NodeLeaseOptions {
  client: NodeApiClient;
  nodeName: string;
  leaseDurationSeconds: number;
  clock?: Clock;
  /** For the jitter; tests pass `() => 0`. */
  random?: () => number;
  /** A lease was created or renewed at this time. */
  onRenew?: (at: number) => void;
  onError?: (error: Error) => void;
  log?: (message: string) => void;
}

export class NodeLeaseController {
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly timer: LoopTimer;
  private latestLease: LeaseObject | undefined;
  private running = false;
  private loopDone: Promise<void> | undefined;
  private lastRenewAt: number | undefined;

  constructor(private readonly options: NodeLeaseOptions) {
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.timer = new LoopTimer(this.clock);
  }

  get renewIntervalMs(): number {
    return this.options.leaseDurationSeconds * 1000 * RENEW_INTERVAL_FRACTION;
  }

  /** The lease as last written. */
  get lease(): LeaseObject | undefined {
    return this.latestLease;
  }

  get lastRenew(): number | undefined {
    return this.lastRenewAt;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.timer.wake();
    await this.loopDone;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      await this.sync();
      if (!this.running) break;
      // Sliding: the period counts from the end of the sync, as upstream's JitterUntil(sliding=true).
      await this.timer.wait(jittered(this.renewIntervalMs, LEASE_RENEW_JITTER, this.random));
    }
  }

  /** One renewal. Never throws: failures are reported and retried on the next interval. */
  async sync(): Promise<void> {
    if (this.latestLease) {
      try {
        await this.retryUpdate(this.latestLease);
        return;
      } catch (error) {
        this.options.log?.(`failed to update lease using latest lease, fallback to ensure lease: ${(error as Error).message}`);
      }
    }
    const ensured = await this.backoffEnsure();
    if (!ensured) return;
    this.latestLease = ensured.lease;
    // A lease just created already carries renewTime = now.
    if (!ensured.created) {
      try {
        await this.retryUpdate(ensured.lease);
      } catch (error) {
        this.options.log?.(`will retry updating lease in ${this.renewIntervalMs / 1000}s: ${(error as Error).message}`);
      }
    }
  }

  private fail(error: unknown): void {
    this.options.onError?.(error as Error);
  }

  private renewed(lease: LeaseObject): void {
    this.latestLease = lease;
    this.lastRenewAt = this.clock.now();
    this.options.onRenew?.(this.lastRenewAt);
  }

  /** GET, else create; retried with doubling waits while the API server fails. Undefined when stopped or the Node is missing. */
  private async backoffEnsure(): Promise<{ lease: LeaseObject; created: boolean } | undefined> {
    let wait = LEASE_INITIAL_BACKOFF_MS;
    for (;;) {
      try {
        return await this.ensure();
      } catch (error) {
        this.fail(error);
        // A sync called directly (not by the running loop) gives up at once instead of waiting.
        if (!this.running) return undefined;
        wait = Math.min(2 * wait, LEASE_MAX_BACKOFF_MS);
        this.options.log?.(`failed to ensure lease exists, will retry in ${wait}ms: ${(error as Error).message}`);
        await this.timer.wait(wait);
        if (!this.running) return undefined;
      }
    }
  }

  private async ensure(): Promise<{ lease: LeaseObject; created: boolean } | undefined> {
    const { client, nodeName } = this.options;
    try {
      return { lease: await client.getLease(nodeLeaseNamespace(), nodeName), created: false };
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    // Created even without an owner reference (the Node not there yet): renewals add it later.
    const lease = await this.newLease(undefined);
    const created = await client.createLease(lease);
    this.renewed(created);
    return { lease: created, created: true };
  }

  private async retryUpdate(base: LeaseObject): Promise<void> {
    let lease = base;
    for (let attempt = 0; attempt < LEASE_MAX_UPDATE_RETRIES; attempt++) {
      try {
        this.renewed(await this.options.client.updateLease(await this.newLease(lease)));
        return;
      } catch (error) {
        this.fail(error);
        if (isConflict(error)) {
          // Someone else wrote it: continue from the current version.
          const ensured = await this.backoffEnsure();
          if (!ensured) break;
          lease = ensured.lease;
        }
      }
    }
    throw new Error(`failed ${LEASE_MAX_UPDATE_RETRIES} attempts to update lease`);
  }

  /** A new lease, or a copy of `base`, with renewTime = now and the Node as owner when it can be read. */
  private async newLease(base: LeaseObject | undefined): Promise<LeaseObject> {
    const { nodeName, leaseDurationSeconds } = this.options;
    const lease: LeaseObject = base
      ? structuredClone(base)
      : {
          apiVersion: leaseApiVersion(),
          kind: 'Lease',
          metadata: { name: nodeName, namespace: nodeLeaseNamespace() },
          spec: { holderIdentity: nodeName, leaseDurationSeconds },
        };
    lease.spec.renewTime = formatMicroTime(this.clock.now());
    if (!lease.metadata.ownerReferences?.length) {
      // The owner reference needs the Node's uid, so it is set once the Node can be read (upstream's
      // setNodeOwnerFunc); until then a renewal goes without it and tries again next time.
      try {
        const node = await this.options.client.getNode(nodeName);
        if (node.metadata.uid) lease.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: node.metadata.uid }];
      } catch (error) {
        this.options.log?.(`failed to get node ${nodeName} when trying to set owner ref to the node lease: ${(error as Error).message}`);
      }
    }
    return lease;
  }
}
