/** The kinds a CustomResourceDefinition serves, with each served version's schema, for the SchemaRegistry. Pure. */
import { isJsonObject, type JsonObject } from '../../../../patch/types.js';
import type { Schema } from '../../../../api/schema/definitions.js';
import type { CustomKindSchema } from './schema-registry.js';

export function crdKindSchemas(crd: JsonObject): CustomKindSchema[] {
  const spec = isJsonObject(crd.spec) ? crd.spec : {};
  const names = isJsonObject(spec.names) ? spec.names : {};
  const group = typeof spec.group === 'string' ? spec.group : '';
  const kind = typeof names.kind === 'string' ? names.kind : '';
  const plural = typeof names.plural === 'string' ? names.plural : '';
  if (!group || !kind || !plural) return [];
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isJsonObject) : [];
  const out: CustomKindSchema[] = [];
  for (const v of versions) {
    if (v.served !== true || typeof v.name !== 'string') continue;
    const schema = isJsonObject(v.schema) && isJsonObject(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : undefined;
    if (!schema) continue;
    out.push({ group, version: v.name, kind, plural, namespaced: spec.scope !== 'Cluster', schema: schema as unknown as Schema });
  }
  return out;
}
