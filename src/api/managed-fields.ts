/**
 * `metadata.managedFields` for Update operations, approximating upstream's structured-merge-diff
 * field sets without type schemas: the fields a write sets or changes are added to the writer's
 * entry and taken from other managers; removed fields leave every entry. Lists of objects with a
 * `name` (or `type`, for conditions) are keyed `k:{"name":"x"}` like upstream; other lists count as
 * one atomic field. Hand-written: the upstream library (structured-merge-diff) has no JS port.
 */
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../patch/types.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Update' | 'Apply';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
  subresource?: string;
}

/**
 * A field path as its segments joined by SEP (`f:metadata\0f:labels\0f:app`; the root is ''). Paths
 * are built and compared as strings: this runs on every write, and arrays per visited node were most
 * of its cost.
 */
type Path = string;

const SEP = '\u0000';

function child(path: Path, segment: string): Path {
  return path === '' ? segment : path + SEP + segment;
}

/** Object metadata members a manager can own; the rest is server-set. */
const OWNED_METADATA = new Set(['labels', 'annotations', 'finalizers', 'ownerReferences']);

function listKey(element: JsonValue): string | undefined {
  if (!isJsonObject(element)) return undefined;
  if (typeof element.name === 'string') return `k:${JSON.stringify({ name: element.name })}`;
  if (typeof element.type === 'string') return `k:${JSON.stringify({ type: element.type })}`;
  return undefined;
}

/** A list is keyed when every element has a key and the keys are unique. */
function keyedElements(list: JsonValue[]): Map<string, JsonValue> | undefined {
  const map = new Map<string, JsonValue>();
  for (const element of list) {
    const key = listKey(element);
    if (!key || map.has(key)) return undefined;
    map.set(key, element);
  }
  return map;
}

function leaves(value: JsonValue, path: Path, out: Path[]): void {
  if (isJsonObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) leaves(v, child(path, `f:${k}`), out);
    return;
  }
  if (Array.isArray(value) && value.length > 0) {
    const keyed = keyedElements(value);
    if (keyed) {
      for (const [key, element] of keyed) {
        out.push(child(child(path, key), '.'));
        leaves(element, child(path, key), out);
      }
      return;
    }
  }
  out.push(path);
}

/** Paths set or changed (`changed`) and paths that disappeared (`removed`) going from before to after. */
function diff(before: JsonValue | undefined, after: JsonValue | undefined, path: Path, changed: Path[], removed: Path[]): void {
  if (after === undefined) {
    if (before !== undefined) removed.push(path);
    return;
  }
  if (before === undefined) {
    leaves(after, path, changed);
    return;
  }
  if (isJsonObject(before) && isJsonObject(after)) {
    for (const k of Object.keys(after)) diff(before[k], after[k], child(path, `f:${k}`), changed, removed);
    for (const k of Object.keys(before)) if (!(k in after)) removed.push(child(path, `f:${k}`));
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const b = keyedElements(before);
    const a = keyedElements(after);
    if (a && b) {
      for (const [key, element] of a) {
        if (!b.has(key)) changed.push(child(child(path, key), '.'));
        diff(b.get(key), element, child(path, key), changed, removed);
      }
      for (const key of b.keys()) if (!a.has(key)) removed.push(child(path, key));
      return;
    }
  }
  if (!jsonEqual(before, after)) {
    removed.push(path);
    leaves(after, path, changed);
  }
}

/** The part of an object a manager can own: spec-like top-level fields, owned metadata, and status for the status subresource. */
function trackedView(object: JsonObject | undefined, subresource: string | undefined): JsonObject {
  const view: JsonObject = {};
  if (!object) return view;
  for (const [k, v] of Object.entries(object)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    if (k === 'status' && subresource !== 'status') continue;
    if (k === 'metadata' && isJsonObject(v)) {
      const meta: JsonObject = {};
      for (const [mk, mv] of Object.entries(v)) if (OWNED_METADATA.has(mk)) meta[mk] = mv;
      if (Object.keys(meta).length) view.metadata = meta;
      continue;
    }
    view[k] = v;
  }
  return view;
}

function flatten(tree: JsonObject, prefix: Path = '', out: Set<string> = new Set()): Set<string> {
  for (const [k, v] of Object.entries(tree)) {
    const path = child(prefix, k);
    if (isJsonObject(v) && Object.keys(v).length > 0) flatten(v, path, out);
    else out.add(path);
  }
  return out;
}

function unflatten(paths: Iterable<string>): JsonObject {
  const root: JsonObject = {};
  for (const p of [...paths].sort()) {
    let node = root;
    for (const segment of p.split(SEP)) {
      if (!isJsonObject(node[segment])) node[segment] = {};
      node = node[segment] as JsonObject;
    }
  }
  return root;
}

const startsWith = (path: string, prefix: string) => path === prefix || path.startsWith(prefix + SEP);

export interface ManagedFieldsUpdate {
  previous: JsonObject | undefined;
  next: JsonObject;
  manager: string;
  apiVersion: string;
  subresource?: string;
  time: string;
}

/** The managedFields list after a write by `manager` (operation Update). */
export function updateManagedFields(input: ManagedFieldsUpdate): ManagedFieldsEntry[] {
  const existing = Array.isArray((input.previous?.metadata as JsonObject | undefined)?.managedFields)
    ? (((input.previous!.metadata as JsonObject).managedFields as JsonValue[]).filter(isJsonObject) as unknown as ManagedFieldsEntry[])
    : [];
  const changed: Path[] = [];
  const removed: Path[] = [];
  diff(trackedView(input.previous, input.subresource), trackedView(input.next, input.subresource), '', changed, removed);
  const changedKeys = changed.filter((p) => p !== '');
  const removedKeys = removed.filter((p) => p !== '');
  const isMine = (e: ManagedFieldsEntry) =>
    e.manager === input.manager && e.operation === 'Update' && e.apiVersion === input.apiVersion && (e.subresource ?? '') === (input.subresource ?? '');

  const result: ManagedFieldsEntry[] = [];
  let mine: ManagedFieldsEntry | undefined;
  for (const entry of existing) {
    const owned = flatten(isJsonObject(entry.fieldsV1) ? entry.fieldsV1 : {});
    const paths = new Set(owned);
    for (const p of owned) {
      if (removedKeys.some((r) => startsWith(p, r)) || (!isMine(entry) && changedKeys.some((c) => startsWith(p, c)))) paths.delete(p);
    }
    if (isMine(entry)) for (const c of changedKeys) paths.add(c);
    // An entry whose field set did not change keeps its stored fieldsV1 (which unflatten wrote, sorted):
    // rebuilding it on every write was most of this function's cost.
    const unchanged = paths.size === owned.size && [...paths].every((p) => owned.has(p));
    const fieldsV1 = unchanged ? entry.fieldsV1 : unflatten(paths);
    if (isMine(entry)) {
      mine = { ...entry, time: changedKeys.length ? input.time : entry.time, fieldsV1 };
      if (paths.size) result.push(mine);
    } else if (paths.size) {
      result.push(unchanged ? entry : { ...entry, fieldsV1 });
    }
  }
  if (!mine && changedKeys.length) {
    const entry: ManagedFieldsEntry = {
      manager: input.manager,
      operation: 'Update',
      apiVersion: input.apiVersion,
      time: input.time,
      fieldsType: 'FieldsV1',
      fieldsV1: unflatten(changedKeys),
    };
    if (input.subresource) entry.subresource = input.subresource;
    result.push(entry);
  }
  return result;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The field manager name when the request gives none: the User-Agent up to the first `/`,
 * printable characters only, at most 128 bytes (upstream's prefixFromUserAgent).
 */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const head = (userAgent ?? '').split('/')[0] ?? '';
  // Every write asks; the usual answer (short printable ASCII, like `kubectl`) needs no per-character work.
  if (head.length <= 128 && PRINTABLE_ASCII.test(head)) return head;
  // eslint-disable-next-line no-control-regex
  const printable = head.replace(/[^\x20-\x7e\u00a0-\uffff]/g, '');
  let out = '';
  for (const ch of printable) {
    if (Buffer.byteLength(out + ch) > 128) break;
    out += ch;
  }
  return out;
}
