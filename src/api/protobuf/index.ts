/**
 * Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`, what kubectl's typed
 * clients send) decoded into the JSON objects the REST layer handles. Responses stay JSON, which
 * every such client also accepts.
 */
import { isDeepStrictEqual } from 'node:util';
import { NAME_SET_IDS, nameSet } from '../names.js';
import { ApiError, badRequest, failureStatus } from '../status.js';
import type { JsonObject } from '../../patch/types.js';
import { decodeMessage, ProtobufDecodeError, type DecodeOptions } from './decode.js';
import { decodeEnvelope, hasProtobufMagic } from './envelope.js';
import { encodeEnvelope, encodeMessage } from './encode.js';
import { messageForKind, messageRegistry } from './registry.js';

export { hasProtobufMagic } from './envelope.js';

/** Both name sets' protobuf media types are accepted whichever is active (kubectl always sends upstream's). */
export const PROTOBUF_MEDIA_TYPES: ReadonlySet<string> = new Set(NAME_SET_IDS.map((id) => nameSet(id).protobufMediaType));

/** A well-formed envelope carrying a kind we have no schema for. */
export class UnsupportedKindError extends Error {
  constructor(readonly apiVersion: string, readonly kind: string) {
    super(`${kind} (${apiVersion || 'no apiVersion'}) cannot be sent as protobuf to this server; send it as JSON instead (kubectl create -f FILE, or -o json)`);
    this.name = 'UnsupportedKindError';
  }
}

/** Envelope + typed message -> the object as JSON, apiVersion and kind first (as kubectl prints it). */
export function decodeProtobufObject(body: Uint8Array, options: DecodeOptions = {}): JsonObject {
  const envelope = decodeEnvelope(body);
  if (envelope.contentEncoding !== '') throw new ProtobufDecodeError(`unsupported contentEncoding "${envelope.contentEncoding}"`);
  const message = messageForKind(envelope.apiVersion, envelope.kind);
  if (!message) throw new UnsupportedKindError(envelope.apiVersion, envelope.kind);
  const object = decodeMessage(envelope.raw, message, messageRegistry(), options) as JsonObject;
  return { kind: envelope.kind, apiVersion: envelope.apiVersion, ...object };
}

/** For the REST layer: decodes a protobuf body or throws the Status error to answer (415 for an unsupported kind, 400 for a malformed body). */
export function decodeProtobufBody(body: Uint8Array): JsonObject {
  try {
    return decodeProtobufObject(body);
  } catch (error) {
    if (error instanceof UnsupportedKindError) throw new ApiError(failureStatus(415, 'UnsupportedMediaType', error.message));
    if (error instanceof ApiError) throw error;
    throw badRequest(`protobuf: ${(error as Error).message}`);
  }
}

export function isProtobufBody(mediaType: string, body: Uint8Array): boolean {
  return PROTOBUF_MEDIA_TYPES.has(mediaType) && hasProtobufMagic(body);
}

/**
 * A built-in object as a protobuf envelope, or undefined when protobuf cannot carry it exactly: a
 * kind without a schema here, or an object with fields or values the schema would drop or change
 * (checked by decoding the bytes again). Upstream stores unregistered types as JSON the same way.
 */
export function encodeProtobufObject(object: JsonObject): Buffer | undefined {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const message = messageForKind(apiVersion, kind);
  if (!message) return undefined;
  let bytes: Buffer;
  try {
    const { apiVersion: _a, kind: _k, ...rest } = object;
    bytes = encodeEnvelope(apiVersion, kind, encodeMessage(rest, message, messageRegistry()));
    if (!isDeepStrictEqual(decodeProtobufObject(bytes), object)) return undefined;
  } catch {
    return undefined;
  }
  return bytes;
}
