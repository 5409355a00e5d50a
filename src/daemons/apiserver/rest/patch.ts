/**
 * PATCH bodies applied on the server through the patch engine, with upstream's server-side error
 * mapping (handlers/patch.go; reference patch.md §2 and §4.5). Pure.
 */
import { lookupSchema, type StructSchema } from '../../../api/merge-metadata.js';
import { badRequest, patchRejected, plainServerError, requestEntityTooLarge, unsupportedMediaType } from '../../../api/status.js';
import { applyPatch, PatchError } from '../../../patch/index.js';
import { strategicMergePatch } from '../../../patch/strategic.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../patch/types.js';
import { BUILTIN_PATCH_MEDIA } from './negotiation.js';
import { checkDepth } from './http-io.js';

export const MAX_JSON_PATCH_OPERATIONS = 10000;

/** Built-in kinds without declared list metadata still take strategic patches: maps merge, lists replace. */
function genericSchema(kind: string): StructSchema {
  return { name: kind, fields: { metadata: { type: 'ObjectMeta', shape: 'struct' } }, open: true };
}

export function serverSideApplyUnsupported(): Error {
  const error = unsupportedMediaType(BUILTIN_PATCH_MEDIA.filter((m) => m !== 'application/apply-patch+yaml'));
  error.status.message = `server-side apply (application/apply-patch+yaml) is not supported yet - ${error.status.message}`;
  return error;
}

function parsePatchBody(body: Buffer): JsonValue {
  let patch: JsonValue;
  try {
    patch = JSON.parse(body.toString('utf8')) as JsonValue;
  } catch (error) {
    throw badRequest(`error decoding patch: ${(error as Error).message}`);
  }
  // The patch engines recurse over the patch: a deeply nested one would overflow the stack (500).
  checkDepth(patch);
  return patch;
}

/** Applies a json, merge or strategic patch to `object`; `custom` marks custom resources (no strategic). */
export function applyServerPatch(object: JsonObject, body: Buffer, type: 'json' | 'merge' | 'strategic'): JsonObject {
  const patch = parsePatchBody(body);
  if (type === 'json') {
    if (!Array.isArray(patch)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
    if (patch.length > MAX_JSON_PATCH_OPERATIONS) {
      throw requestEntityTooLarge(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${patch.length}`);
    }
    if (patch.some((op) => !isJsonObject(op))) throw badRequest('json: cannot unmarshal into Go value of type jsonpatch.Operation');
    try {
      return applyPatch({ object, patch, type }).result;
    } catch (error) {
      // Upstream does not return the underlying reason of a failed JSON patch.
      if (error instanceof PatchError) throw patchRejected();
      throw error;
    }
  }
  if (type === 'merge') {
    if (!isJsonObject(patch)) throw badRequest('Invalid JSON Patch');
    try {
      return applyPatch({ object, patch, type }).result;
    } catch (error) {
      if (error instanceof PatchError) throw badRequest(error.message);
      throw error;
    }
  }
  try {
    const schema = lookupSchema(String(object.apiVersion ?? ''), String(object.kind ?? ''));
    if (schema) return applyPatch({ object, patch, type }).result;
    if (!isJsonObject(patch)) throw new PatchError('invalid JSON document');
    return strategicMergePatch(object, patch, genericSchema(String(object.kind)));
  } catch (error) {
    if (!(error instanceof PatchError)) throw error;
    const message = error.message;
    if (message === 'invalid JSON document' || message.startsWith('invalid patch format')) throw badRequest(message);
    if (message === 'lists of lists are not supported' || message.includes('retainKeys list')) throw patchRejected();
    throw plainServerError(message);
  }
}
