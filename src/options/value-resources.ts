/** `--reserved-memory`: per-NUMA-node memory reservations (component-base ReservedMemoryVar). */
import { type Quantity, QuantityError, parseQuantity } from './quantity.js';
import { ValueFormatError } from './value-error.js';

export interface MemoryReservation {
  numaNode: number;
  /** `memory` and `hugepages-<size>` amounts. */
  limits: Record<string, Quantity>;
}

const FORM = 'expected numaNodeID:type=quantity[,type=quantity...]';

/** `0:memory=1Gi,hugepages-1M=2Gi`, several entries separated by `;`; a repeated flag appends. */
export function parseReservedMemory(raw: string, previous?: MemoryReservation[]): MemoryReservation[] {
  const result = [...(previous ?? [])];
  for (const entry of raw.split(';').map((e) => e.trim()).filter((e) => e !== '')) {
    const parts = entry.split(':');
    if (parts.length !== 2) throw new ValueFormatError(`the reserved memory has incorrect format, ${FORM}, got ${entry}`);
    if (!/^\d+$/.test(parts[0].trim())) {
      throw new ValueFormatError(`the NUMA node ID must be a non-negative integer, got ${JSON.stringify(parts[0])}`);
    }
    const limits: Record<string, Quantity> = {};
    for (const limit of parts[1].split(',')) {
      const pair = limit.split('=');
      if (pair.length !== 2) throw new ValueFormatError(`the reserved limit has incorrect value, expected type=quantity, got ${limit}`);
      const type = pair[0].trim();
      if (type !== 'memory' && !/^hugepages-.+/.test(type)) {
        throw new ValueFormatError(`unknown memory type ${JSON.stringify(type)}, expected memory or hugepages-<size>`);
      }
      try {
        limits[type] = parseQuantity(pair[1].trim());
      } catch (error) {
        if (error instanceof QuantityError) throw new ValueFormatError(`${JSON.stringify(pair[1])} is not a quantity`);
        throw error;
      }
    }
    result.push({ numaNode: Number(parts[0].trim()), limits });
  }
  return result;
}

export function formatReservedMemory(reservations: MemoryReservation[]): string {
  return reservations
    .map((r) => `${r.numaNode}:${Object.entries(r.limits).map(([type, q]) => `${type}=${q.text}`).join(',')}`)
    .join(';');
}
