/**
 * kubectl's JSONPath dialect (k8s.io/client-go/util/jsonpath): `{}` actions inside literal text,
 * `range`/`end`, filters compared with Go template rules, unions, slices, `..`, and its way of
 * printing results (scalars with %v, maps and lists as compact JSON, results joined by spaces).
 * npm JSONPath libraries implement RFC 9535 or Goessner's syntax, none of these semantics, so the
 * parser and evaluator are ported here.
 */
import { goJsonMarshal } from './gojson.js';
import { formatFloatG, goNumberText, goSprintValue, isGoInt, isPlainObject } from './govalues.js';

type JpNode =
  | { type: 'list'; nodes: JpNode[] }
  | { type: 'text'; text: string }
  | { type: 'field'; value: string }
  | { type: 'identifier'; name: string }
  | { type: 'int'; value: number }
  | { type: 'float'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'array'; params: SliceParam[] }
  | { type: 'filter'; left: JpList; right: JpList; operator: string }
  | { type: 'wildcard' }
  | { type: 'recursive' }
  | { type: 'union'; nodes: JpList[] };

type JpList = { type: 'list'; nodes: JpNode[] };

interface SliceParam {
  value: number;
  known: boolean;
  derived: boolean;
}

const EOF_CHAR = '';

/** A float64 literal of the template (`2.0` stays a float64 for comparisons). */
class GoFloat {
  constructor(readonly value: number) {}
}

/** A byte as produced by indexing a Go string (wildcard or `..` over a string). */
class GoByte {
  constructor(readonly value: number) {}
}

/** A reflect.Value that is not valid (Go's zero Value), distinct from a JSON null. */
const INVALID = Symbol('invalid');

type Value = unknown;

class Parser {
  private input: string[] = [];
  private pos = 0;
  private start = 0;
  root: JpList = { type: 'list', nodes: [] };

  parse(text: string): void {
    this.input = Array.from(text);
    this.root = { type: 'list', nodes: [] };
    this.pos = 0;
    this.start = 0;
    this.parseText(this.root);
  }

  private consumeText(): string {
    const v = this.input.slice(this.start, this.pos).join('');
    this.start = this.pos;
    return v;
  }

  private next(): string {
    if (this.pos >= this.input.length) return EOF_CHAR;
    return this.input[this.pos++];
  }

  private backup(r: string): void {
    if (r !== EOF_CHAR) this.pos--;
  }

  private peek(): string {
    return this.pos >= this.input.length ? EOF_CHAR : this.input[this.pos];
  }

  private hasPrefix(prefix: string): boolean {
    return this.input.slice(this.pos, this.pos + prefix.length).join('') === prefix;
  }

  private parseText(cur: JpList): void {
    for (;;) {
      if (this.hasPrefix('{')) {
        if (this.pos > this.start) cur.nodes.push({ type: 'text', text: this.consumeText() });
        this.pos += 1;
        this.consumeText();
        const node: JpList = { type: 'list', nodes: [] };
        cur.nodes.push(node);
        return this.parseInsideAction(node);
      }
      if (this.next() === EOF_CHAR) break;
    }
    if (this.pos > this.start) cur.nodes.push({ type: 'text', text: this.consumeText() });
  }

  private parseInsideAction(cur: JpList): void {
    for (;;) {
      if (this.hasPrefix('}')) {
        this.pos += 1;
        this.consumeText();
        return this.parseText(this.root);
      }
      if (this.hasPrefix('[?(')) {
        this.parseFilter(cur);
        continue;
      }
      if (this.hasPrefix('..')) {
        this.parseRecursive(cur);
        continue;
      }
      const r = this.next();
      if (r === EOF_CHAR || r === '\r' || r === '\n') throw new Error('unclosed action');
      if (r === ' ' || r === '@' || r === '$') {
        this.consumeText();
      } else if (r === '[') {
        this.parseArray(cur);
      } else if (r === '"' || r === "'") {
        this.parseQuote(cur, r);
      } else if (r === '.') {
        this.parseField(cur);
      } else if (r === '+' || r === '-' || isDigit(r)) {
        this.backup(r);
        this.parseNumber(cur);
      } else if (isAlphaNumeric(r)) {
        this.backup(r);
        this.parseIdentifier(cur);
      } else {
        throw new Error(`unrecognized character in action: ${goUnicodeVerb(r)}`);
      }
    }
  }

  private parseIdentifier(cur: JpList): void {
    for (;;) {
      const r = this.next();
      if (isTerminator(r)) {
        this.backup(r);
        break;
      }
    }
    const value = this.consumeText();
    if (value === 'true' || value === 'false') cur.nodes.push({ type: 'bool', value: value === 'true' });
    else cur.nodes.push({ type: 'identifier', name: value });
  }

  private parseRecursive(cur: JpList): void {
    const last = cur.nodes[cur.nodes.length - 1];
    if (last && last.type === 'recursive') throw new Error('invalid multiple recursive descent');
    this.pos += 2;
    this.consumeText();
    cur.nodes.push({ type: 'recursive' });
    if (isAlphaNumeric(this.peek())) this.parseField(cur);
  }

  private parseNumber(cur: JpList): void {
    const first = this.peek();
    if (first === '+' || first === '-') this.next();
    for (;;) {
      const r = this.next();
      if (r !== '.' && !isDigit(r)) {
        this.backup(r);
        break;
      }
    }
    const value = this.consumeText();
    if (/^[+-]?[0-9]+$/.test(value)) {
      cur.nodes.push({ type: 'int', value: Number(value) });
    } else if (/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$/.test(value)) {
      cur.nodes.push({ type: 'float', value: Number(value) });
    } else {
      throw new Error(`cannot parse number ${value}`);
    }
  }

  private parseArray(cur: JpList): void {
    for (;;) {
      const r = this.next();
      if (r === EOF_CHAR || r === '\n') throw new Error('unterminated array');
      if (r === ']') break;
    }
    let text = this.consumeText();
    text = text.slice(1, -1);
    if (text === '*') text = ':';
    const parts = text.split(',');
    if (parts.length > 1) {
      const union: JpList[] = parts.map((s) => parseAction(`[${trimSpaces(s)}]`));
      cur.nodes.push({ type: 'union', nodes: union });
      return;
    }
    const dict = /^'([^']*)'$/.exec(text);
    if (dict) {
      cur.nodes.push(...parseAction(`.${dict[1]}`).nodes);
      return;
    }
    const m = /^(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?$/.exec(text);
    if (!m) throw new Error(`invalid array index ${text}`);
    const values = [m[1] ?? '', m[2] ?? '', m[3] ?? ''];
    const params: SliceParam[] = [];
    for (let i = 0; i < 3; i++) {
      const p: SliceParam = { value: 0, known: false, derived: false };
      if (values[i] !== '') {
        if (i > 0) values[i] = values[i].slice(1);
        if (!(i > 0 && values[i] === '')) {
          if (!/^[+-]?[0-9]+$/.test(values[i])) throw new Error(`array index ${values[i]} is not a number`);
          p.known = true;
          p.value = Number(values[i]);
        }
      } else if (i === 1) {
        p.known = true;
        p.value = params[0].value + 1;
        p.derived = true;
      }
      params.push(p);
    }
    cur.nodes.push({ type: 'array', params });
  }

  private parseFilter(cur: JpList): void {
    this.pos += 3;
    this.consumeText();
    let begin = false;
    let end = false;
    let pair = '';
    for (;;) {
      const r = this.next();
      if (r === EOF_CHAR || r === '\n') throw new Error('unterminated filter');
      if (r === '"' || r === "'") {
        if (!begin) {
          begin = true;
          pair = r;
          continue;
        }
        if (this.input[this.pos - 2] !== '\\' && r === pair) end = true;
      } else if (r === ')') {
        if (begin === end) break;
      }
    }
    if (this.next() !== ']') throw new Error('unclosed array expect ]');
    let text = this.consumeText();
    text = text.slice(0, -2);
    const m = /^([^!<>=]+)([!<>=]+)(.+?)$/s.exec(text);
    if (!m) {
      cur.nodes.push({ type: 'filter', left: parseAction(text), right: { type: 'list', nodes: [] }, operator: 'exists' });
    } else {
      cur.nodes.push({ type: 'filter', left: parseAction(m[1]), right: parseAction(m[3]), operator: m[2] });
    }
  }

  private parseQuote(cur: JpList, end: string): void {
    for (;;) {
      const r = this.next();
      if (r === EOF_CHAR || r === '\n') throw new Error('unterminated quoted string');
      if (r === end && this.input[this.pos - 2] !== '\\') break;
    }
    const value = this.consumeText();
    let s: string;
    try {
      s = unquoteExtend(value);
    } catch (e) {
      throw new Error(`unquote string ${value} error ${(e as Error).message}`);
    }
    cur.nodes.push({ type: 'text', text: s });
  }

  private parseField(cur: JpList): void {
    this.consumeText();
    for (;;) {
      const r = this.next();
      if (r === '\\') {
        this.next();
      } else if (isTerminator(r)) {
        this.backup(r);
        break;
      }
    }
    const value = this.consumeText();
    if (value === '*') cur.nodes.push({ type: 'wildcard' });
    else cur.nodes.push({ type: 'field', value: value.replace(/\\/g, '') });
  }
}

function parseAction(text: string): JpList {
  const p = new Parser();
  p.parse(`{${text}}`);
  return p.root.nodes[0] as JpList;
}

function trimSpaces(s: string): string {
  return s.replace(/^ +| +$/g, '');
}

const isDigit = (r: string) => /^\p{Nd}$/u.test(r);
const isAlphaNumeric = (r: string) => r === '_' || /^[\p{L}\p{Nd}]$/u.test(r);

function isTerminator(r: string): boolean {
  return r === EOF_CHAR || ' \t\r\n.,[]$@{}'.includes(r);
}

/** fmt's %#U: U+0023 '#'. */
function goUnicodeVerb(r: string): string {
  const cp = r.codePointAt(0)!;
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')} '${r}'`;
}

/** strconv.Unquote extended to single-quoted strings of any length, as the jsonpath parser does. */
function unquoteExtend(s: string): string {
  const chars = Array.from(s);
  const n = chars.length;
  if (n < 2) throw new Error('invalid syntax');
  const quote = chars[0];
  if (quote !== chars[n - 1] || (quote !== '"' && quote !== "'")) throw new Error('invalid syntax');
  const body = chars.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === quote) throw new Error('invalid syntax');
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' };
    if (e === undefined) throw new Error('invalid syntax');
    if (simple[e] !== undefined) {
      out += simple[e];
    } else if (e === "'" || e === '"') {
      if (e !== quote) throw new Error('invalid syntax');
      out += e;
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hexDigits = body.slice(i + 1, i + 1 + len).join('');
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hexDigits)) throw new Error('invalid syntax');
      out += String.fromCodePoint(parseInt(hexDigits, 16));
      i += len;
    } else if (/[0-7]/.test(e)) {
      const oct = body.slice(i, i + 3).join('');
      if (!/^[0-7]{3}$/.test(oct) || parseInt(oct, 8) > 255) throw new Error('invalid syntax');
      out += String.fromCharCode(parseInt(oct, 8));
      i += 2;
    } else {
      throw new Error('invalid syntax');
    }
  }
  return out;
}

/** Go type name of a decoded value, for error messages. */
function goTypeName(v: Value): string {
  if (v === null) return 'interface {}';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (v instanceof GoByte) return 'uint8';
  if (typeof v === 'number' || typeof v === 'bigint') return isGoInt(v) ? 'int64' : 'float64';
  if (Array.isArray(v)) return '[]interface {}';
  if (isPlainObject(v)) return 'map[string]interface {}';
  return 'invalid';
}

type BasicKind = 'bool' | 'int' | 'float' | 'string';

function basicKind(v: Value): BasicKind {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  if (v instanceof GoByte) return 'int';
  if (v instanceof GoFloat) return 'float';
  if (typeof v === 'number' || typeof v === 'bigint') return isGoInt(v) ? 'int' : 'float';
  throw new Error('invalid type for comparison');
}

function scalarOf(v: Value): number | string | boolean | bigint {
  if (v instanceof GoByte || v instanceof GoFloat) return v.value;
  return v as number | string | boolean | bigint;
}

/** The comparisons of k8s.io/client-go/third_party/forked/golang/template. */
function compare(op: string, a: Value, b: Value): boolean {
  const ka = basicKind(a);
  const kb = basicKind(b);
  if (ka !== kb) throw new Error('incompatible types for comparison');
  const x = scalarOf(a);
  const y = scalarOf(b);
  if (op === '==') return x === y || (typeof x !== 'string' && Number(x) === Number(y));
  if (op === '!=') return !(x === y || (typeof x !== 'string' && Number(x) === Number(y)));
  if (ka === 'bool') throw new Error('invalid type for comparison');
  switch (op) {
    case '<': return x < y;
    case '>': return x > y;
    case '<=': return x <= y;
    case '>=': return x >= y;
  }
  throw new Error(`unrecognized filter operator ${op}`);
}

function utf8Bytes(s: string): number[] {
  return Array.from(Buffer.from(s, 'utf8'));
}

/** Children of a value as Go's reflection sees them (map values in key order, string bytes). */
function childrenOf(v: Value): Value[] {
  if (Array.isArray(v)) return v;
  if (isPlainObject(v)) return Object.keys(v).sort().map((k) => v[k]);
  if (typeof v === 'string') return utf8Bytes(v).map((b) => new GoByte(b));
  return [];
}

export class JsonPath {
  private root: JpList = { type: 'list', nodes: [] };
  private beginRange = 0;
  private inRange = 0;
  private endRange = 0;
  private lastEndNode = -1;
  private allowMissingKeys = true;
  private outputJson = false;

  /** Throws the parser's error message (kubectl wraps it). */
  constructor(template: string) {
    const p = new Parser();
    p.parse(template);
    this.root = p.root;
  }

  setAllowMissingKeys(allow: boolean): this {
    this.allowMissingKeys = allow;
    return this;
  }

  enableJsonOutput(on: boolean): this {
    this.outputJson = on;
    return this;
  }

  execute(data: Value): string {
    this.beginRange = this.inRange = this.endRange = 0;
    this.lastEndNode = -1;
    const full = this.findResults(data, 0);
    return full.map((r) => this.printResults(r)).join('');
  }

  /** The values each part of the template selects (upstream's FindResults), for server-side printer columns. */
  findAll(data: Value): Value[][] {
    this.beginRange = this.inRange = this.endRange = 0;
    this.lastEndNode = -1;
    return this.findResults(data, 0);
  }

  /** One value as PrintResults renders it (text for scalars, JSON for lists and maps). */
  printValue(value: Value): string {
    return this.printResults([value]);
  }

  private findResults(data: Value, start: number): Value[][] {
    const nodes = this.root.nodes;
    const cur = [data];
    const full: Value[][] = [];
    for (let i = start; i < nodes.length; i++) {
      const results = this.walk(cur, nodes[i]);
      if (this.endRange > 0 && this.endRange <= this.inRange) {
        this.endRange--;
        this.lastEndNode = i;
        break;
      }
      if (this.beginRange > 0) {
        this.beginRange--;
        this.inRange++;
        if (results.length > 0) {
          for (const value of results) full.push(...this.findResults(value, i + 1));
        } else {
          this.findResults(INVALID, i + 1);
        }
        this.inRange--;
        for (let k = i + 1; k < nodes.length; k++) {
          if (k === this.lastEndNode) {
            i = k;
            break;
          }
        }
        continue;
      }
      full.push(results);
    }
    return full;
  }

  private printResults(results: Value[]): string {
    if (this.outputJson) {
      const plain = results.map((r) => (r instanceof GoByte || r instanceof GoFloat ? r.value : r === INVALID ? null : r));
      return goJsonMarshal(plain, '    ') + '\n';
    }
    return results
      .map((r) => (Array.isArray(r) || isPlainObject(r) ? goJsonMarshal(r) : evalToText(r)))
      .join(' ');
  }

  private walk(input: Value[], node: JpNode): Value[] {
    switch (node.type) {
      case 'list': return this.evalList(input, node);
      case 'text': return [node.text];
      case 'field': return this.evalField(input, node.value);
      case 'array': return this.evalArray(input, node.params);
      case 'filter': return this.evalFilter(input, node);
      case 'int':
      case 'bool':
        return input.map(() => node.value);
      case 'float':
        return input.map(() => new GoFloat(node.value));
      case 'wildcard': return input.flatMap((v) => (v === null ? [] : childrenOf(v)));
      case 'recursive': return this.evalRecursive(input);
      case 'union': return node.nodes.flatMap((l) => this.evalList(input, l));
      case 'identifier': return this.evalIdentifier(input, node.name);
    }
  }

  private evalList(input: Value[], list: JpList): Value[] {
    let cur = input;
    for (const n of list.nodes) cur = this.walk(cur, n);
    return cur;
  }

  private evalIdentifier(input: Value[], name: string): Value[] {
    if (name === 'range') {
      this.beginRange++;
      return input;
    }
    if (name === 'end') {
      if (this.inRange > 0) {
        this.endRange++;
        return [];
      }
      throw new Error('not in range, nothing to end');
    }
    throw new Error(`unrecognized identifier ${name}`);
  }

  private evalField(input: Value[], key: string): Value[] {
    const results: Value[] = [];
    if (input.length === 0) return results;
    for (const v of input) {
      if (isPlainObject(v) && Object.prototype.hasOwnProperty.call(v, key)) results.push(v[key]);
    }
    if (results.length === 0 && !this.allowMissingKeys) throw new Error(`${key} is not found`);
    return results;
  }

  private evalArray(input: Value[], nodeParams: SliceParam[]): Value[] {
    const result: Value[] = [];
    for (const v of input) {
      if (v === null) continue;
      if (!Array.isArray(v)) throw new Error(`${goTypeName(v)} is not array or slice`);
      const params = nodeParams.map((p) => ({ ...p }));
      const len = v.length;
      if (!params[0].known) params[0].value = 0;
      if (params[0].value < 0) params[0].value += len;
      if (!params[1].known) params[1].value = len;
      if (params[1].value < 0 || (params[1].value === 0 && params[1].derived)) params[1].value += len;
      if (params[1].value === params[0].value) return result;
      if (params[0].value >= len || params[0].value < 0) {
        throw new Error(`array index out of bounds: index ${params[0].value}, length ${len}`);
      }
      if (params[1].value > len || params[1].value < 0) {
        throw new Error(`array index out of bounds: index ${params[1].value - 1}, length ${len}`);
      }
      if (params[0].value > params[1].value) {
        throw new Error(`starting index ${params[0].value} is greater than ending index ${params[1].value}`);
      }
      const slice = v.slice(params[0].value, params[1].value);
      let step = 1;
      if (params[2].known) {
        if (params[2].value <= 0) throw new Error('step must be > 0');
        step = params[2].value;
      }
      for (let i = 0; i < slice.length; i += step) result.push(slice[i]);
    }
    return result;
  }

  private evalRecursive(input: Value[]): Value[] {
    const result: Value[] = [];
    for (const v of input) {
      if (v === null) continue;
      const children = childrenOf(v);
      if (children.length !== 0) {
        result.push(v);
        result.push(...this.evalRecursive(children));
      }
    }
    return result;
  }

  private evalFilter(input: Value[], node: Extract<JpNode, { type: 'filter' }>): Value[] {
    const results: Value[] = [];
    for (const v of input) {
      if (!Array.isArray(v)) throw new Error(`${goSprintValue(v)} is not array or slice and cannot be filtered`);
      for (const item of v) {
        const temp = [item];
        let lefts: Value[];
        if (node.operator === 'exists') {
          try {
            lefts = this.evalList(temp, node.left);
          } catch {
            lefts = [];
          }
          if (lefts.length > 0) results.push(item);
          continue;
        }
        lefts = this.evalList(temp, node.left);
        if (lefts.length === 0) continue;
        if (lefts.length > 1) throw new Error('can only compare one element at a time');
        const rights = this.evalList(temp, node.right);
        if (rights.length === 0) continue;
        if (rights.length > 1) throw new Error('can only compare one element at a time');
        if (!['<', '>', '==', '!=', '<=', '>='].includes(node.operator)) {
          throw new Error(`unrecognized filter operator ${node.operator}`);
        }
        if (compare(node.operator, lefts[0], rights[0])) results.push(item);
      }
    }
    return results;
  }
}

/** evalToText: %v of a scalar, `null` for JSON null. */
function evalToText(v: Value): string {
  if (v === INVALID) return '<no value>';
  if (v === null) return 'null';
  if (v instanceof GoByte) return String(v.value);
  if (v instanceof GoFloat) return formatFloatG(v.value);
  if (typeof v === 'number' || typeof v === 'bigint') return goNumberText(v);
  return goSprintValue(v);
}
