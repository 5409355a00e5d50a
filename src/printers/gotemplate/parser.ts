/** Parser of Go's text/template (text/template/parse/parse.go), producing ./ast.ts nodes. */
import { type CommandNode, type ListNode, type Node, type PipeNode, nodeString } from './ast.js';
import { type Item, lex } from './lexer.js';

export class TemplateParseError extends Error {}

export interface Tree {
  root: ListNode;
  defines: Map<string, ListNode>;
  text: string;
}

type Ctl = Node | { type: 'end' | 'else'; pos: number };

function itemString(it: Item): string {
  if (it.type === 'eof') return 'EOF';
  if (it.type === 'error') return it.val;
  if (it.type === 'keyword') return `<${it.val}>`;
  if (it.val.length > 10) return `${JSON.stringify(it.val.slice(0, 10))}...`;
  return JSON.stringify(it.val);
}

export function parseTemplate(name: string, text: string, funcs: Set<string>): Tree {
  const items = lex(text);
  let i = 0;
  let vars = ['$'];
  let rangeDepth = 0;
  let actionLine = 0;
  const defines = new Map<string, ListNode>();

  const fail = (msg: string, line = items[Math.max(0, Math.min(i, items.length) - 1)]?.line ?? 1): never => {
    throw new TemplateParseError(`template: ${name}:${line}: ${msg}`);
  };
  const next = (): Item => items[i++] ?? items[items.length - 1];
  const backup = (n = 1) => {
    i -= n;
  };
  const peek = (): Item => items[i] ?? items[items.length - 1];
  const nextNonSpace = (): Item => {
    let t = next();
    while (t.type === 'space') t = next();
    return t;
  };
  const peekNonSpace = (): Item => {
    const t = nextNonSpace();
    backup();
    return t;
  };
  const unexpected = (t: Item, context: string): never => {
    if (t.type === 'error') {
      const extra = actionLine !== 0 && actionLine !== t.line ? ` in action started at ${name}:${actionLine}` : '';
      return fail(`${t.val}${extra}`, t.line);
    }
    return fail(`unexpected ${itemString(t)} in ${context}`, t.line);
  };
  const expect = (type: Item['type'], context: string): Item => {
    const t = nextNonSpace();
    if (t.type !== type) unexpected(t, context);
    return t;
  };
  const isKeyword = (t: Item, word: string) => t.type === 'keyword' && t.val === word;

  const parseNumber = (t: Item): Node => {
    let text = t.val;
    if (t.type === 'char') {
      const s = unquoteGo(text.replace(/^'|'$/g, '"'));
      if (Array.from(s).length !== 1) fail(`malformed character constant: ${text}`, t.line);
      return { type: 'number', pos: t.pos, text, value: s.codePointAt(0)!, isFloat: false };
    }
    const clean = text.replace(/_/g, '');
    const isHexInt = /^[+-]?0[xX][0-9a-fA-F]+$/.test(clean);
    if (!isHexInt && /[.eEpP]/.test(clean)) {
      const f = Number(clean);
      if (Number.isNaN(f)) fail(`illegal number syntax: ${JSON.stringify(text)}`, t.line);
      return { type: 'number', pos: t.pos, text, value: f, isFloat: true };
    }
    let v: bigint;
    try {
      const neg = clean.startsWith('-');
      const body = clean.replace(/^[+-]/, '');
      const normalized = /^0[0-7]+$/.test(body) ? '0o' + body.slice(1) : body.replace(/^0([oObBxX])/, (_m, p: string) => '0' + p.toLowerCase());
      v = BigInt(normalized) * (neg ? -1n : 1n);
    } catch {
      return fail(`illegal number syntax: ${JSON.stringify(text)}`, t.line);
    }
    text = t.val;
    const asNumber = v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    return { type: 'number', pos: t.pos, text, value: asNumber, isFloat: false };
  };

  const useVar = (t: Item): Node => {
    const ident = t.val.split('.');
    if (!vars.includes(ident[0])) fail(`undefined variable ${JSON.stringify(ident[0])}`, t.line);
    return { type: 'variable', pos: t.pos, ident };
  };

  const term = (): Node | null => {
    const t = nextNonSpace();
    switch (t.type) {
      case 'identifier':
        if (!funcs.has(t.val)) fail(`function ${JSON.stringify(t.val)} not defined`, t.line);
        return { type: 'identifier', pos: t.pos, ident: t.val };
      case 'dot': return { type: 'dot', pos: t.pos };
      case 'nil': return { type: 'nil', pos: t.pos };
      case 'variable': return useVar(t);
      case 'field': return { type: 'field', pos: t.pos, ident: [t.val.slice(1)] };
      case 'bool': return { type: 'bool', pos: t.pos, value: t.val === 'true' };
      case 'char':
      case 'number': return parseNumber(t);
      case 'leftParen': return pipeline('parenthesized pipeline', 'rightParen');
      case 'string':
      case 'rawString': {
        const s = t.type === 'rawString' ? t.val.slice(1, -1).replace(/\r/g, '') : unquoteGo(t.val);
        return { type: 'string', pos: t.pos, quoted: t.val, text: s };
      }
    }
    backup();
    return null;
  };

  const operand = (): Node | null => {
    let node = term();
    if (node === null) return null;
    if (peek().type === 'field') {
      const pos = peek().pos;
      const fields: string[] = [];
      while (peek().type === 'field') fields.push(next().val.slice(1));
      switch (node.type) {
        case 'field':
          node = { type: 'field', pos, ident: [...node.ident, ...fields] };
          break;
        case 'variable':
          node = { type: 'variable', pos, ident: [...node.ident, ...fields] };
          break;
        case 'bool':
        case 'string':
        case 'number':
        case 'nil':
        case 'dot':
          fail(`unexpected . after term ${JSON.stringify(nodeString(node))}`);
          break;
        default:
          node = { type: 'chain', pos, node, field: fields };
      }
    }
    return node;
  };

  const command = (): CommandNode => {
    const cmd: CommandNode = { type: 'command', pos: peekNonSpace().pos, args: [] };
    for (;;) {
      peekNonSpace();
      const op = operand();
      if (op) cmd.args.push(op);
      const t = next();
      if (t.type === 'space') continue;
      if (t.type === 'rightDelim' || t.type === 'rightParen') backup();
      else if (t.type !== 'pipe') unexpected(t, 'operand');
      break;
    }
    if (cmd.args.length === 0) fail('empty command');
    return cmd;
  };

  const pipeline = (context: string, end: Item['type']): PipeNode => {
    const first = peekNonSpace();
    const pipe: PipeNode = { type: 'pipe', pos: first.pos, isAssign: false, decl: [], cmds: [] };
    for (;;) {
      const v = peekNonSpace();
      if (v.type !== 'variable') break;
      const variableIndex = i;
      nextNonSpace();
      const nxt = peekNonSpace();
      if (nxt.type === 'assign' || nxt.type === 'declare') {
        pipe.isAssign = nxt.type === 'assign';
        nextNonSpace();
        pipe.decl.push({ type: 'variable', pos: v.pos, ident: [v.val] });
        vars.push(v.val);
        break;
      }
      if (nxt.type === 'comma') {
        nextNonSpace();
        pipe.decl.push({ type: 'variable', pos: v.pos, ident: [v.val] });
        vars.push(v.val);
        if (context === 'range' && pipe.decl.length < 2) {
          const p = peekNonSpace().type;
          if (p === 'variable' || p === 'rightDelim' || p === 'rightParen') continue;
          fail('range can only initialize variables');
        }
        fail(`too many declarations in ${context}`);
      }
      // Not a declaration: the variable is the pipeline's first operand.
      i = variableIndex;
      break;
    }
    for (;;) {
      const t = nextNonSpace();
      if (t.type === end) {
        if (pipe.cmds.length === 0) fail(`missing value for ${context}`);
        pipe.cmds.slice(1).forEach((c, idx) => {
          if (['bool', 'dot', 'nil', 'number', 'string'].includes(c.args[0].type)) {
            fail(`non executable command in pipeline stage ${idx + 2}`);
          }
        });
        return pipe;
      }
      if (['bool', 'char', 'dot', 'field', 'identifier', 'number', 'nil', 'rawString', 'string', 'variable', 'leftParen'].includes(t.type)) {
        backup();
        pipe.cmds.push(command());
      } else {
        unexpected(t, context);
      }
    }
  };

  const parseControl = (context: 'if' | 'range' | 'with') => {
    const saved = vars.length;
    const pipe = pipeline(context, 'rightDelim');
    if (context === 'range') rangeDepth++;
    let [list, nxt] = itemList();
    if (context === 'range') rangeDepth--;
    let elseList: ListNode | null = null;
    if (nxt.type === 'else') {
      if ((context === 'if' || context === 'with') && isKeyword(peek(), context)) {
        next();
        elseList = { type: 'list', pos: nxt.pos, nodes: [control(context)] };
      } else {
        [elseList, nxt] = itemList();
        if (nxt.type !== 'end') fail(`expected end; found ${ctlString(nxt)}`);
      }
    }
    vars = vars.slice(0, saved);
    return { type: context, pos: pipe.pos, pipe, list, elseList } as Node;
  };

  const control = (context: 'if' | 'range' | 'with'): Node => parseControl(context);

  const action = (): Ctl => {
    const t = nextNonSpace();
    if (t.type === 'keyword') {
      switch (t.val) {
        case 'if':
        case 'range':
        case 'with':
          return control(t.val);
        case 'else': {
          const p = peekNonSpace();
          if (isKeyword(p, 'if') || isKeyword(p, 'with')) return { type: 'else', pos: p.pos };
          return { type: 'else', pos: expect('rightDelim', 'else').pos };
        }
        case 'end':
          return { type: 'end', pos: expect('rightDelim', 'end').pos };
        case 'break':
        case 'continue':
          if (rangeDepth === 0) fail(`{{${t.val}}} outside {{range}}`);
          expect('rightDelim', t.val);
          return { type: t.val, pos: t.pos };
        case 'template': {
          const nameTok = nextNonSpace();
          if (nameTok.type !== 'string' && nameTok.type !== 'rawString') unexpected(nameTok, 'template clause');
          const tmplName = nameTok.type === 'rawString' ? nameTok.val.slice(1, -1) : unquoteGo(nameTok.val);
          let pipe: PipeNode | null = null;
          if (nextNonSpace().type !== 'rightDelim') {
            backup();
            pipe = pipeline('template clause', 'rightDelim');
          }
          return { type: 'template', pos: t.pos, name: tmplName, pipe };
        }
        case 'block':
        case 'define':
          return fail(`unexpected <${t.val}> in command`, t.line);
      }
    }
    backup();
    const p = peek();
    return { type: 'action', pos: p.pos, pipe: pipeline('command', 'rightDelim') };
  };

  const textOrAction = (): Ctl => {
    const t = nextNonSpace();
    switch (t.type) {
      case 'text': return { type: 'text', pos: t.pos, text: t.val };
      case 'leftDelim': {
        actionLine = t.line;
        try {
          return action();
        } finally {
          actionLine = 0;
        }
      }
      case 'comment': return { type: 'comment', pos: t.pos };
    }
    return unexpected(t, 'input');
  };

  const itemList = (): [ListNode, Ctl] => {
    const list: ListNode = { type: 'list', pos: peekNonSpace().pos, nodes: [] };
    while (peekNonSpace().type !== 'eof') {
      const n = textOrAction();
      if (n.type === 'end' || n.type === 'else') return [list, n];
      list.nodes.push(n as Node);
    }
    return fail('unexpected EOF');
  };

  const parseDefine = (): void => {
    const nameTok = nextNonSpace();
    if (nameTok.type !== 'string' && nameTok.type !== 'rawString') unexpected(nameTok, 'define clause');
    const defName = nameTok.type === 'rawString' ? nameTok.val.slice(1, -1) : unquoteGo(nameTok.val);
    expect('rightDelim', 'define clause');
    const saved = vars;
    vars = ['$'];
    const [list, end] = itemList();
    if (end.type !== 'end') fail(`unexpected ${ctlString(end)} in define clause`);
    vars = saved;
    defines.set(defName, list);
  };

  const root: ListNode = { type: 'list', pos: peek().pos, nodes: [] };
  while (peek().type !== 'eof') {
    if (peek().type === 'leftDelim') {
      const save = i;
      next();
      const kw = nextNonSpace();
      if (isKeyword(kw, 'define')) {
        parseDefine();
        continue;
      }
      i = save;
    }
    const n = textOrAction();
    if (n.type === 'end' || n.type === 'else') fail(`unexpected ${ctlString(n)}`);
    root.nodes.push(n as Node);
  }
  return { root, defines, text };
}

function ctlString(n: Ctl): string {
  if (n.type === 'end') return '{{end}}';
  if (n.type === 'else') return '{{else}}';
  return nodeString(n as Node);
}

/** strconv.Unquote for a double-quoted Go string literal. */
export function unquoteGo(q: string): string {
  const body = q.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"', "'": "'" };
    if (simple[e] !== undefined) {
      out += simple[e];
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const h = body.slice(i + 1, i + 1 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(h)) throw new TemplateParseError('invalid syntax');
      out += e === 'x' ? String.fromCharCode(parseInt(h, 16)) : String.fromCodePoint(parseInt(h, 16));
      i += len;
    } else if (/[0-7]/.test(e ?? '')) {
      const o = body.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(o)) throw new TemplateParseError('invalid syntax');
      out += String.fromCharCode(parseInt(o, 8));
      i += 2;
    } else {
      throw new TemplateParseError('invalid syntax');
    }
  }
  return out;
}
