/**
 * The agent's eviction flag values: thresholds (`memory.available<1Gi`), grace periods
 * (`memory.available=1m30s`) and minimum reclaims (`imagefs.available=2Gi`). Error texts are upstream's
 * (see shared/reference/eviction.md, "Parse/validation errors").
 */
import { type DurationValue, toDurationValue } from './duration.js';
import { type Quantity, QuantityError, parseQuantity } from './quantity.js';
import { ValueFormatError, splitList } from './value-error.js';
import { splitPair } from './value-maps.js';

export const EVICTION_SIGNALS = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'containerfs.available',
  'containerfs.inodesFree',
  'pid.available',
  'allocatableMemory.available',
] as const;
export type EvictionSignal = (typeof EVICTION_SIGNALS)[number];

/** A threshold or reclaim amount: an absolute quantity, or a percentage of the signal's capacity. */
export interface EvictionValue {
  quantity?: Quantity;
  /** As written: 10 for `10%` (not 0.1). */
  percentage?: number;
}

export interface EvictionThreshold {
  signal: EvictionSignal;
  operator: 'LessThan';
  /**
   * `0%` and `100%` are kept (percentage 0 or 100): upstream accepts them and never acts on them, which is
   * how a user switches a default threshold off. See isDisabledThreshold.
   */
  value: EvictionValue;
}

export type EvictionDurations = Partial<Record<EvictionSignal, DurationValue>>;
export type EvictionQuantities = Partial<Record<EvictionSignal, Quantity | { percentage: number }>>;

/** A `0%` or `100%` threshold: accepted, never met; it only disables a default for that signal. */
export function isDisabledThreshold(threshold: EvictionThreshold): boolean {
  const pct = threshold.value.percentage;
  return pct === 0 || pct === 100;
}

function toSignal(name: string): EvictionSignal {
  if (!(EVICTION_SIGNALS as readonly string[]).includes(name)) {
    throw new ValueFormatError(`unsupported eviction signal ${name}`);
  }
  return name as EvictionSignal;
}

function quantityOf(text: string): Quantity {
  try {
    return parseQuantity(text);
  } catch (error) {
    if (error instanceof QuantityError) throw new ValueFormatError(`${JSON.stringify(text)}: ${error.message}`);
    throw error;
  }
}

/** `N%` with N a decimal number, or undefined when the text is not a percentage. */
function percentageOf(text: string): number | undefined {
  if (!text.endsWith('%')) return undefined;
  const number = text.slice(0, -1);
  if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(number)) throw new ValueFormatError(`invalid percentage ${JSON.stringify(text)}`);
  return Number(number);
}

/** `signal<value,...`; a repeated flag or a repeated signal overwrites that signal's threshold. */
export function parseEvictionThresholds(raw: string, previous?: EvictionThreshold[]): EvictionThreshold[] {
  const bySignal = new Map<EvictionSignal, EvictionThreshold>((previous ?? []).map((t) => [t.signal, t]));
  for (const item of splitList(raw)) {
    const at = item.indexOf('<');
    if (at < 0) throw new ValueFormatError(`malformed pair ${JSON.stringify(item)}, expect string<string`);
    const signal = toSignal(item.slice(0, at).trim());
    const text = item.slice(at + 1).trim();
    const percentage = percentageOf(text);
    let value: EvictionValue;
    if (percentage !== undefined) {
      if (percentage < 0) throw new ValueFormatError(`eviction percentage threshold ${signal} must be >= 0%: ${text}`);
      if (percentage > 100) throw new ValueFormatError(`eviction percentage threshold ${signal} must be <= 100%: ${text}`);
      value = { percentage };
    } else {
      const quantity = quantityOf(text);
      if (quantity.value <= 0) throw new ValueFormatError(`eviction threshold ${signal} must be positive: ${quantity.text}`);
      value = { quantity };
    }
    bySignal.set(signal, { signal, operator: 'LessThan', value });
  }
  return [...bySignal.values()];
}

/** `signal=duration,...` (soft-eviction grace periods). */
export function parseEvictionDurations(raw: string, previous?: EvictionDurations): EvictionDurations {
  const result: EvictionDurations = { ...previous };
  for (const pair of splitList(raw)) {
    const [name, text] = splitPair(pair, '=');
    const signal = toSignal(name);
    let duration: DurationValue;
    try {
      duration = toDurationValue(text);
    } catch (error) {
      throw new ValueFormatError((error as Error).message);
    }
    if (duration.ms < 0) {
      throw new ValueFormatError(`invalid eviction grace period specified: ${text}, must be a positive value`);
    }
    result[signal] = duration;
  }
  return result;
}

/** `signal=quantity` or `signal=N%` (minimum reclaim). */
export function parseEvictionQuantities(raw: string, previous?: EvictionQuantities): EvictionQuantities {
  const result: EvictionQuantities = { ...previous };
  for (const pair of splitList(raw)) {
    const [name, text] = splitPair(pair, '=');
    const signal = toSignal(name);
    const percentage = percentageOf(text);
    if (percentage !== undefined) {
      if (percentage <= 0) {
        throw new ValueFormatError(`eviction percentage minimum reclaim ${signal} must be positive: ${text}`);
      }
      result[signal] = { percentage };
    } else {
      const quantity = quantityOf(text);
      if (quantity.value < 0) throw new ValueFormatError(`negative eviction minimum reclaim specified for ${signal}`);
      result[signal] = quantity;
    }
  }
  return result;
}

export function formatEvictionValue(value: EvictionValue | Quantity | { percentage: number }): string {
  if ('percentage' in value && value.percentage !== undefined) return `${value.percentage}%`;
  if ('quantity' in value && value.quantity) return value.quantity.text;
  return (value as Quantity).text;
}
