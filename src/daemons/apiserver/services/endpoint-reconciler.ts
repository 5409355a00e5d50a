/**
 * The endpoints of the default (`orch`) service: every live API server's advertised address
 * (upstream's pkg/controlplane/reconcilers). With `--endpoint-reconciler-type=lease` (the default)
 * each API server keeps a lease key `<prefix>/masterleases/<ip>` renewed every interval and
 * expiring after a TTL, and writes the Endpoints and EndpointSlice from the unexpired leases: a
 * server that stops cleanly removes its lease and itself at once, a killed one drops out once
 * its lease expires. The store has no key TTL of its own (SQLite), so a lease carries its expiry
 * and expired leases are skipped and deleted by whoever sees them. `master-count` (deprecated)
 * writes this server's address alone (--apiserver-count is 1); `none` leaves the endpoints alone.
 */
import {names} from '../../../api/names.js';
import {jsonEqual, type JsonObject} from '../../../patch/types.js';
import {StoreConflictError, type Store} from '../storage/store.js';
import {RegistryStore, type WriteContext} from '../rest/registry-store.js';
import {AdmissionChain} from '../admission/chain.js';
import {builtinResources, type ResourceInfo} from '../../../api/resources.js';
import {systemClock as restClock} from '../rest/types.js';
import {systemClock, type Clock, type TimerHandle} from '../../shared/clock.js';
import {familyOf} from './ip-range.js';

export type EndpointReconcilerType = 'lease' | 'master-count' | 'none';

/** Upstream's EndpointInterval and MasterEndpointReconcileTTL. */
export const DEFAULT_RECONCILE_INTERVAL_MS = 10_000;
export const DEFAULT_LEASE_TTL_MS = 15_000;

const WRITE: WriteContext = {user: {name: 'system:apiserver', groups: ['system:masters']}, dryRun: false, fieldManager: 'orch-apiserver'};

export interface EndpointReconcilerOptions {
  store: Store;
  keyPrefix: string;
  type: EndpointReconcilerType;
  /** This server's advertised address. */
  ip: string;
  /** The port the endpoints name (the secure port). */
  port: number;
  clock?: Clock;
  intervalMs?: number;
  ttlMs?: number;
  onError?: (error: unknown) => void;
}

interface LeaseValue {
  ip: string;
  /** Epoch ms after which the lease no longer counts. */
  expires: number;
}

function registry(store: Store, keyPrefix: string, group: string, plural: string): RegistryStore {
  const info = builtinResources().find((r) => r.group === group && r.plural === plural && (r.version === 'v1')) as ResourceInfo;
  return new RegistryStore(info, {store, clock: restClock, keyPrefix, admission: new AdmissionChain([])});
}

export class EndpointReconciler {
  private readonly clock: Clock;
  private readonly intervalMs: number;
  private readonly ttlMs: number;
  private readonly endpoints: RegistryStore;
  private readonly slices: RegistryStore;
  private timer?: TimerHandle;
  private stopped = false;
  private running?: Promise<void>;

  constructor(private readonly o: EndpointReconcilerOptions) {
    this.clock = o.clock ?? systemClock;
    this.intervalMs = o.intervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS;
    // Upstream's TTL is 1.5 intervals: one missed renewal does not drop a live server.
    this.ttlMs = o.ttlMs ?? (o.intervalMs ? Math.round(o.intervalMs * 1.5) : DEFAULT_LEASE_TTL_MS);
    this.endpoints = registry(o.store, o.keyPrefix, '', 'endpoints');
    this.slices = registry(o.store, o.keyPrefix, names().groups.discovery, 'endpointslices');
  }

  private leaseKey(ip: string): string {
    return `${this.o.keyPrefix}/masterleases/${ip}`;
  }

  /** Creates or renews this server's lease. */
  private async renewLease(): Promise<void> {
    const key = this.leaseKey(this.o.ip);
    const value = JSON.stringify({ip: this.o.ip, expires: this.clock.now() + this.ttlMs} satisfies LeaseValue);
    for (let attempt = 0; attempt < 5; attempt++) {
      const kv = await this.o.store.get(key);
      try {
        if (kv) await this.o.store.update(key, value, kv.modRevision);
        else await this.o.store.create(key, value);
        return;
      } catch (error) {
        if (!(error instanceof StoreConflictError)) throw error;
      }
    }
  }

  /** The addresses of the unexpired leases, sorted; expired ones are deleted on the way. */
  async liveAddresses(): Promise<string[]> {
    const now = this.clock.now();
    const live: string[] = [];
    for (const kv of (await this.o.store.list(`${this.o.keyPrefix}/masterleases/`)).items) {
      const lease = JSON.parse(kv.value) as LeaseValue;
      if (lease.expires > now) live.push(lease.ip);
      else await this.o.store.delete(kv.key, kv.modRevision).catch(() => undefined);
    }
    return live.sort();
  }

  /** One pass: renew this server's lease (lease type) and write the endpoints if they changed. */
  async reconcile(): Promise<void> {
    if (this.o.type === 'none') return;
    if (this.o.type === 'master-count') return this.write([this.o.ip]);
    await this.renewLease();
    await this.write(await this.liveAddresses());
  }

  /** Writes the Endpoints and the EndpointSlice of the default service for `ips`, unless they say so already. */
  private async write(ips: string[]): Promise<void> {
    const n = names();
    const name = n.defaultService;
    const ports = [{name: 'https', port: this.o.port, protocol: 'TCP'}];
    const subsets = ips.length ? [{addresses: ips.map((ip) => ({ip})), ports}] : [];
    const endpoints: JsonObject = {
      apiVersion: 'v1', kind: 'Endpoints',
      metadata: {name, namespace: 'default', labels: {[n.labels.endpointSliceSkipMirror]: 'true'}},
      subsets,
    };
    await this.endpoints.update('default', name, WRITE, (current) => (jsonEqual(current.subsets ?? [], subsets) ? current : {...current, subsets}), {
      createIfMissing: () => endpoints,
    });
    const addressType = familyOf(this.o.ip) === 'IPv6' ? 'IPv6' : 'IPv4';
    const sliceEndpoints = ips.map((ip) => ({addresses: [ip], conditions: {ready: true}}));
    const slice: JsonObject = {
      apiVersion: `${n.groups.discovery}/v1`, kind: 'EndpointSlice',
      metadata: {name, namespace: 'default', labels: {[n.labels.serviceName]: name}},
      addressType, endpoints: sliceEndpoints, ports,
    };
    await this.slices.update(
      'default', name, WRITE,
      (current) => (jsonEqual(current.endpoints ?? [], sliceEndpoints) && jsonEqual(current.ports ?? [], ports) ? current : {...current, endpoints: sliceEndpoints, ports}),
      {createIfMissing: () => slice},
    );
  }

  /** Reconciles every interval until stop() (the caller runs the first reconcile()). */
  start(): void {
    if (this.o.type === 'none') return;
    const tick = () => {
      if (this.stopped) return;
      this.running = this.reconcile()
        .catch((error) => this.o.onError?.(error))
        .finally(() => {
          if (!this.stopped) this.timer = this.clock.setTimeout(tick, this.intervalMs);
        });
    };
    this.timer = this.clock.setTimeout(tick, this.intervalMs);
  }

  /**
   * Stops reconciling; with `removeSelf` (a clean shutdown) deletes this server's lease and writes
   * the endpoints without it, so clients stop being sent here before the TTL runs out.
   */
  async stop(removeSelf: boolean): Promise<void> {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    if (!removeSelf || this.o.type !== 'lease') return;
    const kv = await this.o.store.get(this.leaseKey(this.o.ip));
    if (kv) await this.o.store.delete(kv.key, kv.modRevision).catch(() => undefined);
    await this.write((await this.liveAddresses()).filter((ip) => ip !== this.o.ip));
  }
}
