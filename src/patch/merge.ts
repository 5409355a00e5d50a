/**
 * JSON merge patch (RFC 7386) through the json-merge-patch package, adjusted to what kubectl
 * 1.32 does with it locally (evanphx/json-patch v4 MergePatch):
 * - a patch that is not a JSON object is rejected (`Invalid JSON Patch`), except an array,
 *   which becomes the whole document (and then fails to decode as an object);
 * - `null` members are also dropped from objects nested in arrays of newly set values.
 */
import jsonMergePatch from 'json-merge-patch';
import { PatchError } from './errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from './types.js';

export function jsonMergePatchApply(original: JsonObject, patch: JsonValue): JsonValue {
  if (Array.isArray(patch)) return pruneNulls(structuredClone(patch));
  if (!isJsonObject(patch)) throw new PatchError('Invalid JSON Patch');
  return jsonMergePatch.apply(structuredClone(original), withArrayNullsPruned(original, patch));
}

/**
 * kubectl prunes nulls inside a patch value that replaces something other than an object;
 * an array that replaces an object is taken verbatim. RFC 7386 (and the package) keep arrays
 * verbatim everywhere, so the pruning is done on the patch beforehand.
 */
function withArrayNullsPruned(target: JsonValue | undefined, patch: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(patch)) {
    const current = isJsonObject(target) ? target[key] : undefined;
    if (Array.isArray(value)) out[key] = isJsonObject(current) ? value : pruneNulls(structuredClone(value));
    else if (isJsonObject(value)) out[key] = withArrayNullsPruned(current, value);
    else out[key] = value;
  }
  return out;
}

function pruneNulls(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map((v) => (v === null ? v : pruneNulls(v)));
  if (isJsonObject(value)) {
    for (const key of Object.keys(value)) {
      if (value[key] === null) delete value[key];
      else value[key] = pruneNulls(value[key]);
    }
  }
  return value;
}
