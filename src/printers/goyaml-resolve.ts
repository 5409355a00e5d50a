/**
 * Which plain YAML scalars gopkg.in/yaml.v2 (as vendored by sigs.k8s.io/yaml, used by kubectl)
 * would read back as something other than a string. Such strings must be quoted on output.
 * Ported rule by rule: a hint table on the first character, the YAML 1.1 bool/null words, Go's
 * strconv.ParseInt/ParseUint with base prefixes, the float pattern, and Go time.Parse timestamps.
 */

const BOOL_NULL_WORDS = new Map<string, string>([
  ...['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'].map((w) => [w, 'bool'] as [string, string]),
  ...['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF'].map((w) => [w, 'bool'] as [string, string]),
  ...['', '~', 'null', 'Null', 'NULL'].map((w) => [w, 'null'] as [string, string]),
  ...['.nan', '.NaN', '.NAN', '.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF', '-.inf', '-.Inf', '-.INF'].map(
    (w) => [w, 'float'] as [string, string],
  ),
  ['<<', 'merge'],
]);

function hintOf(c: string | undefined): string {
  if (c === undefined) return 'N';
  if (c === '+' || c === '-') return 'S';
  if (c >= '0' && c <= '9') return 'D';
  if ('yYnNtTfFoO~'.includes(c)) return 'M';
  if (c === '.') return '.';
  return '';
}

const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

/** Go strconv.ParseInt/ParseUint with base 0 (after yaml.v2 removed underscores). */
function parseGoInt(s: string, signed: boolean): boolean {
  let i = 0;
  let neg = false;
  if (signed && (s[0] === '+' || s[0] === '-')) {
    neg = s[0] === '-';
    i = 1;
  }
  let body = s.slice(i);
  let digitsRe = /^[0-9]+$/;
  let radix = 10;
  if (/^0[xX]/.test(body)) {
    body = body.slice(2);
    digitsRe = /^[0-9a-fA-F]+$/;
    radix = 16;
  } else if (/^0[oO]/.test(body)) {
    body = body.slice(2);
    digitsRe = /^[0-7]+$/;
    radix = 8;
  } else if (/^0[bB]/.test(body)) {
    body = body.slice(2);
    digitsRe = /^[01]+$/;
    radix = 2;
  } else if (body.length > 1 && body[0] === '0') {
    body = body.slice(1);
    digitsRe = /^[0-7]+$/;
    radix = 8;
  }
  if (!digitsRe.test(body)) return false;
  let v = 0n;
  for (const ch of body) v = v * BigInt(radix) + BigInt(parseInt(ch, radix));
  if (!signed) return v <= UINT64_MAX;
  return neg ? v <= INT64_MAX + 1n : v <= INT64_MAX;
}

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;

function finiteFloat(s: string): boolean {
  return Number.isFinite(Number(s));
}

/** yaml.v2 isBase60Float: quoted on output for YAML 1.1 parsers. */
export function isBase60Float(s: string): boolean {
  if (s === '') return false;
  const c = s[0];
  if (!(c === '+' || c === '-' || (c >= '0' && c <= '9')) || !s.includes(':')) return false;
  return BASE60_FLOAT.test(s);
}

function daysIn(month: number, year: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
}

/** Go time.Parse's 1-or-2 digit number (getnum with fixed=false). */
function num12(s: string, pos: number): [number, number] | null {
  if (!/[0-9]/.test(s[pos] ?? '')) return null;
  if (!/[0-9]/.test(s[pos + 1] ?? '')) return [Number(s[pos]), pos + 1];
  return [Number(s.slice(pos, pos + 2)), pos + 2];
}

/** yaml.v2 parseTimestamp: the four Go layouts it tries, with Go's range checks. */
export function isYamlTimestamp(s: string): boolean {
  if (!/^[0-9]{4}-/.test(s)) return false;
  const year = Number(s.slice(0, 4));
  const date = (): number | null => {
    const m = num12(s, 5);
    if (!m || m[0] < 1 || m[0] > 12 || s[m[1]] !== '-') return null;
    const d = num12(s, m[1] + 1);
    if (!d || d[0] < 1 || d[0] > daysIn(m[0], year)) return null;
    return d[1];
  };
  const end = date();
  if (end === null) return false;
  if (end === s.length) return true; // "2006-1-2"
  const sep = s[end];
  if (sep !== 'T' && sep !== 't' && sep !== ' ') return false;
  const h = num12(s, end + 1);
  if (!h || h[0] > 23 || s[h[1]] !== ':') return false;
  const mi = num12(s, h[1] + 1);
  if (!mi || mi[0] > 59 || s[mi[1]] !== ':') return false;
  const se = num12(s, mi[1] + 1);
  if (!se || se[0] > 59) return false;
  let p = se[1];
  if ((s[p] === '.' || s[p] === ',') && /[0-9]/.test(s[p + 1] ?? '')) {
    p++;
    while (/[0-9]/.test(s[p] ?? '')) p++;
  }
  if (sep === ' ') return p === s.length;
  if (s[p] === 'Z') return p + 1 === s.length;
  const tz = s.slice(p);
  const m = /^([+-])([0-9]{2}):([0-9]{2})$/.exec(tz);
  return m !== null && Number(m[2]) <= 24 && Number(m[3]) <= 60;
}

export type ResolvedTag = 'str' | 'bool' | 'null' | 'int' | 'float' | 'timestamp' | 'merge';

/** yaml.v2 resolve("", s): the tag a plain scalar with this text would get. */
export function resolvePlain(s: string): ResolvedTag {
  const hint = hintOf(s[0]);
  if (hint === '') return 'str';
  const word = BOOL_NULL_WORDS.get(s);
  if (word) return word as ResolvedTag;
  if (hint === 'M') return 'str';
  if (hint === '.') return /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(s) && finiteFloat(s) ? 'float' : 'str';
  if (isYamlTimestamp(s)) return 'timestamp';
  const plain = s.replace(/_/g, '');
  if (parseGoInt(plain, true) || parseGoInt(plain, false)) return 'int';
  if (YAML_STYLE_FLOAT.test(plain) && finiteFloat(plain)) return 'float';
  return 'str';
}
