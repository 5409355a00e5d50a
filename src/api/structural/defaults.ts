/**
 * Defaulting (upstream's schema/defaulting): a missing member whose schema has a `default`
 * gets a copy of it, at every depth, in object members, additionalProperties values and
 * array items. A null that the schema does not allow (not nullable) and that has a default is
 * replaced too. Applied on create and update and again when objects are read from storage, so
 * a default added to a CRD shows up on old objects, as upstream does.
 */
import { isJsonObject, type JsonObject, type JsonValue } from '../../patch/types.js';
import type { Schema } from './schema.js';

function defaultValue(value: JsonValue, schema: Schema | undefined): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    for (const item of value) defaultValue(item, schema.items);
    return;
  }
  if (!isJsonObject(value)) return;
  for (const [key, prop] of Object.entries(schema.properties ?? {})) {
    const current = value[key];
    if (prop.default !== undefined && (current === undefined || (current === null && prop.nullable !== true))) {
      value[key] = structuredClone(prop.default);
    }
  }
  for (const [key, child] of Object.entries(value)) {
    const childSchema = schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    if (!childSchema) continue;
    if (child === null && childSchema.default !== undefined && childSchema.nullable !== true) value[key] = structuredClone(childSchema.default);
    defaultValue(value[key]!, childSchema);
  }
}

/** Applies the schema's defaults to an object in place. */
export function applyDefaults(object: JsonObject, schema: Schema): JsonObject {
  defaultValue(object, schema);
  return object;
}
