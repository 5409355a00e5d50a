/**
 * Pruning (upstream's schema/pruning): members a structural schema does not declare are
 * dropped, unless `x-kubernetes-preserve-unknown-fields` keeps them. apiVersion, kind and
 * metadata survive at the root and in embedded resources. Returns the pruned paths (for the
 * `unknown field` warnings of fieldValidation=Warn) and mutates the object in place.
 */
import { isJsonObject, type JsonObject, type JsonValue } from '../../patch/types.js';
import type { Schema } from './schema.js';

const META = new Set(['apiVersion', 'kind', 'metadata']);

function pruneValue(value: JsonValue, schema: Schema | undefined, path: string, pruned: string[], keepMeta: boolean): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    value.forEach((v, i) => pruneValue(v, schema.items, `${path}[${i}]`, pruned, false));
    return;
  }
  if (!isJsonObject(value)) return;
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  for (const key of Object.keys(value)) {
    const child = value[key]!;
    const childPath = path ? `${path}.${key}` : key;
    if ((keepMeta || embedded) && META.has(key)) continue;
    const declared = schema.properties?.[key];
    if (declared) {
      pruneValue(child, declared, childPath, pruned, false);
      continue;
    }
    if (typeof schema.additionalProperties === 'object') {
      pruneValue(child, schema.additionalProperties, childPath, pruned, false);
      continue;
    }
    if (schema.additionalProperties === true || preserve) continue;
    delete value[key];
    pruned.push(childPath);
  }
}

/** Prunes an object (a custom resource, root level) against its schema; returns the dropped field paths. */
export function prune(object: JsonObject, schema: Schema): string[] {
  const pruned: string[] = [];
  pruneValue(object, schema, '', pruned, true);
  return pruned;
}
