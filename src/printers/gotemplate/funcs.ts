/**
 * The functions a kubectl go-template can call: text/template's builtins plus kubectl's
 * `exists` and `base64decode` (k8s.io/cli-runtime/pkg/printers/template.go).
 */
import { goSprint, goSprintf, goSprintln } from './fmt.js';
import { GoIntLit, type TValue, isTrue, kindOf, numValue, typeName } from './values.js';

type Param = 'any' | 'string' | 'int';

export interface BuiltinFunc {
  /** Parameter types; for a variadic function the last one is the type of every extra argument. */
  params: Param[];
  variadic: boolean;
  call(args: TValue[]): TValue;
}

const fn = (params: Param[], variadic: boolean, call: (args: TValue[]) => TValue): BuiltinFunc => ({ params, variadic, call });

type BasicKind = 'bool' | 'int' | 'float' | 'string' | 'invalid';

function basicKind(v: TValue): BasicKind {
  const k = kindOf(v);
  if (k === 'bool' || k === 'int' || k === 'float' || k === 'string') return k;
  if (k === 'invalid' || k === 'nil') return 'invalid';
  throw new Error('invalid type for comparison');
}

function scalar(v: TValue): number | string | boolean | bigint {
  const k = kindOf(v);
  if (k === 'int' && typeof v === 'bigint') return v;
  if (k === 'int' || k === 'float') return numValue(v);
  return v as string | boolean;
}

function eq(args: TValue[]): boolean {
  const [a, ...rest] = args;
  if (rest.length === 0) throw new Error('missing argument for comparison');
  let k1: BasicKind;
  try {
    k1 = basicKind(a);
  } catch {
    k1 = 'invalid';
  }
  for (const b of rest) {
    let k2: BasicKind;
    try {
      k2 = basicKind(b);
    } catch {
      k2 = 'invalid';
    }
    if (k1 !== k2) {
      if (a !== undefined && b !== undefined && a !== null && b !== null) {
        const composite = ['map', 'slice'].includes(kindOf(a)) || ['map', 'slice'].includes(kindOf(b));
        if (!composite) throw new Error('incompatible types for comparison');
        throw new Error(`non-comparable types ${typeName(a)}: ${typeName(a)}, ${typeName(b)}: ${typeName(b)}`);
      }
      if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
      continue;
    }
    if (k1 === 'invalid') return true;
    const x = scalar(a);
    const y = scalar(b);
    if (x === y || (typeof x !== 'string' && typeof x !== 'boolean' && Number(x) === Number(y))) return true;
  }
  return false;
}

function lt(a: TValue, b: TValue): boolean {
  const k1 = basicKind(a);
  const k2 = basicKind(b);
  if (k1 === 'invalid' || k2 === 'invalid') throw new Error('invalid type for comparison');
  if (k1 !== k2) throw new Error('incompatible types for comparison');
  if (k1 === 'bool') throw new Error('invalid type for comparison');
  const x = scalar(a);
  const y = scalar(b);
  if (typeof x === 'string') return x < (y as string);
  return Number(x) < Number(y);
}

function length(v: TValue): TValue {
  const k = kindOf(v);
  if (k === 'nil') throw new Error('len of nil pointer');
  if (k === 'string') return new GoIntLit(Buffer.byteLength(v as string, 'utf8'));
  if (k === 'slice') return new GoIntLit((v as unknown[]).length);
  if (k === 'map') return new GoIntLit(Object.keys(v as object).length);
  // Go panics inside reflect here; text/template reports the recovered panic text.
  if (k === 'invalid') throw new Error('reflect: call of reflect.Value.Type on zero Value');
  throw new Error(`len of type ${typeName(v)}`);
}

function indexArg(idx: TValue, len: number): number {
  const k = kindOf(idx);
  if (k === 'invalid' || k === 'nil') throw new Error('cannot index slice/array with nil');
  if (k !== 'int') throw new Error(`cannot index slice/array with type ${typeName(idx)}`);
  const x = numValue(idx);
  if (x < 0 || x >= len) throw new Error(`index out of range: ${x}`);
  return x;
}

function index(args: TValue[]): TValue {
  let item = args[0];
  if (item === undefined || item === null) throw new Error('index of untyped nil');
  for (const idx of args.slice(1)) {
    if (item === null) throw new Error('index of nil pointer');
    const k = kindOf(item);
    if (k === 'slice') {
      item = (item as TValue[])[indexArg(idx, (item as TValue[]).length)];
    } else if (k === 'string') {
      const bytes = Buffer.from(item as string, 'utf8');
      item = new GoIntLit(bytes[indexArg(idx, bytes.length)]);
    } else if (k === 'map') {
      if (kindOf(idx) !== 'string') {
        if (idx === undefined || idx === null) {
          item = null;
          continue;
        }
        throw new Error(`value has type ${typeName(idx)}; should be string`);
      }
      const m = item as Record<string, TValue>;
      item = Object.prototype.hasOwnProperty.call(m, idx as string) ? m[idx as string] : null;
    } else if (k === 'invalid') {
      throw new Error('index of untyped nil');
    } else {
      throw new Error(`can't index item of type ${typeName(item)}`);
    }
  }
  return item;
}

/** kubectl's exists: whether `index` would find something non-nil along the path. */
function exists(args: TValue[]): boolean {
  let v = args[0];
  for (const idx of args.slice(1)) {
    if (v === undefined || v === null) return false;
    const k = kindOf(v);
    if (k === 'slice' || k === 'string') {
      if (kindOf(idx) !== 'int') return false;
      const x = numValue(idx);
      const len = k === 'slice' ? (v as unknown[]).length : Buffer.byteLength(v as string, 'utf8');
      if (x < 0 || x >= len) return false;
      v = k === 'slice' ? (v as TValue[])[x] : new GoIntLit(Buffer.from(v as string, 'utf8')[x]);
    } else if (k === 'map') {
      if (idx !== undefined && idx !== null && kindOf(idx) !== 'string') return false;
      const m = v as Record<string, TValue>;
      const key = (idx ?? '') as string;
      v = Object.prototype.hasOwnProperty.call(m, key) ? m[key] : null;
    } else {
      return false;
    }
  }
  return !(v === null || v === undefined);
}

function base64decode(s: string): string {
  const clean = s;
  // Go's StdEncoding is strict: padding required, no whitespace (except \r\n, which it skips).
  const stripped = clean.replace(/[\r\n]/g, '');
  const bad = /[^A-Za-z0-9+/=]/.exec(stripped);
  if (bad || stripped.length % 4 !== 0 || /=[^=]/.test(stripped) || /={3,}$/.test(stripped)) {
    const at = bad ? bad.index : stripped.length % 4 !== 0 ? stripped.length - (stripped.length % 4) : stripped.indexOf('=');
    throw new Error(`base64 decode failed: illegal base64 data at input byte ${at}`);
  }
  return Buffer.from(stripped, 'base64').toString('latin1') === '' ? '' : Buffer.from(stripped, 'base64').toString('utf8');
}

function htmlEscape(s: string): string {
  return s.replace(/[&'<>"\0]/g, (c) => ({ '&': '&amp;', "'": '&#39;', '<': '&lt;', '>': '&gt;', '"': '&#34;', '\0': '\uFFFD' })[c]!);
}

function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    switch (ch) {
      case '\\': out += '\\\\'; continue;
      case "'": out += "\\'"; continue;
      case '"': out += '\\"'; continue;
      case '<': out += '\\u003C'; continue;
      case '>': out += '\\u003E'; continue;
      case '&': out += '\\u0026'; continue;
      case '=': out += '\\u003D'; continue;
    }
    if (cp < 0x20) out += '\\u' + cp.toString(16).toUpperCase().padStart(4, '0');
    else out += ch;
  }
  return out;
}

/** url.QueryEscape. */
function queryEscape(s: string): string {
  return Array.from(Buffer.from(s, 'utf8'))
    .map((b) => {
      const c = String.fromCharCode(b);
      if (/[A-Za-z0-9\-_.~]/.test(c)) return c;
      if (c === ' ') return '+';
      return '%' + b.toString(16).toUpperCase().padStart(2, '0');
    })
    .join('');
}

/** The text the html/js/urlquery functions escape: a lone string argument as is, else Sprint. */
function evalArgs(args: TValue[]): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  return goSprint(args);
}

function slice(args: TValue[]): TValue {
  const [item, ...idx] = args;
  const k = kindOf(item);
  if (k !== 'slice' && k !== 'string') throw new Error(`can't slice item of type ${typeName(item)}`);
  if (idx.length > 3) throw new Error(`too many slice indexes: ${idx.length}`);
  if (k === 'string' && idx.length === 3) throw new Error('cannot 3-index slice a string');
  const len = k === 'slice' ? (item as unknown[]).length : Buffer.byteLength(item as string, 'utf8');
  const bounds = [0, len];
  idx.slice(0, 2).forEach((x, i) => {
    if (kindOf(x) !== 'int') throw new Error(`cannot index slice/array with type ${typeName(x)}`);
    const n = numValue(x);
    if (n < 0 || n > len) throw new Error(`index out of range: ${n}`);
    bounds[i] = n;
  });
  if (bounds[0] > bounds[1]) throw new Error(`invalid slice index: ${bounds[0]} > ${bounds[1]}`);
  if (k === 'slice') return (item as unknown[]).slice(bounds[0], bounds[1]);
  return Buffer.from(item as string, 'utf8').subarray(bounds[0], bounds[1]).toString('utf8');
}

export const builtins: Record<string, BuiltinFunc> = {
  and: fn(['any', 'any'], true, () => undefined),
  or: fn(['any', 'any'], true, () => undefined),
  not: fn(['any'], false, ([a]) => !isTrue(a)),
  len: fn(['any'], false, ([a]) => length(a)),
  index: fn(['any', 'any'], true, index),
  slice: fn(['any', 'any'], true, slice),
  print: fn(['any'], true, (a) => goSprint(a)),
  printf: fn(['string', 'any'], true, ([f, ...rest]) => goSprintf(f as string, rest)),
  println: fn(['any'], true, (a) => goSprintln(a)),
  html: fn(['any'], true, (a) => htmlEscape(evalArgs(a))),
  js: fn(['any'], true, (a) => jsEscape(evalArgs(a))),
  urlquery: fn(['any'], true, (a) => queryEscape(evalArgs(a))),
  eq: fn(['any', 'any'], true, eq),
  ne: fn(['any', 'any'], false, (a) => !eq(a)),
  lt: fn(['any', 'any'], false, ([a, b]) => lt(a, b)),
  le: fn(['any', 'any'], false, ([a, b]) => lt(a, b) || eq([a, b])),
  gt: fn(['any', 'any'], false, ([a, b]) => !(lt(a, b) || eq([a, b]))),
  ge: fn(['any', 'any'], false, ([a, b]) => !lt(a, b)),
  exists: fn(['any', 'any'], true, exists),
  base64decode: fn(['string'], false, ([s]) => base64decode(s as string)),
};

export const builtinNames = new Set(Object.keys(builtins).concat(['call']));
