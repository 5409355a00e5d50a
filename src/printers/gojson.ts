/**
 * Go's encoding/json output as kubectl prints it: map keys sorted byte-wise, `<`, `>`, `&`, U+2028
 * and U+2029 escaped, 4-space indentation for `-o json`. JSON.stringify differs in key order (it
 * keeps insertion order) and in escaping, hence this small serializer.
 */
import { goNumberText, isGoInt, intText, isPlainObject, sortedKeys } from './govalues.js';

function jsonNumber(v: number | bigint): string {
  if (isGoInt(v)) return intText(v);
  const n = v as number;
  if (!Number.isFinite(n)) throw new Error(`json: unsupported value: ${goNumberText(n)}`);
  // Go's float64 encoding uses the same thresholds and shortest digits as ECMAScript.
  return JSON.stringify(n);
}

export function goJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i];
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += ch + s[i + 1];
        i++;
        continue;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      out += '\\ufffd'; // Go replaces invalid UTF-8 with U+FFFD
      continue;
    }
    switch (ch) {
      case '"': out += '\\"'; continue;
      case '\\': out += '\\\\'; continue;
      case '\n': out += '\\n'; continue;
      case '\r': out += '\\r'; continue;
      case '\t': out += '\\t'; continue;
      case '\b': out += '\\b'; continue;
      case '\f': out += '\\f'; continue;
    }
    if (c < 0x20 || ch === '<' || ch === '>' || ch === '&' || c === 0x2028 || c === 0x2029) {
      out += '\\u' + c.toString(16).padStart(4, '0');
      continue;
    }
    out += ch;
  }
  return out + '"';
}

/** json.Marshal (indent '') or json.MarshalIndent(v, prefix '', indent). */
export function goJsonMarshal(v: unknown, indent = ''): string {
  const write = (x: unknown, depth: number): string => {
    if (x === null || x === undefined) return 'null';
    if (typeof x === 'boolean') return x ? 'true' : 'false';
    if (typeof x === 'number' || typeof x === 'bigint') return jsonNumber(x);
    if (typeof x === 'string') return goJsonString(x);
    const nl = indent ? '\n' + indent.repeat(depth + 1) : '';
    const close = indent ? '\n' + indent.repeat(depth) : '';
    const colon = indent ? ': ' : ':';
    if (Array.isArray(x)) {
      if (x.length === 0) return '[]';
      return '[' + x.map((e) => nl + write(e, depth + 1)).join(',') + close + ']';
    }
    if (isPlainObject(x)) {
      const keys = sortedKeys(x);
      if (keys.length === 0) return '{}';
      return '{' + keys.map((k) => nl + goJsonString(k) + colon + write(x[k], depth + 1)).join(',') + close + '}';
    }
    throw new Error(`json: unsupported type: ${typeof x}`);
  };
  return write(v, 0);
}
