/**
 * The patch engine of `orch patch`: pure functions from (object, parsed patch, type) to the
 * patched object, behaving like `kubectl patch --local` (kubectl 1.32).
 */
import { lookupSchema } from '../api/merge-metadata.js';
import { PatchError } from './errors.js';
import { goJson } from './go-format.js';
import { jsonPatchApply } from './json.js';
import { jsonMergePatchApply } from './merge.js';
import { strategicMergePatch } from './strategic.js';
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from './types.js';

export { PatchError } from './errors.js';
export type { JsonObject, JsonValue } from './types.js';

export type PatchType = 'strategic' | 'merge' | 'json';

export interface ApplyPatchInput {
  /** The object to patch; it must carry apiVersion and kind (read from a file or the server). */
  object: JsonObject;
  /** The parsed patch text. */
  patch: JsonValue;
  type: PatchType;
}

export interface ApplyPatchResult {
  result: JsonObject;
  /** Whether the result differs from the input object (kubectl's "patched (no change)" test). */
  changed: boolean;
}

/** apiVersion "group/version" or "version" as kubectl prints it in a GroupVersionKind. */
function groupVersionKind(object: JsonObject): string {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const slash = apiVersion.indexOf('/');
  const group = slash >= 0 ? apiVersion.slice(0, slash) : '';
  const version = slash >= 0 ? apiVersion.slice(slash + 1) : apiVersion;
  return `${group}/${version}, Kind=${kind}`;
}

/**
 * The patched document must decode back into an object like kubectl's unstructured decoder
 * requires: a JSON object with a non-empty string `kind`.
 */
function asDecodedObject(value: JsonValue): JsonObject {
  if (!isJsonObject(value)) {
    const kind = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value === 'boolean' ? 'bool' : typeof value;
    throw new PatchError(`json: cannot unmarshal ${kind} into Go value of type unstructured.detector`);
  }
  if (typeof value.kind !== 'string' || value.kind === '') {
    throw new PatchError(`Object 'Kind' is missing in '${goJson(value)}'`);
  }
  return value;
}

/** Applies a patch of the given type; throws PatchError with kubectl's message on failure. */
export function applyPatch({ object, patch, type }: ApplyPatchInput): ApplyPatchResult {
  let patched: JsonValue;
  switch (type) {
    case 'json':
      patched = jsonPatchApply(object, patch);
      break;
    case 'merge':
      patched = jsonMergePatchApply(object, patch);
      break;
    case 'strategic': {
      const schema = lookupSchema(String(object.apiVersion ?? ''), String(object.kind ?? ''));
      if (!schema) {
        // Strategic merge needs the built-in type's metadata; custom resources have none
        // (seed rule 1: strategic merge patch is not supported for custom resources).
        throw new PatchError(`strategic merge patch is not supported for ${groupVersionKind(object)} locally, try --type merge`);
      }
      patched = strategicMergePatch(object, patch, schema);
      break;
    }
    default:
      throw new PatchError(`--type must be one of [json merge strategic], not "${String(type)}"`);
  }
  const result = asDecodedObject(patched);
  return { result, changed: !jsonEqual(result, object) };
}
