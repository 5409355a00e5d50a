/**
 * x-kubernetes-validations: compiling a CRD version's CEL rules (type-checked against the
 * schema, cost-estimated against upstream's limits) and running them on custom objects, with
 * upstream's semantics: `self` is the value at the rule's node, `oldSelf` the stored value at
 * the same place on updates (transition rules are skipped on create unless optionalOldSelf),
 * message / messageExpression / reason / fieldPath shape the error, and a per-request cost
 * budget stops runaway rules.
 */
import { Optional, type ASTNode } from '@marcbachmann/cel-js';
import { field, type FieldError } from '../status.js';
import { isJsonObject, jsonEqual, type JsonValue } from '../../patch/types.js';
import type { Schema, ValidationRule } from '../structural/schema.js';
import {
  costErrorMessage, estimate, PER_CALL_LIMIT, RUNTIME_COST_BUDGET, schemaSize, STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT,
  staticSizes, type SizeOracle, type Typed,
} from './cost.js';
import { kubernetesEnvironment } from './library.js';

type Env = ReturnType<typeof kubernetesEnvironment>;
type Program = ReturnType<Env['parse']>;

interface CompiledRule {
  rule: ValidationRule;
  program: Program;
  message?: Program;
  usesOldSelf: boolean;
}

interface RuleNode {
  schema: Schema;
  rules: CompiledRule[];
}

const REASONS = ['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'];

/** Upstream's rendering of a compile error: `compilation failed: ERROR: <input>:1:6: ...`. */
export function compileMessage(error: unknown, source: string): string {
  const e = error as { summary?: string; message?: string; node?: { pos?: number; start?: number } };
  const summary = e.summary ?? (e.message ?? String(error)).split('\n')[0];
  const pos = e.node?.start ?? e.node?.pos ?? 0;
  const before = source.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return `compilation failed: ERROR: <input>:${line}:${column}: ${summary}`;
}

function usesIdentifier(node: ASTNode, name: string): boolean {
  if (node.op === 'id') return node.args === name;
  const visit = (v: unknown): boolean => {
    if (Array.isArray(v)) return v.some(visit);
    return !!v && typeof v === 'object' && 'op' in (v as object) && usesIdentifier(v as ASTNode, name);
  };
  return visit(node.args);
}

/** Schema nodes as CEL types: object schemas with properties become declared types (fields type-checked). */
class CelTypes {
  private readonly classes = new Map<Schema, { name: string; ctor: new (o: Record<string, unknown>) => object }>();
  private counter = 0;

  constructor(private readonly env: Env) {}

  private isDyn(s: Schema | undefined): boolean {
    return !s || !s.type || s.nullable === true || s['x-kubernetes-int-or-string'] === true ||
      s['x-kubernetes-preserve-unknown-fields'] === true || s['x-kubernetes-embedded-resource'] === true;
  }

  typeOf(s: Schema | undefined, root = false): string {
    if (this.isDyn(s)) return 'dyn';
    switch (s!.type) {
      // Upstream types date-time strings as CEL timestamps.
      case 'string': return s!.format === 'date-time' ? 'google.protobuf.Timestamp' : 'string';
      case 'integer': return 'int';
      case 'number': return 'double';
      case 'boolean': return 'bool';
      case 'array': return `list<${this.typeOf(s!.items)}>`;
      case 'object': {
        if (s!.properties && Object.keys(s!.properties).length) return this.declare(s!, root);
        if (typeof s!.additionalProperties === 'object') return `map<string, ${this.typeOf(s!.additionalProperties)}>`;
        return 'dyn';
      }
      default: return 'dyn';
    }
  }

  private declare(s: Schema, root: boolean): string {
    const known = this.classes.get(s);
    if (known) return known.name;
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(s.properties ?? {})) fields[k] = this.typeOf(v);
    if (root) Object.assign(fields, { apiVersion: 'string', kind: 'string', metadata: 'dyn' });
    const name = `Object${this.counter++}`;
    const ctor = class {
      constructor(o: Record<string, unknown>) {
        Object.assign(this, o);
      }
    };
    Object.defineProperty(ctor, 'name', { value: name });
    this.env.registerType(name, { ctor, fields });
    this.env.registerOperator(`${name} == ${name}`, (a: object, b: object) => jsonEqual(plain(a), plain(b)));
    this.classes.set(s, { name, ctor });
    return name;
  }

  /** A JSON value as the CEL value of its schema's type (integers as BigInt, declared objects as instances). */
  value(v: JsonValue | undefined, s: Schema | undefined): unknown {
    if (v === undefined || v === null) return null;
    if (this.isDyn(s)) return dynValue(v);
    if (s!.type === 'integer' && typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
    if (s!.type === 'string' && s!.format === 'date-time' && typeof v === 'string') return new Date(v);
    if (Array.isArray(v)) return v.map((item) => this.value(item, s!.items));
    if (isJsonObject(v)) {
      const declared = this.classes.get(s!);
      const out: Record<string, unknown> = {};
      for (const [k, child] of Object.entries(v)) {
        const childSchema = s!.properties?.[k] ?? (typeof s!.additionalProperties === 'object' ? s!.additionalProperties : undefined);
        if (declared && !s!.properties?.[k] && !['apiVersion', 'kind', 'metadata'].includes(k)) continue;
        out[k] = childSchema ? this.value(child, childSchema) : dynValue(child);
      }
      return declared ? new declared.ctor(out) : out;
    }
    return v;
  }
}

/** A JSON value as an untyped CEL value (integers as BigInt, as CEL's int). */
export function dynValue(v: JsonValue): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(dynValue);
  if (isJsonObject(v)) return Object.fromEntries(Object.entries(v).map(([k, c]) => [k, dynValue(c)]));
  return v;
}

/**
 * dynValue converted on demand: scalars at once, nested objects when an expression first selects
 * them (an accessor that then becomes the converted value). An admission policy reading
 * `object.spec.replicas` converts three levels of the object, not all of it (upstream's CEL reads
 * the Go object field by field the same way). Arrays convert their items' first level.
 */
export function lazyDynValue(v: JsonValue): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(lazyDynValue);
  if (!isJsonObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, c] of Object.entries(v)) {
    if (c === null || typeof c !== 'object') {
      out[k] = lazyDynValue(c);
      continue;
    }
    Object.defineProperty(out, k, {
      enumerable: true,
      configurable: true,
      get() {
        const value = lazyDynValue(c);
        Object.defineProperty(out, k, {value, enumerable: true, configurable: true, writable: true});
        return value;
      },
    });
  }
  return out;
}

/** CEL values back to JSON (for equality of declared objects, and results of admission policies). */
export function plain(v: unknown): JsonValue {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, c]) => [k, plain(c)]));
  return v as JsonValue;
}

/** The schema's description of a value's type in messages (`"object"`, `"string"`). */
const typeText = (s: Schema) => (s['x-kubernetes-int-or-string'] ? 'integer,string' : s.type ?? '');

/** Appends a rule's fieldPath (`.spec.replicas`, `['key']`, `[0]`) to a data path. */
function joinFieldPath(path: string, fieldPath: string | undefined): string {
  if (!fieldPath) return path;
  const rest = fieldPath.replace(/\['([^']*)'\]/g, '.$1').replace(/^\./, '');
  return path ? `${path}.${rest}` : rest;
}

export interface CompiledValidator {
  /** Problems found at CRD creation (compile errors, costs), with CRD field paths. */
  errors: FieldError[];
  /** Whether any rule exists (so callers can skip the walk). */
  hasRules: boolean;
  /** Runs the rules on an object (and its stored version on update). */
  validate(object: JsonValue, old?: JsonValue): FieldError[];
}

/**
 * Compiles every x-kubernetes-validations rule of a schema. `path` is the CRD field path of the
 * schema (`spec.versions[0].schema.openAPIV3Schema`), used in the compile errors.
 */
export function compileValidator(schema: Schema, path: string): CompiledValidator {
  const errors: FieldError[] = [];
  const base = kubernetesEnvironment();
  const types = new CelTypes(base);
  const nodes = new Map<Schema, RuleNode>();
  // Declare all types first: the environment is frozen once per-node environments clone it.
  // `uncorrelatable`: the path of the list (atomic or set) that old values cannot be matched through.
  const pending: Array<{ schema: Schema; path: string; type: string; cardinality: number; uncorrelatable?: string }> = [];
  const collect = (s: Schema | undefined, p: string, cardinality: number, root: boolean, uncorrelatable?: string): void => {
    if (!s || typeof s !== 'object') return;
    const type = types.typeOf(s, root);
    if (s['x-kubernetes-validations']?.length) pending.push({ schema: s, path: p, type, cardinality, uncorrelatable });
    for (const [k, v] of Object.entries(s.properties ?? {})) collect(v, `${p}.properties[${k}]`, cardinality, false, uncorrelatable);
    if (typeof s.additionalProperties === 'object') collect(s.additionalProperties, `${p}.additionalProperties`, cardinality * schemaSize(s), false, uncorrelatable);
    if (s.items) {
      const correlated = s['x-kubernetes-list-type'] === 'map';
      collect(s.items, `${p}.items`, cardinality * schemaSize(s), false, uncorrelatable ?? (correlated ? undefined : p));
    }
  };
  collect(schema, path, 1, true);

  let total = 0;
  for (const { schema: s, path: p, type, cardinality, uncorrelatable } of pending) {
    const compiled: CompiledRule[] = [];
    s['x-kubernetes-validations']!.forEach((rule, i) => {
      const rulePath = `${p}.x-kubernetes-validations[${i}]`;
      if (typeof rule?.rule !== 'string' || rule.rule.trim() === '') {
        errors.push(field.required(`${rulePath}.rule`));
        return;
      }
      if (rule.reason !== undefined && !REASONS.includes(rule.reason)) errors.push(field.notSupported(`${rulePath}.reason`, rule.reason, REASONS));
      if (rule.message !== undefined && rule.message.trim() === '') errors.push(field.required(`${rulePath}.message`, 'message must be non-empty if specified'));
      if (rule.message !== undefined && /[\r\n]/.test(rule.message)) errors.push(field.invalid(`${rulePath}.message`, rule.message, 'message must not contain line breaks'));
      const env = base.clone();
      env.registerVariable('self', type);
      env.registerVariable('oldSelf', rule.optionalOldSelf ? `optional<${type}>` : type);
      let program: Program;
      try {
        program = env.parse(rule.rule);
        const checked = program.check();
        if (!checked.valid) throw checked.error;
        if (checked.type !== 'bool' && checked.type !== 'dyn') {
          errors.push(field.invalid(`${rulePath}.rule`, rule.rule, 'compilation failed: cel expression must evaluate to a bool'));
          return;
        }
      } catch (error) {
        errors.push(field.invalid(`${rulePath}.rule`, rule.rule, compileMessage(error, rule.rule)));
        return;
      }
      let message: Program | undefined;
      if (rule.messageExpression !== undefined) {
        try {
          message = env.parse(rule.messageExpression);
          const checked = message.check();
          if (!checked.valid) throw checked.error;
          if (checked.type !== 'string' && checked.type !== 'dyn') {
            errors.push(field.invalid(`${rulePath}.messageExpression`, rule.messageExpression, 'must evaluate to a string'));
          }
        } catch (error) {
          errors.push(field.invalid(`${rulePath}.messageExpression`, rule.messageExpression, `messageExpression ${compileMessage(error, rule.messageExpression)}`));
        }
      }
      const usesOldSelf = usesIdentifier(program.ast, 'oldSelf');
      if (usesOldSelf && uncorrelatable) {
        errors.push(field.invalid(`${rulePath}.rule`, rule.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`));
      }
      if (rule.fieldPath !== undefined && !fieldPathValid(s, rule.fieldPath)) {
        errors.push(field.invalid(`${rulePath}.fieldPath`, rule.fieldPath, 'fieldPath must be a valid path: does not refer to a valid field'));
      }
      if (rule.optionalOldSelf && !usesOldSelf) {
        errors.push(field.invalid(`${rulePath}.optionalOldSelf`, true, 'may not be set if oldSelf is not used in rule'));
      }
      const self: Typed = { schema: s, size: schemaSize(s) };
      const cost = estimate(program.ast, new Map([['self', self], ['oldSelf', self]]), staticSizes).cost * cardinality;
      total += cost;
      if (cost > STATIC_ESTIMATED_COST_LIMIT) {
        errors.push(field.forbidden(`${rulePath}.rule`, costErrorMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT)));
      }
      compiled.push({ rule, program, message, usesOldSelf });
    });
    nodes.set(s, { schema: s, rules: compiled });
  }
  if (total > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    errors.push(field.forbidden(path, costErrorMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', total, STATIC_ESTIMATED_CRD_COST_LIMIT)));
  }

  const validate = (object: JsonValue, old?: JsonValue): FieldError[] => {
    const out: FieldError[] = [];
    if (nodes.size === 0) return out;
    const sizes = actualSizes(object, schema);
    let budget = RUNTIME_COST_BUDGET;
    let exhausted = false;
    const runNode = (node: RuleNode, v: JsonValue, o: JsonValue | undefined, p: string, root: boolean): void => {
      const self = types.value(v, node.schema);
      const selfType: Typed = { schema: node.schema, size: sizes.size(node.schema) };
      for (const c of node.rules) {
        if (exhausted) return;
        if (c.usesOldSelf && o === undefined && !c.rule.optionalOldSelf) continue;
        const cost = estimate(c.program.ast, new Map([['self', selfType], ['oldSelf', selfType]]), sizes).cost;
        budget -= cost;
        if (budget < 0) {
          exhausted = true;
          out.push(field.invalid(p, typeText(node.schema), 'validation failed due to running out of cost budget, no further validation rules will be run'));
          return;
        }
        if (cost > PER_CALL_LIMIT) {
          out.push(field.invalid(p, typeText(node.schema), `${ruleText(c.rule)}: operation cancelled: actual cost limit exceeded`));
          continue;
        }
        let oldSelf: unknown = o === undefined ? null : types.value(o, node.schema);
        if (c.rule.optionalOldSelf) oldSelf = o === undefined ? Optional.none() : Optional.of(oldSelf);
        let result: unknown;
        try {
          result = c.program({ self, oldSelf: root || o !== undefined || c.rule.optionalOldSelf ? oldSelf : null });
        } catch (error) {
          const text = ((error as Error).message ?? String(error)).split('\n')[0];
          out.push(field.invalid(p, typeText(node.schema), `${text} evaluating rule: ${c.rule.rule}`));
          continue;
        }
        if (result === true) continue;
        let message = c.rule.message ?? ruleText(c.rule);
        if (c.message) {
          try {
            const m = c.message({ self, oldSelf });
            if (typeof m === 'string' && m.trim() !== '' && !/[\r\n]/.test(m)) message = m;
          } catch {
            // upstream falls back to message (or the rule) when messageExpression fails
          }
        }
        const at = joinFieldPath(p, c.rule.fieldPath);
        switch (c.rule.reason) {
          case 'FieldValueForbidden': out.push(field.forbidden(at, message)); break;
          case 'FieldValueRequired': out.push(field.required(at, message)); break;
          case 'FieldValueDuplicate': out.push({ type: 'FieldValueDuplicate', field: at, value: typeText(node.schema), detail: message }); break;
          default: out.push(field.invalid(at, typeText(node.schema), message));
        }
      }
    };
    const walk = (v: JsonValue | undefined, o: JsonValue | undefined, s: Schema | undefined, p: string, root: boolean): void => {
      if (!s || v === undefined || v === null || exhausted) return;
      const node = nodes.get(s);
      if (node) runNode(node, v, o, p, root);
      if (isJsonObject(v)) {
        for (const [k, child] of Object.entries(v)) {
          const cs = s.properties?.[k] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
          if (root && (k === 'metadata' || k === 'apiVersion' || k === 'kind')) continue;
          walk(child, isJsonObject(o) ? o[k] : undefined, cs, p ? `${p}.${k}` : k, false);
        }
      } else if (Array.isArray(v) && s.items) {
        const keys = s['x-kubernetes-list-type'] === 'map' ? s['x-kubernetes-list-map-keys'] ?? [] : undefined;
        v.forEach((item, i) => {
          // Items are correlated with the old list only by their map keys (upstream's correlation).
          const oldItem = keys && Array.isArray(o) && isJsonObject(item)
            ? o.find((x) => isJsonObject(x) && keys.every((k) => jsonEqual(x[k], item[k])))
            : undefined;
          walk(item, oldItem, s.items, `${p}[${i}]`, false);
        });
      }
    };
    walk(object, old, schema, '', true);
    return out;
  };
  return { errors, hasRules: nodes.size > 0, validate };
}

/** Whether a rule's fieldPath (`.spec.a`, `['b.c']`, `.list[0]`) names a field the schema declares. */
function fieldPathValid(schema: Schema, path: string): boolean {
  const steps = path.match(/\.[A-Za-z_][A-Za-z0-9_-]*|\['[^']*'\]|\[\d+\]/g);
  if (!steps || steps.join('') !== path) return false;
  let s: Schema | undefined = schema;
  for (const step of steps) {
    if (!s) return false;
    if (/^\[\d+\]$/.test(step)) s = s.items;
    else {
      const key = step.startsWith('.') ? step.slice(1) : step.slice(2, -2);
      s = s.properties?.[key] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    }
  }
  return s !== undefined;
}

function ruleText(rule: ValidationRule): string {
  return `failed rule: ${rule.rule}`;
}

/** Sizes as found in an object: per schema node, the largest string, list or map there. */
function actualSizes(object: JsonValue, schema: Schema): SizeOracle {
  const sizes = new Map<Schema, number>();
  const note = (s: Schema, n: number) => sizes.set(s, Math.max(sizes.get(s) ?? 0, n));
  const walk = (v: JsonValue | undefined, s: Schema | undefined): void => {
    if (!s || v === undefined || v === null) return;
    if (typeof v === 'string') note(s, v.length);
    else if (Array.isArray(v)) {
      note(s, v.length);
      for (const item of v) walk(item, s.items);
    } else if (isJsonObject(v)) {
      note(s, Object.keys(v).length);
      for (const [k, c] of Object.entries(v)) walk(c, s.properties?.[k] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined));
    } else note(s, 1);
  };
  walk(object, schema);
  return { size: (s) => (s ? sizes.get(s) ?? 0 : 1) };
}
