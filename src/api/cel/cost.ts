/**
 * Cost of CEL rules, after upstream's model (cel-go's checker cost estimator with the limits of
 * k8s.io/apiserver/pkg/apis/cel/config.go): a rule's cost grows with the sizes of the strings,
 * lists and maps it traverses. One walk over the parsed expression serves both uses, fed with
 * different sizes: at CRD creation the schema's bounds (maxLength, maxItems, maxProperties, or
 * what a 3 MiB request could hold when they are missing), at run time the actual sizes.
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import type { Schema } from '../structural/schema.js';

/** Upstream's limits. */
export const PER_CALL_LIMIT = 1_000_000;
export const RUNTIME_COST_BUDGET = 10_000_000;
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;
/** The largest request body the API server takes (3 MiB), the bound of unbounded sizes. */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

/** The smallest serialized size of a value of a schema (upstream's estimateMinSizeJSON). */
function minSerializedSize(s: Schema | undefined): number {
  if (!s) return 1;
  if (s['x-kubernetes-int-or-string']) return 1;
  switch (s.type) {
    case 'boolean': return 4;
    case 'integer': case 'number': return 1;
    case 'string': return 2 + (s.minLength ?? 0);
    case 'array': return 2;
    case 'object': return 2;
    default: return 1;
  }
}

/** The size bounds of a schema node: its maxLength/maxItems/maxProperties, or what fits in a request. */
export function schemaSize(s: Schema | undefined): number {
  if (!s) return MAX_REQUEST_SIZE_BYTES;
  if (s.type === 'string') {
    if (s.maxLength !== undefined) return s.maxLength;
    if (s.format === 'date-time' || s.format === 'date' || s.format === 'duration') return 64;
    return MAX_REQUEST_SIZE_BYTES - 2;
  }
  if (s.type === 'array') return s.maxItems ?? Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minSerializedSize(s.items) + 1));
  if (s.type === 'object') {
    if (s.maxProperties !== undefined) return s.maxProperties;
    const value = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
    if (value) return Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minSerializedSize(value) + 4));
    return Object.keys(s.properties ?? {}).length || 1;
  }
  return 1;
}

/** What the walk knows about an expression: its schema (when it follows the schema) and its size. */
export interface Typed {
  schema?: Schema;
  size: number;
}

export interface SizeOracle {
  /** Size of a value of the schema node. */
  size(schema: Schema | undefined): number;
  /**
   * Set by the walk when a size (or a type that depends on the input) went into the cost: an
   * expression that leaves it unset costs the same for every input, so its cost can be kept.
   */
  sizeDependent?: boolean;
}

export const staticSizes: SizeOracle = { size: schemaSize };

const TRAVERSAL = 0.1;
/** Operators whose result type comes from the input's shape (a variable, a field, an element, a branch). */
const INPUT_TYPED = new Set(['id', '.', '.?', '[]', '[?]', '?:']);

/** Notes that the cost depends on sizes; returns the size. */
function sized(sizes: SizeOracle, n: number): number {
  sizes.sizeDependent = true;
  return n;
}
const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
const STRING_SCANS = new Set(['contains', 'startsWith', 'endsWith', 'indexOf', 'lastIndexOf', 'lowerAscii', 'upperAscii', 'trim', 'split', 'replace', 'reverse', 'find', 'findAll', 'join', 'charAt', 'substring']);

function member(t: Typed, key: string, sizes: SizeOracle): Typed {
  const s = t.schema;
  const child = s?.properties?.[key] ?? (typeof s?.additionalProperties === 'object' ? s.additionalProperties : undefined);
  return { schema: child, size: sizes.size(child) };
}

function element(t: Typed, sizes: SizeOracle): Typed {
  const s = t.schema;
  const child = s?.type === 'array' ? s.items : typeof s?.additionalProperties === 'object' ? s.additionalProperties : undefined;
  return { schema: child, size: sizes.size(child) };
}

/** The scope inside a macro: its loop variable, then the enclosing scope (which may work entries out on lookup). */
class InnerScope extends Map<string, Typed> {
  constructor(private readonly parent: Map<string, Typed>) {
    super();
  }

  override get(name: string): Typed | undefined {
    return super.has(name) ? super.get(name) : this.parent.get(name);
  }

  override has(name: string): boolean {
    return super.has(name) || this.parent.has(name);
  }
}

/**
 * The cost of an expression and the type of its result. `scope` gives the schema and size of
 * the variables (self, oldSelf, comprehension variables).
 */
export function estimate(node: ASTNode, scope: Map<string, Typed>, sizes: SizeOracle): { cost: number; type: Typed } {
  const unknown: Typed = { size: 1 };
  const args = node.args as unknown;
  switch (node.op) {
    case 'value':
      return { cost: 0, type: { size: typeof args === 'string' ? args.length : 1 } };
    case 'id':
      return { cost: 1, type: scope.get(args as string) ?? unknown };
    case '.':
    case '.?': {
      const [operand, key] = args as [ASTNode, string];
      const inner = estimate(operand, scope, sizes);
      return { cost: inner.cost + 1, type: member(inner.type, key, sizes) };
    }
    case '[]':
    case '[?]': {
      const [a, b] = args as [ASTNode, ASTNode];
      const x = estimate(a, scope, sizes);
      const y = estimate(b, scope, sizes);
      return { cost: x.cost + y.cost + 1, type: element(x.type, sizes) };
    }
    case 'list': {
      const items = (args as ASTNode[]).map((a) => estimate(a, scope, sizes));
      return { cost: 10 + items.reduce((s, i) => s + i.cost, 0), type: { size: items.length } };
    }
    case 'map': {
      const entries = (args as Array<[ASTNode, ASTNode]>).flatMap(([k, v]) => [estimate(k, scope, sizes), estimate(v, scope, sizes)]);
      return { cost: 30 + entries.reduce((s, i) => s + i.cost, 0), type: { size: entries.length / 2 } };
    }
    case '?:': {
      const [c, a, b] = (args as ASTNode[]).map((x) => estimate(x, scope, sizes));
      return { cost: c!.cost + Math.max(a!.cost, b!.cost), type: a!.type.size >= b!.type.size ? a!.type : b!.type };
    }
    case '&&':
    case '||': {
      const [a, b] = (args as ASTNode[]).map((x) => estimate(x, scope, sizes));
      return { cost: a!.cost + b!.cost, type: unknown };
    }
    case '!_':
    case '-_': {
      const inner = estimate(args as ASTNode, scope, sizes);
      return { cost: inner.cost + 1, type: unknown };
    }
    case 'call': {
      const [name, callArgs] = args as [string, ASTNode[]];
      if (name === 'has') return { cost: 1 + estimate(callArgs[0]!, scope, sizes).cost, type: unknown };
      const inner = callArgs.map((a) => estimate(a, scope, sizes));
      const sum = inner.reduce((s, i) => s + i.cost, 0);
      if (name === 'size') return { cost: sum + 1, type: unknown };
      const traversal = name === 'string' || name === 'bytes' ? Math.ceil(TRAVERSAL * sized(sizes, inner[0]?.type.size ?? 1)) : 0;
      return { cost: sum + 1 + traversal, type: { size: inner[0]?.type.size ?? 1 } };
    }
    case 'rcall': {
      const [name, receiver, callArgs] = args as [string, ASTNode, ASTNode[]];
      const recv = estimate(receiver, scope, sizes);
      if (MACROS.has(name) && callArgs.length >= 2 && callArgs[0]!.op === 'id') {
        const variable = callArgs[0]!.args as string;
        const inner = new InnerScope(scope);
        const el = recv.type.schema?.type === 'object' && typeof recv.type.schema.additionalProperties === 'object'
          ? { schema: { type: 'string' } as Schema, size: sizes.size({ type: 'string' }) }
          : element(recv.type, sizes);
        inner.set(variable, el);
        const body = callArgs.slice(1).reduce((s, a) => s + estimate(a, inner, sizes).cost, 0);
        const cardinality = sized(sizes, recv.type.size);
        // cel-go: the range, then per element the loop condition, the step, and the result append.
        return { cost: recv.cost + cardinality * (body + (name === 'map' || name === 'filter' ? 2 : 1)), type: { size: cardinality } };
      }
      const inner = callArgs.map((a) => estimate(a, scope, sizes));
      const sum = recv.cost + inner.reduce((s, i) => s + i.cost, 0);
      if (name === 'matches') {
        const pattern = sized(sizes, inner[0]?.type.size ?? 1);
        return { cost: sum + 1 + Math.ceil(TRAVERSAL * recv.type.size) * Math.max(1, pattern), type: unknown };
      }
      if (STRING_SCANS.has(name)) return { cost: sum + 1 + Math.ceil(TRAVERSAL * sized(sizes, recv.type.size)), type: { size: recv.type.size } };
      if (['isSorted', 'sum', 'min', 'max'].includes(name)) return { cost: sum + 1 + sized(sizes, recv.type.size), type: unknown };
      return { cost: sum + 1, type: unknown };
    }
    case 'in': {
      const [a, b] = (args as ASTNode[]).map((x) => estimate(x, scope, sizes));
      return { cost: a!.cost + b!.cost + 1 + sized(sizes, b!.type.size), type: unknown };
    }
    case '==':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
    case '+': {
      const [left] = args as ASTNode[];
      const [a, b] = (args as ASTNode[]).map((x) => estimate(x, scope, sizes));
      // Whether the left side is a string or list (and so scanned) depends on the input when it
      // comes from the input; literals and function results have the same type every time.
      if (INPUT_TYPED.has(left!.op)) sizes.sizeDependent = true;
      const scan = a!.type.schema?.type === 'string' || a!.type.schema?.type === 'array' ? Math.ceil(TRAVERSAL * Math.min(a!.type.size, b!.type.size || a!.type.size)) : 0;
      return { cost: a!.cost + b!.cost + 1 + scan, type: node.op === '+' ? { size: a!.type.size + b!.type.size } : unknown };
    }
    default: {
      const list = Array.isArray(args) ? (args as ASTNode[]).filter((a) => a && typeof a === 'object' && 'op' in a) : [];
      return { cost: 1 + list.reduce((s, a) => s + estimate(a, scope, sizes).cost, 0), type: unknown };
    }
  }
}

/** Upstream's getCostErrorMessage. */
export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const text = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${text} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
