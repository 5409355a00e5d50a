/**
 * Exact resource-list arithmetic for capacity and allocatable, on top of ../options/quantity.ts
 * (which parses and prints quantities but does not add or subtract them).
 *
 * Amounts are held as BigInt milli-units, so `8 - 200m` is exactly `7800m`. A result keeps the format of
 * the quantity it started from, as upstream's Quantity.Sub does: memory capacity is BinarySI, so
 * `16316412Ki - 100Mi` prints `16214012Ki`, and a byte count that 1024 does not divide prints as a plain
 * integer (never as `16G`, which DecimalSI would give).
 */
import { parseQuantity } from '../options/quantity.js';

export type QuantityFormat = 'DecimalSI' | 'BinarySI';

export interface Amount {
  milli: bigint;
  format: QuantityFormat;
}

/** An integer count of base units (bytes, cores, pods) in the given format. */
export function amountOf(units: number | bigint, format: QuantityFormat): Amount {
  return { milli: BigInt(units) * 1000n, format };
}

/** A quantity text as an exact amount; its format from its suffix (`Ki`... are BinarySI). */
export function parseAmount(text: string): Amount {
  const quantity = parseQuantity(text);
  // `value` is a double, exact for integers below 2^53; multiplying by 1000 would lose that sooner
  // (above 9 TB), so whole units and the fraction are converted separately.
  const whole = Math.trunc(quantity.value);
  const fraction = Math.round((quantity.value - whole) * 1000);
  return { milli: BigInt(whole) * 1000n + BigInt(fraction), format: /[KMGTPE]i$/.test(text.trim()) ? 'BinarySI' : 'DecimalSI' };
}

/** Upstream's canonical text of an amount (Quantity.String()). */
export function formatAmount(amount: Amount): string {
  const { milli, format } = amount;
  if (milli % 1000n !== 0n) return parseQuantity(`${milli}m`).text;
  const units = milli / 1000n;
  const magnitude = units < 0n ? -units : units;
  // BinarySI below 1024 prints in decimal form, as upstream does to avoid confusing rounding.
  if (format === 'BinarySI' && magnitude >= 1024n) {
    return units % 1024n === 0n ? parseQuantity(`${units / 1024n}Ki`).text : `${units}`;
  }
  return parseQuantity(`${units}`).text;
}

/** Sum per resource of several lists (the reservations of several options). */
export function sumResources(...lists: ReadonlyArray<Readonly<Record<string, Amount>> | undefined>): Record<string, Amount> {
  const total: Record<string, Amount> = {};
  for (const list of lists) {
    for (const [name, amount] of Object.entries(list ?? {})) {
      const previous = total[name];
      total[name] = { milli: (previous?.milli ?? 0n) + amount.milli, format: previous && previous.milli !== 0n ? previous.format : amount.format };
    }
  }
  return total;
}

/** `capacity - reserved` per resource of the capacity, never below zero ("negative allocatable makes no sense"). */
export function subtractResources(capacity: Readonly<Record<string, Amount>>, reserved: Readonly<Record<string, Amount>>): Record<string, Amount> {
  const result: Record<string, Amount> = {};
  for (const [name, amount] of Object.entries(capacity)) {
    const milli = amount.milli - (reserved[name]?.milli ?? 0n);
    result[name] = { milli: milli < 0n ? 0n : milli, format: amount.format };
  }
  return result;
}

export function formatResources(list: Readonly<Record<string, Amount>>): Record<string, string> {
  return Object.fromEntries(Object.entries(list).map(([name, amount]) => [name, formatAmount(amount)]));
}

/** Two quantity texts denote the same amount (`1Gi` and `1024Mi`): upstream compares quantities semantically. */
export function sameQuantity(a: string, b: string): boolean {
  try {
    return parseAmount(a).milli === parseAmount(b).milli;
  } catch {
    return a === b;
  }
}
