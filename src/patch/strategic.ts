/**
 * Strategic merge patch, a port of upstream's StrategicMergeMapPatch
 * (apimachinery util/strategicpatch/patch.go) as kubectl 1.32 applies it locally
 * (MergeParallelList and IgnoreUnmatchedNulls on).
 *
 * Hand-written: no JavaScript library implements strategic merge. The port keeps upstream's
 * observable quirks (list ordering, directives left in newly added values, the live order
 * computed from a Go slice that deletions and appends have written through) because users
 * compare our output with kubectl's. Where upstream is quadratic (element lookup by merge key,
 * ordering by index), lookups go through Maps so a 2,000-element list merges in linear time.
 *
 * Inputs are never mutated: both documents are deep-copied first, then merged in place like
 * upstream does.
 */
import { fieldMeta, fieldType, lacksField, type FieldMeta, type StructSchema } from '../api/merge-metadata.js';
import { PatchError } from './errors.js';
import { goS, goTypeName, goV } from './go-format.js';
import { isJsonObject, type JsonObject, type JsonValue } from './types.js';

const DIRECTIVE_MARKER = '$patch';
const DELETE_DIRECTIVE = 'delete';
const REPLACE_DIRECTIVE = 'replace';
const MERGE_DIRECTIVE = 'merge';
const RETAIN_KEYS_DIRECTIVE = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST_PREFIX = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER_PREFIX = '$setElementOrder';

// Upstream's error texts (apimachinery util/mergepatch/errors.go and patch.go).
const errBadJsonDoc = () => new PatchError('invalid JSON document');
const errNoListOfLists = () => new PatchError('lists of lists are not supported');
const errBadPrimitiveListFormat = () => new PatchError('invalid patch format of primitive list');
const errBadRetainKeysFormat = () => new PatchError('invalid patch format of retainKeys');
const errBadSetElementOrderFormat = () => new PatchError('invalid patch format of setElementOrder list');
const errNoMergeKey = (m: JsonObject | null, key: string) =>
  new PatchError(`map: ${goV(m ?? {})} does not contain declared merge key: ${key}`);
const errBadArgType = (expected: string, actual: JsonValue | undefined) =>
  new PatchError(`expected a ${expected}, but received a ${actual === undefined || actual === null ? '%!s(<nil>)' : goTypeName(actual)}`);
const errBadPatchType = (directive: JsonValue, m: JsonObject) =>
  new PatchError(`unknown patch type: ${goS(directive)} in map: ${goV(m)}`);

// forkedjson.LookupPatchMetadataForStruct: merging into a field the Go struct lacks.
const errNoField = (type: StructSchema, key: string) =>
  new PatchError(`unable to find api field in struct ${type.name} for the json field ${JSON.stringify(key)}`);

const MAP_TYPE = 'map[string]interface {}';
const SLICE_TYPE = '[]interface {}';

/**
 * Applies `patch` to `original` with the strategic-merge metadata of `schema` (the top-level kind).
 * `patch` must be a JSON object (or null, a no-op), as upstream decodes it into a map.
 */
export function strategicMergePatch(original: JsonObject, patch: JsonValue, schema: StructSchema): JsonObject {
  if (patch === null) return structuredClone(original);
  if (!isJsonObject(patch)) throw errBadJsonDoc();
  return mergeMap(structuredClone(original), structuredClone(patch), schema);
}

/** Identity of a scalar under Go's interface `==` (int64 and float64 never compare equal). */
function goKey(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return 'nil';
  switch (typeof value) {
    case 'string': return `s:${value}`;
    case 'boolean': return `b:${value}`;
    case 'number': return `${Number.isInteger(value) ? 'i' : 'f'}:${value}`;
    default:
      // Go panics comparing maps or slices held in interfaces.
      throw new PatchError(`runtime error: comparing uncomparable type ${goTypeName(value)}`);
  }
}

/** reflect.TypeOf(v) equality, as used to decide between merging and replacing. */
function sameGoType(a: JsonValue, b: JsonValue): boolean {
  return goTypeName(a) === goTypeName(b);
}

function splitStrategy(meta: FieldMeta): string {
  // "merge,retainKeys" merges; "retainKeys" alone only matters when building patches.
  const parts = (meta.strategy ?? '').split(',').filter((s) => s !== 'retainKeys');
  return parts[0] ?? '';
}

function mergeMap(original: JsonObject | null, patch: JsonObject, type: StructSchema | undefined): JsonObject {
  if (DIRECTIVE_MARKER in patch) return handleDirectiveInMergeMap(patch[DIRECTIVE_MARKER], patch);
  const target = original ?? {};
  applyRetainKeysDirective(target, patch);
  mergePatchIntoOriginal(target, patch, type);

  for (const [patchKey, patchValue] of Object.entries(patch)) {
    let key = patchKey;
    let isDeleteList = false;
    if (patchKey.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX)) {
      isDeleteList = true;
      const listKey = extractKey(patchKey, DELETE_FROM_PRIMITIVE_LIST_PREFIX);
      if (listKey.length > 0) key = listKey;
    }
    if (patchValue === null) {
      delete target[key];
      continue;
    }
    if (!(key in target)) {
      // A deletion list for a list the object does not have is a no-op.
      if (!isDeleteList) setCleaned(target, key, patchValue);
      continue;
    }
    const current = target[key];
    if (!sameGoType(current, patchValue)) {
      setCleaned(target, key, patchValue);
      continue;
    }
    if ((isJsonObject(current) || Array.isArray(current)) && lacksField(type, key)) throw errNoField(type!, key);
    const meta = fieldMeta(type, key);
    const strategy = splitStrategy(meta);
    if (isJsonObject(current) && isJsonObject(patchValue)) {
      target[key] = strategy === REPLACE_DIRECTIVE ? patchValue : mergeMap(current, patchValue, fieldType(meta));
    } else if (Array.isArray(current) && Array.isArray(patchValue)) {
      // A deletion list works on any list of scalars, merging or not.
      target[key] = strategy === MERGE_DIRECTIVE || isDeleteList ? mergeSlice(current, patchValue, meta, isDeleteList).merged : patchValue;
    } else {
      target[key] = patchValue;
    }
  }
  return target;
}

/**
 * A patch value that is inserted rather than merged (no live value, or one of another type)
 * loses its null members and every map or list element that carries `$patch`, as kubectl 1.32
 * does; a value that is itself such a map removes the key.
 */
function setCleaned(target: JsonObject, key: string, value: JsonValue): void {
  const cleaned = cleanInsertedValue(value);
  if (cleaned === undefined) delete target[key];
  else target[key] = cleaned;
}

function cleanInsertedValue(value: JsonValue): JsonValue | undefined {
  if (Array.isArray(value)) {
    return value
      .filter((item) => !(isJsonObject(item) && DIRECTIVE_MARKER in item))
      .map((item) => (item === null ? null : (cleanInsertedValue(item) as JsonValue)));
  }
  if (!isJsonObject(value)) return value;
  if (DIRECTIVE_MARKER in value) return undefined;
  const out: JsonObject = {};
  for (const [key, member] of Object.entries(value)) {
    if (member === null) continue;
    const cleaned = cleanInsertedValue(member);
    if (cleaned !== undefined) out[key] = cleaned;
  }
  return out;
}

function handleDirectiveInMergeMap(directive: JsonValue, patch: JsonObject): JsonObject {
  if (directive === REPLACE_DIRECTIVE) {
    // The map becomes the patch map as written (other directives in it are not interpreted).
    delete patch[DIRECTIVE_MARKER];
    return patch;
  }
  if (directive === DELETE_DIRECTIVE) return {};
  throw errBadPatchType(directive, patch);
}

function extractKey(key: string, prefix: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw prefix === DELETE_FROM_PRIMITIVE_LIST_PREFIX ? errBadPrimitiveListFormat() : errBadSetElementOrderFormat();
  }
  return key.slice(slash + 1);
}

function applyRetainKeysDirective(original: JsonObject, patch: JsonObject): void {
  if (!(RETAIN_KEYS_DIRECTIVE in patch)) return;
  const retainKeys = patch[RETAIN_KEYS_DIRECTIVE];
  delete patch[RETAIN_KEYS_DIRECTIVE];
  if (!Array.isArray(retainKeys)) throw errBadRetainKeysFormat();
  const retained = new Set(retainKeys.filter((k): k is string => typeof k === 'string'));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || key.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX) || key.startsWith(SET_ELEMENT_ORDER_PREFIX)) continue;
    if (!retained.has(key)) throw errBadRetainKeysFormat();
  }
  for (const key of Object.keys(original)) {
    if (!retained.has(key)) delete original[key];
  }
}

/** Processes every `$setElementOrder/<field>` of `patch` together with `<field>`. */
function mergePatchIntoOriginal(original: JsonObject, patch: JsonObject, type: StructSchema | undefined): void {
  for (const directiveKey of Object.keys(patch)) {
    if (!directiveKey.startsWith(SET_ELEMENT_ORDER_PREFIX)) continue;
    const setOrder = patch[directiveKey];
    delete patch[directiveKey];
    if (!Array.isArray(setOrder)) throw errBadArgType(SLICE_TYPE, setOrder);
    const key = extractKey(directiveKey, SET_ELEMENT_ORDER_PREFIX);
    const foundOriginal = key in original;
    const foundPatch = key in patch;
    let originalList: JsonValue[] = [];
    let patchList: JsonValue[] = [];
    if (foundOriginal) {
      const value = original[key];
      if (!Array.isArray(value)) throw errBadArgType(SLICE_TYPE, value);
      originalList = value;
    }
    if (foundPatch) {
      const value = patch[key];
      if (!Array.isArray(value)) throw errBadArgType(SLICE_TYPE, value);
      patchList = value;
    }
    if (lacksField(type, key)) throw errNoField(type!, key);
    const meta = fieldMeta(type, key);
    const mergeKey = meta.mergeKey ?? '';
    validatePatchWithSetOrderList(patchList, setOrder, mergeKey);

    let merged: JsonValue[];
    // What upstream's `originalFieldValue` slice shows after the merge wrote through it.
    let liveOrder = originalList;
    if (foundOriginal && !foundPatch) {
      merged = originalList;
    } else if (!foundOriginal && foundPatch) {
      merged = cleanInsertedValue(patchList) as JsonValue[];
    } else if (foundOriginal && foundPatch) {
      if (splitStrategy(meta) === MERGE_DIRECTIVE) {
        const result = mergeSlice(originalList, patchList, meta, false);
        merged = result.merged;
        liveOrder = result.liveBackingView;
      } else {
        merged = patchList;
      }
    } else {
      continue;
    }

    const { patchItems, serverOnlyItems } = mergeKey === ''
      ? partitionPrimitives(merged, setOrder)
      : partitionMaps(merged, setOrder, mergeKey);
    const kind = sliceElementKind(liveOrder, patchList);
    original[key] = normalizeElementOrder(patchItems, serverOnlyItems, setOrder, liveOrder, mergeKey, kind);
    delete patch[key];
  }
}

function validatePatchWithSetOrderList(patchList: JsonValue[], setOrder: JsonValue[], mergeKey: string): void {
  if (setOrder.length === 0 || patchList.length === 0) return;
  const nonDelete = mergeKey === '' ? patchList : extractToDeleteItems(patchList).nonDelete;
  let patchIndex = 0;
  let setOrderIndex = 0;
  while (patchIndex < nonDelete.length && setOrderIndex < setOrder.length) {
    const item = nonDelete[patchIndex];
    if (isJsonObject(item) && DIRECTIVE_MARKER in item) {
      patchIndex++;
      continue;
    }
    if (mergeKeyValueEqual(item, setOrder[setOrderIndex], mergeKey)) patchIndex++;
    setOrderIndex++;
  }
  if (patchIndex < nonDelete.length && setOrderIndex >= setOrder.length) {
    throw new PatchError(
      `The order in patch list:\n${goV(patchList)}\n doesn't match ${SET_ELEMENT_ORDER_PREFIX} list:\n${goV(setOrder)}\n`,
    );
  }
}

function mergeKeyValueEqual(left: JsonValue, right: JsonValue, mergeKey: string): boolean {
  if (mergeKey === '') return goKey(left) === goKey(right);
  if (!isJsonObject(left)) throw errBadArgType(MAP_TYPE, left);
  if (!isJsonObject(right)) throw errBadArgType(MAP_TYPE, right);
  if (!(mergeKey in left)) throw errNoMergeKey(left, mergeKey);
  if (!(mergeKey in right)) throw errNoMergeKey(right, mergeKey);
  return goKey(left[mergeKey]) === goKey(right[mergeKey]);
}

function extractToDeleteItems(list: JsonValue[]): { nonDelete: JsonValue[]; toDelete: JsonValue[] } {
  const nonDelete: JsonValue[] = [];
  const toDelete: JsonValue[] = [];
  for (const item of list) {
    if (!isJsonObject(item)) throw errBadArgType(MAP_TYPE, item);
    (item[DIRECTIVE_MARKER] === DELETE_DIRECTIVE ? toDelete : nonDelete).push(item);
  }
  return { nonDelete, toDelete };
}

type ElementKind = 'map' | 'scalar';

/**
 * upstream sliceElementType: all elements of all lists must share one Go type, and not be lists.
 */
function sliceElementKind(...lists: JsonValue[][]): ElementKind {
  let previous: string | undefined;
  for (const list of lists) {
    for (const item of list) {
      const current = goTypeName(item);
      if (previous === undefined) {
        if (current === SLICE_TYPE) throw errNoListOfLists();
        previous = current;
      } else if (previous !== current) {
        throw new PatchError(`list element types are not identical: ${goV(lists)}`);
      }
    }
  }
  if (previous === undefined) throw new PatchError('no elements in any of the given slices');
  return previous === MAP_TYPE ? 'map' : 'scalar';
}

/**
 * A Go slice over a shared backing array. Upstream deletes from and appends to the live list in
 * place, and its caller later reads the live order through the original slice header, so the
 * result ordering can depend on what was written through; this models exactly that.
 */
class GoSlice {
  constructor(
    readonly backing: JsonValue[],
    readonly len: number,
    readonly cap: number,
  ) {}

  static of(items: JsonValue[]): GoSlice {
    return new GoSlice(items.slice(), items.length, goDecodedCapacity(items.length));
  }

  view(): JsonValue[] {
    return this.backing.slice(0, this.len);
  }

  at(i: number): JsonValue {
    return this.backing[i];
  }

  /** append(s[:i], s[i+1:]...) */
  deleteAt(i: number): GoSlice {
    this.backing.copyWithin(i, i + 1, this.len);
    return new GoSlice(this.backing, this.len - 1, this.cap);
  }

  /** append(s, v): writes through while capacity lasts, then moves to a new array. */
  append(value: JsonValue): GoSlice {
    if (this.len < this.cap) {
      this.backing[this.len] = value;
      return new GoSlice(this.backing, this.len + 1, this.cap);
    }
    const grown = this.backing.slice(0, this.len);
    grown.push(value);
    return new GoSlice(grown, this.len + 1, goGrownCapacity(this.cap, this.len + 1));
  }
}

/** Capacity of a []interface{} that encoding/json built by appending `n` elements one by one. */
function goDecodedCapacity(n: number): number {
  let cap = 0;
  for (let len = 1; len <= n; len++) if (len > cap) cap = goGrownCapacity(cap, len);
  return cap;
}

/** runtime.growslice for 16-byte elements (size-class rounding approximated above 256). */
function goGrownCapacity(oldCap: number, needed: number): number {
  let newCap = oldCap;
  const doubled = oldCap * 2;
  if (needed > doubled) newCap = needed;
  else if (oldCap < 256) newCap = doubled;
  else {
    while (newCap < needed) newCap += (newCap + 3 * 256) >> 2;
  }
  return newCap;
}

interface MergeSliceResult {
  merged: JsonValue[];
  /** The live list as seen through its original slice header after in-place writes. */
  liveBackingView: JsonValue[];
}

function mergeSlice(originalList: JsonValue[], patch: JsonValue[], meta: FieldMeta, isDeleteList: boolean): MergeSliceResult {
  if (originalList.length === 0 && patch.length === 0) return { merged: originalList, liveBackingView: originalList };
  const kind = sliceElementKind(originalList, patch);
  const mergeKey = meta.mergeKey ?? '';

  if (kind !== 'map') {
    if (isDeleteList) {
      const toDelete = new Set(patch.map(goKey));
      return { merged: originalList.filter((v) => !toDelete.has(goKey(v))), liveBackingView: originalList };
    }
    const original = GoSlice.of(originalList);
    const shares = original.cap >= originalList.length + patch.length;
    const both = original.backing.slice(0, original.len).concat(patch);
    const merged = deduplicateScalars(both);
    // When append(original, patch...) fit in capacity, deduplication wrote through the live list.
    const live = shares ? both.slice(0, originalList.length) : originalList;
    const { patchItems, serverOnlyItems } = partitionPrimitives(merged, patch);
    return {
      merged: normalizeElementOrder(patchItems, serverOnlyItems, patch, live, '', kind),
      liveBackingView: live,
    };
  }

  if (mergeKey === '') {
    throw new PatchError(`cannot merge lists without merge key for type ${meta.elementKind ?? 'struct'}`);
  }
  const live = GoSlice.of(originalList);
  const special = mergeSliceWithSpecialElements(live, patch, mergeKey);
  const mergedSlice = mergeSliceWithoutSpecialElements(special.original, special.patch, mergeKey, fieldType(meta));
  const merged = mergedSlice.view();
  const { patchItems, serverOnlyItems } = partitionMaps(merged, special.patch, mergeKey);
  return {
    merged: normalizeElementOrder(patchItems, serverOnlyItems, special.patch, special.original.view(), mergeKey, kind),
    liveBackingView: live.backing.slice(0, originalList.length),
  };
}

/** upstream's "clever" in-place deduplication, whose element order users see. */
function deduplicateScalars(s: JsonValue[]): JsonValue[] {
  const keys = s.map(goKey);
  if (new Set(keys).size === keys.length) return s.slice();
  let last = s.length - 1;
  for (let i = 0; i < last; i++) {
    for (let j = i + 1; j <= last; j++) {
      if (keys[i] === keys[j]) {
        s[j] = s[last];
        keys[j] = keys[last];
        last--;
        j--;
      }
    }
  }
  return s.slice(0, last + 1);
}

function mergeSliceWithSpecialElements(
  original: GoSlice,
  patch: JsonValue[],
  mergeKey: string,
): { original: GoSlice; patch: JsonValue[] } {
  const withoutSpecial: JsonValue[] = [];
  let replace = false;
  let current = original;
  for (const item of patch) {
    const element = item as JsonObject;
    if (!(DIRECTIVE_MARKER in element)) {
      withoutSpecial.push(item);
      continue;
    }
    const directive = element[DIRECTIVE_MARKER];
    if (directive === DELETE_DIRECTIVE) {
      if (!(mergeKey in element)) throw errNoMergeKey(element, mergeKey);
      current = deleteMatchingEntries(current, mergeKey, element[mergeKey]);
    } else if (directive === REPLACE_DIRECTIVE) {
      replace = true;
    } else if (directive === MERGE_DIRECTIVE) {
      throw new PatchError('merging lists cannot yet be specified in the patch');
    } else {
      throw errBadPatchType(directive, element);
    }
  }
  if (replace) return { original: GoSlice.of(withoutSpecial), patch: [] };
  return { original: current, patch: withoutSpecial };
}

function deleteMatchingEntries(slice: GoSlice, mergeKey: string, value: JsonValue): GoSlice {
  const wanted = goKey(value);
  let current = slice;
  // Scans forward; after a removal the next element has shifted into the same index.
  for (let i = 0; i < current.len;) {
    const element = current.at(i);
    if (!isJsonObject(element)) throw new PatchError(`value for key ${i} is not a map.`);
    if (mergeKey in element && goKey(element[mergeKey]) === wanted) current = current.deleteAt(i);
    else i++;
  }
  return current;
}

function mergeSliceWithoutSpecialElements(
  original: GoSlice,
  patch: JsonValue[],
  mergeKey: string,
  elementType: StructSchema | undefined,
): GoSlice {
  // First index of each merge-key value; appended elements become findable too, as upstream.
  const indexByKey = new Map<string, number>();
  for (let i = 0; i < original.len; i++) {
    const element = original.at(i);
    if (!isJsonObject(element)) throw new PatchError(`value for key ${i} is not a map.`);
    if (!(mergeKey in element)) continue;
    const key = goKey(element[mergeKey]);
    if (!indexByKey.has(key)) indexByKey.set(key, i);
  }
  let current = original;
  for (const item of patch) {
    const element = item as JsonObject;
    if (!(mergeKey in element)) throw errNoMergeKey(element, mergeKey);
    const key = goKey(element[mergeKey]);
    const index = indexByKey.get(key);
    if (index !== undefined) {
      current.backing[index] = mergeMap(current.at(index) as JsonObject, element, elementType);
    } else {
      indexByKey.set(key, current.len);
      current = current.append(item);
    }
  }
  return current;
}

function partitionPrimitives(list: JsonValue[], partitionBy: JsonValue[]): { patchItems: JsonValue[]; serverOnlyItems: JsonValue[] } {
  const inPatch = new Set(partitionBy.map(goKey));
  const patchItems: JsonValue[] = [];
  const serverOnlyItems: JsonValue[] = [];
  for (const item of list) (inPatch.has(goKey(item)) ? patchItems : serverOnlyItems).push(item);
  return { patchItems, serverOnlyItems };
}

function partitionMaps(list: JsonValue[], partitionBy: JsonValue[], mergeKey: string): { patchItems: JsonValue[]; serverOnlyItems: JsonValue[] } {
  // upstream scans partitionBy linearly and fails on the first non-map it meets before a match.
  const firstIndex = new Map<string, number>();
  let firstNonMap = Infinity;
  partitionBy.forEach((candidate, i) => {
    if (!isJsonObject(candidate)) {
      firstNonMap = Math.min(firstNonMap, i);
      return;
    }
    if (!(mergeKey in candidate)) return;
    const key = goKey(candidate[mergeKey]);
    if (!firstIndex.has(key)) firstIndex.set(key, i);
  });
  const patchItems: JsonValue[] = [];
  const serverOnlyItems: JsonValue[] = [];
  for (const item of list) {
    if (!isJsonObject(item)) throw errBadArgType(MAP_TYPE, item);
    if (!(mergeKey in item)) throw errNoMergeKey(item, mergeKey);
    const index = firstIndex.get(goKey(item[mergeKey]));
    if (index === undefined || index > firstNonMap) {
      if (firstNonMap !== Infinity) throw new PatchError(`value for key ${firstNonMap} is not a map.`);
      serverOnlyItems.push(item);
    } else {
      patchItems.push(item);
    }
  }
  return { patchItems, serverOnlyItems };
}

/** Position lookup by merge-key value (maps) or by value (scalars); first occurrence wins. */
function positionIndex(list: JsonValue[], mergeKey: string, kind: ElementKind): (item: JsonValue) => number {
  const valueOf = (item: JsonValue): JsonValue | undefined =>
    kind === 'map' ? (isJsonObject(item) ? item[mergeKey] : undefined) : item;
  const positions = new Map<string, number>();
  list.forEach((item, i) => {
    const key = goKey(valueOf(item));
    if (!positions.has(key)) positions.set(key, i);
  });
  return (item) => positions.get(goKey(valueOf(item))) ?? -1;
}

function normalizeElementOrder(
  patchItems: JsonValue[],
  serverOnlyItems: JsonValue[],
  patchOrder: JsonValue[],
  serverOrder: JsonValue[],
  mergeKey: string,
  kind: ElementKind,
): JsonValue[] {
  const sortedPatch = normalizeSliceOrder(patchItems, patchOrder, mergeKey, kind);
  const sortedServer = normalizeSliceOrder(serverOnlyItems, serverOrder, mergeKey, kind);
  return mergeSortedSlice(sortedServer, sortedPatch, serverOrder, mergeKey, kind);
}

function normalizeSliceOrder(toSort: JsonValue[], order: JsonValue[], mergeKey: string, kind: ElementKind): JsonValue[] {
  let items = toSort;
  let toDelete: JsonValue[] = [];
  if (kind === 'map') {
    for (const list of [toSort, order]) {
      for (const item of list) {
        if (!isJsonObject(item)) throw errBadArgType(MAP_TYPE, item);
        if (!(mergeKey in item)) throw errNoMergeKey(item, mergeKey);
      }
    }
    ({ nonDelete: items, toDelete } = extractToDeleteItems(toSort));
  }
  const indexOf = positionIndex(order, mergeKey, kind);
  const keyed = items.map((item, i) => ({ item, i, at: indexOf(item) }));
  // Stable sort by position in `order` (all items are found there on every upstream path).
  keyed.sort((a, b) => (a.at >= 0 && b.at >= 0 ? a.at - b.at : 0) || a.i - b.i);
  return keyed.map((k) => k.item).concat(toDelete);
}

/**
 * Interleaves server-only items (left) into patch items (right): a server-only item goes first
 * only when both it and the next patch item are in the live list and it comes earlier there.
 */
function mergeSortedSlice(left: JsonValue[], right: JsonValue[], serverOrder: JsonValue[], mergeKey: string, kind: ElementKind): JsonValue[] {
  const indexOf = positionIndex(serverOrder, mergeKey, kind);
  const out: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexOf(left[i]);
      const ri = indexOf(right[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}
