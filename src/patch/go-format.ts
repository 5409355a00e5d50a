/**
 * Renders JSON values the way Go's fmt and encoding/json render the decoded
 * `map[string]interface{}` values, because kubectl's error texts embed them
 * (e.g. `map: map[image:x] does not contain declared merge key: name`).
 * Numbers follow apimachinery's decoder, which keeps integers as int64 and the rest as float64.
 */
import { isJsonObject, type JsonValue } from './types.js';

/** Go dynamic type name of a decoded JSON value (reflect.TypeOf(v).String()). */
export function goTypeName(value: JsonValue | undefined): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return '[]interface {}';
  switch (typeof value) {
    case 'string': return 'string';
    case 'boolean': return 'bool';
    case 'number': return Number.isInteger(value) ? 'int64' : 'float64';
    default: return 'map[string]interface {}';
  }
}

/** strconv.FormatFloat(f, 'g', -1, 64), which is what %v prints for a float64. */
function formatGoFloat(f: number): string {
  const [mantissa, expText] = f.toExponential().split('e');
  const exp = Number(expText);
  // Shortest formatting switches to exponent form outside [1e-4, 1e6).
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    const digits = String(Math.abs(exp)).padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(f);
}

/** fmt.Sprintf("%v", value). */
export function goV(value: JsonValue | undefined): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goV).join(' ')}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort(compareGoStrings);
    return `map[${keys.map((k) => `${k}:${goV(value[k])}`).join(' ')}]`;
  }
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : formatGoFloat(value);
  return String(value);
}

/** fmt.Sprintf("%s", value): strings as-is, other scalars as a bad-verb notice. */
export function goS(value: JsonValue | undefined): string {
  if (value === null || value === undefined) return '%!s(<nil>)';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map(goS).join(' ')}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort(compareGoStrings);
    return `map[${keys.map((k) => `${k}:${goS(value[k])}`).join(' ')}]`;
  }
  return `%!s(${goTypeName(value)}=${goV(value)})`;
}

/** Go compares strings by bytes; for sort keys this equals UTF-16 order except astral planes. */
function compareGoStrings(a: string, b: string): number {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return Buffer.compare(ba, bb);
}

/** json.Marshal of a decoded value: object keys sorted, `<`, `>`, `&` escaped. */
export function goJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort(compareGoStrings);
    return `{${keys.map((k) => `${goJsonString(k)}:${goJson(value[k])}`).join(',')}}`;
  }
  if (typeof value === 'string') return goJsonString(value);
  return JSON.stringify(value);
}

function goJsonString(s: string): string {
  return JSON.stringify(s)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
