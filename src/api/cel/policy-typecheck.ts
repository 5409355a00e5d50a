/**
 * The type checking of a ValidatingAdmissionPolicy for its status (upstream's
 * validating/typechecking.go), which the controller manager's status controller writes.
 *
 * The check: for each kind the policy's resourceRules name exactly (no wildcards), the field
 * selections on `object` and `oldObject` are followed through that kind's OpenAPI schema, and a
 * field the schema does not declare is a warning worded as cel-go's checker
 * (`apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'`). Expressions do
 * not fail for it at run time (they see unstructured objects, as upstream).
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import { compileAdmissionExpression } from './admission.js';
import { builtinResources } from '../resources.js';
import { builtinSchemas, gvkKey, refName, type Schema } from '../schema/definitions.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../patch/types.js';

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

const objects = (v: JsonValue | undefined): JsonObject[] => (Array.isArray(v) ? v.filter(isJsonObject) : []) as JsonObject[];
const strings = (v: JsonValue | undefined): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The kinds named exactly by the policy's resource rules, with their schemas. */
function checkedKinds(policy: JsonObject): Array<{ gvk: string; schema: Schema }> {
  const spec = isJsonObject(policy.spec) ? policy.spec : {};
  const constraints = isJsonObject(spec.matchConstraints) ? spec.matchConstraints : {};
  const out: Array<{ gvk: string; schema: Schema }> = [];
  const { definitions, byGvk } = builtinSchemas();
  for (const rule of objects(constraints.resourceRules)) {
    for (const group of strings(rule.apiGroups)) {
      for (const version of strings(rule.apiVersions)) {
        for (const resource of strings(rule.resources)) {
          if ([group, version, resource].some((x) => x.includes('*')) || resource.includes('/')) continue;
          const info = builtinResources().find((r) => r.group === group && r.version === version && r.plural === resource);
          const name = info && byGvk.get(gvkKey(group, version, info.kind));
          const schema = name ? definitions[name] : undefined;
          if (!info || !schema) continue;
          const gvk = `${group ? `${group}/` : ''}${version}, Kind=${info.kind}`;
          if (!out.some((k) => k.gvk === gvk)) out.push({ gvk, schema });
        }
      }
    }
  }
  return out;
}

function resolve(schema: Schema | undefined): Schema | undefined {
  let s = schema;
  for (let i = 0; s?.$ref && i < 8; i++) s = builtinSchemas().definitions[refName(s.$ref)];
  if (s?.allOf?.length === 1 && !s.properties) return resolve(s.allOf[0]);
  return s;
}

/** Field selections `object.a.b` / `oldObject.a.b` of an expression, with where each field name starts. */
function selections(node: ASTNode, source: string): Array<{ path: string[]; at: number[] }> {
  const out: Array<{ path: string[]; at: number[] }> = [];
  const chain = (n: ASTNode): { root: string; path: string[] } | undefined => {
    if (n.op === 'id') return { root: n.args as string, path: [] };
    if (n.op === '.' || n.op === '.?') {
      const [operand, key] = n.args as [ASTNode, string];
      const inner = chain(operand);
      return inner && { root: inner.root, path: [...inner.path, key] };
    }
    return undefined;
  };
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(visit);
    if (!n || typeof n !== 'object' || !('op' in n)) return;
    const node = n as ASTNode;
    if (node.op === '.' || node.op === '.?') {
      const c = chain(node);
      if (c && (c.root === 'object' || c.root === 'oldObject')) {
        // Locate each selected field in the source, in order, for the error's column.
        const at: number[] = [];
        let from = (node as { start?: number }).start ?? 0;
        for (const key of c.path) {
          const found = source.indexOf(key, source.indexOf('.', from));
          at.push(found < 0 ? from : found);
          from = found < 0 ? from : found + key.length;
        }
        out.push({ path: c.path, at });
        return;
      }
    }
    visit(node.args);
  };
  visit(node);
  return out;
}

/** The first undeclared field along a selection, if any. */
function undeclared(schema: Schema, path: string[]): number | undefined {
  let s: Schema | undefined = resolve(schema);
  for (let i = 0; i < path.length; i++) {
    if (!s || s['x-kubernetes-preserve-unknown-fields'] || s['x-kubernetes-int-or-string']) return undefined;
    const key = path[i]!;
    if (s.properties) {
      if (!(key in s.properties)) return s.additionalProperties ? undefined : i;
      s = resolve(s.properties[key]);
    } else if (typeof s.additionalProperties === 'object') s = resolve(s.additionalProperties);
    else return s.type === 'object' && !s.additionalProperties && s.type !== undefined ? i : undefined;
  }
  return undefined;
}

function lineAndColumn(source: string, pos: number): { line: number; column: number } {
  const before = source.slice(0, pos);
  return { line: before.split('\n').length, column: pos - before.lastIndexOf('\n') - 1 };
}

/** The type-checking warnings of a ValidatingAdmissionPolicy. */
export function typeCheckPolicy(policy: JsonObject): ExpressionWarning[] {
  const kinds = checkedKinds(policy);
  if (kinds.length === 0) return [];
  const spec = isJsonObject(policy.spec) ? policy.spec : {};
  const d = { params: isJsonObject(spec.paramKind), authorizer: true, variables: true };
  const expressions: Array<{ fieldRef: string; source: string }> = [];
  objects(spec.validations).forEach((v, i) => {
    if (typeof v.expression === 'string') expressions.push({ fieldRef: `spec.validations[${i}].expression`, source: v.expression });
    if (typeof v.messageExpression === 'string') expressions.push({ fieldRef: `spec.validations[${i}].messageExpression`, source: v.messageExpression });
  });
  objects(spec.auditAnnotations).forEach((a, i) => {
    if (typeof a.valueExpression === 'string') expressions.push({ fieldRef: `spec.auditAnnotations[${i}].valueExpression`, source: a.valueExpression });
  });
  objects(spec.matchConditions).forEach((c, i) => {
    if (typeof c.expression === 'string') expressions.push({ fieldRef: `spec.matchConditions[${i}].expression`, source: c.expression });
  });
  objects(spec.variables).forEach((v, i) => {
    if (typeof v.expression === 'string') expressions.push({ fieldRef: `spec.variables[${i}].expression`, source: v.expression });
  });
  const warnings: ExpressionWarning[] = [];
  for (const { fieldRef, source } of expressions) {
    const compiled = compileAdmissionExpression(source, d);
    if (!compiled.program) continue;
    const problems: string[] = [];
    for (const { gvk, schema } of kinds) {
      for (const { path, at } of selections(compiled.program.ast as ASTNode, source)) {
        const i = undeclared(schema, path);
        if (i === undefined) continue;
        const { line, column } = lineAndColumn(source, Math.max(0, at[i]! - 1));
        const lineText = source.split('\n')[line - 1] ?? '';
        problems.push(`${gvk}: ERROR: <input>:${line}:${column + 1}: undefined field '${path[i]}'\n | ${lineText}\n | ${'.'.repeat(column)}^`);
      }
    }
    if (problems.length) warnings.push({ fieldRef, warning: problems.join('\n') });
  }
  return warnings;
}
