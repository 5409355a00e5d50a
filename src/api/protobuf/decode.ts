/**
 * Protobuf wire bytes of one message -> the JSON object Go's encoding/json would print for it,
 * driven by the schema tables. The wire primitives come from protobufjs's Reader; the walk is
 * ours because the JSON form depends on Go's json tags (omitempty, inline structs) and on the
 * apimachinery value types, which no generic protobuf-to-JSON mapping knows. Pure.
 *
 * Unknown fields are skipped without recursing into them, so only the schemas' own nesting can
 * recurse, and a hostile body cannot nest deeper than the known message types do.
 */
import protobuf from 'protobufjs/minimal.js';
import type { JsonObject, JsonValue } from '../../patch/types.js';
import type { CompiledMessage, FieldSpec, Scalar, ValueType } from './schema.js';
import { RENDERERS } from './render.js';

type Reader = protobuf.Reader;

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_BYTES = 2;

/** A body that does not follow the wire format or the schema's wire types. */
export class ProtobufDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufDecodeError';
  }
}

export interface DecodeOptions {
  /** Called for each skipped field, with its JSON path (tests use it to prove a fixture is fully understood). */
  onUnknownField?: (path: string, fieldNumber: number) => void;
}

interface Context {
  registry: ReadonlyMap<string, CompiledMessage>;
  options: DecodeOptions;
}

/** Decodes `bytes` as message `type` of `registry`. */
export function decodeMessage(
  bytes: Uint8Array, type: string, registry: ReadonlyMap<string, CompiledMessage>, options: DecodeOptions = {},
): JsonValue {
  return decodeValueMessage(bytes, type, { registry, options }, '');
}

function decodeValueMessage(bytes: Uint8Array, type: string, ctx: Context, path: string): JsonValue {
  const fields = decodeFields(bytes, type, ctx, path);
  const render = RENDERERS[type];
  return render ? render(fields, bytes.length) : fields;
}

function decodeFields(bytes: Uint8Array, type: string, ctx: Context, path: string): JsonObject {
  const schema = ctx.registry.get(type);
  if (!schema) throw new ProtobufDecodeError(`no schema for message ${type}`);
  const reader = protobuf.Reader.create(bytes);
  const out: JsonObject = {};
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const number = tag >>> 3;
    const wireType = tag & 7;
    if (number === 0) throw new ProtobufDecodeError(`invalid field number 0 in ${type}`);
    const field = schema.get(number);
    if (!field) {
      reader.skipType(wireType);
      ctx.options.onUnknownField?.(`${path}${path ? '.' : ''}${type}#${number}`, number);
      continue;
    }
    const fieldPath = path ? `${path}.${field.json}` : field.json;
    if (field.shape === 'map') {
      expectWire(wireType, WIRE_BYTES, type, field);
      const [key, value] = decodeMapEntry(reader.bytes(), field, ctx, fieldPath);
      const map = (out[field.json] ??= {}) as JsonObject;
      map[key] = value;
    } else if (field.shape === 'repeated') {
      const list = (out[field.json] ??= []) as JsonValue[];
      if ('scalar' in field.value && wireType === WIRE_BYTES && isPackable(field.value.scalar)) {
        // Packed numbers: one length-delimited run of values.
        const run = protobuf.Reader.create(reader.bytes());
        while (run.pos < run.len) list.push(readScalar(run, field.value.scalar));
      } else {
        list.push(readValue(reader, wireType, field, ctx, `${fieldPath}[${list.length}]`));
      }
    } else if (field.inline) {
      expectWire(wireType, WIRE_BYTES, type, field);
      Object.assign(out, decodeFields(reader.bytes(), messageOf(field), ctx, path));
    } else {
      out[field.json] = readValue(reader, wireType, field, ctx, fieldPath);
    }
  }
  return applyJsonTags(out, schema);
}

/**
 * Go's json tags: omitempty drops zero scalars unless the field is a pointer; without omitempty,
 * an absent (nil) list, map or pointer prints as null.
 */
function applyJsonTags(out: JsonObject, schema: CompiledMessage): JsonObject {
  for (const field of schema.values()) {
    if (field.inline) continue;
    const value = out[field.json];
    if (value === undefined) {
      if (field.required && (field.shape !== 'single' || field.pointer)) out[field.json] = null;
      continue;
    }
    if (field.shape === 'single' && 'scalar' in field.value && !field.pointer && !field.required && isZero(value)) delete out[field.json];
  }
  return out;
}

function isZero(value: JsonValue): boolean {
  return value === '' || value === 0 || value === false;
}

function messageOf(field: FieldSpec): string {
  if (!('message' in field.value)) throw new ProtobufDecodeError(`field ${field.json} is not a message`);
  return field.value.message;
}

function readValue(reader: Reader, wireType: number, field: FieldSpec, ctx: Context, path: string): JsonValue {
  return readTyped(reader, wireType, field.value, ctx, path, field.json);
}

function readTyped(reader: Reader, wireType: number, value: ValueType, ctx: Context, path: string, name: string): JsonValue {
  if ('message' in value) {
    if (wireType !== WIRE_BYTES) throw new ProtobufDecodeError(`field ${name}: wire type ${wireType}, expected a message`);
    return decodeValueMessage(reader.bytes(), value.message, ctx, path);
  }
  const expected = value.scalar === 'string' || value.scalar === 'bytes' ? WIRE_BYTES : value.scalar === 'float64' ? WIRE_FIXED64 : WIRE_VARINT;
  if (wireType !== expected) throw new ProtobufDecodeError(`field ${name}: wire type ${wireType}, expected ${expected}`);
  return readScalar(reader, value.scalar);
}

function readScalar(reader: Reader, scalar: Scalar): JsonValue {
  switch (scalar) {
    case 'string':
      return reader.string();
    case 'bytes':
      return Buffer.from(reader.bytes()).toString('base64');
    case 'bool':
      return reader.bool();
    case 'int32':
      return reader.int32();
    case 'int64':
      return longToNumber(reader.int64());
    case 'float64':
      return reader.double();
  }
}

function isPackable(scalar: Scalar): boolean {
  return scalar === 'int32' || scalar === 'int64' || scalar === 'bool' || scalar === 'float64';
}

/** protobufjs returns a Long when the `long` package is present; JSON numbers are doubles anyway. */
function longToNumber(value: number | protobuf.Long): number {
  return typeof value === 'number' ? value : protobuf.util.LongBits.from(value).toNumber(false);
}

/** A map entry: {1: key string, 2: value}; a missing value is the value type's zero. */
function decodeMapEntry(bytes: Uint8Array, field: FieldSpec, ctx: Context, path: string): [string, JsonValue] {
  const reader = protobuf.Reader.create(bytes);
  let key = '';
  let value: JsonValue | undefined;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const wireType = tag & 7;
    if (tag >>> 3 === 1) {
      expectWire(wireType, WIRE_BYTES, 'map entry', field);
      key = reader.string();
    } else if (tag >>> 3 === 2) {
      value = readTyped(reader, wireType, field.value, ctx, path, field.json);
    } else {
      reader.skipType(wireType);
    }
  }
  return [key, value ?? zeroOf(field.value, ctx, path)];
}

function zeroOf(value: ValueType, ctx: Context, path: string): JsonValue {
  if ('message' in value) return decodeValueMessage(new Uint8Array(), value.message, ctx, path);
  return value.scalar === 'string' || value.scalar === 'bytes' ? '' : value.scalar === 'bool' ? false : 0;
}

function expectWire(actual: number, expected: number, where: string, field: FieldSpec): void {
  if (actual !== expected) throw new ProtobufDecodeError(`${where} field ${field.json}: wire type ${actual}, expected ${expected}`);
}
