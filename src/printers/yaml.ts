/**
 * kubectl's `-o yaml`: sigs.k8s.io/yaml converts the object's JSON to YAML with its vendored
 * gopkg.in/yaml.v2, whose libyaml-derived emitter decides quoting, folding at 80 columns, block
 * scalar hints and key order. The `yaml` npm package follows YAML 1.2 and its own style rules
 * (it would print `yes`, `0755` or `2024-01-01` unquoted, folds differently and sorts keys
 * plainly), so this module re-implements the yaml.v2 emitter for JSON-shaped data instead.
 */
import { formatFloatG, intText, isGoInt, isPlainObject } from './govalues.js';
import { isBase60Float, resolvePlain } from './goyaml-resolve.js';

const BEST_WIDTH = 80;
const BEST_INDENT = 2;

type Style = 'plain' | 'single' | 'double' | 'literal';

interface Ctx {
  mapping: boolean;
  simpleKey: boolean;
}

interface Analysis {
  multiline: boolean;
  flowPlainAllowed: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
}

const isBreak = (cp: number | undefined) => cp === 0x0d || cp === 0x0a || cp === 0x85 || cp === 0x2028 || cp === 0x2029;
const isBlank = (cp: number | undefined) => cp === 0x20 || cp === 0x09;
const isBlankz = (cp: number | undefined) => isBlank(cp) || isBreak(cp) || cp === 0 || cp === undefined;

/** libyaml's is_printable on UTF-8 bytes, expressed on code points (no astral planes). */
function isPrintable(cp: number): boolean {
  return (
    cp === 0x0a ||
    (cp >= 0x20 && cp <= 0x7e) ||
    (cp >= 0xa0 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff)
  );
}

/** yaml_emitter_analyze_scalar. */
function analyzeScalar(cps: number[]): Analysis {
  const n = cps.length;
  if (n === 0) {
    return { multiline: false, flowPlainAllowed: false, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: false };
  }
  let blockIndicators = false;
  let flowIndicators = false;
  let lineBreaks = false;
  let specialCharacters = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  const head = String.fromCodePoint(...cps.slice(0, 3));
  if (head === '---' || head === '...') {
    blockIndicators = true;
    flowIndicators = true;
  }
  let precededByWhitespace = true;
  for (let i = 0; i < n; i++) {
    const c = cps[i];
    const ch = String.fromCodePoint(c);
    const followedByWhitespace = i + 1 >= n || isBlank(cps[i + 1]);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) {
        flowIndicators = true;
        blockIndicators = true;
      } else if (ch === '?' || ch === ':') {
        flowIndicators = true;
        if (followedByWhitespace) blockIndicators = true;
      } else if (ch === '-' && followedByWhitespace) {
        flowIndicators = true;
        blockIndicators = true;
      }
    } else if (',?[]{}'.includes(ch)) {
      flowIndicators = true;
    } else if (ch === ':') {
      flowIndicators = true;
      if (followedByWhitespace) blockIndicators = true;
    } else if (ch === '#' && precededByWhitespace) {
      flowIndicators = true;
      blockIndicators = true;
    }
    if (!isPrintable(c)) specialCharacters = true;
    if (c === 0x20) {
      if (i === 0) leadingSpace = true;
      if (i === n - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (i === n - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = isBlankz(c);
  }
  const a: Analysis = { multiline: lineBreaks, flowPlainAllowed: true, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: true };
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) {
    a.flowPlainAllowed = a.blockPlainAllowed = false;
  }
  if (trailingSpace) a.blockAllowed = false;
  if (breakSpace) a.flowPlainAllowed = a.blockPlainAllowed = a.singleQuotedAllowed = false;
  if (spaceBreak || specialCharacters) {
    a.flowPlainAllowed = a.blockPlainAllowed = a.singleQuotedAllowed = a.blockAllowed = false;
  }
  if (lineBreaks) a.flowPlainAllowed = a.blockPlainAllowed = false;
  if (flowIndicators) a.flowPlainAllowed = false;
  if (blockIndicators) a.blockPlainAllowed = false;
  return a;
}

/** The yaml.v2 key order: numbers inside strings compare by value, non-letters before letters. */
export function yamlKeyLess(a: string, b: string): boolean {
  const ar = Array.from(a, (c) => c.codePointAt(0)!);
  const br = Array.from(b, (c) => c.codePointAt(0)!);
  const isDigit = (c: number | undefined) => c !== undefined && /\p{Nd}/u.test(String.fromCodePoint(c));
  const isLetter = (c: number) => /\p{L}/u.test(String.fromCodePoint(c));
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = isLetter(ar[i]);
    const bl = isLetter(br[i]);
    if (al && bl) return ar[i] < br[i];
    if (al || bl) return bl;
    let an = 0;
    let bn = 0;
    if (ar[i] === 0x30 || br[i] === 0x30) {
      for (let j = i - 1; j >= 0 && isDigit(ar[j]); j--) {
        if (ar[j] !== 0x30) {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    let ai = i;
    for (; ai < ar.length && isDigit(ar[ai]); ai++) an = an * 10 + (ar[ai] - 0x30);
    let bi = i;
    for (; bi < br.length && isDigit(br[bi]); bi++) bn = bn * 10 + (br[bi] - 0x30);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return ar[i] < br[i];
  }
  return ar.length < br.length;
}

function yamlSortedKeys(o: Record<string, unknown>): string[] {
  // Array.prototype.sort is stable; the comparator is only a partial order for odd keys, where
  // yaml.v2's own output depends on Go's random map order anyway.
  return Object.keys(o).sort((x, y) => (yamlKeyLess(x, y) ? -1 : yamlKeyLess(y, x) ? 1 : 0));
}

class Emitter {
  out = '';
  private column = 0;
  private whitespace = true;
  private indention = true;
  private indent = -1;
  private readonly indents: number[] = [];

  private put(s: string): void {
    this.out += s;
    this.column++;
  }

  private putBreak(): void {
    this.out += '\n';
    this.column = 0;
  }

  private writeBreak(cp: number): void {
    if (cp === 0x0a) {
      this.putBreak();
    } else {
      this.out += String.fromCodePoint(cp);
      this.column = 0;
    }
  }

  private writeIndent(): void {
    const indent = Math.max(this.indent, 0);
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace)) this.putBreak();
    while (this.column < indent) this.put(' ');
    this.whitespace = true;
    this.indention = true;
  }

  private writeIndicator(indicator: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean): void {
    if (needWhitespace && !this.whitespace) this.put(' ');
    for (const ch of indicator) this.put(ch);
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
  }

  private increaseIndent(flow: boolean, indentless: boolean): void {
    this.indents.push(this.indent);
    if (this.indent < 0) this.indent = flow ? BEST_INDENT : 0;
    else if (!indentless) this.indent += BEST_INDENT;
  }

  private popIndent(): void {
    this.indent = this.indents.pop()!;
  }

  emitNode(v: unknown, ctx: Ctx): void {
    if (Array.isArray(v)) {
      if (v.length === 0) return this.emitEmptyFlow('[', ']');
      this.increaseIndent(false, ctx.mapping && !this.indention);
      for (const item of v) {
        this.writeIndent();
        this.writeIndicator('-', true, false, true);
        this.emitNode(item, { mapping: false, simpleKey: false });
      }
      this.popIndent();
      return;
    }
    if (isPlainObject(v)) {
      const keys = yamlSortedKeys(v);
      if (keys.length === 0) return this.emitEmptyFlow('{', '}');
      this.increaseIndent(false, false);
      for (const key of keys) {
        this.writeIndent();
        const keyCps = Array.from(key, (c) => c.codePointAt(0)!);
        const simple = !analyzeScalar(keyCps).multiline && Buffer.byteLength(key, 'utf8') <= 128;
        if (simple) {
          this.emitString(key, { mapping: true, simpleKey: true });
          this.writeIndicator(':', false, false, false);
        } else {
          this.writeIndicator('?', true, false, true);
          this.emitString(key, { mapping: true, simpleKey: false });
          this.writeIndent();
          this.writeIndicator(':', true, false, true);
        }
        this.emitNode(v[key], { mapping: true, simpleKey: false });
      }
      this.popIndent();
      return;
    }
    if (v === null || v === undefined) return this.emitScalar('null', 'plain', ctx);
    if (typeof v === 'boolean') return this.emitScalar(v ? 'true' : 'false', 'plain', ctx);
    if (typeof v === 'number' || typeof v === 'bigint') return this.emitScalar(yamlNumber(v), 'plain', ctx);
    if (typeof v === 'string') return this.emitString(v, ctx);
    throw new Error(`cannot marshal type: ${typeof v}`);
  }

  private emitEmptyFlow(open: string, close: string): void {
    this.writeIndicator(open, true, true, false);
    this.writeIndicator(close, false, false, false);
  }

  /** yaml.v2 encoder.stringv: literal for multi-line, plain when unambiguous, else double quotes. */
  private emitString(s: string, ctx: Ctx): void {
    const canUsePlain = resolvePlain(s) === 'str' && !isBase60Float(s);
    const style: Style = s.includes('\n') ? 'literal' : canUsePlain ? 'plain' : 'double';
    this.emitScalar(s, style, ctx);
  }

  /** yaml_emitter_select_scalar_style followed by the matching writer. */
  private emitScalar(value: string, requested: Style, ctx: Ctx): void {
    const cps = Array.from(value, (c) => c.codePointAt(0)!);
    const a = analyzeScalar(cps);
    let style = requested;
    if (ctx.simpleKey && a.multiline) style = 'double';
    if (style === 'plain') {
      if (!a.blockPlainAllowed) style = 'single';
      if (cps.length === 0 && ctx.simpleKey) style = 'single';
    }
    if (style === 'single' && !a.singleQuotedAllowed) style = 'double';
    if (style === 'literal' && (!a.blockAllowed || ctx.simpleKey)) style = 'double';
    this.increaseIndent(true, false);
    const allowBreaks = !ctx.simpleKey;
    if (style === 'plain') this.writePlain(cps, allowBreaks);
    else if (style === 'single') this.writeSingleQuoted(cps, allowBreaks);
    else if (style === 'double') this.writeDoubleQuoted(cps, allowBreaks);
    else this.writeLiteral(cps);
    this.popIndent();
  }

  private writePlain(cps: number[], allowBreaks: boolean): void {
    if (!this.whitespace) this.put(' ');
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < cps.length; i++) {
      const c = cps[i];
      if (c === 0x20) {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && cps[i + 1] !== 0x20) this.writeIndent();
        else this.put(' ');
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && c === 0x0a) this.putBreak();
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.put(String.fromCodePoint(c));
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.whitespace = false;
    this.indention = false;
  }

  private writeSingleQuoted(cps: number[], allowBreaks: boolean): void {
    this.writeIndicator("'", true, false, false);
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < cps.length; i++) {
      const c = cps[i];
      if (c === 0x20) {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && i > 0 && i < cps.length - 1 && cps[i + 1] !== 0x20) {
          this.writeIndent();
        } else {
          this.put(' ');
        }
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && c === 0x0a) this.putBreak();
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        if (c === 0x27) this.put("'");
        this.put(String.fromCodePoint(c));
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.writeIndicator("'", false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private writeDoubleQuoted(cps: number[], allowBreaks: boolean): void {
    this.writeIndicator('"', true, false, false);
    let spaces = false;
    for (let i = 0; i < cps.length; i++) {
      const c = cps[i];
      if (!isPrintable(c) || c === 0xfeff || isBreak(c) || c === 0x22 || c === 0x5c) {
        this.put('\\');
        const simple: Record<number, string> = {
          0x00: '0', 0x07: 'a', 0x08: 'b', 0x09: 't', 0x0a: 'n', 0x0b: 'v', 0x0c: 'f', 0x0d: 'r', 0x1b: 'e',
          0x22: '"', 0x5c: '\\', 0x85: 'N', 0xa0: '_', 0x2028: 'L', 0x2029: 'P',
        };
        if (simple[c] !== undefined) {
          this.put(simple[c]);
        } else {
          const [letter, width] = c <= 0xff ? ['x', 2] : c <= 0xffff ? ['u', 4] : ['U', 8];
          this.put(letter as string);
          for (const d of c.toString(16).toUpperCase().padStart(width as number, '0')) this.put(d);
        }
        spaces = false;
      } else if (c === 0x20) {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && i !== 0 && i !== cps.length - 1) {
          this.writeIndent();
          if (cps[i + 1] === 0x20) this.put('\\');
        } else {
          this.put(' ');
        }
        spaces = true;
      } else {
        this.put(String.fromCodePoint(c));
        spaces = false;
      }
    }
    this.writeIndicator('"', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private writeLiteral(cps: number[]): void {
    this.writeIndicator('|', true, false, false);
    if (cps[0] === 0x20 || isBreak(cps[0])) this.writeIndicator(String(BEST_INDENT), false, false, false);
    const last = cps.length - 1;
    let chomp = '';
    if (cps.length === 0 || !isBreak(cps[last])) chomp = '-';
    else if (last === 0 || isBreak(cps[last - 1])) chomp = '+';
    if (chomp) this.writeIndicator(chomp, false, false, false);
    this.putBreak();
    this.indention = true;
    this.whitespace = true;
    let breaks = true;
    for (const c of cps) {
      if (isBreak(c)) {
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.put(String.fromCodePoint(c));
        this.indention = false;
        breaks = false;
      }
    }
  }

  endDocument(): void {
    this.indent = -1;
    this.writeIndent();
  }
}

/** Numbers as sigs.k8s.io/yaml re-reads Go's JSON text: integers up to uint64 stay, others are %g. */
function yamlNumber(v: number | bigint): string {
  if (isGoInt(v)) return intText(v);
  const n = v as number;
  if (Number.isNaN(n)) return '.nan';
  if (n === Infinity) return '.inf';
  if (n === -Infinity) return '-.inf';
  const text = JSON.stringify(n);
  if (/^[0-9]+$/.test(text) && BigInt(text) <= (1n << 64n) - 1n) return text;
  return formatFloatG(n);
}

/** yaml.Marshal of sigs.k8s.io/yaml for a JSON-shaped value; ends with a newline. */
export function toKubectlYaml(value: unknown): string {
  const e = new Emitter();
  e.emitNode(value, { mapping: false, simpleKey: false });
  e.endDocument();
  return e.out;
}
