/**
 * Strategic-merge metadata of the built-in kinds, read from the table that
 * scripts/generate-schemas.mjs derives from upstream's OpenAPI definitions (merge-table.generated.ts):
 * each struct type's fields with their patch strategy (`x-kubernetes-patch-strategy`), merge key
 * (`x-kubernetes-patch-merge-key`) and value type. Upstream reads the same facts from the Go struct
 * tags; the OpenAPI extensions are generated from those tags.
 *
 * The table is a compact string, parsed per type on first use: `orch patch` loads it without JSON
 * schemas or YAML (startup time, bench/startup.mjs). A struct type knows all its fields, so a patch
 * that merges into a field the type lacks fails as kubectl's does (`unable to find api field in
 * struct PodSpec for the json field "foo"`).
 */
import { nameSet } from './names.js';
import { MERGE_TABLE_ATOMIC, MERGE_TABLE_KINDS, MERGE_TABLE_TYPES } from './schema/merge-table.generated.js';

/** The values a `patchStrategy` tag can take. */
export type PatchStrategy = 'merge' | 'replace' | 'retainKeys' | 'merge,retainKeys';

/** Strategic-merge metadata of one field. */
export interface FieldMeta {
  readonly strategy?: PatchStrategy;
  readonly mergeKey?: string;
  /** Struct type (a name in the table) of the field value, of a list's elements, or of a map's values. */
  readonly type?: string;
  /** Go kind of a list's elements, used in upstream's error texts ("... for type string"). */
  readonly elementKind?: string;
  /** `map`: the value is a Go map (keys are data, not fields); `list`, `struct`, `scalar`. */
  readonly shape?: 'struct' | 'list' | 'map' | 'scalar';
  /** `x-kubernetes-list-type` (server-side apply): atomic, set or map. */
  readonly listType?: 'atomic' | 'set' | 'map';
  /** `x-kubernetes-list-map-keys`. */
  readonly listMapKeys?: readonly string[];
  /** `x-kubernetes-map-type`: a map or struct owned as a whole. */
  readonly mapType?: 'atomic' | 'granular';
}

/** A struct type: its fields. `open` types (custom resources, kinds without a schema) take any field. */
export interface StructSchema {
  readonly name: string;
  readonly fields: Readonly<Record<string, FieldMeta>>;
  readonly open?: boolean;
  /** The type is `x-kubernetes-map-type: atomic` (owned as a whole by server-side apply). */
  readonly atomic?: boolean;
  /** A Go map's value metadata: every key of the map has it. */
  readonly mapValue?: FieldMeta;
}

let typeLines: Map<string, string> | undefined;
const parsed = new Map<string, StructSchema>();
let kindIndex: Map<string, string> | undefined;
let atomic: Set<string> | undefined;

function atomicTypes(): Set<string> {
  atomic ??= new Set(MERGE_TABLE_ATOMIC.split('\n'));
  return atomic;
}

function lines(): Map<string, string> {
  if (!typeLines) {
    typeLines = new Map();
    for (const line of MERGE_TABLE_TYPES.split('\n')) {
      const bar = line.indexOf('|');
      typeLines.set(line.slice(0, bar), line.slice(bar + 1));
    }
  }
  return typeLines;
}

function parseField(spec: string): [string, FieldMeta] {
  const [name, kind, elem, strategy, mergeKey, listType, listMapKeys, mapType] = spec.split(':') as [string, string, string?, string?, string?, string?, string?, string?];
  const isStruct = elem !== undefined && elem !== '' && lines().has(elem);
  const meta: FieldMeta = {
    shape: kind === 'l' ? 'list' : kind === 'm' ? 'map' : kind === 's' ? 'struct' : 'scalar',
    ...(isStruct ? { type: elem } : {}),
    ...(strategy ? { strategy: strategy.replace('+', ',') as PatchStrategy } : {}),
    ...(mergeKey ? { mergeKey } : {}),
    ...(kind === 'l' ? { elementKind: isStruct ? 'struct' : elem === 'string' ? 'string' : elem || 'struct' } : {}),
    ...(listType ? { listType: listType as FieldMeta['listType'] } : {}),
    ...(listMapKeys ? { listMapKeys: listMapKeys.split('+') } : {}),
    ...(mapType ? { mapType: mapType as FieldMeta['mapType'] } : {}),
  };
  return [name, meta];
}

/** A struct type of the table by name (parsed on first use). */
export function schemaType(name: string): StructSchema | undefined {
  const known = parsed.get(name);
  if (known) return known;
  const line = lines().get(name);
  if (line === undefined) return undefined;
  const fields: Record<string, FieldMeta> = {};
  for (const spec of line ? line.split(';') : []) {
    const [field, meta] = parseField(spec);
    fields[field] = meta;
  }
  const schema: StructSchema = { name: shortName(name), fields, ...(atomicTypes().has(name) ? { atomic: true } : {}) };
  parsed.set(name, schema);
  return schema;
}

/** Upstream's Go type name (`io.k8s.api.core.v1.Event` -> `Event`), as its error texts print it. */
function shortName(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}

/** Upstream's API group of a group name of either name set (`rbac.orch.io` -> `rbac.authorization.k8s.io`). */
export function upstreamGroup(group: string): string {
  const orch = nameSet('orch').groups;
  const upstream = nameSet('kubernetes').groups;
  for (const key of Object.keys(orch) as (keyof typeof orch)[]) if (orch[key] === group) return upstream[key];
  return group;
}

function kinds(): Map<string, string> {
  if (!kindIndex) {
    kindIndex = new Map();
    for (const line of MERGE_TABLE_KINDS.split('\n')) {
      const eq = line.indexOf('=');
      kindIndex.set(line.slice(0, eq), line.slice(eq + 1));
    }
  }
  return kindIndex;
}

/** The schema of a built-in kind by apiVersion (either name set) and kind, or undefined (custom resources). */
export function lookupSchema(apiVersion: string, kindName: string): StructSchema | undefined {
  const slash = apiVersion.indexOf('/');
  const group = slash >= 0 ? upstreamGroup(apiVersion.slice(0, slash)) : '';
  const version = slash >= 0 ? apiVersion.slice(slash + 1) : apiVersion;
  const type = kinds().get(`${group}/${version}/${kindName}`);
  return type === undefined ? undefined : schemaType(type);
}

/**
 * Metadata of `field` in `type`, as upstream's LookupPatchMetadataForStruct/ForSlice: a Go map's keys
 * all carry its value's metadata; a struct field it lacks is an error (PatchError from the caller's
 * `unknownField`); unknown and open types have none.
 */
export function fieldMeta(type: StructSchema | undefined, field: string): FieldMeta {
  if (!type) return {};
  if (type.mapValue) return type.mapValue;
  return type.fields[field] ?? {};
}

/** Whether merging into `field` of `type` fails upstream for want of the field (a closed struct lacking it). */
export function lacksField(type: StructSchema | undefined, field: string): boolean {
  return type !== undefined && !type.open && !type.mapValue && !(field in type.fields);
}

/** The type a field's value (or list elements) has: a struct, or a map of structs; undefined for scalars and maps of scalars. */
export function fieldType(meta: FieldMeta): StructSchema | undefined {
  if (meta.type === undefined) return undefined;
  const element = schemaType(meta.type);
  if (!element) return undefined;
  if (meta.shape === 'map') return { name: '', fields: {}, mapValue: { shape: 'struct', type: meta.type } };
  return element;
}
