/**
 * The JSON object of a built-in kind -> its protobuf wire bytes, the inverse of decode.ts over the
 * same schema tables (what the store writes under `--storage-media-type` protobuf). Fields are
 * written in field-number order, maps in key order and repeated scalars unpacked, as Go's gogo
 * marshaller writes them. JSON keys the schema does not know are not written: callers that must not
 * lose data decode the result again and compare (see `encodeProtobufObject`). Pure.
 */
import protobuf from 'protobufjs/minimal.js';
import type { JsonObject, JsonValue } from '../../patch/types.js';
import type { CompiledMessage, FieldSpec, Scalar, ValueType } from './schema.js';
import { PROTOBUF_MAGIC } from './envelope.js';

type Writer = protobuf.Writer;

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_BYTES = 2;

/** Thrown for a value the schema cannot carry (a string where a number belongs, an unparsable time). */
export class ProtobufEncodeError extends Error {}

/** JSON forms of the value types back to their fields (the inverse of render.ts). */
const UNRENDER: Readonly<Record<string, (value: JsonValue) => JsonObject>> = {
  Time: (value) => (value === null ? {} : timeFields(value, false)),
  MicroTime: (value) => (value === null ? {} : timeFields(value, true)),
  Quantity: (value) => ({ string: typeof value === 'number' ? String(value) : expectString(value, 'Quantity') }),
  IntOrString: (value): JsonObject => (typeof value === 'number' ? { type: 0, intVal: value } : { type: 1, strVal: expectString(value, 'IntOrString') }),
  FieldsV1: (value) => ({ raw: Buffer.from(JSON.stringify(value)).toString('base64') }),
};

function expectString(value: JsonValue, what: string): string {
  if (typeof value !== 'string') throw new ProtobufEncodeError(`${what}: expected a string, got ${JSON.stringify(value)}`);
  return value;
}

function timeFields(value: JsonValue, micro: boolean): JsonObject {
  const text = expectString(value, 'Time');
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) throw new ProtobufEncodeError(`Time: cannot parse ${JSON.stringify(text)}`);
  const seconds = Math.floor(ms / 1000);
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
  const nanos = micro ? Number(fraction.padEnd(9, '0').slice(0, 9)) : 0;
  return { seconds, nanos };
}

function tag(writer: Writer, number: number, wire: number): Writer {
  return writer.uint32((number << 3) | wire);
}

export function encodeMessage(value: JsonObject, type: string, registry: ReadonlyMap<string, CompiledMessage>): Uint8Array {
  const writer = protobuf.Writer.create();
  writeFields(writer, value, type, registry);
  return writer.finish();
}

function writeFields(writer: Writer, value: JsonObject, type: string, registry: ReadonlyMap<string, CompiledMessage>): void {
  const schema = registry.get(type);
  if (!schema) throw new ProtobufEncodeError(`no schema for message ${type}`);
  const numbers = [...schema.keys()].sort((a, b) => a - b);
  for (const number of numbers) {
    const field = schema.get(number)!;
    if (field.inline) {
      if (!('message' in field.value)) throw new ProtobufEncodeError(`inline field ${field.json} is not a message`);
      tag(writer, number, WIRE_BYTES).bytes(encodeMessage(value, field.value.message, registry));
      continue;
    }
    const v = value[field.json];
    if (v === undefined || v === null) {
      // A null Time is a set but zero message; other nulls are absent fields.
      if (v === null && field.shape === 'single' && 'message' in field.value && UNRENDER[field.value.message]) tag(writer, number, WIRE_BYTES).bytes(new Uint8Array());
      continue;
    }
    if (field.shape === 'map') {
      if (typeof v !== 'object' || Array.isArray(v)) throw new ProtobufEncodeError(`${field.json}: expected an object`);
      for (const key of Object.keys(v).sort()) {
        const entry = protobuf.Writer.create();
        tag(entry, 1, WIRE_BYTES).string(key);
        writeValue(entry, 2, (v as JsonObject)[key]!, field.value, registry, field);
        tag(writer, number, WIRE_BYTES).bytes(entry.finish());
      }
    } else if (field.shape === 'repeated') {
      if (!Array.isArray(v)) throw new ProtobufEncodeError(`${field.json}: expected a list`);
      for (const item of v) writeValue(writer, number, item, field.value, registry, field);
    } else {
      writeValue(writer, number, v, field.value, registry, field);
    }
  }
}

function writeValue(writer: Writer, number: number, v: JsonValue, value: ValueType, registry: ReadonlyMap<string, CompiledMessage>, field: FieldSpec): void {
  if ('message' in value) {
    const unrender = UNRENDER[value.message];
    const fields = unrender ? unrender(v) : v;
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new ProtobufEncodeError(`${field.json}: expected an object`);
    tag(writer, number, WIRE_BYTES).bytes(encodeMessage(fields, value.message, registry));
    return;
  }
  writeScalar(writer, number, v, value.scalar, field);
}

function writeScalar(writer: Writer, number: number, v: JsonValue, scalar: Scalar, field: FieldSpec): void {
  const bad = () => new ProtobufEncodeError(`${field.json}: ${JSON.stringify(v)} is not a ${scalar}`);
  switch (scalar) {
    case 'string':
      if (typeof v !== 'string') throw bad();
      tag(writer, number, WIRE_BYTES).string(v);
      return;
    case 'bytes':
      if (typeof v !== 'string') throw bad();
      tag(writer, number, WIRE_BYTES).bytes(Buffer.from(v, 'base64'));
      return;
    case 'bool':
      if (typeof v !== 'boolean') throw bad();
      tag(writer, number, WIRE_VARINT).bool(v);
      return;
    case 'int32':
      if (!Number.isInteger(v)) throw bad();
      tag(writer, number, WIRE_VARINT).int32(v as number);
      return;
    case 'int64':
      if (!Number.isInteger(v)) throw bad();
      tag(writer, number, WIRE_VARINT).int64(v as number);
      return;
    case 'float64':
      if (typeof v !== 'number') throw bad();
      tag(writer, number, WIRE_FIXED64).double(v);
      return;
  }
}

/** The envelope: magic, then runtime.Unknown {typeMeta {apiVersion, kind}, raw, contentEncoding "", contentType ""}. */
export function encodeEnvelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const typeMeta = protobuf.Writer.create();
  tag(typeMeta, 1, WIRE_BYTES).string(apiVersion);
  tag(typeMeta, 2, WIRE_BYTES).string(kind);
  const unknown = protobuf.Writer.create();
  tag(unknown, 1, WIRE_BYTES).bytes(typeMeta.finish());
  tag(unknown, 2, WIRE_BYTES).bytes(raw);
  tag(unknown, 3, WIRE_BYTES).string('');
  tag(unknown, 4, WIRE_BYTES).string('');
  return Buffer.concat([PROTOBUF_MAGIC, unknown.finish()]);
}
