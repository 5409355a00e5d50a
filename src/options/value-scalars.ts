/** Parsers for the plain scalar and list types: string, strings, bool, int, int32, float, int32Slice. */
import { ValueFormatError, splitList } from './value-error.js';

export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;

/** Go's strconv.ParseBool, which pflag uses for every bool flag. */
const BOOL_TEXTS: ReadonlyMap<string, boolean> = new Map([
  ['1', true], ['t', true], ['T', true], ['true', true], ['TRUE', true], ['True', true],
  ['0', false], ['f', false], ['F', false], ['false', false], ['FALSE', false], ['False', false],
]);

export function parseBool(raw: string): boolean {
  const value = BOOL_TEXTS.get(raw.trim());
  if (value === undefined) throw new ValueFormatError('not a boolean');
  return value;
}

/**
 * A decimal integer with optional sign. (pflag's base-0 parsing also reads 0x and 0o prefixes; no
 * option of the seeds is ever written that way, so we keep the rule a user can predict.)
 */
export function parseInteger(raw: string, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number {
  const text = raw.trim();
  if (!/^[+-]?\d+$/.test(text)) throw new ValueFormatError('not an integer');
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ValueFormatError(`out of range ${min}..${max}`);
  }
  return value === 0 ? 0 : value; // no -0
}

/** A finite decimal number (Go's ParseFloat without its inf/nan spellings, which no option wants). */
export function parseFloatValue(raw: string): number {
  const text = raw.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new ValueFormatError('not a number');
  const value = Number(text);
  if (!Number.isFinite(value)) throw new ValueFormatError('out of range');
  return value === 0 ? 0 : value;
}

/** Checks inclusive bounds from the option spec. */
export function checkBounds(value: number, min: number | undefined, max: number | undefined): number {
  if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
    throw new ValueFormatError(describeBounds(min, max) ?? 'out of range');
  }
  return value;
}

export function describeBounds(min: number | undefined, max: number | undefined): string | undefined {
  if (min !== undefined && max !== undefined) return `must be between ${min} and ${max}`;
  if (min !== undefined) return `must be at least ${min}`;
  if (max !== undefined) return `must be at most ${max}`;
  return undefined;
}

/**
 * pflag's int32Slice: comma-separated integers. The empty text and `[]` (how the seeds write the empty
 * default) mean an empty list.
 */
export function parseInt32Slice(raw: string): number[] {
  const text = raw.trim();
  if (text === '' || text === '[]') return [];
  return text.split(',').map((item) => {
    try {
      return parseInteger(item, INT32_MIN, INT32_MAX);
    } catch {
      throw new ValueFormatError(`${JSON.stringify(item.trim())} is not a 32-bit integer`);
    }
  });
}

/** pflag's stringSlice: comma-separated, items trimmed, empty items dropped. */
export function parseStrings(raw: string): string[] {
  return splitList(raw);
}

/** `item` names the offending list element, for list options where the whole value is not the culprit. */
export function checkEnum(value: string, accepted: readonly string[] | undefined, item = false): string {
  if (accepted && !accepted.includes(value)) {
    throw new ValueFormatError(
      item ? `${JSON.stringify(value)} is not one of the accepted values` : 'not one of the accepted values',
    );
  }
  return value;
}
