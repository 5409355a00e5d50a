/**
 * Providers of apply type information (./schema.ts TypeNode):
 * - `builtinTypes`: an adapter onto the strategic-merge table of src/api/merge-metadata.ts (merge keys
 *   become list-map keys, merged scalar lists become sets, everything else is atomic), plus the few
 *   list-map keys and atomic structs upstream declares beyond its patch tags. When built-in OpenAPI
 *   schemas are available, point `builtinTypes` at `openApiTypes` over them instead.
 * - `openApiTypes`: an OpenAPI v3 schema (a CRD's structural schema) read through its
 *   `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and `x-kubernetes-map-type`; lists
 *   without a list type are atomic, as upstream.
 * Pure.
 */
import { fieldMeta, fieldType, lookupSchema, schemaType, type StructSchema } from '../merge-metadata.js';
import { isJsonObject, type JsonObject } from '../../patch/types.js';
import { UNTYPED, type ListMapKey, type ListType, type TypeNode, type TypeProvider } from './schema.js';

/** Upstream's list-map keys where they differ from the patch merge key (`+listMapKey` tags). */
const LIST_MAP_KEYS: Readonly<Record<string, readonly ListMapKey[]>> = {
  'Container.ports': [{ name: 'containerPort' }, { name: 'protocol', default: 'TCP' }],
  'ServiceSpec.ports': [{ name: 'port' }, { name: 'protocol', default: 'TCP' }],
};

/** Structs upstream marks `+structType=atomic` (label selectors of workload specs). */
const ATOMIC_FIELDS = new Set([
  'DeploymentSpec.selector', 'ReplicaSetSpec.selector', 'StatefulSetSpec.selector', 'DaemonSetSpec.selector', 'JobSpec.selector',
]);

/** Inside a built-in kind, an unlisted map key is most likely a struct field: owned through its members. */
const BUILTIN_UNTYPED: TypeNode = { ...UNTYPED, declares: () => true, field: () => BUILTIN_UNTYPED, item: () => BUILTIN_UNTYPED };

function node(fields: Partial<TypeNode>): TypeNode {
  return { ...BUILTIN_UNTYPED, ...fields };
}

/** A Go map of scalars (labels, data, resources.limits): its keys are data, owned as members. */
const SCALAR_MAP: TypeNode = node({ declares: () => false });

// Nodes are built once per struct type and field: every write walks them (managed fields).
const structNodes = new WeakMap<StructSchema, TypeNode>();

function structNode(schema: StructSchema): TypeNode {
  const known = structNodes.get(schema);
  if (known) return known;
  // A Go map's keys are not fields (owned as members); a struct declares exactly its table fields;
  // a struct the schema marks `x-kubernetes-map-type: atomic` (LabelSelector, ObjectReference...) is owned as a whole.
  const declares = schema.mapValue ? () => false : schema.open ? () => true : (name: string) => name in schema.fields;
  // Cached: the declared fields, and a map's one value type (its keys are data, not worth a node each).
  const fields = new Map<string, TypeNode>();
  const field = (name: string): TypeNode => {
    const key = schema.mapValue ? '' : name;
    let child = fields.get(key);
    if (!child) {
      child = builtinField(schema, name);
      if (schema.mapValue || name in schema.fields) fields.set(key, child);
    }
    return child;
  };
  const created = node({ declares, struct: !schema.mapValue && !schema.open, field, atomicMap: schema.atomic === true });
  structNodes.set(schema, created);
  return created;
}

function builtinField(schema: StructSchema, name: string): TypeNode {
  const meta = fieldMeta(schema, name);
  const valueType = fieldType(meta);
  const value = valueType ? structNode(valueType) : BUILTIN_UNTYPED;
  const id = `${schema.name}.${name}`;
  // The schema's x-kubernetes-list-type / -list-map-keys / -map-type first (the generated table carries
  // them), then what the patch tags imply.
  if (meta.listType === 'atomic') return node({ listType: 'atomic', item: () => value });
  if (meta.listType === 'set') return node({ listType: 'set' });
  const schemaKeys = meta.listType === 'map' && meta.listMapKeys?.length
    ? meta.listMapKeys.map((key) => LIST_MAP_KEYS[id]?.find((k) => k.name === key) ?? { name: key })
    : undefined;
  const keys = schemaKeys ?? LIST_MAP_KEYS[id] ?? (meta.mergeKey ? [{ name: meta.mergeKey }] : undefined);
  if (keys) return node({ listType: 'map', listMapKeys: keys, item: () => value });
  if (meta.strategy?.startsWith('merge') && meta.elementKind === 'string') return node({ listType: 'set' });
  if (ATOMIC_FIELDS.has(id) || meta.mapType === 'atomic') return node({ atomicMap: true });
  if (meta.shape === 'map' && !valueType) return SCALAR_MAP;
  return value;
}

export const builtinTypes: TypeProvider = {
  root(apiVersion, kind) {
    const schema = lookupSchema(apiVersion, kind);
    return schema ? structNode(schema) : BUILTIN_UNTYPED;
  },
};

/** The TypeNode of an OpenAPI v3 schema object (a CRD version's `schema.openAPIV3Schema`). */
export function openApiNode(schema: JsonObject | undefined): TypeNode {
  if (!schema) return UNTYPED;
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  const items = isJsonObject(schema.items) ? schema.items : undefined;
  const listType = schema['x-kubernetes-list-type'];
  const keyNames = Array.isArray(schema['x-kubernetes-list-map-keys']) ? schema['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string') : [];
  const itemProperties = items && isJsonObject(items.properties) ? items.properties : {};
  return {
    listType: listType === 'set' || listType === 'map' ? (listType as ListType) : 'atomic',
    listMapKeys: keyNames.map((name) => {
      const property = itemProperties[name];
      return isJsonObject(property) && property.default !== undefined ? { name, default: property.default } : { name };
    }),
    atomicMap: schema['x-kubernetes-map-type'] === 'atomic',
    declares: (name) => isJsonObject(properties[name]),
    field: (name) => {
      const property = properties[name];
      if (isJsonObject(property)) return openApiNode(property);
      return isJsonObject(schema.additionalProperties) ? openApiNode(schema.additionalProperties) : UNTYPED;
    },
    item: () => openApiNode(items),
  };
}

/** A provider over one custom resource's schema (apiVersion and kind are those of the resource). */
export function openApiTypes(schema: JsonObject | undefined): TypeProvider {
  const inner = openApiNode(schema);
  // A custom resource's metadata is ObjectMeta whatever its schema says (upstream does the same).
  const objectMeta = schemaType('ObjectMeta');
  const root: TypeNode = {
    ...inner,
    declares: (name) => ['apiVersion', 'kind', 'metadata'].includes(name) || inner.declares(name),
    field: (name) => (name === 'metadata' && objectMeta ? structNode(objectMeta) : inner.field(name)),
  };
  return { root: () => root };
}
