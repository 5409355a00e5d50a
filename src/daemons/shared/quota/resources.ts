/**
 * Resource lists as quota counts them (upstream's k8s.io/apiserver/pkg/quota/v1/resources.go):
 * named quantities added, subtracted, masked and compared exactly. Shared by the API server's
 * ResourceQuota admission and the controller manager's resourcequota controller, which must agree
 * on every sum. Amounts are the agent's exact milli-unit quantities (a sum keeps the format of its
 * first non-zero term, as Quantity.Add does, so memory stays `1536Mi`, not `1610612736`).
 */
import {formatAmount, parseAmount, type Amount} from '../../../api/quantities.js';
import type {JsonValue} from '../../../patch/types.js';

export type ResourceList = Record<string, Amount>;

const ZERO: Amount = {milli: 0n, format: 'DecimalSI'};

/** An integer count (pods=1, count/secrets=1). */
export function count(n: number): Amount {
  return {milli: BigInt(n) * 1000n, format: 'DecimalSI'};
}

/** A JSON resource list ({cpu: "500m", memory: "1Gi"}); unparsable entries are left out. */
export function parseResourceList(value: JsonValue | undefined): ResourceList {
  const out: ResourceList = {};
  if (!value || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const [name, quantity] of Object.entries(value)) {
    if (typeof quantity !== 'string' && typeof quantity !== 'number') continue;
    try {
      out[name] = parseAmount(String(quantity));
    } catch {
      // Validation refuses malformed quantities before admission; nothing to count here.
    }
  }
  return out;
}

/** The JSON form, each quantity in upstream's canonical text, keys sorted. */
export function formatResourceList(list: ResourceList): Record<string, string> {
  return Object.fromEntries(Object.keys(list).sort().map((name) => [name, formatAmount(list[name]!)]));
}

function plus(a: Amount, b: Amount): Amount {
  return {milli: a.milli + b.milli, format: a.milli === 0n ? b.format : a.format};
}

/** a + b for every name in either. */
export function add(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = {...a};
  for (const [name, amount] of Object.entries(b)) out[name] = plus(out[name] ?? ZERO, amount);
  return out;
}

/** a - b for every name in either. */
export function subtract(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = {...a};
  for (const [name, amount] of Object.entries(b)) out[name] = plus(out[name] ?? ZERO, {milli: -amount.milli, format: amount.format});
  return out;
}

/** a - b, never below zero per name (an update's delta: shrinking frees nothing at admission). */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out = subtract(a, b);
  for (const [name, amount] of Object.entries(out)) if (amount.milli < 0n) out[name] = {milli: 0n, format: amount.format};
  return out;
}

/** Only the given names. */
export function mask(list: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = {};
  for (const name of names) if (list[name]) out[name] = list[name]!;
  return out;
}

export function removeZeros(list: ResourceList): ResourceList {
  return Object.fromEntries(Object.entries(list).filter(([, amount]) => amount.milli !== 0n));
}

/** The names whose amount is negative. */
export function negativeNames(list: ResourceList): string[] {
  return Object.keys(list).filter((name) => list[name]!.milli < 0n);
}

/** Same names, same amounts (formats aside). */
export function equals(a: ResourceList, b: ResourceList): boolean {
  const names = Object.keys(a);
  if (names.length !== Object.keys(b).length) return false;
  return names.every((name) => b[name] !== undefined && b[name]!.milli === a[name]!.milli);
}

/** For every name in both, a <= b; the names where a exceeds b (upstream's LessThanOrEqual). */
export function exceeded(a: ResourceList, b: ResourceList): string[] {
  return Object.keys(b).filter((name) => a[name] !== undefined && a[name]!.milli > b[name]!.milli);
}

/** `name=quantity` pairs sorted by name, comma-joined: upstream's prettyPrint of quota messages. */
export function prettyPrint(list: ResourceList): string {
  return Object.keys(list).sort().map((name) => `${name}=${formatAmount(list[name]!)}`).join(',');
}

export function resourceNames(list: ResourceList): string[] {
  return Object.keys(list);
}
