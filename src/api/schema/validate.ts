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
  /** The definition name of the root (Go type names in error texts); empty for custom resources. */
  rootName?: string;
}

export interface SchemaFindings {
  /** The first type mismatch, in Go's decoder wording (a 400), if any. */
  typeError?: string;
  /** Unknown field paths, in walk order. */
  unknown: string[];
  /** Required fields missing. */
  required: FieldError[];
}

export interface ValidateOptions {
  /** Walk map keys sorted (a re-encoded object, as upstream sees a patched object), else in insertion order. */
  sorted?: boolean;
  /** Check required fields (creates and updates of whole objects). */
  required?: boolean;
}

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

interface Walk {
  schema: ObjectSchema;
  options: ValidateOptions;
  findings: SchemaFindings;
}

export function validateAgainstSchema(object: unknown, schema: ObjectSchema, options: ValidateOptions = {}): SchemaFindings {
  const walk: Walk = { schema, options, findings: { unknown: [], required: [] } };
  visit(walk, object, schema.root, schema.rootName ?? '', '', '', goStructName(schema.rootName ?? ''));
  return walk.findings;
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

function deref(walk: Walk, schema: Schema): { schema: Schema; definition: string } {
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

function typeMismatch(walk: Walk, value: unknown, schema: Schema, definition: string, goPath: string, struct: string): void {
  if (walk.findings.typeError) return;
  const shown = typeof value === 'number' && (schema.type === 'integer') ? `number ${value}` : jsonKind(value);
  const where = goPath ? ` into Go struct field ${struct}.${goPath}` : ' into Go value';
  walk.findings.typeError = `json: cannot unmarshal ${shown}${where} of type ${goType(walk, schema, definition)}`;
}

/**
 * `path` is the field path clients see (`spec.containers[0].name`); `goPath` the decoder's (no
 * indices: `spec.containers.name`); `struct` the Go struct holding the current field.
 */
function visit(walk: Walk, value: unknown, raw: Schema, rawDefinition: string, path: string, goPath: string, struct: string): void {
  if (value === null || value === undefined) return;
  const { schema, definition: refDefinition } = deref(walk, raw);
  const definition = refDefinition || rawDefinition;
  if (definition === QUANTITY) {
    if (typeof value !== 'string' && typeof value !== 'number') typeMismatch(walk, value, schema, definition, goPath, struct);
    return;
  }
  if (definition === INT_OR_STRING || schema['x-kubernetes-int-or-string'] || schema.format === 'int-or-string') {
    if (typeof value !== 'string' && !(typeof value === 'number' && Number.isInteger(value))) typeMismatch(walk, value, schema, definition, goPath, struct);
    return;
  }
  switch (schema.type) {
    case 'string':
      if (typeof value !== 'string') typeMismatch(walk, value, schema, definition, goPath, struct);
      return;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) typeMismatch(walk, value, schema, definition, goPath, struct);
      return;
    case 'number':
      if (typeof value !== 'number') typeMismatch(walk, value, schema, definition, goPath, struct);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') typeMismatch(walk, value, schema, definition, goPath, struct);
      return;
    case 'array': {
      if (!Array.isArray(value)) return typeMismatch(walk, value, schema, definition, goPath, struct);
      if (!schema.items) return;
      for (let i = 0; i < value.length; i++) visit(walk, value[i], schema.items, '', `${path}[${i}]`, goPath, struct);
      return;
    }
    case 'object':
    case undefined: {
      if (schema.type === undefined && !schema.properties) return;
      if (typeof value !== 'object' || Array.isArray(value)) return typeMismatch(walk, value, schema, definition, goPath, struct);
      visitObject(walk, value as Record<string, unknown>, schema, definition, path, goPath, struct);
    }
  }
}

function visitObject(walk: Walk, value: Record<string, unknown>, schema: Schema, definition: string, path: string, goPath: string, struct: string): void {
  const properties = schema.properties;
  const additional = schema.additionalProperties;
  const keys = walk.options.sorted ? Object.keys(value).sort() : Object.keys(value);
  const childStruct = definition ? goStructName(definition) : struct;
  if (!properties) {
    // A map (additionalProperties) or a free-form object.
    if (additional && typeof additional === 'object') {
      for (const key of keys) visit(walk, value[key], additional, '', join(path, key), join(goPath, key), struct);
    }
    return;
  }
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  for (const key of keys) {
    const property = properties[key];
    if (property) visit(walk, value[key], property, '', join(path, key), join(goPath, key), childStruct);
    else if (additional && typeof additional === 'object') visit(walk, value[key], additional, '', join(path, key), join(goPath, key), childStruct);
    else if (!preserve && additional !== true) walk.findings.unknown.push(join(path, key));
  }
  if (walk.options.required && schema.required) {
    for (const name of schema.required) if (value[name] === undefined) walk.findings.required.push(field.required(join(path, name), ''));
  }
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
