/**
 * The structural schema of a CustomResourceDefinition version (upstream's
 * apiextensions-apiserver/pkg/apiserver/schema): the OpenAPI v3 subset a CRD may declare, and
 * the check that it is structural (every field typed outside of allOf/anyOf/oneOf/not, no
 * additionalProperties at the root, metadata restricted to name and generateName...), with
 * upstream's field paths and messages so `kubectl create -f crd.yaml` fails as it does upstream.
 */
import { field, type FieldError } from '../status.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../patch/types.js';

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface Schema {
  type?: string;
  format?: string;
  title?: string;
  description?: string;
  default?: JsonValue;
  nullable?: boolean;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: JsonValue[];
  maximum?: number;
  minimum?: number;
  exclusiveMaximum?: boolean;
  exclusiveMinimum?: boolean;
  multipleOf?: number;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  maxProperties?: number;
  minProperties?: number;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  not?: Schema;
  externalDocs?: JsonValue;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: ValidationRule[];
}

/** A CRD version's schema as stored (`schema.openAPIV3Schema`), or undefined when absent. */
export function asSchema(value: JsonValue | undefined): Schema | undefined {
  return isJsonObject(value) ? (value as unknown as Schema) : undefined;
}

/** The schema of object members: properties, or additionalProperties, or none. */
export function memberSchema(schema: Schema, key: string): Schema | undefined {
  const p = schema.properties?.[key];
  if (p) return p;
  return typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
}

/** Upstream's field.Path rendering of map keys: `properties[spec]`. */
const key = (path: string, k: string) => `${path}[${k}]`;

type Level = 'root' | 'item' | 'field';

const GENERIC_FORBIDDEN_NESTED: Array<[keyof Schema, string]> = [
  ['title', 'must be empty to be structural'],
  ['description', 'must be empty to be structural'],
];

function isIntOrStringAnyOf(list: Schema[] | undefined): boolean {
  return list?.length === 2 && list[0]!.type === 'integer' && list[1]!.type === 'string' &&
    Object.keys(list[0]!).length === 1 && Object.keys(list[1]!).length === 1;
}

function validateNested(s: Schema | undefined, path: string, lvl: Level, skipAnyOf: boolean): FieldError[] {
  if (!s) return [];
  const errors = validateValueValidation(s, path, lvl, skipAnyOf, false);
  errors.push(...validateNested(s.items, `${path}.items`, lvl, false));
  for (const [k, v] of Object.entries(s.properties ?? {})) errors.push(...validateNested(v, key(`${path}.properties`, k), 'field', false));
  if (s.type) errors.push(field.forbidden(`${path}.type`, 'must be empty to be structural'));
  if (s.additionalProperties !== undefined) errors.push(field.forbidden(`${path}.additionalProperties`, 'must be undefined to be structural'));
  if (s.default !== undefined) errors.push(field.forbidden(`${path}.default`, 'must be undefined to be structural'));
  for (const [k, message] of GENERIC_FORBIDDEN_NESTED) if (s[k]) errors.push(field.forbidden(`${path}.${k}`, message));
  if (s.nullable) errors.push(field.forbidden(`${path}.nullable`, 'must be false to be structural'));
  if (s.externalDocs !== undefined) errors.push(field.forbidden(`${path}.externalDocs`, 'must be undefined to be structural'));
  for (const ext of ['x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string'] as const) {
    if (s[ext]) errors.push(field.forbidden(`${path}.${ext}`, 'must be false to be structural'));
  }
  if (s['x-kubernetes-list-map-keys']?.length) errors.push(field.forbidden(`${path}.x-kubernetes-list-map-keys`, 'must be empty to be structural'));
  for (const ext of ['x-kubernetes-list-type', 'x-kubernetes-map-type'] as const) {
    if (s[ext] !== undefined) errors.push(field.forbidden(`${path}.${ext}`, 'must be undefined to be structural'));
  }
  if (s['x-kubernetes-validations']?.length) errors.push(field.forbidden(`${path}.x-kubernetes-validations`, 'must be empty to be structural'));
  if (s.properties?.metadata) errors.push(field.forbidden(key(`${path}.properties`, 'metadata'), 'must not be specified in a nested context'));
  return errors;
}

function validateValueValidation(s: Schema, path: string, lvl: Level, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean): FieldError[] {
  const errors: FieldError[] = [];
  if (!skipAnyOf) s.anyOf?.forEach((v, i) => errors.push(...validateNested(v, `${path}.anyOf[${i}]`, lvl, false)));
  s.allOf?.forEach((v, i) => errors.push(...validateNested(v, `${path}.allOf[${i}]`, lvl, skipFirstAllOfAnyOf && i === 0)));
  s.oneOf?.forEach((v, i) => errors.push(...validateNested(v, `${path}.oneOf[${i}]`, lvl, false)));
  errors.push(...validateNested(s.not, `${path}.not`, lvl, false));
  if (s.pattern) {
    try {
      new RegExp(s.pattern, 'u');
    } catch (error) {
      errors.push(field.invalid(`${path}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${(error as Error).message}`));
    }
  }
  return errors;
}

function validateInvariants(s: Schema, lvl: Level, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (s.type === 'array' && !s.items) errors.push(field.required(`${path}.items`, 'must be specified'));
  if (s.items) errors.push(...validateInvariants(s.items, 'item', `${path}.items`));
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    if (isJsonObject(v)) errors.push(...validateInvariants(v, 'field', key(`${path}.properties`, k)));
  }
  if (s.additionalProperties !== undefined && s.additionalProperties !== false) {
    if (lvl === 'root') errors.push(field.forbidden(`${path}.additionalProperties`, 'must not be used at the root'));
    if (typeof s.additionalProperties === 'object') errors.push(...validateInvariants(s.additionalProperties, 'field', `${path}.additionalProperties`));
  }
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (intOrString && preserve) errors.push(field.invalid(`${path}.x-kubernetes-preserve-unknown-fields`, true, 'must be false if x-kubernetes-int-or-string is true'));
  if (intOrString && embedded) errors.push(field.invalid(`${path}.x-kubernetes-embedded-resource`, true, 'must be false if x-kubernetes-int-or-string is true'));
  errors.push(...validateValueValidation(s, path, lvl, isIntOrStringAnyOf(s.anyOf), isIntOrStringAnyOf(s.allOf?.[0]?.anyOf)));

  if (embedded && s.type !== 'object') {
    if (!s.type) errors.push(field.required(`${path}.type`, 'must be object if x-kubernetes-embedded-resource is true'));
    else errors.push(field.invalid(`${path}.type`, s.type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (!s.type && !intOrString && !preserve) {
    const where = { root: 'at the root', item: 'for specified array items', field: 'for specified object fields' }[lvl];
    errors.push(field.required(`${path}.type`, `must not be empty ${where}`));
  }
  if (embedded && s.additionalProperties !== undefined) errors.push(field.forbidden(`${path}.additionalProperties`, 'must not be used if x-kubernetes-embedded-resource is set'));
  if (lvl === 'root' && s.type && s.type !== 'object') errors.push(field.invalid(`${path}.type`, s.type, 'must be object at the root'));
  const checkMetadata = lvl === 'root' || embedded;
  for (const name of ['kind', 'apiVersion']) {
    const p = s.properties?.[name];
    if (p && checkMetadata && p.type !== 'string') errors.push(field.invalid(`${key(`${path}.properties`, name)}.type`, p.type ?? '', 'must be string'));
  }
  const metadata = s.properties?.metadata;
  if (metadata) {
    const mpath = key(`${path}.properties`, 'metadata');
    if (checkMetadata && metadata.type !== 'object') errors.push(field.invalid(`${mpath}.type`, metadata.type ?? '', 'must be object'));
    if (lvl === 'root') {
      const rest = Object.keys(metadata).filter((k) => !['type', 'default', 'properties'].includes(k));
      const props = Object.keys(metadata.properties ?? {}).filter((k) => k !== 'name' && k !== 'generateName');
      if (rest.length || props.length) {
        errors.push(field.forbidden(mpath, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
      }
    }
  }
  if (embedded && !preserve && Object.keys(s.properties ?? {}).length === 0) {
    errors.push(field.required(`${path}.properties`, 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
  return errors;
}

/** Every field or array named in a value validation must exist in the structural part too (validateStructuralCompleteness). */
function validateCompleteness(s: Schema, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const check = (nested: Schema | undefined, structural: Schema, npath: string): void => {
    if (!nested) return;
    if (nested.properties) {
      for (const [k, v] of Object.entries(nested.properties)) {
        const target = structural.properties?.[k] ?? (typeof structural.additionalProperties === 'object' ? structural.additionalProperties : undefined);
        if (!target && structural['x-kubernetes-preserve-unknown-fields'] !== true) {
          errors.push(field.required(key(`${npath}.properties`, k), 'must have a corresponding property in the structural schema'));
        } else if (target) check(v, target, key(`${npath}.properties`, k));
      }
    }
    if (nested.items) {
      if (!structural.items) errors.push(field.required(`${npath}.items`, 'must have a corresponding items in the structural schema'));
      else check(nested.items, structural.items, `${npath}.items`);
    }
    nested.allOf?.forEach((v, i) => check(v, structural, `${npath}.allOf[${i}]`));
    nested.anyOf?.forEach((v, i) => check(v, structural, `${npath}.anyOf[${i}]`));
    nested.oneOf?.forEach((v, i) => check(v, structural, `${npath}.oneOf[${i}]`));
    check(nested.not, structural, `${npath}.not`);
  };
  s.allOf?.forEach((v, i) => check(v, s, `${path}.allOf[${i}]`));
  s.anyOf?.forEach((v, i) => check(v, s, `${path}.anyOf[${i}]`));
  s.oneOf?.forEach((v, i) => check(v, s, `${path}.oneOf[${i}]`));
  check(s.not, s, `${path}.not`);
  for (const [k, v] of Object.entries(s.properties ?? {})) if (isJsonObject(v)) errors.push(...validateCompleteness(v, key(`${path}.properties`, k)));
  if (s.items) errors.push(...validateCompleteness(s.items, `${path}.items`));
  if (typeof s.additionalProperties === 'object') errors.push(...validateCompleteness(s.additionalProperties, `${path}.additionalProperties`));
  return errors;
}

/** List-type and map-key declarations (upstream's validation of x-kubernetes-list-type in CRD validation). */
function validateListTypes(s: Schema, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const listType = s['x-kubernetes-list-type'];
  if (listType !== undefined) {
    if (!['atomic', 'set', 'map'].includes(listType)) errors.push(field.notSupported(`${path}.x-kubernetes-list-type`, listType, ['atomic', 'set', 'map']));
    else if (s.type !== 'array') errors.push(field.invalid(`${path}.type`, s.type ?? '', 'must be array if x-kubernetes-list-type is specified'));
    else if (listType === 'map') {
      const keys = s['x-kubernetes-list-map-keys'] ?? [];
      if (keys.length === 0) errors.push(field.required(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
      if (s.items?.type !== 'object') errors.push(field.invalid(`${path}.items.type`, s.items?.type ?? '', 'must be object if parent array\'s x-kubernetes-list-type is map'));
      keys.forEach((k, i) => {
        const p = s.items?.properties?.[k];
        if (!p) errors.push(field.invalid(`${path}.x-kubernetes-list-map-keys`, keys, `entries must all be names of item properties`));
        else if (!['string', 'integer', 'boolean', 'number'].includes(p.type ?? '')) {
          errors.push(field.invalid(`${path}.items.properties[${k}].type`, p.type ?? '', 'must be a scalar type if parent array\'s x-kubernetes-list-type is map'));
        }
        void i;
      });
    } else if (listType === 'set' && s.items && (s.items.type === 'object' || s.items.type === 'array')) {
      if (s.items['x-kubernetes-map-type'] !== 'atomic' && s.items['x-kubernetes-list-type'] !== 'atomic') {
        errors.push(field.invalid(`${path}.items.x-kubernetes-map-type`, s.items['x-kubernetes-map-type'] ?? null, 'must be atomic as item of a list with x-kubernetes-list-type=set'));
      }
    }
  }
  if (s['x-kubernetes-list-map-keys']?.length && listType !== 'map') {
    errors.push(field.invalid(`${path}.x-kubernetes-list-type`, listType ?? null, 'must be map if x-kubernetes-list-map-keys is non-empty'));
  }
  if (s.uniqueItems === true) errors.push(field.forbidden(`${path}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if (s.items) errors.push(...validateListTypes(s.items, `${path}.items`));
  for (const [k, v] of Object.entries(s.properties ?? {})) if (isJsonObject(v)) errors.push(...validateListTypes(v, key(`${path}.properties`, k)));
  if (typeof s.additionalProperties === 'object') errors.push(...validateListTypes(s.additionalProperties, `${path}.additionalProperties`));
  return errors;
}

/**
 * The problems that make a schema non-structural (or its extensions invalid), as upstream's
 * ValidateStructural reports them, sorted by text as upstream sorts them.
 */
export function structuralProblems(schema: Schema, path: string): FieldError[] {
  const errors = [...validateInvariants(schema, 'root', path), ...validateCompleteness(schema, path), ...validateListTypes(schema, path)];
  const text = (e: FieldError) => `${e.field}: ${e.detail ?? ''}`;
  return errors.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
}

/** A CRD's schema object, read from JSON (so callers need not cast). */
export function schemaOf(object: JsonObject | undefined): Schema | undefined {
  return object as unknown as Schema | undefined;
}
