/**
 * Checks an object against an OpenAPI schema the way upstream's decoders and validation see it:
 * - type errors as Go's JSON decoder words them (`json: cannot unmarshal string into Go struct field
 *   DeploymentSpec.spec.replicas of type int32`), the first one only, as the decoder returns;
 * - unknown fields (`spec.template.spec.containers[0].foo`), which upstream's strict decoder reports
 *   (fieldValidation Strict/Warn), except below `x-kubernetes-preserve-unknown-fields`;
 * - required fields missing (`spec.containers: Required value`), as FieldErrors for a 422.
 *
 * Hand-written rather than a JSON Schema validator (ajv): what clients see are upstream's texts and
 * field paths, the Go type names in them, and the x-kubernetes-* semantics (int-or-string,
 * preserve-unknown-fields, embedded resources), none of which a JSON Schema library produces; the
 * walk is one pass over the object. Pure.
 */
import { field, type FieldError } from '../status.js';
import { refName, type Schema } from './definitions.js';

/** A schema to validate against: its root and how `$ref`s resolve (none for CRD structural schemas). */
export interface ObjectSchema {
  root: Schema;
  resolve?: (name: string) => Schema | undefined;
  /** Resolved `$ref`s by the referring schema object, kept across walks (a provider shares one per definition set). */
  memo?: Map<Schema, { schema: Schema; definition: string }>;
  /** The definition name of the root (Go type names in error texts); empty for custom resources. */
  rootName?: string;
}

export interface SchemaFindings {
  /** The first type mismatch, in Go's decoder wording (a 400), if any. */
  typeError?: string;
  /** Unknown field paths, in walk order. */
  unknown: string[];
  /** Required fields missing (and, for custom resources, values of the wrong type): 422 causes. */
  required: FieldError[];
  /** Object keys the walk visited (a body's key count, when the walk reached every object of it). */
  keys: number;
}

export interface ValidateOptions {
  /** Walk map keys sorted (a re-encoded object, as upstream sees a patched object), else in insertion order. */
  sorted?: boolean;
  /** Check required fields (creates and updates of whole objects). */
  required?: boolean;
  /** Check value types (default true; custom resources leave it to their CRD's validator). */
  types?: boolean;
}

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

interface Walk {
  schema: ObjectSchema;
  options: ValidateOptions;
  findings: SchemaFindings;
}

export function validateAgainstSchema(object: unknown, schema: ObjectSchema, options: ValidateOptions = {}): SchemaFindings {
  const walk: Walk = { schema, options, findings: { unknown: [], required: [], keys: 0 } };
  visit(walk, object, schema.root, schema.rootName ?? '', undefined, goStructName(schema.rootName ?? ''));
  return walk.findings;
}

/** A field path as a chain, turned into text only for findings (most writes have none). */
interface Path {
  parent: Path | undefined;
  key: string | number;
}

/** `spec.containers[0].name`, as clients see field paths. */
function pathText(path: Path | undefined): string {
  let text = '';
  for (let p = path; p; p = p.parent) text = typeof p.key === 'number' ? `[${p.key}]${text}` : p.parent ? `.${p.key}${text}` : `${p.key}${text}`;
  return text.startsWith('.') ? text.slice(1) : text;
}

/** `spec.containers.name`, as Go's decoder names a field (no indices). */
function goPathText(path: Path | undefined): string {
  const keys: string[] = [];
  for (let p = path; p; p = p.parent) if (typeof p.key === 'string') keys.unshift(p.key);
  return keys.join('.');
}

function goStructName(definition: string): string {
  return definition.slice(definition.lastIndexOf('.') + 1);
}

/** The Go type upstream names for a schema (`int32`, `v1.PodSpec`, `[]v1.Container`, `map[string]string`). */
function goType(walk: Walk, schema: Schema, definition: string): string {
  if (definition) {
    const parts = definition.split('.');
    if (definition === QUANTITY) return 'resource.Quantity';
    if (definition === INT_OR_STRING) return 'intstr.IntOrString';
    return `${parts[parts.length - 2] ?? ''}.${parts[parts.length - 1] ?? ''}`;
  }
  switch (schema.type) {
    case 'string': return schema.format === 'byte' ? '[]uint8' : 'string';
    case 'integer': return schema.format === 'int32' ? 'int32' : 'int64';
    case 'number': return 'float64';
    case 'boolean': return 'bool';
    case 'array': {
      const items = schema.items ? deref(walk, schema.items) : undefined;
      return `[]${items ? goType(walk, items.schema, items.definition) : 'interface {}'}`;
    }
    case 'object': {
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        const values = deref(walk, schema.additionalProperties);
        return `map[string]${goType(walk, values.schema, values.definition)}`;
      }
      return 'map[string]interface {}';
    }
  }
  return 'interface {}';
}

const NO_REF = { definition: '' };

function deref(walk: Walk, schema: Schema): { schema: Schema; definition: string } {
  if (!schema.$ref && !schema.allOf) return { schema, definition: NO_REF.definition };
  const memo = walk.schema.memo;
  const known = memo?.get(schema);
  if (known) return known;
  const found = resolveRefs(walk, schema);
  memo?.set(schema, found);
  return found;
}

function resolveRefs(walk: Walk, schema: Schema): { schema: Schema; definition: string } {
  let current = schema;
  let definition = '';
  for (let i = 0; i < 8; i++) {
    const ref = current.$ref ?? (current.allOf?.length === 1 ? current.allOf[0]!.$ref : undefined);
    if (!ref || !walk.schema.resolve) break;
    definition = refName(ref);
    const next = walk.schema.resolve(definition);
    if (!next) break;
    current = next;
  }
  return { schema: current, definition };
}

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}

/** OpenAPI's name of a JSON value's type, as the structural-schema validator of custom resources prints it. */
function openApiKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMismatch(walk: Walk, value: unknown, schema: Schema, definition: string, at: Path | undefined, struct: string): void {
  if (walk.options.types === false) return;
  if (!walk.schema.rootName) {
    const path = pathText(at);
    // Custom resources: kube-openapi's validator, a 422 cause per field.
    const kind = openApiKind(value);
    walk.findings.required.push(field.invalid(path, kind, `${path} in body must be of type ${schema.type ?? 'object'}: ${JSON.stringify(kind)}`));
    return;
  }
  if (walk.findings.typeError) return;
  const goPath = goPathText(at);
  const shown = typeof value === 'number' && (schema.type === 'integer') ? `number ${value}` : jsonKind(value);
  const where = goPath ? ` into Go struct field ${struct}.${goPath}` : ' into Go value';
  walk.findings.typeError = `json: cannot unmarshal ${shown}${where} of type ${goType(walk, schema, definition)}`;
}

/**
 * `path` is the field path clients see (`spec.containers[0].name`); `goPath` the decoder's (no
 * indices: `spec.containers.name`); `struct` the Go struct holding the current field.
 */
function visit(walk: Walk, value: unknown, raw: Schema, rawDefinition: string, path: Path | undefined, struct: string): void {
  if (value === null || value === undefined) return;
  const { schema, definition: refDefinition } = deref(walk, raw);
  const definition = refDefinition || rawDefinition;
  if (definition === QUANTITY) {
    if (typeof value !== 'string' && typeof value !== 'number') typeMismatch(walk, value, schema, definition, path, struct);
    return;
  }
  if (definition === INT_OR_STRING || schema['x-kubernetes-int-or-string'] || schema.format === 'int-or-string') {
    if (typeof value !== 'string' && !(typeof value === 'number' && Number.isInteger(value))) typeMismatch(walk, value, schema, definition, path, struct);
    return;
  }
  switch (schema.type) {
    case 'string':
      if (typeof value !== 'string') typeMismatch(walk, value, schema, definition, path, struct);
      return;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) typeMismatch(walk, value, schema, definition, path, struct);
      return;
    case 'number':
      if (typeof value !== 'number') typeMismatch(walk, value, schema, definition, path, struct);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') typeMismatch(walk, value, schema, definition, path, struct);
      return;
    case 'array': {
      if (!Array.isArray(value)) return typeMismatch(walk, value, schema, definition, path, struct);
      if (!schema.items) return;
      for (let i = 0; i < value.length; i++) visit(walk, value[i], schema.items, '', { parent: path, key: i }, struct);
      return;
    }
    case 'object':
    case undefined: {
      if (schema.type === undefined && !schema.properties) return;
      if (typeof value !== 'object' || Array.isArray(value)) return typeMismatch(walk, value, schema, definition, path, struct);
      visitObject(walk, value as Record<string, unknown>, schema, definition, path, struct);
    }
  }
}

function visitObject(walk: Walk, value: Record<string, unknown>, schema: Schema, definition: string, path: Path | undefined, struct: string): void {
  const properties = schema.properties;
  const additional = schema.additionalProperties;
  const keys = walk.options.sorted ? Object.keys(value).sort() : Object.keys(value);
  walk.findings.keys += keys.length;
  const childStruct = definition ? goStructName(definition) : struct;
  if (!properties) {
    // A map (additionalProperties) or a free-form object.
    if (additional && typeof additional === 'object') {
      for (const key of keys) visit(walk, value[key], additional, '', { parent: path, key }, struct);
    }
    return;
  }
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  for (const key of keys) {
    const property = properties[key];
    if (property) visit(walk, value[key], property, '', { parent: path, key }, childStruct);
    else if (additional && typeof additional === 'object') visit(walk, value[key], additional, '', { parent: path, key }, childStruct);
    else if (!preserve && additional !== true) walk.findings.unknown.push(pathText({ parent: path, key }));
  }
  if (walk.options.required && schema.required) {
    for (const name of schema.required) if (value[name] === undefined) walk.findings.required.push(field.required(pathText({ parent: path, key: name }), ''));
  }
}
