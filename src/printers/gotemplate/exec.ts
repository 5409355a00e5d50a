/** Executes a parsed Go text/template over decoded JSON data (text/template/exec.go semantics). */
import { formatFloatG, goSprintValue, isPlainObject, sortedKeys } from '../govalues.js';
import { type CommandNode, type ControlNode, type ListNode, type Node, type PipeNode, nodeString } from './ast.js';
import { type BuiltinFunc, builtins } from './funcs.js';
import type { Tree } from './parser.js';
import { GoFloat, GoIntLit, type TValue, isTrue, kindOf, plain, typeName } from './values.js';

export class TemplateExecError extends Error {}

const MISSING = Symbol('missing');
const BREAK = Symbol('break');
const CONTINUE = Symbol('continue');

interface Variable {
  name: string;
  value: TValue;
}

/** A value plus whether Go would see it through an interface{} (map values, list items). */
interface Receiver {
  value: TValue;
  viaInterface: boolean;
}

export interface ExecOptions {
  name: string;
  missingKeyError: boolean;
}

export function executeTemplate(tree: Tree, data: TValue, opts: ExecOptions): { output: string; error?: TemplateExecError } {
  const s = new State(tree, opts);
  try {
    s.walk({ value: data, viaInterface: false }, tree.root);
    return { output: s.out };
  } catch (e) {
    if (e instanceof TemplateExecError) return { output: s.out, error: e };
    throw e;
  }
}

class State {
  out = '';
  private vars: Variable[];
  private node: Node | null = null;

  constructor(
    private readonly tree: Tree,
    private readonly opts: ExecOptions,
  ) {
    this.vars = [];
  }

  private at(n: Node): void {
    this.node = n;
  }

  errorf(msg: string): never {
    const name = this.opts.name;
    if (!this.node) throw new TemplateExecError(`template: ${name}: ${msg}`);
    const pos = this.node.pos;
    const text = this.tree.text.slice(0, pos);
    const nl = text.lastIndexOf('\n');
    const col = nl === -1 ? pos : pos - (nl + 1);
    const line = 1 + (text.match(/\n/g)?.length ?? 0);
    throw new TemplateExecError(`template: ${name}:${line}:${col}: executing ${JSON.stringify(name)} at <${nodeString(this.node)}>: ${msg}`);
  }

  private mark(): number {
    return this.vars.length;
  }

  private pop(mark: number): void {
    this.vars.length = mark;
  }

  private push(name: string, value: TValue): void {
    this.vars.push({ name, value });
  }

  private setVar(name: string, value: TValue): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i].name === name) {
        this.vars[i].value = value;
        return;
      }
    }
    this.errorf(`undefined variable: ${name}`);
  }

  private setTopVar(n: number, value: TValue): void {
    this.vars[this.vars.length - n].value = value;
  }

  private varValue(name: string): TValue {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i].name === name) return this.vars[i].value;
    return this.errorf(`undefined variable: ${name}`);
  }

  walk(dot: Receiver, node: Node): void {
    if (this.vars.length === 0) this.push('$', dot.value);
    this.at(node);
    switch (node.type) {
      case 'action': {
        const val = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.printValue(node, val);
        return;
      }
      case 'break': throw BREAK;
      case 'continue': throw CONTINUE;
      case 'comment': return;
      case 'if':
      case 'with': {
        const mark = this.mark();
        try {
          const val = this.evalPipeline(dot, node.pipe);
          if (isTrue(val)) {
            this.walk(node.type === 'with' ? { value: val, viaInterface: false } : dot, node.list);
          } else if (node.elseList) {
            this.walk(dot, node.elseList);
          }
        } finally {
          this.pop(mark);
        }
        return;
      }
      case 'list':
        for (const n of node.nodes) this.walk(dot, n);
        return;
      case 'range':
        return this.walkRange(dot, node);
      case 'template': {
        const t = this.tree.defines.get(node.name);
        if (!t) this.errorf(`template: no template ${JSON.stringify(node.name)} associated with template ${JSON.stringify(this.opts.name)}`);
        const newDot = node.pipe ? this.evalPipeline(dot, node.pipe) : undefined;
        const saved = this.vars;
        this.vars = [{ name: '$', value: newDot }];
        try {
          this.walk({ value: newDot, viaInterface: false }, t as ListNode);
        } finally {
          this.vars = saved;
        }
        return;
      }
      case 'text':
        this.out += node.text;
        return;
    }
    this.errorf(`unknown node: ${nodeString(node)}`);
  }

  private walkRange(dot: Receiver, r: ControlNode): void {
    this.at(r);
    const outer = this.mark();
    try {
      const val = this.evalPipeline(dot, r.pipe);
      const mark = this.mark();
      const decl = r.pipe.decl;
      const oneIteration = (index: TValue, elem: TValue): boolean => {
        if (decl.length > 0) {
          if (r.pipe.isAssign) this.setVar(decl[0].ident[0], decl.length > 1 ? index : elem);
          else this.setTopVar(1, elem);
        }
        if (decl.length > 1) {
          if (r.pipe.isAssign) this.setVar(decl[1].ident[0], elem);
          else this.setTopVar(2, index);
        }
        try {
          this.walk({ value: elem, viaInterface: true }, r.list);
        } catch (e) {
          if (e === BREAK) return false;
          if (e !== CONTINUE) throw e;
        } finally {
          this.pop(mark);
        }
        return true;
      };
      const k = kindOf(val);
      if (k === 'slice' && (val as TValue[]).length > 0) {
        const list = val as TValue[];
        for (let i = 0; i < list.length; i++) if (!oneIteration(new GoIntLit(i), list[i])) break;
        return;
      }
      if (k === 'map' && Object.keys(val as object).length > 0) {
        const m = val as Record<string, TValue>;
        for (const key of sortedKeys(m)) if (!oneIteration(key, m[key])) break;
        return;
      }
      if (k === 'int') {
        if (decl.length > 1) this.errorf(`can't use ${goSprintValue(plain(val))} to iterate over more than one variable`);
        const n = Number(plain(val));
        let ran = false;
        for (let i = 0; i < n; i++) {
          ran = true;
          if (!oneIteration(new GoIntLit(i), new GoIntLit(i))) break;
        }
        if (ran) return;
      } else if (k !== 'invalid' && k !== 'slice' && k !== 'map') {
        this.errorf(`range can't iterate over ${goSprintValue(plain(val))}`);
      }
      if (r.elseList) this.walk(dot, r.elseList);
    } finally {
      this.pop(outer);
    }
  }

  private evalPipeline(dot: Receiver, pipe: PipeNode): TValue {
    this.at(pipe);
    let value: TValue | typeof MISSING = MISSING;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, value);
      // A nil interface{} digs down to Go's invalid value.
      if (value === null) value = undefined;
    }
    for (const v of pipe.decl) {
      if (pipe.isAssign) this.setVar(v.ident[0], value);
      else this.push(v.ident[0], value);
    }
    return value as TValue;
  }

  private notAFunction(args: Node[], final: TValue | typeof MISSING): void {
    if (args.length > 1 || final !== MISSING) this.errorf(`can't give argument to non-function ${nodeString(args[0])}`);
  }

  private evalCommand(dot: Receiver, cmd: CommandNode, final: TValue | typeof MISSING): TValue {
    const first = cmd.args[0];
    switch (first.type) {
      case 'field':
        return this.evalFieldNode(dot, first, cmd.args, final);
      case 'chain':
        return this.evalChainNode(dot, first, cmd.args, final);
      case 'identifier':
        return this.evalFunction(dot, first, cmd, cmd.args, final);
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, first);
      case 'variable':
        return this.evalVariableNode(dot, first, cmd.args, final);
    }
    this.at(first);
    this.notAFunction(cmd.args, final);
    switch (first.type) {
      case 'bool': return first.value;
      case 'dot': return dot.value;
      case 'nil': return this.errorf('nil is not a command');
      case 'number': return this.idealConstant(first);
      case 'string': return first.text;
    }
    return this.errorf(`can't evaluate command ${JSON.stringify(nodeString(first))}`);
  }

  private idealConstant(n: Extract<Node, { type: 'number' }>): TValue {
    this.at(n);
    if (n.isFloat) return new GoFloat(n.value as number);
    return typeof n.value === 'bigint' ? n.value : new GoIntLit(n.value);
  }

  private evalFieldNode(dot: Receiver, field: Extract<Node, { type: 'field' }>, args: Node[], final: TValue | typeof MISSING): TValue {
    this.at(field);
    return this.evalFieldChain(dot, dot, field, field.ident, args, final);
  }

  private evalChainNode(dot: Receiver, chain: Extract<Node, { type: 'chain' }>, args: Node[], final: TValue | typeof MISSING): TValue {
    this.at(chain);
    if (chain.node.type === 'nil') this.errorf(`indirection through explicit nil in ${nodeString(chain)}`);
    const pipe = this.evalArg(dot, chain.node);
    return this.evalFieldChain(dot, { value: pipe, viaInterface: false }, chain, chain.field, args, final);
  }

  private evalVariableNode(dot: Receiver, v: Extract<Node, { type: 'variable' }>, args: Node[], final: TValue | typeof MISSING): TValue {
    this.at(v);
    const value = this.varValue(v.ident[0]);
    if (v.ident.length === 1) {
      this.notAFunction(args, final);
      return value;
    }
    return this.evalFieldChain(dot, { value, viaInterface: false }, v, v.ident.slice(1), args, final);
  }

  private evalFieldChain(dot: Receiver, receiver: Receiver, node: Node, ident: string[], args: Node[], final: TValue | typeof MISSING): TValue {
    let r = receiver;
    for (let i = 0; i < ident.length - 1; i++) r = { value: this.evalField(ident[i], [], MISSING, r), viaInterface: true };
    return this.evalField(ident[ident.length - 1], args, final, r);
  }

  private evalField(fieldName: string, args: Node[], final: TValue | typeof MISSING, receiver: Receiver): TValue {
    const v = receiver.value;
    if (v === undefined) {
      if (this.opts.missingKeyError) this.errorf(`nil data; no entry for key ${JSON.stringify(fieldName)}`);
      return undefined;
    }
    const typ = receiver.viaInterface ? 'interface {}' : typeName(v);
    if (v === null) this.errorf(`nil pointer evaluating ${typ}.${fieldName}`);
    if (isPlainObject(v)) {
      if (args.length > 1 || final !== MISSING) this.errorf(`${fieldName} is not a method but has arguments`);
      if (Object.prototype.hasOwnProperty.call(v, fieldName)) return v[fieldName];
      if (this.opts.missingKeyError) this.errorf(`map has no entry for key ${JSON.stringify(fieldName)}`);
      return undefined;
    }
    return this.errorf(`can't evaluate field ${fieldName} in type ${typ}`);
  }

  private evalFunction(dot: Receiver, node: Extract<Node, { type: 'identifier' }>, cmd: Node, args: Node[], final: TValue | typeof MISSING): TValue {
    this.at(node);
    const fn = builtins[node.ident];
    if (!fn) this.errorf(`${JSON.stringify(node.ident)} is not a defined function`);
    return this.evalCall(dot, fn, cmd, node.ident, args, final);
  }

  private evalCall(dot: Receiver, fn: BuiltinFunc, node: Node, name: string, args: Node[], final: TValue | typeof MISSING): TValue {
    const argNodes = args.slice(1);
    const numIn = argNodes.length + (final !== MISSING ? 1 : 0);
    const want = fn.variadic ? fn.params.length - 1 : fn.params.length;
    if (fn.variadic ? numIn < want : numIn !== want) {
      this.errorf(`wrong number of args for ${name}: want ${fn.variadic ? 'at least ' : ''}${want} got ${numIn}`);
    }
    if (name === 'and' || name === 'or') {
      let v: TValue = undefined;
      for (const a of argNodes) {
        v = this.evalArg(dot, a);
        if (isTrue(v) === (name === 'or')) return v;
      }
      if (final !== MISSING) v = final;
      return v;
    }
    const values: TValue[] = argNodes.map((a, i) => this.checkArgType(this.evalArg(dot, a), fn.params[Math.min(i, fn.params.length - 1)], a));
    if (final !== MISSING) values.push(this.checkArgType(final, fn.params[Math.min(values.length, fn.params.length - 1)], node));
    try {
      return fn.call(values);
    } catch (e) {
      this.at(node);
      return this.errorf(`error calling ${name}: ${(e as Error).message}`);
    }
  }

  /** validateType for a parameter declared string or int; interface{} params take anything. */
  private checkArgType(v: TValue, param: 'any' | 'string' | 'int', n: Node): TValue {
    if (param === 'any') return v;
    this.at(n);
    if (v === undefined || v === null) this.errorf(`invalid value; expected ${param}`);
    const k = kindOf(v);
    if (param === 'string' && k !== 'string') this.errorf(`wrong type for value; expected string; got ${typeName(v)}`);
    if (param === 'int' && k !== 'int') this.errorf(`wrong type for value; expected int; got ${typeName(v)}`);
    return v;
  }

  private evalArg(dot: Receiver, n: Node): TValue {
    this.at(n);
    switch (n.type) {
      case 'dot': return dot.value;
      case 'nil': return null;
      case 'field': return this.evalFieldNode(dot, n, [n], MISSING);
      case 'variable': return this.evalVariableNode(dot, n, [], MISSING);
      case 'pipe': return this.evalPipeline(dot, n);
      case 'identifier': return this.evalFunction(dot, n, n, [n], MISSING);
      case 'chain': return this.evalChainNode(dot, n, [], MISSING);
      case 'bool': return n.value;
      case 'number': return this.idealConstant(n);
      case 'string': return n.text;
    }
    return this.errorf(`can't handle ${nodeString(n)} for arg`);
  }

  private printValue(n: Node, v: TValue): void {
    this.at(n);
    if (v === undefined) {
      this.out += '<no value>';
      return;
    }
    if (v instanceof GoFloat) {
      this.out += formatFloatG(v.value);
      return;
    }
    if (v instanceof GoIntLit) {
      this.out += String(v.value);
      return;
    }
    this.out += goSprintValue(v);
  }
}
