/**
 * ClusterIP allocation as upstream does it in the release orch emulates (1.36: the
 * MultiCIDRServiceAllocator gate is GA and locked on since 1.34): every allocated address is an
 * IPAddress object (`networking.<domain>/v1`) named by the address, whose parentRef names the
 * service. Creating the object is the allocation: the store's create fails for a taken address, so
 * several API servers on one store never hand out one address twice, and allocations survive
 * restarts. The ranges are those of `--service-cluster-ip-range` (one per family).
 */
import {names} from '../../../api/names.js';
import {ApiError} from '../../../api/status.js';
import type {Store} from '../storage/store.js';
import type {RegistryStore, WriteContext} from '../rest/registry-store.js';
import {addressAt, canonicalIp, familyOf, offsetOf, parseRange, staticBand, usableSize, type IPFamily, type IPRange} from './ip-range.js';

export class IPAllocationError extends Error {}

export interface ServiceRef {
  namespace: string;
  name: string;
}

const ALLOCATOR_WRITE: WriteContext = {user: {name: 'system:apiserver', groups: ['system:masters']}, dryRun: false, fieldManager: 'orch-apiserver'};
const RANDOM_TRIES = 32;

export class ClusterIPAllocator {
  readonly ranges: IPRange[];

  constructor(
    private readonly store: Store,
    /** The registry of IPAddress objects (networking/v1 ipaddresses). */
    private readonly addresses: RegistryStore,
    cidrs: string[],
    private readonly random: () => number = Math.random,
  ) {
    this.ranges = cidrs.map(parseRange);
  }

  families(): IPFamily[] {
    return this.ranges.map((r) => r.family);
  }

  rangeFor(family: IPFamily): IPRange | undefined {
    return this.ranges.find((r) => r.family === family);
  }

  private ipAddressObject(ip: string, family: IPFamily, service: ServiceRef) {
    const n = names();
    return {
      apiVersion: `${n.groups.networking}/v1`, kind: 'IPAddress',
      metadata: {name: ip, labels: {[n.labels.ipAddressFamily]: family, [n.labels.ipAddressManagedBy]: n.ipAllocator}},
      spec: {parentRef: {group: '', resource: 'services', namespace: service.namespace, name: service.name}},
    };
  }

  /** Takes `ip` for the service; IPAllocationError with upstream's text when it is outside the range or taken. */
  async allocate(ip: string, service: ServiceRef, dryRun = false): Promise<string> {
    const canonical = canonicalIp(ip);
    const family = canonical ? familyOf(canonical) : undefined;
    const range = family && this.rangeFor(family);
    if (!canonical || !range || offsetOf(range, canonical) === undefined) {
      const valid = range?.cidr ?? this.ranges.map((r) => r.cidr).join(',');
      throw new IPAllocationError(`the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${valid}`);
    }
    if (dryRun) {
      if (await this.store.get(this.addresses.key('', canonical))) throw new IPAllocationError('provided IP is already allocated');
      return canonical;
    }
    try {
      await this.addresses.create('', this.ipAddressObject(canonical, range.family, service), ALLOCATOR_WRITE);
      return canonical;
    } catch (error) {
      if (error instanceof ApiError && error.status.reason === 'AlreadyExists') throw new IPAllocationError('provided IP is already allocated');
      throw error;
    }
  }

  /** A free address of `family`: random ones above the static band first, then a scan of the used set. */
  async allocateNext(family: IPFamily, service: ServiceRef, dryRun = false): Promise<string> {
    const range = this.rangeFor(family);
    if (!range) throw new IPAllocationError(`no ${family} service range is configured`);
    const size = usableSize(range);
    const band = staticBand(size);
    const pick = (from: bigint, to: bigint) => from + (BigInt(Math.floor(this.random() * 2 ** 52)) % (to - from));
    for (let i = 0; i < RANDOM_TRIES && size > band; i++) {
      const ip = addressAt(range, pick(band, size));
      try {
        return await this.allocate(ip, service, dryRun);
      } catch (error) {
        if (!(error instanceof IPAllocationError)) throw error;
      }
    }
    // Crowded range: scan what is used (the IPAddress keys) for a free address, dynamic band first.
    const used = new Set((await this.store.list(this.addresses.collectionPrefix(''))).items.map((kv) => kv.key.slice(kv.key.lastIndexOf('/') + 1)));
    for (const [from, to] of [[band, size], [0n, band]] as const) {
      for (let offset = from; offset < to; offset++) {
        const ip = addressAt(range, offset);
        if (used.has(ip)) continue;
        try {
          return await this.allocate(ip, service, dryRun);
        } catch (error) {
          if (!(error instanceof IPAllocationError)) throw error;
        }
      }
    }
    throw new IPAllocationError('range is full');
  }

  /** Gives `ip` back (deletes its IPAddress object); an address outside the ranges or already free is left alone. */
  async release(ip: string): Promise<void> {
    const canonical = canonicalIp(ip);
    if (!canonical) return;
    try {
      await this.addresses.delete('', canonical, {}, ALLOCATOR_WRITE);
    } catch (error) {
      if (error instanceof ApiError && error.status.code === 404) return;
      throw error;
    }
  }
}
