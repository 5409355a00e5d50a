/**
 * What the peer API servers serve (upstream's peer discovery cache, peer_discovery.go): the
 * identity leases of the system namespace labelled as API servers' are watched; a peer's served set
 * is read from its discovery when its lease appears or changes holder (a restarted peer may serve
 * other versions), dropped when the lease goes. A failed read is retried with a growing pause
 * (upstream's rate-limited queue, 20 tries), so a peer that is still starting is picked up once
 * it answers.
 */
import {names} from '../../../api/names.js';
import type {Clock, TimerHandle} from '../../shared/clock.js';
import {StoreInformer} from '../store-informer.js';
import type {Store} from '../storage/store.js';
import {resourceKeyPrefix} from '../storage-keys.js';
import type {PeerView} from './routing.js';

export interface PeerDiscoveryOptions {
  store: Store;
  keyPrefix: string;
  /** This server's identity lease name: not a peer. */
  self: string;
  /** Reads the set a peer at `address` serves. */
  served: (address: string) => Promise<Set<string>>;
  clock: Clock;
  onError?: (message: string, error: unknown) => void;
  /** First retry pause (doubling up to maxRetryMs); upstream's queue starts at 5 ms. */
  retryMs?: number;
  maxRetryMs?: number;
}

/** upstream's maxRetries. */
const MAX_RETRIES = 20;

interface LeaseState {
  holder: string;
  address?: string;
  expiresAt: number;
  /** The served set read for this holder, once read. */
  served?: Set<string>;
  failures: number;
  timer?: TimerHandle;
  fetching?: boolean;
}

/** A lease's expiry: renewTime (or acquireTime) plus leaseDurationSeconds; 0 when it has neither. */
export function leaseExpiry(spec: Record<string, unknown> | undefined): number {
  const renew = Date.parse(String(spec?.renewTime ?? spec?.acquireTime ?? ''));
  const duration = Number(spec?.leaseDurationSeconds ?? 0);
  return Number.isFinite(renew) ? renew + duration * 1000 : 0;
}

export class PeerDiscovery {
  private readonly leases = new Map<string, LeaseState>();
  private readonly informer: StoreInformer;
  private stopped = false;

  constructor(private readonly o: PeerDiscoveryOptions) {
    const n = names();
    const prefix = `${resourceKeyPrefix(o.keyPrefix, n.groups.coordination, 'leases')}${n.namespaces.system}/`;
    this.informer = new StoreInformer(o.store, new Map([[prefix, {apply: (lease) => this.apply(lease), remove: (lease) => this.remove(lease)}]]), (error) => o.onError?.('Identity lease informer error', error));
  }

  start(): void {
    void this.informer.start();
  }

  stop(): void {
    this.stopped = true;
    this.informer.stop();
    for (const state of this.leases.values()) if (state.timer) this.o.clock.clearTimeout(state.timer);
  }

  /**
   * The leases have been listed (upstream's WaitForCacheSync waits for the lease informer, not for
   * the peers' answers: a peer not read yet serves nothing, as one that serves nothing).
   */
  get synced(): boolean {
    return this.informer.synced;
  }

  peers(): PeerView[] {
    return [...this.leases].filter(([, s]) => s.served).map(([id, s]) => ({id, address: s.address, expiresAt: s.expiresAt, served: s.served!}));
  }

  /** upstream's isValidPeerIdentityLease: an API server's identity lease, not ours, with a holder. */
  private peerLease(lease: Record<string, unknown>): {name: string; holder: string; address?: string; expiresAt: number} | undefined {
    const n = names();
    const meta = (lease.metadata ?? {}) as {name?: string; labels?: Record<string, string>; annotations?: Record<string, string>};
    const spec = lease.spec as Record<string, unknown> | undefined;
    if (meta.labels?.[n.labels.apiserverIdentity] !== `${n.product}-apiserver`) return undefined;
    if (!meta.name || meta.name === this.o.self || typeof spec?.holderIdentity !== 'string') return undefined;
    return {name: meta.name, holder: spec.holderIdentity, address: meta.annotations?.[n.annotations.peerAdvertiseAddress], expiresAt: leaseExpiry(spec)};
  }

  private apply(object: Record<string, unknown>): void {
    const lease = this.peerLease(object);
    if (!lease) return;
    const state = this.leases.get(lease.name);
    if (state && state.holder === lease.holder && state.address === lease.address) {
      state.expiresAt = lease.expiresAt; // a renewal
      return;
    }
    if (state?.timer) this.o.clock.clearTimeout(state.timer);
    this.leases.set(lease.name, {holder: lease.holder, address: lease.address, expiresAt: lease.expiresAt, failures: 0});
    void this.fetch(lease.name);
  }

  private remove(object: Record<string, unknown>): void {
    const name = (object.metadata as {name?: string} | undefined)?.name;
    const state = name ? this.leases.get(name) : undefined;
    if (!state) return;
    if (state.timer) this.o.clock.clearTimeout(state.timer);
    this.leases.delete(name!);
  }

  private async fetch(name: string): Promise<void> {
    const state = this.leases.get(name);
    if (!state || this.stopped || state.fetching) return;
    state.timer = undefined;
    if (!state.address) {
      // No address to ask (the peer runs without the gate): it serves nothing we can reach.
      state.served = new Set();
      return;
    }
    state.fetching = true;
    try {
      const served = await this.o.served(state.address);
      if (this.leases.get(name) === state) state.served = served;
    } catch (error) {
      state.failures++;
      this.o.onError?.(`Error syncing discovery for peer lease ${name}`, error);
      if (this.leases.get(name) === state && state.failures < MAX_RETRIES && !this.stopped) {
        const pause = Math.min((this.o.retryMs ?? 200) * 2 ** (state.failures - 1), this.o.maxRetryMs ?? 10_000);
        state.timer = this.o.clock.setTimeout(() => void this.fetch(name), pause);
        state.timer.unref?.();
      }
    } finally {
      state.fetching = false;
    }
  }
}
