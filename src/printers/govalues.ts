/**
 * How kubectl's Go code sees and prints the values of a decoded object.
 *
 * kubectl decodes objects with k8s.io/apimachinery's JSON decoder: a number whose JSON text is an
 * integer that fits int64 becomes int64, every other number becomes float64. JavaScript has one
 * number type, so we classify by the same rule (Go and JavaScript print float64 JSON text alike).
 * A `bigint` is accepted as an exact int64 for callers that parse losslessly.
 */

export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

const INT64_MIN = -(2 ** 63);
const INT64_LIMIT = 2 ** 63;

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** True when Go would hold this number as int64 (integer JSON text within int64 range). */
export function isGoInt(v: unknown): v is number | bigint {
  if (typeof v === 'bigint') return true;
  return typeof v === 'number' && Number.isInteger(v) && v >= INT64_MIN && v < INT64_LIMIT;
}

/** Decimal text of an integer-valued number without exponent notation. */
export function intText(v: number | bigint): string {
  if (typeof v === 'bigint') return v.toString();
  if (Object.is(v, -0)) return '0';
  return BigInt(v).toString();
}

/**
 * strconv.FormatFloat(f, 'g', -1, 64), which is also fmt's %v of a float64: the shortest digits that
 * round-trip, in %e form when the decimal exponent is < -4 or >= 6 (`1e+06`, `1.5e-07`), else %f form.
 */
export function formatFloatG(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  // toExponential() without an argument yields the shortest round-trip digits, as Go's shortest mode.
  const [mant, expText] = f.toExponential().split('e');
  const exp = Number(expText);
  const neg = mant.startsWith('-');
  const digits = mant.replace('-', '').replace('.', '');
  const sign = neg ? '-' : '';
  // Go: with shortest precision the %e/%f decision uses precision 6.
  if (exp < -4 || exp >= 6) {
    const frac = digits.length > 1 ? '.' + digits.slice(1) : '';
    const e = Math.abs(exp);
    return `${sign}${digits[0]}${frac}e${exp < 0 ? '-' : '+'}${e < 10 ? '0' + e : String(e)}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const fracPart = digits.slice(exp + 1);
  return sign + intPart + (fracPart ? '.' + fracPart : '');
}

/** Go's %v of a scalar number as held by kubectl (int64 or float64). */
export function goNumberText(v: number | bigint): string {
  return isGoInt(v) ? intText(v) : formatFloatG(v as number);
}

/** Byte-wise (UTF-8) order of strings, which is code point order: Go's sort of map keys. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i)!;
    const cb = b.codePointAt(i)!;
    if (ca !== cb) return ca < cb ? -1 : 1;
    if (ca > 0xffff) i++;
  }
  return a.length - b.length;
}

export function sortedKeys(o: Record<string, unknown>): string[] {
  return Object.keys(o).sort(compareCodePoints);
}

/** fmt.Sprint of one value (%v): maps as map[k:v], lists as [a b], nil as <nil>. */
export function goSprintValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number' || typeof v === 'bigint') return goNumberText(v);
  if (Array.isArray(v)) return '[' + v.map(goSprintValue).join(' ') + ']';
  if (isPlainObject(v)) return 'map[' + sortedKeys(v).map((k) => `${k}:${goSprintValue(v[k])}`).join(' ') + ']';
  return String(v);
}

/** fmt's %#v of the decoded object (used in kubectl's jsonpath error dump). */
export function goSyntaxValue(v: unknown, nested = false): string {
  if (v === null || v === undefined) return nested ? 'interface {}(nil)' : '<nil>';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number' || typeof v === 'bigint') return goNumberText(v);
  if (Array.isArray(v)) return '[]interface {}{' + v.map((x) => goSyntaxValue(x, true)).join(', ') + '}';
  if (isPlainObject(v)) {
    return 'map[string]interface {}{' + sortedKeys(v).map((k) => `${goQuote(k)}:${goSyntaxValue(v[k], true)}`).join(', ') + '}';
  }
  return String(v);
}

/** unicode.IsPrint approximation: letters, marks, numbers, punctuation, symbols and ASCII space. */
export function isGoPrint(cp: number): boolean {
  if (cp === 0x20) return true;
  const ch = String.fromCodePoint(cp);
  return /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(ch);
}

/** strconv.Quote: Go double-quoted string with Go escapes, printable Unicode kept as is. */
export function goQuote(s: string, asciiOnly = false): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') {
      out += '\\' + ch;
    } else if (cp < 0x80 ? cp >= 0x20 && cp !== 0x7f : !asciiOnly && isGoPrint(cp) && !(cp >= 0xd800 && cp <= 0xdfff)) {
      out += ch;
    } else {
      out += goEscapeRune(cp);
    }
  }
  return out + '"';
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

export function goEscapeRune(cp: number): string {
  switch (cp) {
    case 0x07: return '\\a';
    case 0x08: return '\\b';
    case 0x0c: return '\\f';
    case 0x0a: return '\\n';
    case 0x0d: return '\\r';
    case 0x09: return '\\t';
    case 0x0b: return '\\v';
  }
  if (cp >= 0xd800 && cp <= 0xdfff) return '\\ufffd';
  if (cp < 0x20 || cp === 0x7f) return '\\x' + hex(cp, 2);
  if (cp < 0x10000) return '\\u' + hex(cp, 4);
  return '\\U' + hex(cp, 8);
}
