/**
 * Upstream's secretbox provider (k8s.io/apiserver/pkg/storage/value/encrypt/secretbox): NaCl
 * secretbox, XSalsa20-Poly1305 with a 32-byte key and a random 24-byte nonce per value, stored as
 * `<product>:enc:secretbox:v1:<key name>:` + nonce + box (base64 here, as the other providers: our
 * store holds text). Secretbox has no additional data, so unlike aesgcm the storage key is not bound.
 * @noble/ciphers: audited, maintained, synchronous and pure JS (no native build, no WASM start-up).
 */
import {randomBytes} from 'node:crypto';
import {xsalsa20poly1305} from '@noble/ciphers/salsa.js';
import {encryptedPrefix, type Provider} from './providers.js';

const NONCE = 24;
const TAG = 16;

export function secretboxProvider(name: string, secret: Buffer): Provider {
  if (secret.length !== 32) throw new Error(`expected key size 32 for secretbox provider, got ${secret.length}`);
  const key = new Uint8Array(secret);
  const prefix = () => `${encryptedPrefix()}secretbox:v1:${name}:`;
  return {
    kind: 'secretbox',
    prefix,
    write(_key, plaintext) {
      const nonce = randomBytes(NONCE);
      const box = xsalsa20poly1305(key, nonce).encrypt(Buffer.from(plaintext, 'utf8'));
      return prefix() + Buffer.concat([nonce, box]).toString('base64');
    },
    read(_key, stored) {
      const body = Buffer.from(stored.slice(prefix().length), 'base64');
      if (body.length < NONCE + TAG) throw new Error('the stored data was shorter than the required size');
      try {
        return Buffer.from(xsalsa20poly1305(key, body.subarray(0, NONCE)).decrypt(body.subarray(NONCE))).toString('utf8');
      } catch {
        throw new Error(`secretbox key ${name}: the value does not authenticate (written with another key, or altered)`);
      }
    },
  };
}
