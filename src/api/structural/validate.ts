/**
 * Validation of a custom object against its CRD's schema (upstream's kube-openapi validator
 * as apiextensions-apiserver runs it), with upstream's texts: `spec.replicas: Invalid value:
 * "string": spec.replicas in body must be of type integer: "string"`, `Required value`,
 * `Unsupported value`, bounds, lengths, patterns, formats, item counts; plus the structural
 * extensions (int-or-string, embedded resources, list types with unique keys). CEL rules run
 * separately (src/api/cel), as upstream runs them after the OpenAPI validation.
 */
import { isIP } from 'node:net';
import { field, type FieldError } from '../status.js';
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../../patch/types.js';
import type { Schema } from './schema.js';

const typeName = (v: JsonValue): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v === 'object' ? 'object' : typeof v;

function typeMatches(type: string, v: JsonValue): boolean {
  switch (type) {
    case 'object': return isJsonObject(v);
    case 'array': return Array.isArray(v);
    case 'string': return typeof v === 'string';
    case 'integer': return typeof v === 'number' && Number.isInteger(v);
    case 'number': return typeof v === 'number';
    case 'boolean': return typeof v === 'boolean';
    default: return true;
  }
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const FORMATS: Record<string, (s: string) => boolean> = {
  email: (s) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(s),
  hostname: (s) => s.length <= 253 && /^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$/.test(s),
  ipv4: (s) => isIP(s) === 4,
  ipv6: (s) => isIP(s) === 6,
  cidr: (s) => { const [ip, bits, extra] = s.split('/'); const v = isIP(ip ?? ''); return extra === undefined && v > 0 && /^\d+$/.test(bits ?? '') && Number(bits) <= (v === 4 ? 32 : 128); },
  mac: (s) => /^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$/i.test(s),
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID.test(s) && s.replace(/-/g, '')[12] === '3',
  uuid4: (s) => UUID.test(s) && s.replace(/-/g, '')[12] === '4',
  uuid5: (s) => UUID.test(s) && s.replace(/-/g, '')[12] === '5',
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)),
  'date-time': (s) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s.replace(' ', 'T'))),
  duration: (s) => /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w))+$/.test(s) || s === '0',
  byte: (s) => /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0,
  uri: (s) => { try { return new URL(s).protocol.length > 0; } catch { return false; } },
  bsonobjectid: (s) => /^[0-9a-f]{24}$/i.test(s),
};

/** Go's %v of a value in a Duplicate error for a map item. */
function goMap(v: JsonValue): string {
  if (!isJsonObject(v)) return JSON.stringify(v);
  return `map[string]interface {}{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(v[k])}`).join(', ')}}`;
}

function bodyError(path: string, value: JsonValue, text: string): FieldError {
  return field.invalid(path, value, `${path} in body ${text}`);
}

function validateValue(v: JsonValue, s: Schema, path: string, errors: FieldError[]): void {
  if (v === null) {
    if (s.nullable || s['x-kubernetes-preserve-unknown-fields'] && !s.type) return;
    if (s.type || s['x-kubernetes-int-or-string']) {
      errors.push(field.invalid(path, 'null', `${path} in body must be of type ${s['x-kubernetes-int-or-string'] ? 'integer,string' : s.type}: "null"`));
    }
    return;
  }
  if (s['x-kubernetes-int-or-string']) {
    if (!(typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v)))) {
      errors.push(field.invalid(path, typeName(v), `${path} in body must be of type integer,string: ${JSON.stringify(typeName(v))}`));
      return;
    }
  } else if (s.type && !typeMatches(s.type, v)) {
    errors.push(field.invalid(path, typeName(v), `${path} in body must be of type ${s.type}: ${JSON.stringify(typeName(v))}`));
    return;
  }
  if (s.enum && !s.enum.some((e) => jsonEqual(e, v))) {
    errors.push(field.notSupported(path, v, s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))));
  }
  if (typeof v === 'number') {
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)) {
      errors.push(bodyError(path, v, `should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`));
    }
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)) {
      errors.push(bodyError(path, v, `should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`));
    }
    if (s.multipleOf !== undefined && s.multipleOf > 0 && Math.abs(v / s.multipleOf - Math.round(v / s.multipleOf)) > 1e-9) {
      errors.push(bodyError(path, v, `should be a multiple of ${s.multipleOf}`));
    }
  }
  if (typeof v === 'string') {
    const length = [...v].length;
    if (s.maxLength !== undefined && length > s.maxLength) errors.push(field.tooLong(path, `may not be more than ${s.maxLength} bytes`));
    if (s.minLength !== undefined && length < s.minLength) errors.push(bodyError(path, v, `should be at least ${s.minLength} chars long`));
    if (s.pattern) {
      let re: RegExp | undefined;
      try { re = new RegExp(s.pattern, 'u'); } catch { re = undefined; }
      if (re && !re.test(v)) errors.push(bodyError(path, v, `should match '${s.pattern}'`));
    }
    const check = s.format ? FORMATS[s.format] : undefined;
    if (check && !check(v)) errors.push(field.invalid(path, v, `${path} in body must be of type ${s.format}: ${JSON.stringify(v)}`));
  }
  if (Array.isArray(v)) {
    if (s.maxItems !== undefined && v.length > s.maxItems) errors.push({ type: 'FieldValueTooMany', field: path, value: v.length, detail: `must have at most ${s.maxItems} items` });
    if (s.minItems !== undefined && v.length < s.minItems) errors.push(bodyError(path, v.length, `should have at least ${s.minItems} items`));
    validateListType(v, s, path, errors);
    if (s.items) v.forEach((item, i) => validateValue(item, s.items!, `${path}[${i}]`, errors));
  }
  if (isJsonObject(v)) {
    const count = Object.keys(v).length;
    if (s.maxProperties !== undefined && count > s.maxProperties) errors.push({ type: 'FieldValueTooMany', field: path, value: count, detail: `must have at most ${s.maxProperties} items` });
    if (s.minProperties !== undefined && count < s.minProperties) errors.push(bodyError(path, count, `should have at least ${s.minProperties} properties`));
    for (const name of s.required ?? []) if (v[name] === undefined) errors.push(field.required(path ? `${path}.${name}` : name));
    for (const [key, child] of Object.entries(v)) {
      const childSchema = s.properties?.[key] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
      if (childSchema) validateValue(child, childSchema, path ? `${path}.${key}` : key, errors);
    }
    if (s['x-kubernetes-embedded-resource']) {
      if (typeof v.apiVersion !== 'string' || v.apiVersion === '') errors.push(field.required(`${path}.apiVersion`, 'must not be empty'));
      if (typeof v.kind !== 'string' || v.kind === '') errors.push(field.required(`${path}.kind`, 'must not be empty'));
    }
  }
  for (const sub of s.allOf ?? []) validateValue(v, sub, path, errors);
  if (s.anyOf?.length) {
    const ok = s.anyOf.some((sub) => { const e: FieldError[] = []; validateValue(v, sub, path, e); return e.length === 0; });
    if (!ok && !isIntOrStringPattern(s.anyOf, v)) errors.push(bodyError(path, v, 'must validate at least one schema (anyOf)'));
  }
  if (s.oneOf?.length) {
    const matched = s.oneOf.filter((sub) => { const e: FieldError[] = []; validateValue(v, sub, path, e); return e.length === 0; }).length;
    if (matched !== 1) errors.push(bodyError(path, v, 'must validate one and only one schema (oneOf)'));
  }
  if (s.not) {
    const e: FieldError[] = [];
    validateValue(v, s.not, path, e);
    if (e.length === 0) errors.push(bodyError(path, v, 'must not validate the schema (not)'));
  }
}

function isIntOrStringPattern(anyOf: Schema[], v: JsonValue): boolean {
  return anyOf.length === 2 && anyOf[0]!.type === 'integer' && anyOf[1]!.type === 'string' && (typeof v === 'string' || typeof v === 'number');
}

/** Sets have unique items; maps have unique key tuples (upstream's listtype validation). */
function validateListType(v: JsonValue[], s: Schema, path: string, errors: FieldError[]): void {
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set') {
    v.forEach((item, i) => {
      if (v.slice(0, i).some((other) => jsonEqual(other, item))) errors.push(field.duplicate(`${path}[${i}]`, item));
    });
  } else if (listType === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    const seen: JsonObject[] = [];
    v.forEach((item, i) => {
      if (!isJsonObject(item)) return;
      const tuple: JsonObject = {};
      for (const k of keys) {
        const value = item[k] ?? s.items?.properties?.[k]?.default;
        if (value !== undefined) tuple[k] = value;
      }
      if (seen.some((t) => jsonEqual(t, tuple))) errors.push({ type: 'FieldValueDuplicate', field: `${path}[${i}]`, value: goMap(tuple) });
      seen.push(tuple);
    });
  }
}

/** The violations of one value against its schema, reported under `path` (CRD defaults). */
export function validateValueAt(value: JsonValue, schema: Schema, path: string): FieldError[] {
  const errors: FieldError[] = [];
  validateValue(value, schema, path, errors);
  return errors;
}

/**
 * The schema violations of a custom object (root level: apiVersion, kind and metadata are
 * checked by the generic registry, not by the schema, as upstream).
 */
export function validateAgainstSchema(object: JsonObject, schema: Schema): FieldError[] {
  const errors: FieldError[] = [];
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = object;
  const rootSchema: Schema = { ...schema, properties: { ...(schema.properties ?? {}) } };
  for (const name of ['metadata', 'apiVersion', 'kind']) delete rootSchema.properties![name];
  rootSchema.required = (schema.required ?? []).filter((r) => !['metadata', 'apiVersion', 'kind'].includes(r));
  validateValue(rest, rootSchema, '', errors);
  // The root metadata schema may only restrict name and generateName (structural rule); those apply.
  const meta = schema.properties?.metadata?.properties;
  if (meta && isJsonObject(object.metadata)) {
    for (const key of ['name', 'generateName']) {
      const value = object.metadata[key];
      if (meta[key] && value !== undefined) validateValue(value, { ...meta[key], type: meta[key]!.type ?? 'string' }, `metadata.${key}`, errors);
    }
  }
  return errors;
}
