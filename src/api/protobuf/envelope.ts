/**
 * The envelope of Kubernetes protobuf bodies: the 4-byte magic `k8s\0`, then a runtime.Unknown
 * message {1: typeMeta {1: apiVersion, 2: kind}, 2: raw, 3: contentEncoding, 4: contentType}. Pure.
 */
import protobuf from 'protobufjs/minimal.js';
import { ProtobufDecodeError } from './decode.js';

export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

export interface Envelope {
  apiVersion: string;
  kind: string;
  /** The typed object's bytes. */
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

export function hasProtobufMagic(body: Uint8Array): boolean {
  return body.length >= PROTOBUF_MAGIC.length && PROTOBUF_MAGIC.every((byte, i) => body[i] === byte);
}

export function decodeEnvelope(body: Uint8Array): Envelope {
  if (!hasProtobufMagic(body)) throw new ProtobufDecodeError('the body does not start with the protobuf prefix "k8s\\x00"');
  const envelope: Envelope = { apiVersion: '', kind: '', raw: new Uint8Array(), contentEncoding: '', contentType: '' };
  const reader = protobuf.Reader.create(body.subarray(PROTOBUF_MAGIC.length));
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const wireType = tag & 7;
    const number = tag >>> 3;
    if (number >= 1 && number <= 4 && wireType !== 2) throw new ProtobufDecodeError(`runtime.Unknown field ${number}: wire type ${wireType}`);
    if (number === 1) Object.assign(envelope, decodeTypeMeta(reader.bytes()));
    else if (number === 2) envelope.raw = reader.bytes();
    else if (number === 3) envelope.contentEncoding = reader.string();
    else if (number === 4) envelope.contentType = reader.string();
    else reader.skipType(wireType);
  }
  return envelope;
}

function decodeTypeMeta(bytes: Uint8Array): { apiVersion: string; kind: string } {
  const reader = protobuf.Reader.create(bytes);
  const typeMeta = { apiVersion: '', kind: '' };
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const number = tag >>> 3;
    if ((number === 1 || number === 2) && (tag & 7) !== 2) throw new ProtobufDecodeError(`TypeMeta field ${number}: wire type ${tag & 7}`);
    if (number === 1) typeMeta.apiVersion = reader.string();
    else if (number === 2) typeMeta.kind = reader.string();
    else reader.skipType(tag & 7);
  }
  return typeMeta;
}
