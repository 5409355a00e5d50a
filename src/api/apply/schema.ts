/**
 * What server-side apply needs to know about a type: how each list merges (atomic, set, or a map
 * keyed by some of its items' fields) and whether a map is granular or atomic. This is the small
 * interface the apply code is written against (upstream: structured-merge-diff's schema.Schema with
 * `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`, `x-kubernetes-map-type`); the providers
 * behind it (the strategic-merge table today, OpenAPI schemas of built-in and custom types) live in
 * ./types.ts. Pure.
 */
import type { JsonValue } from '../../patch/types.js';

export type ListType = 'atomic' | 'set' | 'map';

export interface ListMapKey {
  readonly name: string;
  /** The schema's default of the key field: an item without the field is keyed by it (upstream does the same). */
  readonly default?: JsonValue;
}

/** The type of one value in an object, reached from its kind's root by field names and list items. */
export interface TypeNode {
  /** For a list: how its items merge and are owned. Lists of unknown type are atomic. */
  readonly listType: ListType;
  /** For `listType: 'map'`: the fields that identify an item. */
  readonly listMapKeys: readonly ListMapKey[];
  /** A map or struct replaced and owned as a whole (`x-kubernetes-map-type: atomic`). */
  readonly atomicMap: boolean;
  /**
   * A built-in (Go) struct: its zero value exists in a new object, so a create does not own it as a
   * whole (no `.` in fieldsV1), as upstream's typed objects behave. Unset for maps and custom resources.
   */
  readonly struct?: boolean;
  /** Whether `name` is a declared struct field (undeclared map entries are owned as members). */
  declares(name: string): boolean;
  /** The type of a map member or struct field. */
  field(name: string): TypeNode;
  /** The type of a list's items. */
  item(): TypeNode;
}

/** A value with no type information: maps merge key by key, lists are atomic (upstream's deduced type). */
export const UNTYPED: TypeNode = {
  listType: 'atomic',
  listMapKeys: [],
  atomicMap: false,
  declares: () => false,
  field: () => UNTYPED,
  item: () => UNTYPED,
};

/** The type of the kind `apiVersion`/`kind`, for the apply and managed-fields code. */
export interface TypeProvider {
  root(apiVersion: string, kind: string): TypeNode;
}

/** The node at `path` (field names; `[]` steps into list items): the `typeAt(gvk, path)` view of a provider. */
export function typeAt(provider: TypeProvider, apiVersion: string, kind: string, path: readonly string[]): TypeNode {
  let node = provider.root(apiVersion, kind);
  for (const step of path) node = step === '[]' ? node.item() : node.field(step);
  return node;
}
