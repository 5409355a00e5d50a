/**
 * CEL for admission policies (upstream's k8s.io/apiserver/pkg/admission/plugin/cel): expressions
 * over `object`, `oldObject`, `request`, `params` (when the policy has a paramKind),
 * `namespaceObject`, `variables` (composition, evaluated lazily and once) and `authorizer`, on the
 * environment CRD rules use (library.ts), with upstream's cost limits: an expression over the
 * per-call limit fails, and the expressions of one evaluation share the runtime budget.
 *
 * Values are untyped here (upstream also evaluates on unstructured objects); the schema-aware type
 * check that feeds a policy's status lives in the policy status code. Pure but for the authorizer
 * calls an expression may make.
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../patch/types.js';
import type { Schema } from '../structural/schema.js';
import { addAuthorizerLibrary, CelAuthorizer } from './authorizer.js';
import { estimate, PER_CALL_LIMIT, RUNTIME_COST_BUDGET, type SizeOracle, type Typed } from './cost.js';
import { kubernetesEnvironment } from './library.js';
import { rewriteObjectLiterals } from './object-literals.js';
import { compileMessage, lazyDynValue, plain } from './rules.js';

export { CelAuthorizer } from './authorizer.js';
export { RUNTIME_COST_BUDGET } from './cost.js';

type Env = ReturnType<typeof kubernetesEnvironment>;
type Program = ReturnType<Env['parse']>;

/** What an expression may reference (upstream's OptionalVariableDeclarations plus composition). */
export interface AdmissionDeclarations {
  params: boolean;
  authorizer: boolean;
  /** Whether `variables` is declared (policies; not webhook match conditions). */
  variables: boolean;
  /** Message-literal type names to accept (`Object`, `JSONPatch`) in mutation expressions. */
  objectLiterals?: readonly string[];
}

/** The escape of a JSON Pointer segment (`~` → `~0`, `/` → `~1`), as upstream's jsonpatch library. */
class JsonPatchLibrary {}

const environments = new Map<string, Env>();

function environmentFor(d: AdmissionDeclarations): Env {
  const key = `${d.params}/${d.authorizer}/${d.variables}`;
  let env = environments.get(key);
  if (!env) {
    const e = kubernetesEnvironment();
    addAuthorizerLibrary(e);
    e.registerType('JsonPatchLibrary', { ctor: JsonPatchLibrary, fields: {} });
    e.registerFunction('JsonPatchLibrary.escapeKey(string): string', (_: JsonPatchLibrary, k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1'));
    e.registerConstant('jsonpatch', 'JsonPatchLibrary', new JsonPatchLibrary());
    for (const name of ['object', 'oldObject', 'request', 'namespaceObject']) e.registerVariable(name, 'dyn');
    if (d.params) e.registerVariable('params', 'dyn');
    if (d.variables) e.registerVariable('variables', 'dyn');
    if (d.authorizer) e.registerVariable('authorizer', 'kubernetes.authorization.Authorizer');
    env = e;
    environments.set(key, env);
  }
  return env;
}

export interface CompiledExpression {
  source: string;
  program?: Program;
  /** Upstream's compile error text (`compilation failed: ERROR: <input>:1:6: ...`). */
  error?: string;
  /** The result type the checker found (`bool`, `string`, `dyn`, ...). */
  type?: string;
}

/**
 * Compiles one expression. `expect` lists the result types accepted (dyn always is); a mismatch is
 * a compile error worded as upstream's (`must evaluate to bool`; cel-js types `null` as `null_type`).
 */
export function compileAdmissionExpression(source: string, d: AdmissionDeclarations, expect?: readonly string[]): CompiledExpression {
  const env = environmentFor(d);
  const text = d.objectLiterals?.length ? rewriteObjectLiterals(source, d.objectLiterals) : source;
  try {
    const program = env.parse(text);
    const checked = program.check();
    if (!checked.valid) throw checked.error;
    const type = String(checked.type);
    if (expect && type !== 'dyn' && !expect.includes(type.replace(/<.*$/, ''))) {
      return { source, error: expect.length === 1 ? `must evaluate to ${expect[0]}` : `must evaluate to one of [${expect.join(' ')}]` };
    }
    return { source, program, type };
  } catch (error) {
    return { source, error: compileMessage(error, text) };
  }
}

/** The variables of one evaluation, as JSON (converted to CEL values once). */
export interface AdmissionInput {
  object?: JsonValue | null;
  oldObject?: JsonValue | null;
  request: JsonObject;
  params?: JsonValue | null;
  namespaceObject?: JsonValue | null;
  authorizer?: CelAuthorizer;
}

export interface EvaluationResult {
  value?: unknown;
  /** Upstream's text: `expression '<source>' resulted in error: <cause>`, or a compile error. */
  error?: string;
}

/** Raised when the runtime budget is spent: no further expression of the evaluation runs. */
const BUDGET_TEXT = 'validation failed due to running out of cost budget, no further validation rules will be run';

export class CostBudgetExceeded extends Error {
  constructor() {
    super(BUDGET_TEXT);
  }
}

const INPUT_NAMES = ['object', 'oldObject', 'request', 'params', 'namespaceObject'] as const;
type InputName = (typeof INPUT_NAMES)[number];

/**
 * The CEL values of a request's inputs, each converted on first read. A class with getters on its
 * prototype, not getters defined per request: defineProperty on a fresh object per activation
 * costs more than evaluating a simple expression (and leaves the object in dictionary mode).
 */
class AdmissionValues {
  // ECMAScript private fields: an expression naming `input` must not find them.
  readonly #input: AdmissionInput;
  readonly #converted: Partial<Record<InputName, unknown>> = {};
  authorizer?: unknown;
  variables?: Record<string, unknown>;
  constructor(input: AdmissionInput) {
    this.#input = input;
  }

  #value(name: InputName): unknown {
    if (name in this.#converted) return this.#converted[name];
    const json = name === 'request' ? this.#input.request : this.#input[name];
    const value = json == null ? null : lazyDynValue(json);
    this.#converted[name] = value;
    return value;
  }

  get object(): unknown {
    return this.#value('object');
  }
  get oldObject(): unknown {
    return this.#value('oldObject');
  }
  get request(): unknown {
    return this.#value('request');
  }
  get params(): unknown {
    return this.#value('params');
  }
  get namespaceObject(): unknown {
    return this.#value('namespaceObject');
  }
}

/** Costs of compiled expressions that do not depend on their inputs' sizes (see costOf). */
const sizeIndependentCosts = new WeakMap<CompiledExpression, number>();

/** A scope whose entries are computed on first lookup (the cost model only looks up what an expression names). */
class LazyScope extends Map<string, Typed> {
  constructor(private readonly compute: (name: string) => Typed | undefined) {
    super();
  }

  override get(name: string): Typed | undefined {
    if (super.has(name)) return super.get(name);
    const typed = this.compute(name);
    if (typed) super.set(name, typed);
    return typed;
  }

  override has(name: string): boolean {
    return this.get(name) !== undefined;
  }
}

/**
 * One request's activation: CEL values of its variables, their inferred shapes for the cost
 * model, the lazily evaluated composition variables and the remaining cost budget.
 */
export class AdmissionActivation {
  private readonly values: Record<string, unknown>;
  private readonly input: AdmissionInput;
  /** Shapes of the inputs the cost model asked for, worked out on first use. */
  private readonly scope = new LazyScope((name) => {
    if (!(INPUT_NAMES as readonly string[]).includes(name)) return undefined;
    const json = name === 'request' ? this.input.request : this.input[name as Exclude<InputName, 'request'>];
    return json == null ? undefined : this.shape(json);
  });
  private readonly sizes = new Map<Schema, number>();
  private readonly oracle: SizeOracle = { size: (s) => (s ? this.sizes.get(s) ?? 0 : 1) };
  budget: number;

  constructor(input: AdmissionInput, variables: ReadonlyArray<{ name: string; compiled: CompiledExpression }> = [], budget = RUNTIME_COST_BUDGET) {
    this.budget = budget;
    this.input = input;
    // The inputs convert to CEL values, and their shapes are worked out for the cost model, only
    // when an expression names them, and then only as deep as it selects (lazyDynValue).
    this.values = new AdmissionValues(input) as unknown as Record<string, unknown>;
    if (input.authorizer) this.values.authorizer = input.authorizer;
    // Composition: `variables.<name>` evaluates its expression on first use, then keeps the value.
    const lazy: Record<string, unknown> = {};
    for (const { name, compiled } of variables) {
      this.definitions.set(name, compiled);
      Object.defineProperty(lazy, name, {
        enumerable: true,
        get: () => {
          let result = this.variableResults.get(name);
          if (!result) {
            result = this.evaluateVariable(name);
            this.variableResults.set(name, result);
          }
          if (result instanceof Promise) throw new Error(`composited variable "${name}" is still being evaluated`);
          if (result.error !== undefined) throw new Error(result.error);
          return result.value;
        },
      });
    }
    this.values.variables = lazy;
  }

  private readonly definitions = new Map<string, CompiledExpression>();
  private readonly variableResults = new Map<string, EvaluationResult | Promise<EvaluationResult>>();

  private evaluateVariable(name: string): EvaluationResult | Promise<EvaluationResult> {
    const compiled = this.definitions.get(name)!;
    return compiled.error !== undefined ? { error: `composited variable "${name}" fails to compile: ${compiled.error}` } : this.runNow(compiled);
  }

  /**
   * Evaluates ahead the variables an expression names (and theirs), awaiting the asynchronous ones
   * (authorizer checks), so the lazy getters find their values ready.
   */
  private prepare(node: ASTNode | undefined, seen = new Set<string>()): Promise<unknown> | undefined {
    if (!node || this.definitions.size === 0) return undefined;
    const pending: Array<Promise<unknown>> = [];
    for (const name of referencedVariables(node)) {
      if (seen.has(name) || !this.definitions.has(name)) continue;
      seen.add(name);
      const known = this.variableResults.get(name);
      if (known) {
        if (known instanceof Promise) pending.push(known);
        continue;
      }
      const dependencies = this.prepare(this.definitions.get(name)!.program?.ast as ASTNode | undefined, seen);
      const result = dependencies ? dependencies.then(() => this.evaluateVariable(name)) : this.evaluateVariable(name);
      this.variableResults.set(name, result);
      if (result instanceof Promise) pending.push(result.then((r) => this.variableResults.set(name, r)));
    }
    return pending.length ? Promise.all(pending) : undefined;
  }

  /** A JSON value's shape as a schema (for sizes in the cost model), noting the sizes met. */
  private shape(v: JsonValue): Typed {
    const walk = (x: JsonValue): Schema => {
      const note = (s: Schema, n: number) => (this.sizes.set(s, Math.max(this.sizes.get(s) ?? 0, n)), s);
      if (typeof x === 'string') return note({ type: 'string' }, x.length);
      if (Array.isArray(x)) {
        // The items' schema is the first item's (the others' shapes were never reachable from it).
        const items = x.length ? walk(x[0]!) : undefined;
        return note({ type: 'array', items }, x.length);
      }
      if (isJsonObject(x)) {
        // A property's shape is worked out when the cost model first selects it: one proxy per
        // object reached, not a getter defined per key (most keys are never selected).
        const shapes = new Map<string, Schema>();
        const shapeOf = (k: string | symbol): Schema | undefined => {
          if (typeof k !== 'string' || !Object.hasOwn(x, k)) return undefined;
          let child = shapes.get(k);
          if (!child) shapes.set(k, (child = walk(x[k]!)));
          return child;
        };
        const properties = new Proxy({} as Record<string, Schema>, {
          get: (_target, k) => shapeOf(k),
          has: (_target, k) => typeof k === 'string' && Object.hasOwn(x, k),
          ownKeys: () => Object.keys(x),
          getOwnPropertyDescriptor: (_target, k) => {
            const child = shapeOf(k);
            return child ? { value: child, enumerable: true, configurable: true, writable: true } : undefined;
          },
        });
        return note({ type: 'object', properties }, Object.keys(x).length);
      }
      return note({}, 1);
    };
    const schema = walk(v);
    return { schema, size: this.sizes.get(schema) ?? 1 };
  }

  /** Runs an expression within the per-call limit and the remaining budget. */
  run(compiled: CompiledExpression): EvaluationResult | Promise<EvaluationResult> {
    if (compiled.error !== undefined) return { error: `compilation error: ${compiled.error}` };
    const ready = this.prepare(compiled.program!.ast as ASTNode);
    return ready ? ready.then(() => this.runNow(compiled)) : this.runNow(compiled);
  }

  /**
   * The expression's cost on this request's inputs. Most admission expressions (field selections,
   * `size()`, comparisons with literals) cost the same whatever the input: the first walk that
   * finds no size in the cost keeps the figure, and later requests skip the walk and the shapes.
   */
  private costOf(compiled: CompiledExpression): number {
    const kept = sizeIndependentCosts.get(compiled);
    if (kept !== undefined) return kept;
    const recorder: SizeOracle = { size: this.oracle.size, sizeDependent: false };
    const { cost } = estimate(compiled.program!.ast as ASTNode, this.scope, recorder);
    if (!recorder.sizeDependent) sizeIndependentCosts.set(compiled, cost);
    return cost;
  }

  private runNow(compiled: CompiledExpression): EvaluationResult | Promise<EvaluationResult> {
    if (compiled.error !== undefined) return { error: `compilation error: ${compiled.error}` };
    const program = compiled.program!;
    // cel-go stops an expression when its cost passes the per-call limit, having spent that much.
    const cost = Math.min(this.costOf(compiled), PER_CALL_LIMIT + 1);
    if (cost > this.budget) throw new CostBudgetExceeded();
    this.budget -= cost;
    const failed = (error: unknown): EvaluationResult => {
      if (error instanceof CostBudgetExceeded || (error as Error)?.message?.includes(BUDGET_TEXT)) throw new CostBudgetExceeded();
      return { error: `expression '${compiled.source}' resulted in error: ${causeOf(error)}` };
    };
    if (cost > PER_CALL_LIMIT) return failed(new Error('operation cancelled: actual cost limit exceeded'));
    try {
      const value = program(this.values);
      if (value instanceof Promise) return value.then((v) => ({ value: v }), failed);
      return { value };
    } catch (error) {
      return failed(error);
    }
  }
}

/** The names `variables.<name>` selects in an expression. */
function referencedVariables(node: ASTNode): string[] {
  const out: string[] = [];
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(visit);
    if (!n || typeof n !== 'object' || !('op' in n)) return;
    const x = n as ASTNode;
    if ((x.op === '.' || x.op === '.?') && Array.isArray(x.args)) {
      const [operand, key] = x.args as [ASTNode, string];
      if (operand?.op === 'id' && operand.args === 'variables' && typeof key === 'string') out.push(key);
    }
    visit(x.args);
  };
  visit(node);
  return out;
}

/** The first line of a CEL error, worded as cel-go's (`no such key: foo`). */
function causeOf(error: unknown): string {
  const text = ((error as Error)?.message ?? String(error)).split('\n')[0]!;
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** A CEL result as JSON (ints back to numbers), for mutations. */
export function celToJson(value: unknown): JsonValue {
  return plain(value);
}
