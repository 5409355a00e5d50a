/**
 * Operations on JSON values with their TypeNode, as structured-merge-diff's typed package does them:
 * the field set a value sets (ToFieldSet), the fields added, removed and modified between two values
 * (Compare), an applied configuration merged over a live object (Merge), and removal of owned items
 * (RemoveItems). Hand-written port of the semantics (no JavaScript port exists). Pure.
 */
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../../patch/types.js';
import { fieldElement, FieldSet, indexElement, keyElement, pathString, valueElement } from './field-set.js';
import type { TypeNode } from './schema.js';

/** A structurally invalid applied configuration (duplicate keys, items without key fields). */
export class ApplyStructureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApplyStructureError';
  }
}

/** Lists merged item by item: sets, and maps that have keys. */
function granular(type: TypeNode): boolean {
  return type.listType === 'set' || (type.listType === 'map' && type.listMapKeys.length > 0);
}

/**
 * The path element of a list item: `v:` for a set, `k:` for a list map. A live item that cannot be
 * keyed (lenient) falls back to its index; in an applied configuration (strict) it is an error.
 */
function itemElement(type: TypeNode, item: JsonValue, index: number, path: readonly string[], strict: boolean): string {
  if (type.listType === 'set') {
    if (item === null || typeof item !== 'object') return valueElement(item);
    if (strict) throw new ApplyStructureError(`${pathString(path)}: expected a scalar in a set (x-kubernetes-list-type: set), got ${JSON.stringify(item)}`);
    return indexElement(index);
  }
  if (!isJsonObject(item)) {
    if (strict) throw new ApplyStructureError(`${pathString(path)}: associative list with keys has an element that is not a map type`);
    return indexElement(index);
  }
  const fields: Record<string, JsonValue> = {};
  for (const key of type.listMapKeys) {
    const value = item[key.name] ?? key.default;
    if (value === undefined || value === null) {
      if (strict) {
        throw new ApplyStructureError(
          `${pathString(path)}: associative list with keys has an element that omits key field ${JSON.stringify(key.name)} (and doesn't have default value)`,
        );
      }
      return indexElement(index);
    }
    fields[key.name] = value;
  }
  return keyElement(fields);
}

/** Items of a granular list by path element, in order; `strict` rejects duplicates (an applied configuration). */
function indexItems(type: TypeNode, list: JsonValue[], path: readonly string[], strict: boolean): { elements: string[]; byElement: Map<string, JsonValue> } {
  const elements: string[] = [];
  const byElement = new Map<string, JsonValue>();
  list.forEach((item, index) => {
    const element = itemElement(type, item, index, path, strict);
    if (byElement.has(element)) {
      if (strict) throw new ApplyStructureError(`${pathString(path)}: duplicate entries for key ${pathString([element])}`);
    } else {
      byElement.set(element, item);
    }
    elements.push(element);
  });
  return { elements, byElement };
}

// ---- ToFieldSet ------------------------------------------------------------------------------

function fieldSetOf(value: JsonValue, type: TypeNode, path: string[]): FieldSet {
  const out = new FieldSet();
  if (isJsonObject(value) && !type.atomicMap) {
    for (const [k, v] of Object.entries(value)) {
      const element = fieldElement(k);
      const child = fieldSetOf(v, type.field(k), [...path, element]);
      // An undeclared map entry, a null and an empty object are owned themselves (upstream's toFieldSet).
      if (v === null || (isJsonObject(v) && Object.keys(v).length === 0) || !type.declares(k)) child.member = true;
      if (!child.empty()) out.children.set(element, child);
    }
  } else if (Array.isArray(value) && granular(type)) {
    const itemType = type.item();
    const { elements } = indexItems(type, value, path, true);
    value.forEach((item, index) => {
      const element = elements[index]!;
      const child = fieldSetOf(item, itemType, [...path, element]);
      child.member = true;
      out.children.set(element, child);
    });
  } else {
    out.member = true;
  }
  return out;
}

/** The fields an applied configuration sets. Throws ApplyStructureError on duplicate or missing keys. */
export function toFieldSet(value: JsonObject, type: TypeNode): FieldSet {
  const set = fieldSetOf(value, type, []);
  set.member = false;
  return set;
}

// ---- Compare ---------------------------------------------------------------------------------

export interface Comparison {
  added: FieldSet;
  removed: FieldSet;
  modified: FieldSet;
}

// `path` is one stack pushed and popped along the walk (copied only when a path is inserted): the
// comparison runs on every write, and a fresh array per visited node was most of its cost.
function insertAll(value: JsonValue, type: TypeNode, path: string[], set: FieldSet): void {
  set.insert(path);
  if (isJsonObject(value) && !type.atomicMap) {
    for (const [k, v] of Object.entries(value)) {
      path.push(fieldElement(k));
      insertAll(v, type.field(k), path, set);
      path.pop();
    }
  } else if (Array.isArray(value) && granular(type)) {
    const itemType = type.item();
    const { elements } = indexItems(type, value, path, false);
    value.forEach((item, index) => {
      path.push(elements[index]!);
      insertAll(item, itemType, path, set);
      path.pop();
    });
  }
}

function compareAt(lhs: JsonValue | undefined, rhs: JsonValue | undefined, type: TypeNode, path: string[], out: Comparison): void {
  if (lhs === undefined && rhs === undefined) return;
  if (lhs === undefined) return insertAll(rhs!, type, path, out.added);
  if (rhs === undefined) return insertAll(lhs, type, path, out.removed);
  if (isJsonObject(lhs) && isJsonObject(rhs) && !type.atomicMap) {
    for (const k of Object.keys(lhs)) {
      const l = lhs[k];
      const r = rhs[k];
      if (l === r) continue; // the same scalar (or the same object): nothing below changed
      path.push(fieldElement(k));
      compareAt(l, r, type.field(k), path, out);
      path.pop();
    }
    for (const k of Object.keys(rhs)) {
      if (k in lhs) continue;
      path.push(fieldElement(k));
      compareAt(undefined, rhs[k], type.field(k), path, out);
      path.pop();
    }
    return;
  }
  if (Array.isArray(lhs) && Array.isArray(rhs) && granular(type)) {
    const itemType = type.item();
    const l = indexItems(type, lhs, path, false);
    const r = indexItems(type, rhs, path, false);
    for (const [element, item] of l.byElement) {
      path.push(element);
      compareAt(item, r.byElement.get(element), itemType, path, out);
      path.pop();
    }
    for (const [element, item] of r.byElement) {
      if (l.byElement.has(element)) continue;
      path.push(element);
      compareAt(undefined, item, itemType, path, out);
      path.pop();
    }
    return;
  }
  if (!jsonEqual(lhs, rhs)) out.modified.insert(path);
}

/** The fields added, removed and modified going from `lhs` to `rhs` (leaves and atomic values are modified; nodes are added or removed). */
export function compare(lhs: JsonObject, rhs: JsonObject, type: TypeNode): Comparison {
  const out: Comparison = { added: new FieldSet(), removed: new FieldSet(), modified: new FieldSet() };
  compareAt(lhs, rhs, type, [], out);
  return out;
}

// ---- Merge -----------------------------------------------------------------------------------

function mergeAt(lhs: JsonValue | undefined, rhs: JsonValue | undefined, type: TypeNode, path: string[]): JsonValue | undefined {
  if (rhs === undefined) return lhs;
  if (lhs === undefined) return rhs;
  if (isJsonObject(lhs) && isJsonObject(rhs) && !type.atomicMap) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(lhs)) {
      const merged = k in rhs ? mergeAt(v, rhs[k], type.field(k), [...path, fieldElement(k)]) : v;
      if (merged !== undefined && merged !== null) out[k] = merged;
    }
    for (const [k, v] of Object.entries(rhs)) if (!(k in lhs) && v !== null) out[k] = v;
    return out;
  }
  if (Array.isArray(lhs) && Array.isArray(rhs) && granular(type)) return mergeList(lhs, rhs, type, path);
  return rhs;
}

/**
 * Upstream's list merge: shared items keep the applied configuration's relative order, items only
 * in the live list stay where they were, items only in the configuration are inserted in its order.
 */
function mergeList(lhs: JsonValue[], rhs: JsonValue[], type: TypeNode, path: string[]): JsonValue[] {
  const itemType = type.item();
  const r = indexItems(type, rhs, path, true);
  const l = indexItems(type, lhs, path, false);
  const sharedOrder = r.elements.filter((e) => l.byElement.has(e));
  let nextShared = sharedOrder.shift();
  const mergedRhs = new Set<string>();
  const out: JsonValue[] = [];
  const push = (value: JsonValue | undefined) => {
    if (value !== undefined) out.push(value);
  };
  let li = 0;
  let ri = 0;
  while (li < l.elements.length || ri < r.elements.length) {
    if (li < l.elements.length && ri < r.elements.length) {
      const element = l.elements[li]!;
      if (element === r.elements[ri]) {
        mergedRhs.add(element);
        push(mergeAt(l.byElement.get(element), r.byElement.get(element), itemType, [...path, element]));
        li++;
        ri++;
        nextShared = sharedOrder.shift();
        continue;
      }
      if (r.byElement.has(element) && nextShared !== undefined && nextShared !== element) {
        li++;
        continue;
      }
    }
    if (li < l.elements.length) {
      const element = l.elements[li]!;
      if (!r.byElement.has(element)) {
        push(lhs[li]);
        li++;
        continue;
      }
      if (mergedRhs.has(element)) {
        li++;
        continue;
      }
    }
    if (ri < r.elements.length) {
      const element = r.elements[ri]!;
      mergedRhs.add(element);
      push(mergeAt(l.byElement.get(element), r.byElement.get(element), itemType, [...path, element]));
      ri++;
      if (nextShared !== undefined && nextShared === element) nextShared = sharedOrder.shift();
    }
  }
  return out;
}

/** `config` merged over `live`: the configuration's values win, granular maps and lists merge member by member. */
export function merge(live: JsonObject, config: JsonObject, type: TypeNode): JsonObject {
  return mergeAt(live, config, type, []) as JsonObject;
}

// ---- RemoveItems -----------------------------------------------------------------------------

function removeAt(value: JsonValue, set: FieldSet, type: TypeNode, path: string[]): JsonValue {
  if (isJsonObject(value) && !type.atomicMap) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      const child = set.children.get(fieldElement(k));
      if (!child) out[k] = v;
      else if (!child.member) out[k] = removeAt(v, child, type.field(k), [...path, fieldElement(k)]);
    }
    return out;
  }
  if (Array.isArray(value) && granular(type)) {
    const itemType = type.item();
    const { elements } = indexItems(type, value, path, false);
    const out: JsonValue[] = [];
    value.forEach((item, index) => {
      const child = set.children.get(elements[index]!);
      if (!child) out.push(item);
      else if (!child.member) out.push(removeAt(item, child, itemType, [...path, elements[index]!]));
    });
    return out;
  }
  return value;
}

/** `value` without the members of `set` (and everything below them). */
export function removeItems(value: JsonObject, set: FieldSet, type: TypeNode): JsonObject {
  return removeAt(value, set, type, []) as JsonObject;
}
