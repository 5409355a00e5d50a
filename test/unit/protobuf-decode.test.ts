/**
 * The protobuf body decoder: every body kubectl 1.32 sent for a generator command (captured in
 * test/fixtures/protobuf) decodes to the JSON kubectl prints for the same command with
 * `--dry-run=client -o json`, with no field left unknown; plus the wire and json-tag rules on
 * hand-built messages.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs/minimal.js';
import { decodeProtobufBody, decodeProtobufObject, UnsupportedKindError } from '../../src/api/protobuf/index.js';
import { decodeMessage } from '../../src/api/protobuf/decode.js';
import { PROTOBUF_MAGIC } from '../../src/api/protobuf/envelope.js';
import { compileSchemas, parseFieldSpec } from '../../src/api/protobuf/schema.js';
import { messageRegistry, supportedKinds } from '../../src/api/protobuf/registry.js';
import { ApiError } from '../../src/api/status.js';

const fixtureDir = join(process.cwd(), 'test/fixtures/protobuf');
interface Fixture { name: string; kubectl: string; path: string; contentType: string }
const fixtures = JSON.parse(readFileSync(join(fixtureDir, 'fixtures.json'), 'utf8')) as Fixture[];
const decodable = fixtures.filter((f) => f.name !== 'token');
const body = (name: string) => readFileSync(join(fixtureDir, `${name}.bin`));
const expected = (name: string) => JSON.parse(readFileSync(join(fixtureDir, `${name}.json`), 'utf8'));

describe('kubectl bodies', () => {
  it.each(decodable.map((f) => [f.name, f.kubectl]))('%s (%s) decodes to kubectl\'s JSON', (name) => {
    const unknown: string[] = [];
    const decoded = decodeProtobufObject(body(name), { onUnknownField: (path) => unknown.push(path) });
    expect(decoded).toEqual(expected(name));
    expect(unknown).toEqual([]);
  });

  it('were all sent as protobuf', () => {
    expect(new Set(fixtures.map((f) => f.contentType))).toEqual(new Set(['application/vnd.kubernetes.protobuf']));
  });

  it('decodes kubectl create token\'s TokenRequest (audiences and lifetime)', () => {
    const decoded = decodeProtobufObject(body('token')) as any;
    expect(decoded).toMatchObject({ kind: 'TokenRequest', apiVersion: 'authentication.k8s.io/v1', spec: { audiences: ['a'], expirationSeconds: 600 } });
  });

  it('refuses a kind without a schema with a 415 naming it', () => {
    const unsupported = envelope('apps/v1', 'StatefulSet', new Uint8Array());
    expect(() => decodeProtobufObject(unsupported)).toThrow(UnsupportedKindError);
    const error = catchError(() => decodeProtobufBody(unsupported));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toMatchObject({
      code: 415,
      reason: 'UnsupportedMediaType',
      message: 'StatefulSet (apps/v1) cannot be sent as protobuf to this server; send it as JSON instead (kubectl create -f FILE, or -o json)',
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Hand-built messages

type Writer = protobuf.Writer;
const w = () => protobuf.Writer.create();
const str = (writer: Writer, field: number, value: string) => writer.uint32((field << 3) | 2).string(value);
const bytes = (writer: Writer, field: number, value: Uint8Array) => writer.uint32((field << 3) | 2).bytes(value);
const varint = (writer: Writer, field: number, value: number) => writer.uint32((field << 3) | 0).int64(value);

function envelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const typeMeta = str(str(w(), 1, apiVersion), 2, kind).finish();
  const unknown = bytes(bytes(w(), 1, typeMeta), 2, raw).finish();
  return Buffer.concat([PROTOBUF_MAGIC, unknown]);
}

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('value types', () => {
  const meta = (build: (writer: Writer) => Writer) => decodeMessage(build(w()).finish(), 'ObjectMeta', messageRegistry());
  const time = (seconds: number, nanos = 0) => varint(varint(w(), 1, seconds), 2, nanos).finish();

  it.each([
    ['a Time at whole seconds (nanoseconds dropped, as Go does)', (x: Writer) => bytes(x, 9, time(1714979289, 123456789)), { deletionTimestamp: '2024-05-06T07:08:09Z' }],
    ['a zero Time (empty message) as null', (x: Writer) => bytes(x, 8, new Uint8Array()), { creationTimestamp: null }],
    ['the epoch, which is not zero', (x: Writer) => bytes(x, 8, time(0, 1)), { creationTimestamp: '1970-01-01T00:00:00Z' }],
    ['a negative int64 (10-byte varint)', (x: Writer) => varint(x, 10, -5), { deletionGracePeriodSeconds: -5 }],
    ['a pointer zero is kept, an omitempty zero dropped', (x: Writer) => varint(str(varint(x, 7, 0), 1, ''), 10, 0), { deletionGracePeriodSeconds: 0 }],
    ['map entries, a missing value as ""', (x: Writer) => bytes(bytes(x, 11, str(str(w(), 1, 'a'), 2, 'b').finish()), 11, str(w(), 1, 'empty').finish()),
      { labels: { a: 'b', empty: '' } }],
    ['FieldsV1 as its JSON', (x: Writer) => bytes(x, 17, bytes(str(w(), 1, 'mgr'), 7, bytes(w(), 1, Buffer.from('{"f:data":{}}')).finish()).finish()),
      { managedFields: [{ manager: 'mgr', fieldsV1: { 'f:data': {} } }] }],
    ['unknown fields skipped, of every wire type', (x: Writer) => str(x.uint32((99 << 3) | 1).fixed64(7).uint32((98 << 3) | 5).fixed32(1).uint32((97 << 3) | 0).uint32(3).uint32((96 << 3) | 2).string('zzz'), 1, 'n'),
      { name: 'n' }],
  ])('%s', (_, build, want) => {
    expect(meta(build)).toEqual(want);
  });

  it('renders IntOrString as a number or a string', () => {
    const port = (intOrString: Uint8Array) => decodeMessage(bytes(w(), 1, intOrString).finish(), 'TCPSocketAction', messageRegistry());
    expect(port(varint(w(), 2, 8080).finish())).toEqual({ port: 8080 });
    expect(port(str(varint(w(), 1, 1), 3, 'http').finish())).toEqual({ port: 'http' });
    expect(port(new Uint8Array())).toEqual({ port: 0 });
  });

  it('reads packed and unpacked repeated numbers alike', () => {
    const packed = w().uint32((4 << 3) | 2).fork().int64(1).int64(300).ldelim().finish();
    const unpacked = varint(varint(w(), 4, 1), 4, 300).finish();
    for (const raw of [packed, unpacked]) {
      expect(decodeMessage(raw, 'PodSecurityContext', messageRegistry())).toEqual({ supplementalGroups: [1, 300] });
    }
  });

  it('prints an absent list without omitempty as null, as Go does', () => {
    expect(decodeMessage(new Uint8Array(), 'Role', messageRegistry())).toEqual({ rules: null });
    expect(decodeMessage(new Uint8Array(), 'RoleBinding', messageRegistry())).toEqual({});
  });
});

describe('malformed bodies', () => {
  const configMap = str(w(), 1, '').finish();
  it.each([
    ['no magic', Buffer.from('{"kind":"ConfigMap"}'), /does not start with the protobuf prefix/],
    ['a truncated envelope', Buffer.concat([PROTOBUF_MAGIC, Buffer.from([0x0a, 0x20, 0x0a])]), /index out of range/],
    ['a string field sent as a varint', envelope('v1', 'ConfigMap', varint(w(), 1, 5).finish()), /field metadata: wire type 0, expected a message/],
    ['a truncated object', envelope('v1', 'ConfigMap', configMap.subarray(0, 1)), /index out of range/],
    ['field number 0', envelope('v1', 'ConfigMap', Uint8Array.from([0x02, 0x00])), /invalid field number 0/],
  ])('%s answers 400', (_, raw, message) => {
    const error = catchError(() => decodeProtobufBody(raw));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status.code).toBe(400);
    expect((error as ApiError).status.message).toMatch(message);
  });

  it('decodes a hand-built ConfigMap envelope', () => {
    const raw = bytes(bytes(w(), 1, str(w(), 1, 'c').finish()), 2, str(str(w(), 1, 'k'), 2, 'v').finish()).finish();
    expect(decodeProtobufBody(envelope('v1', 'ConfigMap', raw))).toEqual({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c' }, data: { k: 'v' } });
    expect(() => decodeProtobufBody(envelope('apps/v1', 'ConfigMap', raw))).toThrow(/ConfigMap \(apps\/v1\) cannot be sent as protobuf/);
  });
});

describe('schema tables', () => {
  it('compile, every referenced message existing, every top-level kind having a message', () => {
    const registry = messageRegistry();
    for (const { kind } of supportedKinds()) expect(registry.has(kind)).toBe(true);
  });

  it.each([
    ['a missing message', { A: { 1: 'b B' } }, 'protobuf schema: A field 1 refers to unknown message B'],
    ['a malformed spec', { A: { 1: 'onlyname' } }, 'protobuf schema: malformed field spec "onlyname"'],
    ['an unknown flag', { A: { 1: 'x string optional' } }, 'protobuf schema: unknown flag "optional" in "x string optional"'],
  ])('reject %s', (_, tables, message) => {
    expect(() => compileSchemas(tables)).toThrow(message);
  });

  it.each([
    ['name string', { json: 'name', value: { scalar: 'string' }, shape: 'single', pointer: false, required: false, inline: false }],
    ['replicas *int32', { json: 'replicas', value: { scalar: 'int32' }, shape: 'single', pointer: true, required: false, inline: false }],
    ['data map[string][]byte', { json: 'data', value: { scalar: 'bytes' }, shape: 'map', pointer: false, required: false, inline: false }],
    ['raw []byte', { json: 'raw', value: { scalar: 'bytes' }, shape: 'single', pointer: false, required: false, inline: false }],
    ['rules []PolicyRule required', { json: 'rules', value: { message: 'PolicyRule' }, shape: 'repeated', pointer: false, required: true, inline: false }],
    ['ref LocalObjectReference inline', { json: 'ref', value: { message: 'LocalObjectReference' }, shape: 'single', pointer: false, required: false, inline: true }],
  ])('parse "%s"', (spec, want) => {
    expect(parseFieldSpec(spec)).toEqual(want);
  });
});
