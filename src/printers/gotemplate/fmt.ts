/** The part of Go's fmt.Sprintf/Sprint/Sprintln that templates use (printf, print, println). */
import { formatFloatG, goQuote, goSprintValue, intText, isPlainObject, sortedKeys } from '../govalues.js';
import { GoFloat, type TValue, kindOf, numValue, plain, typeName } from './values.js';

interface Spec {
  minus: boolean;
  plus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  width?: number;
  prec?: number;
}

function pad(s: string, spec: Spec, numeric: boolean): string {
  if (spec.width === undefined || Array.from(s).length >= spec.width) return s;
  const n = spec.width - Array.from(s).length;
  if (spec.minus) return s + ' '.repeat(n);
  if (spec.zero && numeric) {
    const sign = /^[+-]/.test(s) ? s[0] : '';
    return sign + '0'.repeat(n) + s.slice(sign.length);
  }
  return ' '.repeat(n) + s;
}

function badVerb(verb: string, v: TValue): string {
  if (v === undefined || v === null) return `%!${verb}(<nil>)`;
  return `%!${verb}(${typeName(v)}=${goSprintValue(plain(v))})`;
}

function fmtFloat(f: number, verb: string, prec: number | undefined): string {
  if (!Number.isFinite(f)) return Number.isNaN(f) ? 'NaN' : f > 0 ? '+Inf' : '-Inf';
  switch (verb) {
    case 'f':
    case 'F':
      return f.toFixed(prec ?? 6);
    case 'e':
    case 'E': {
      const s = f.toExponential(prec ?? 6).replace(/e([+-])(\d)$/, 'e$10$2');
      return verb === 'E' ? s.toUpperCase() : s;
    }
    default: {
      if (prec === undefined) return formatFloatG(f);
      const p = prec === 0 ? 1 : prec;
      const exp = f === 0 ? 0 : Math.floor(Math.log10(Math.abs(Number(f.toPrecision(p)))));
      if (exp < -4 || exp >= p) {
        return f.toExponential(p - 1).replace(/\.?0+e/, 'e').replace(/e([+-])(\d)$/, 'e$10$2');
      }
      return String(Number(f.toPrecision(p)));
    }
  }
}

function formatOne(verb: string, v: TValue, spec: Spec): string {
  const k = kindOf(v);
  if (verb === 'v') {
    if (k === 'invalid' || k === 'nil') return pad('<nil>', spec, false);
    if (k === 'float' || k === 'int') return formatOne(k === 'float' ? 'g' : 'd', v, spec);
    if (k === 'string' && spec.sharp) return pad(goQuote(v as string), spec, false);
    return pad(goSprintValue(plain(v)), spec, false);
  }
  if (k === 'slice' || k === 'map') {
    // fmt applies the verb to each element of composite values.
    if (k === 'slice') return '[' + (v as TValue[]).map((e) => formatOne(verb, e, spec)).join(' ') + ']';
    const o = v as Record<string, TValue>;
    if (isPlainObject(o)) return 'map[' + sortedKeys(o).map((key) => `${formatOne(verb, key, spec)}:${formatOne(verb, o[key], spec)}`).join(' ') + ']';
  }
  switch (verb) {
    case 's':
      return k === 'string' ? pad(spec.prec !== undefined ? Array.from(v as string).slice(0, spec.prec).join('') : (v as string), spec, false) : badVerb(verb, v);
    case 'q':
      if (k === 'string') return pad(goQuote(v as string), spec, false);
      if (k === 'int') return pad(`'${String.fromCodePoint(numValue(v))}'`, spec, false);
      return badVerb(verb, v);
    case 't':
      return k === 'bool' ? pad(String(v), spec, false) : badVerb(verb, v);
    case 'd':
    case 'x':
    case 'X':
    case 'o':
    case 'b':
    case 'c': {
      if (k === 'string' && (verb === 'x' || verb === 'X')) {
        const h = Buffer.from(v as string, 'utf8').toString('hex');
        return pad(verb === 'X' ? h.toUpperCase() : h, spec, false);
      }
      if (k === 'float' && (verb === 'x' || verb === 'X' || verb === 'b')) return badVerb(verb, v);
      if (k !== 'int') return badVerb(verb, v);
      if (verb === 'c') return pad(String.fromCodePoint(numValue(v)), spec, false);
      const n = typeof v === 'bigint' ? v : BigInt(intText(numValue(v)));
      const radix = verb === 'd' ? 10 : verb === 'o' ? 8 : verb === 'b' ? 2 : 16;
      let s = (n < 0n ? -n : n).toString(radix);
      if (verb === 'X') s = s.toUpperCase();
      if (spec.sharp && verb === 'x') s = '0x' + s;
      if (spec.sharp && verb === 'X') s = '0X' + s;
      if (spec.sharp && verb === 'o') s = '0' + s;
      const sign = n < 0n ? '-' : spec.plus ? '+' : spec.space ? ' ' : '';
      return pad(sign + s, spec, true);
    }
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G': {
      if (k !== 'float') return badVerb(verb, v);
      let s = fmtFloat(numValue(v), verb, spec.prec);
      if (spec.plus && !s.startsWith('-')) s = '+' + s;
      else if (spec.space && !s.startsWith('-')) s = ' ' + s;
      return pad(s, spec, true);
    }
  }
  return badVerb(verb, v);
}

export function goSprintf(format: string, args: TValue[]): string {
  let out = '';
  let argi = 0;
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    if (c !== '%') {
      out += c;
      continue;
    }
    const spec: Spec = { minus: false, plus: false, sharp: false, space: false, zero: false };
    i++;
    for (; i < format.length; i++) {
      const f = format[i];
      if (f === '-') spec.minus = true;
      else if (f === '+') spec.plus = true;
      else if (f === '#') spec.sharp = true;
      else if (f === ' ') spec.space = true;
      else if (f === '0') spec.zero = !spec.minus;
      else break;
    }
    const w = /^[0-9]+/.exec(format.slice(i));
    if (w) {
      spec.width = Number(w[0]);
      i += w[0].length;
    }
    if (format[i] === '.') {
      i++;
      const p = /^[0-9]+/.exec(format.slice(i));
      spec.prec = p ? Number(p[0]) : 0;
      if (p) i += p[0].length;
    }
    const verb = format[i];
    if (verb === undefined) {
      out += '%!(NOVERB)';
      break;
    }
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (argi >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += formatOne(verb, args[argi++], spec);
  }
  if (argi < args.length) {
    out += '%!(EXTRA ' + args.slice(argi).map((a) => (a === undefined || a === null ? '<nil>' : `${typeName(a)}=${goSprintValue(plain(a))}`)).join(', ') + ')';
  }
  return out;
}

function sprintOne(v: TValue): string {
  if (v === undefined || v === null) return '<nil>';
  if (v instanceof GoFloat) return formatFloatG(v.value);
  return goSprintValue(plain(v));
}

/** fmt.Sprint: spaces between operands when neither side is a string. */
export function goSprint(args: TValue[]): string {
  let out = '';
  args.forEach((a, i) => {
    if (i > 0 && typeof a !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += sprintOne(a);
  });
  return out;
}

/** fmt.Sprintln: always spaces, then a newline. */
export function goSprintln(args: TValue[]): string {
  return args.map(sprintOne).join(' ') + '\n';
}
