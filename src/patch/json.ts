/**
 * JSON patch (RFC 6902) as kubectl 1.32 applies it locally: through evanphx/json-patch v4.
 *
 * The mutations themselves are done by fast-json-patch. What is hand-written here is the
 * resolution of each operation's target the way v4 resolves it, because that decides which
 * error the user sees and v4 differs from RFC 6902 in ways that show:
 * - `replace` of a missing object member adds it; `copy` from a missing member copies null;
 * - an `add` without `value` adds null; negative array indexes count from the end;
 * - the first path segment is never looked up (`metadata/x` addresses `/x`).
 * Error texts are v4's, with kubectl's rewrite of "doc is missing key" into
 * `Object to be patched is missing field (...)`.
 */
import jsonpatch from 'fast-json-patch';
import { PatchError } from './errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from './types.js';

const MISSING = 'missing value';
const INVALID_INDEX = 'invalid index referenced';

/** An error of one operation, before kubectl's final rewording. */
class OperationError extends Error {}

/** Go encoding/json's name for the JSON type that failed to unmarshal. */
function jsonKindName(value: JsonValue): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'boolean') return 'bool';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** strconv.Atoi, with its error text. */
function atoi(text: string): number {
  if (!/^[+-]?\d+$/.test(text)) throw new OperationError(`strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`);
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new OperationError(`strconv.Atoi: parsing ${JSON.stringify(text)}: value out of range`);
  return n;
}

function invalidIndex(idx: number): OperationError {
  return new OperationError(`Unable to access invalid index: ${idx}: ${INVALID_INDEX}`);
}

/** RFC 6901 unescaping as v4 does it (~1 first, then ~0). */
function decodePatchKey(key: string): string {
  return key.replace(/~1/g, '/').replace(/~0/g, '~');
}

function encodePointerSegment(key: string): string {
  return jsonpatch.escapePathComponent(key);
}

/** A resolved container (object or array) with its canonical JSON pointer. */
interface Target {
  container: JsonObject | JsonValue[];
  pointer: string;
  key: string;
}

/** v4 findObject: walks all segments but the first and the last. */
function findObject(doc: JsonValue, path: string): Target | undefined {
  const split = path.split('/');
  if (split.length < 2) return undefined;
  let current: JsonValue = doc;
  let pointer = '';
  for (const raw of split.slice(1, -1)) {
    const part = decodePatchKey(raw);
    let next: JsonValue | undefined;
    if (Array.isArray(current)) {
      let idx: number;
      try {
        idx = resolveIndexForGet(current, part);
      } catch {
        return undefined;
      }
      next = current[idx];
      pointer += `/${idx}`;
    } else if (isJsonObject(current)) {
      next = current[part];
      pointer += `/${encodePointerSegment(part)}`;
    }
    if (next === undefined || next === null || (!Array.isArray(next) && !isJsonObject(next))) return undefined;
    current = next;
  }
  if (!Array.isArray(current) && !isJsonObject(current)) return undefined;
  return { container: current, pointer, key: decodePatchKey(split[split.length - 1]) };
}

function resolveIndexForGet(list: JsonValue[], key: string): number {
  let idx = atoi(key);
  if (idx < 0) {
    if (idx < -list.length) throw invalidIndex(idx);
    idx += list.length;
  }
  if (idx >= list.length) throw invalidIndex(idx);
  return idx;
}

/** container.get: undefined for a missing object member (v4 reports no error there). */
function get(target: Target): { value: JsonValue | undefined; pointer: string } {
  const { container, key, pointer } = target;
  if (Array.isArray(container)) {
    const idx = resolveIndexForGet(container, key);
    return { value: container[idx], pointer: `${pointer}/${idx}` };
  }
  return { value: container[key], pointer: `${pointer}/${encodePointerSegment(key)}` };
}

function applyOp(doc: JsonValue, operation: jsonpatch.Operation): JsonValue {
  return jsonpatch.applyOperation(doc, operation, false, true, true).newDocument as JsonValue;
}

function add(doc: JsonValue, target: Target, value: JsonValue): JsonValue {
  const { container, key, pointer } = target;
  if (Array.isArray(container) && key !== '-') {
    let idx: number;
    try {
      idx = atoi(key);
    } catch (e) {
      throw new OperationError(`value was not a proper array index: '${key}': ${(e as Error).message}`);
    }
    const size = container.length + 1;
    if (idx >= size || idx < -size) throw invalidIndex(idx);
    if (idx < 0) idx += size;
    return applyOp(doc, { op: 'add', path: `${pointer}/${idx}`, value });
  }
  const segment = Array.isArray(container) ? '-' : encodePointerSegment(key);
  return applyOp(doc, { op: 'add', path: `${pointer}/${segment}`, value });
}

function remove(doc: JsonValue, target: Target): JsonValue {
  const { container, key, pointer } = target;
  if (Array.isArray(container)) {
    let idx = atoi(key);
    if (idx >= container.length) throw invalidIndex(idx);
    if (idx < 0) {
      if (idx < -container.length) throw invalidIndex(idx);
      idx += container.length;
    }
    return applyOp(doc, { op: 'remove', path: `${pointer}/${idx}` });
  }
  if (!(key in container)) throw new OperationError(`Unable to remove nonexistent key: ${key}: ${MISSING}`);
  return applyOp(doc, { op: 'remove', path: `${pointer}/${encodePointerSegment(key)}` });
}

/** Reads a string member the way v4's Operation.Path/From do; undefined value means absent. */
function stringMember(op: JsonObject, name: 'path' | 'from'): string {
  const value = op[name];
  if (value === undefined || value === null) {
    throw new OperationError(name === 'path' ? `operation missing path field: ${MISSING}` : `operation, missing from field: ${MISSING}`);
  }
  if (typeof value !== 'string') {
    throw new OperationError(`json: cannot unmarshal ${jsonKindName(value)} into Go value of type string`);
  }
  return value;
}

function wrap(prefix: string, fn: () => string): string {
  try {
    return fn();
  } catch (e) {
    if (e instanceof OperationError) throw new OperationError(`${prefix}: ${e.message}`);
    throw e;
  }
}

function deepEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  return jsonpatch._areEquals(a, b);
}

function applyOne(doc: JsonValue, op: JsonObject): JsonValue {
  const kind = typeof op.op === 'string' ? op.op : 'unknown';
  const value = (op.value === undefined ? null : structuredClone(op.value)) as JsonValue;
  switch (kind) {
    case 'add': {
      const path = wrap('add operation failed to decode path', () => {
        try {
          return stringMember(op, 'path');
        } catch {
          throw new OperationError(MISSING);
        }
      });
      const target = findObject(doc, path);
      if (!target) throw new OperationError(`add operation does not apply: doc is missing path: "${path}": ${MISSING}`);
      return withPrefix(`error in add for path: '${path}'`, () => add(doc, target, value));
    }
    case 'remove': {
      const path = wrap('remove operation failed to decode path', () => {
        try {
          return stringMember(op, 'path');
        } catch {
          throw new OperationError(MISSING);
        }
      });
      const target = findObject(doc, path);
      if (!target) throw new OperationError(`remove operation does not apply: doc is missing path: "${path}": ${MISSING}`);
      return withPrefix(`error in remove for path: '${path}'`, () => remove(doc, target));
    }
    case 'replace': {
      const path = wrap('replace operation failed to decode path', () => stringMember(op, 'path'));
      if (path === '') {
        // v4 swaps the whole document for an object or array, and silently ignores anything else.
        return Array.isArray(value) || isJsonObject(value) ? value : doc;
      }
      const target = findObject(doc, path);
      if (!target) throw new OperationError(`replace operation does not apply: doc is missing path: ${path}: ${MISSING}`);
      let pointer: string;
      try {
        pointer = get(target).pointer;
      } catch {
        throw new OperationError(`replace operation does not apply: doc is missing key: ${path}: ${MISSING}`);
      }
      return applyOp(doc, { op: Array.isArray(target.container) ? 'replace' : 'add', path: pointer, value });
    }
    case 'move': {
      const from = wrap('move operation failed to decode from', () => stringMember(op, 'from'));
      const source = findObject(doc, from);
      if (!source) throw new OperationError(`move operation does not apply: doc is missing from path: ${from}: ${MISSING}`);
      const moved = withPrefixValue(`error in move for path: '${source.key}'`, () => get(source).value);
      doc = withPrefix(`error in move for path: '${source.key}'`, () => remove(doc, source));
      const path = wrap('move operation failed to decode path', () => stringMember(op, 'path'));
      const target = findObject(doc, path);
      if (!target) throw new OperationError(`move operation does not apply: doc is missing destination path: ${path}: ${MISSING}`);
      return withPrefix(`error in move for path: '${path}'`, () => add(doc, target, moved ?? null));
    }
    case 'copy': {
      const from = wrap('copy operation failed to decode from', () => stringMember(op, 'from'));
      const source = findObject(doc, from);
      if (!source) throw new OperationError(`copy operation does not apply: doc is missing from path: ${from}: ${MISSING}`);
      const copied = withPrefixValue(`error in copy for from: '${from}'`, () => get(source).value);
      const path = wrap('copy operation failed to decode path', () => {
        try {
          return stringMember(op, 'path');
        } catch {
          throw new OperationError(MISSING);
        }
      });
      const target = findObject(doc, path);
      if (!target) throw new OperationError(`copy operation does not apply: doc is missing destination path: ${path}: ${MISSING}`);
      return withPrefix(`error in add for path: '${path}'`, () => add(doc, target, structuredClone(copied ?? null)));
    }
    case 'test': {
      const path = wrap('test operation failed to decode path', () => stringMember(op, 'path'));
      const failed = () => new OperationError(`testing value ${path} failed: test failed`);
      if (path === '') {
        if (deepEqual(doc, op.value)) return doc;
        throw failed();
      }
      const target = findObject(doc, path);
      if (!target) throw new OperationError(`test operation does not apply: is missing path: ${path}: ${MISSING}`);
      const actual = withPrefixValue(`error in test for path: '${path}'`, () => get(target).value);
      // v4 cannot tell a null member from a missing one.
      if (actual === undefined || actual === null) {
        if (op.value === null) return doc;
        throw failed();
      }
      if (op.value === undefined || !deepEqual(actual, op.value)) throw failed();
      return doc;
    }
    default:
      throw new OperationError(`Unexpected kind: ${kind}`);
  }
}

function withPrefix(prefix: string, fn: () => JsonValue): JsonValue {
  try {
    return fn();
  } catch (e) {
    if (e instanceof OperationError) throw new OperationError(`${prefix}: ${e.message}`);
    throw e;
  }
}

function withPrefixValue(prefix: string, fn: () => JsonValue | undefined): JsonValue | undefined {
  try {
    return fn();
  } catch (e) {
    if (e instanceof OperationError) throw new OperationError(`${prefix}: ${e.message}`);
    throw e;
  }
}

/** Checks the operation list's shape like v4's decoder does. */
function decodeOperations(patch: JsonValue): JsonObject[] {
  if (patch === null) return [];
  if (!Array.isArray(patch)) {
    throw new PatchError(`json: cannot unmarshal ${jsonKindName(patch)} into Go value of type jsonpatch.Patch`);
  }
  return patch.map((op) => {
    if (op === null) return {};
    if (!isJsonObject(op)) {
      throw new PatchError(`json: cannot unmarshal ${jsonKindName(op)} into Go value of type jsonpatch.Operation`);
    }
    return op;
  });
}

/** Applies the operations in order; the first failing one aborts the whole patch. */
export function jsonPatchApply(original: JsonObject, patch: JsonValue): JsonValue {
  const operations = decodeOperations(patch);
  let doc: JsonValue = structuredClone(original);
  for (const op of operations) {
    try {
      doc = applyOne(doc, op);
    } catch (e) {
      if (!(e instanceof OperationError)) throw e;
      const message = e.message;
      // kubectl rewords v4's "doc is missing key" error (cmd/patch/patch.go getPatchedJSON).
      const at = message.indexOf('doc is missing key');
      if (at >= 0) {
        const key = message.slice(message.indexOf('key:') + 5);
        throw new PatchError(`Object to be patched is missing field (${key})`);
      }
      throw new PatchError(message);
    }
  }
  return doc;
}
