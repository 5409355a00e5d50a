/**
 * KYAML (`-o kyaml`, kubectl 1.34+ via sigs.k8s.io/yaml/kyaml): a YAML subset that always starts with
 * `---`, writes maps and lists in flow style with trailing commas, double-quotes every string value,
 * and leaves keys bare when they cannot be misread. Keys keep Go's JSON order (sorted byte-wise).
 * No npm package emits this dialect, so the encoder's rules are reproduced here.
 */
import { goJsonMarshal } from './gojson.js';
import { isGoPrint, isPlainObject, sortedKeys } from './govalues.js';
import { isYamlTimestamp } from './goyaml-resolve.js';

const FOLD = '\\\n';

function writeIndent(level: number): string {
  return '  '.repeat(level);
}

/** Go strconv.ParseInt(s, 0, 64) succeeding (syntax and range). */
function goParsesAsInt(s: string): boolean {
  const m = /^[+-]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!m) return false;
  const neg = s.startsWith('-');
  const body = s.replace(/^[+-]/, '');
  let v: bigint;
  if (/^0[oO]/.test(body)) v = BigInt('0o' + body.slice(2));
  else if (/^0[0-7]+$/.test(body)) v = BigInt('0o' + body.slice(1));
  else v = BigInt(body);
  const max = (1n << 63n) - (neg ? 0n : 1n);
  return v <= max;
}

/** Go strconv.ParseFloat(s, 64) succeeding without a range error. */
function goParsesAsFloat(s: string): boolean {
  if (/^[+-]?(inf|infinity|nan)$/i.test(s)) return true;
  const dec = /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(s);
  const hexf = /^[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+$/.test(s);
  if (!dec && !hexf) return false;
  if (hexf) return true;
  return Number.isFinite(Number(s));
}

const SEXAGESIMAL = /^[+-]?[1-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$/;

/** kyaml yamlGuessesWrong: would a YAML parser take this bare word for a non-string? */
function yamlGuessesWrong(s: string): boolean {
  const lower = s.toLowerCase();
  if (s.length <= 5 && ['null', '~', ''].includes(lower)) return true;
  if (['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return true;
  if (s.length <= 5 && ['true', 'y', 'yes', 'on', 'false', 'n', 'no', 'off'].includes(lower)) return true;
  const noUnderscores = s.replace(/_/g, '');
  if (goParsesAsInt(noUnderscores)) return true;
  if (goParsesAsFloat(noUnderscores)) return true;
  if (SEXAGESIMAL.test(s)) return true;
  if (s.length <= 5 && ['.inf', '-.inf', '+.inf', '.nan'].includes(lower)) return true;
  return isYamlTimestamp(s);
}

function needsQuotes(s: string): boolean {
  if (s === '' || yamlGuessesWrong(s)) return true;
  const runes = Array.from(s);
  return runes.some((r, i) => {
    if (/[\p{L}\p{N}_]/u.test(r)) return false;
    return !(i > 0 && i < runes.length - 1 && (r === '-' || r === '.' || r === '/'));
  });
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\r': '\\r', '\t': '\\t', '\v': '\\v', '\0': '\\0',
  '\x1b': '\\e', '\x85': '\\N', '\xa0': '\\_', '\u2028': '\\L', '\u2029': '\\P',
};

/** Go's unicode.IsSpace. */
function isGoSpace(r: string): boolean {
  return /^[\t\n\v\f\r \x85\xa0]$/.test(r) || /^\p{Z}$/u.test(r);
}

function renderString(val: string, indent: number, key: boolean): string {
  const multi = val.includes('\n');
  if (key && !multi && !needsQuotes(val)) return val;
  const compact = key;
  const newline = compact ? '\\n' : '\\n' + FOLD;
  let buf = '"';
  if (multi && !compact) buf += FOLD;
  for (const r of val) {
    if (buf.endsWith('\n')) {
      buf += writeIndent(indent);
      // Leading whitespace of a folded line must be escaped to survive; others get one space.
      buf += isGoSpace(r) && r !== '\n' ? '\\' : ' ';
    }
    if (r === '"' || r === '\\') {
      buf += '\\' + r;
      continue;
    }
    const cp = r.codePointAt(0)!;
    if (isGoPrint(cp)) {
      buf += r;
      continue;
    }
    if (r === '\n') buf += newline;
    else if (SIMPLE_ESCAPES[r]) buf += SIMPLE_ESCAPES[r];
    else if (cp < 0x20 || cp === 0x7f) buf += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp < 0x10000) buf += '\\u' + (cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp).toString(16).padStart(4, '0');
    else buf += '\\U' + cp.toString(16).padStart(8, '0');
  }
  if (multi && !compact) {
    if (!buf.endsWith('\n')) buf += FOLD;
    buf += writeIndent(indent);
  }
  return buf + '"';
}

function renderNode(v: unknown, indent: number): string {
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    // Lists whose items are all maps or lists are "cuddled": [{ ... }, { ... }].
    if (v.every((x) => Array.isArray(x) || isPlainObject(x))) {
      return '[' + v.map((x) => renderNode(x, indent)).join(', ') + ']';
    }
    let out = '[\n' + writeIndent(indent);
    for (const item of v) out += writeIndent(1) + renderNode(item, indent + 1) + ',\n' + writeIndent(indent);
    return out + ']';
  }
  if (isPlainObject(v)) {
    const keys = sortedKeys(v);
    if (keys.length === 0) return '{}';
    let out = '{\n';
    for (const k of keys) {
      out += writeIndent(indent + 1) + renderString(k, indent + 1, true) + ': ' + renderNode(v[k], indent + 1) + ',\n';
    }
    return out + writeIndent(indent) + '}';
  }
  if (typeof v === 'string') return renderString(v, indent + 1, false);
  // Numbers, booleans and null print as their JSON text.
  return goJsonMarshal(v);
}

/** One KYAML document for the object, with its `---` header and a final newline. */
export function toKyaml(value: unknown): string {
  return '---\n' + renderNode(value, 0) + '\n';
}
