/**
 * The wire side of KMS v2: upstream's plugin API (k8s.io/kms/apis/v2/api.proto, service
 * `v2.KeyManagementService` with Status, Decrypt and Encrypt, served by the plugin on a unix socket)
 * and the EncryptedObject the API server stores (k8s.io/apiserver/.../envelope/kmsv2/v2/api.proto).
 */
import protobuf from 'protobufjs';
import {UnaryClient, unaryService} from '../../../shared/grpc-unary.js';

const PLUGIN_PROTO = `
syntax = "proto3";
package v2;
message StatusRequest {}
message StatusResponse { string version = 1; string healthz = 2; string key_id = 3; }
message DecryptRequest { bytes ciphertext = 1; string uid = 2; string key_id = 3; map<string, bytes> annotations = 4; }
message DecryptResponse { bytes plaintext = 1; }
message EncryptRequest { bytes plaintext = 1; string uid = 2; }
message EncryptResponse { bytes ciphertext = 1; string key_id = 2; map<string, bytes> annotations = 3; }
`;

/** The service definition, for the client here and for the plugins tests serve with grpc-js. */
export const KMS_V2_SERVICE = unaryService(PLUGIN_PROTO, 'v2', 'KeyManagementService', {
  Status: ['StatusRequest', 'StatusResponse'],
  Decrypt: ['DecryptRequest', 'DecryptResponse'],
  Encrypt: ['EncryptRequest', 'EncryptResponse'],
});

export interface StatusResponse {
  version: string;
  healthz: string;
  keyId: string;
}

export interface EncryptResponse {
  ciphertext: Buffer;
  keyId: string;
  annotations: Record<string, Buffer>;
}

/** What the envelope needs of a plugin (the gRPC client below, or anything a unit test provides). */
export interface KmsService {
  status(): Promise<StatusResponse>;
  encrypt(uid: string, plaintext: Buffer): Promise<EncryptResponse>;
  decrypt(uid: string, request: {ciphertext: Buffer; keyId: string; annotations: Record<string, Buffer>}): Promise<Buffer>;
  close(): void;
}

/** The gRPC client of a plugin on `socketPath`; every call is bounded by the provider's `timeout`. */
export function kmsGrpcService(socketPath: string, timeoutMs: number): KmsService {
  const client = new UnaryClient(KMS_V2_SERVICE, 'KeyManagementService', socketPath);
  return {
    async status() {
      const r = await client.call('Status', {}, timeoutMs);
      return {version: String(r.version ?? ''), healthz: String(r.healthz ?? ''), keyId: String(r.key_id ?? '')};
    },
    async encrypt(uid, plaintext) {
      const r = await client.call('Encrypt', {plaintext, uid}, timeoutMs);
      return {ciphertext: r.ciphertext as Buffer, keyId: String(r.key_id ?? ''), annotations: (r.annotations ?? {}) as Record<string, Buffer>};
    },
    async decrypt(uid, request) {
      const r = await client.call('Decrypt', {ciphertext: request.ciphertext, uid, key_id: request.keyId, annotations: request.annotations}, timeoutMs);
      return r.plaintext as Buffer;
    },
    close: () => client.close(),
  };
}

const STORED_PROTO = `
syntax = "proto3";
package v2;
enum EncryptedDEKSourceType { AES_GCM_KEY = 0; HKDF_SHA256_XNONCE_AES_GCM_SEED = 1; }
message EncryptedObject {
  bytes encryptedData = 1;
  string keyID = 2;
  bytes encryptedDEKSource = 3;
  map<string, bytes> annotations = 4;
  EncryptedDEKSourceType encryptedDEKSourceType = 5;
}
`;
const encryptedObjectType = protobuf.parse(STORED_PROTO, {keepCase: true}).root.lookupType('v2.EncryptedObject');

/** 0: the DEK itself (AES-GCM key), 1: a seed from which each write derives its key (upstream's default). */
export const DEK_SOURCE_AES_GCM_KEY = 0;
export const DEK_SOURCE_HKDF_SEED = 1;

export interface EncryptedObject {
  encryptedData: Buffer;
  keyID: string;
  encryptedDEKSource: Buffer;
  annotations: Record<string, Buffer>;
  encryptedDEKSourceType: number;
}

export function encodeEncryptedObject(o: EncryptedObject): Buffer {
  return Buffer.from(encryptedObjectType.encode(encryptedObjectType.fromObject(o)).finish());
}

/** Decodes and validates as upstream's ValidateEncryptedObject. */
export function decodeEncryptedObject(bytes: Buffer): EncryptedObject {
  const o = encryptedObjectType.toObject(encryptedObjectType.decode(bytes), {bytes: Buffer, enums: Number, defaults: true}) as EncryptedObject;
  const problem = validateEncryptedObject(o);
  if (problem) throw new Error(problem);
  return o;
}

export function validateEncryptedObject(o: EncryptedObject): string | undefined {
  if (o.encryptedDEKSourceType !== DEK_SOURCE_AES_GCM_KEY && o.encryptedDEKSourceType !== DEK_SOURCE_HKDF_SEED) return `unknown encryptedDEKSourceType: ${o.encryptedDEKSourceType}`;
  if (o.encryptedData.length === 0) return 'encrypted data is empty';
  if (o.encryptedDEKSource.length === 0) return 'failed to validate encrypted DEK source: encrypted DEK source is empty';
  if (o.encryptedDEKSource.length > 1024) return `failed to validate encrypted DEK source: encrypted DEK source is ${o.encryptedDEKSource.length} bytes, which exceeds the max size of 1024`;
  const keyIdProblem = validateKeyId(o.keyID);
  if (keyIdProblem) return `failed to validate key id: ${keyIdProblem}`;
  const annotationBytes = Object.entries(o.annotations).reduce((n, [k, v]) => n + k.length + v.length, 0);
  if (annotationBytes > 32 * 1024) return `failed to validate annotations: annotations exceeded size limit of 32768 bytes, got ${annotationBytes}`;
  return undefined;
}

export function validateKeyId(keyId: string): string | undefined {
  if (keyId === '') return 'keyID is empty';
  if (keyId.length > 1024) return `keyID is ${keyId.length} bytes, which exceeds the max size of 1024`;
  return undefined;
}
