/**
 * The list semantics a CRD schema declares (x-kubernetes-list-type, x-kubernetes-list-map-keys,
 * x-kubernetes-map-type), by field path, for server-side apply on custom resources and for
 * the uniqueness checks of validation. Paths are dotted member names with `[]` for list items
 * (`spec.ports`, `spec.groups[].rules`), as in the built-in strategic-merge metadata.
 */
import type { Schema } from './schema.js';

export interface ListSemantics {
  listType?: 'atomic' | 'set' | 'map';
  mapKeys?: string[];
  mapType?: 'atomic' | 'granular';
}

/** Every path of the schema that declares list or map semantics. */
export function listTypesOf(schema: Schema): Map<string, ListSemantics> {
  const out = new Map<string, ListSemantics>();
  const walk = (s: Schema | undefined, path: string): void => {
    if (!s) return;
    const entry: ListSemantics = {};
    if (s['x-kubernetes-list-type']) entry.listType = s['x-kubernetes-list-type'];
    if (s['x-kubernetes-list-map-keys']?.length) entry.mapKeys = [...s['x-kubernetes-list-map-keys']];
    if (s['x-kubernetes-map-type']) entry.mapType = s['x-kubernetes-map-type'];
    if (Object.keys(entry).length && path) out.set(path, entry);
    for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, path ? `${path}.${k}` : k);
    if (typeof s.additionalProperties === 'object') walk(s.additionalProperties, path ? `${path}.*` : '*');
    walk(s.items, `${path}[]`);
  };
  walk(schema, '');
  return out;
}
