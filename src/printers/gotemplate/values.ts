/**
 * Values inside the template engine. JSON data uses plain JS values (int64/float64 decided by
 * ../govalues.ts); `undefined` is Go's invalid reflect.Value (a missing key), `null` a nil
 * interface (JSON null). Template literals carry their Go type explicitly.
 */
import { isGoInt } from '../govalues.js';

/** A float64 that happens to be integral, e.g. the literal `2.0`. */
export class GoFloat {
  constructor(readonly value: number) {}
}

/** An `int` (not int64) from a template literal, a range index or len. */
export class GoIntLit {
  constructor(readonly value: number) {}
}

export type TValue = unknown;

export type Kind = 'invalid' | 'nil' | 'bool' | 'int' | 'float' | 'string' | 'map' | 'slice';

export function kindOf(v: TValue): Kind {
  if (v === undefined) return 'invalid';
  if (v === null) return 'nil';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  if (v instanceof GoFloat) return 'float';
  if (v instanceof GoIntLit || typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return isGoInt(v) ? 'int' : 'float';
  if (Array.isArray(v)) return 'slice';
  return 'map';
}

export function typeName(v: TValue): string {
  if (v instanceof GoIntLit) return 'int';
  switch (kindOf(v)) {
    case 'invalid': return '<nil>';
    case 'nil': return 'interface {}';
    case 'bool': return 'bool';
    case 'string': return 'string';
    case 'int': return 'int64';
    case 'float': return 'float64';
    case 'slice': return '[]interface {}';
    case 'map': return 'map[string]interface {}';
  }
}

export function numValue(v: TValue): number {
  if (v instanceof GoFloat || v instanceof GoIntLit) return v.value;
  if (typeof v === 'bigint') return Number(v);
  return v as number;
}

/** The plain JSON-like value, for fmt and JSON printing. */
export function plain(v: TValue): unknown {
  if (v instanceof GoIntLit) return v.value;
  if (v instanceof GoFloat) return v.value;
  return v;
}

/** text/template's truth: empty values are false. */
export function isTrue(v: TValue): boolean {
  switch (kindOf(v)) {
    case 'invalid':
    case 'nil': return false;
    case 'bool': return v as boolean;
    case 'string': return (v as string).length > 0;
    case 'int':
    case 'float': return numValue(v) !== 0;
    case 'slice': return (v as unknown[]).length > 0;
    case 'map': return Object.keys(v as object).length > 0;
  }
}
