/**
 * Service account token keys, shared by the API server (signs and verifies bound tokens) and the
 * controller manager (signs legacy token secrets): PEM parsing as upstream's keyutil, the JWS
 * algorithm a key signs with, and the key id upstream derives from the public key. Pure apart from
 * node:crypto.
 */
import {createHash, createPrivateKey, createPublicKey, X509Certificate, type KeyObject} from 'node:crypto';

const EC_ALGORITHMS: Record<string, string> = {prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512'};

/** The JWS algorithms upstream's service account verifier accepts. */
export const SERVICE_ACCOUNT_ALGORITHMS = ['RS256', 'ES256', 'ES384', 'ES512'];

/** The JWS `alg` a key signs with: RS256 for RSA, ES256/384/512 by curve; undefined for other keys. */
export function signingAlgorithm(key: KeyObject): string | undefined {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') return EC_ALGORITHMS[key.asymmetricKeyDetails?.namedCurve ?? ''];
  return undefined;
}

/** Upstream's keyIDFromPublicKey: base64url of the SHA-256 of the public key's DER (PKIX). */
export function keyIdOf(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256').update(pub.export({type: 'spki', format: 'der'})).digest('base64url');
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;

/** The first RSA or EC private key of a PEM text (PKCS#1, SEC1 or PKCS#8), other blocks skipped. */
export function privateKeyFromPem(pem: string): KeyObject {
  for (const match of pem.matchAll(BLOCK)) {
    if (!/^(RSA |EC )?PRIVATE KEY$/.test(match[1])) continue;
    const key = createPrivateKey(match[0]);
    if (!signingAlgorithm(key)) {
      const what = [key.asymmetricKeyType, key.asymmetricKeyDetails?.namedCurve].filter(Boolean).join(' ');
      throw new Error(`unsupported service account signing key (${what}): RSA or ECDSA P-256, P-384, P-521 are accepted`);
    }
    return key;
  }
  throw new Error('data does not contain a valid RSA or ECDSA private key');
}

/**
 * Every public key of a PEM text, as upstream's keyutil.ParsePublicKeysPEM: public keys (PKIX or
 * PKCS#1), certificates' keys, and the public half of private keys (a signing key file is also a
 * valid key file). RSA and ECDSA only.
 */
export function publicKeysFromPem(pem: string): KeyObject[] {
  const keys: KeyObject[] = [];
  for (const match of pem.matchAll(BLOCK)) {
    const type = match[1];
    let key: KeyObject | undefined;
    if (type === 'PUBLIC KEY' || type === 'RSA PUBLIC KEY') key = createPublicKey(match[0]);
    else if (type === 'CERTIFICATE') key = new X509Certificate(match[0]).publicKey;
    else if (/^(RSA |EC )?PRIVATE KEY$/.test(type)) key = createPublicKey(createPrivateKey(match[0]));
    if (key && signingAlgorithm(key)) keys.push(key);
  }
  if (keys.length === 0) throw new Error('data does not contain any valid RSA or ECDSA public keys');
  return keys;
}
