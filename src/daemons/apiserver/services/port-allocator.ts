/**
 * NodePort allocation as upstream keeps it: one RangeAllocation object in the store
 * (`<prefix>/ranges/servicenodeports`) holding the range and a bitmap of the ports in use, changed
 * only by compare-and-swap on its revision. Several API servers on one store therefore never hand
 * out the same port, and allocations survive restarts.
 */
import {StoreConflictError, type Store} from '../storage/store.js';
import type {PortRange} from '../../../options/types.js';

export class PortAllocationError extends Error {}

const MAX_ATTEMPTS = 50;

interface Snapshot {
  bits: Uint8Array;
  modRevision?: number;
}

/**
 * Upstream's static subrange for node ports (ServiceNodePortStaticSubrange): the lower
 * min(max(16, size/32), 128) ports are left for clients that ask for a port.
 */
export function nodePortStaticBand(size: number): number {
  const band = Math.min(Math.max(16, Math.floor(size / 32)), 128);
  return band < size ? band : 0;
}

export class NodePortAllocator {
  readonly key: string;

  constructor(
    private readonly store: Store,
    keyPrefix: string,
    readonly range: PortRange,
    private readonly random: () => number = Math.random,
  ) {
    this.key = `${keyPrefix}/ranges/servicenodeports`;
  }

  get rangeText(): string {
    return `${this.range.base}-${this.range.base + this.range.size - 1}`;
  }

  contains(port: number): boolean {
    return port >= this.range.base && port < this.range.base + this.range.size;
  }

  private async read(): Promise<Snapshot> {
    const kv = await this.store.get(this.key);
    const bits = new Uint8Array(Math.ceil(this.range.size / 8));
    if (!kv) return {bits};
    const stored = JSON.parse(kv.value) as {range?: string; data?: string};
    const data = Buffer.from(stored.data ?? '', 'base64');
    // A range that changed between runs keeps the ports that are still inside it.
    const [storedBase] = (stored.range ?? '').split('-').map(Number);
    const shift = Number.isFinite(storedBase) ? (storedBase as number) - this.range.base : 0;
    for (let i = 0; i < data.length * 8; i++) {
      if (data[i >> 3]! & (1 << (i & 7))) {
        const offset = i + shift;
        if (offset >= 0 && offset < this.range.size) bits[offset >> 3]! |= 1 << (offset & 7);
      }
    }
    return {bits, modRevision: kv.modRevision};
  }

  private async write(snapshot: Snapshot): Promise<void> {
    const value = JSON.stringify({
      kind: 'RangeAllocation', apiVersion: 'v1', metadata: {creationTimestamp: null},
      range: this.rangeText, data: Buffer.from(snapshot.bits).toString('base64'),
    });
    if (snapshot.modRevision === undefined) await this.store.create(this.key, value);
    else await this.store.update(this.key, value, snapshot.modRevision);
  }

  /** Read-modify-write with compare-and-swap: `change` edits the bitmap or throws; retried on conflicts. */
  private async modify<T>(change: (bits: Uint8Array) => T, dryRun = false): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const snapshot = await this.read();
      const result = change(snapshot.bits);
      if (dryRun) return result;
      try {
        await this.write(snapshot);
        return result;
      } catch (error) {
        if (error instanceof StoreConflictError && attempt < MAX_ATTEMPTS) continue;
        throw error;
      }
    }
  }

  /** Marks `port` used; PortAllocationError with upstream's text when it is outside the range or taken. */
  async allocate(port: number, dryRun = false): Promise<void> {
    if (!this.contains(port)) {
      throw new PortAllocationError(`provided port is not in the valid range. The range of valid ports is ${this.rangeText}`);
    }
    const offset = port - this.range.base;
    await this.modify((bits) => {
      if (bits[offset >> 3]! & (1 << (offset & 7))) throw new PortAllocationError('provided port is already allocated');
      bits[offset >> 3]! |= 1 << (offset & 7);
    }, dryRun);
  }

  /** A free port, dynamic band first (above the static band), at a random place in it. */
  async allocateNext(dryRun = false): Promise<number> {
    const size = this.range.size;
    const band = nodePortStaticBand(size);
    return this.modify((bits) => {
      const free = (o: number) => (bits[o >> 3]! & (1 << (o & 7))) === 0;
      for (const [from, to] of [[band, size], [0, band]] as const) {
        const span = to - from;
        if (span <= 0) continue;
        const start = Math.floor(this.random() * span);
        for (let i = 0; i < span; i++) {
          const offset = from + ((start + i) % span);
          if (free(offset)) {
            bits[offset >> 3]! |= 1 << (offset & 7);
            return this.range.base + offset;
          }
        }
      }
      throw new PortAllocationError('range is full');
    }, dryRun);
  }

  async release(port: number): Promise<void> {
    if (!this.contains(port)) return;
    const offset = port - this.range.base;
    await this.modify((bits) => {
      bits[offset >> 3]! &= ~(1 << (offset & 7));
    });
  }

  async isAllocated(port: number): Promise<boolean> {
    if (!this.contains(port)) return false;
    const offset = port - this.range.base;
    const {bits} = await this.read();
    return (bits[offset >> 3]! & (1 << (offset & 7))) !== 0;
  }
}
