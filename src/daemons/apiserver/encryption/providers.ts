/**
 * The value transformers of upstream's storage encryption (k8s.io/apiserver/pkg/storage/value/
 * encrypt/aes): aesgcm (random 12-byte nonce; the storage key as additional authenticated data, so a
 * value copied under another key does not decrypt) and aescbc (random IV, PKCS#7), each value
 * prefixed `<product>:enc:<provider>:v1:<key name>:`. Our store holds text, so the ciphertext after
 * the prefix is base64 (upstream stores the raw bytes).
 */
import {createCipheriv, createDecipheriv, randomBytes} from 'node:crypto';
import {names} from '../../../api/names.js';

export interface Provider {
  /** `identity`, `aesgcm`, `aescbc`, `secretbox`, `kms`. */
  kind: string;
  /** The stored prefix this provider reads ('' for identity, which reads what has no prefix). */
  prefix(): string;
  /** Throws when the provider cannot write now (a KMS plugin gone): nothing is stored then. */
  write(key: string, plaintext: string): string;
  /** The plaintext of a value carrying this provider's prefix (a promise when a KMS plugin must unwrap its key first). */
  read(key: string, stored: string): string | Promise<string>;
  /**
   * Providers whose key changes without the prefix changing (KMS: the plugin's key id): which key
   * wrote a value with this prefix, and which one writes now. A value written under another is stale.
   */
  keyVersion?(stored: string): string | undefined;
  currentKeyVersion?(): string | undefined;
}

/** `k8s:enc:` under the kubernetes name set, `orch:enc:` under orch's. */
export function encryptedPrefix(): string {
  const n = names();
  return `${n.id === 'kubernetes' ? 'k8s' : n.product}:enc:`;
}

export function identityProvider(): Provider {
  return {kind: 'identity', prefix: () => '', write: (_key, plaintext) => plaintext, read: (_key, stored) => stored};
}

export function aesProvider(kind: 'aesgcm' | 'aescbc', name: string, secret: Buffer): Provider {
  const algorithm = `aes-${secret.length * 8}-${kind === 'aesgcm' ? 'gcm' : 'cbc'}`;
  const prefix = () => `${encryptedPrefix()}${kind}:v1:${name}:`;
  if (kind === 'aesgcm') {
    return {
      kind,
      prefix,
      write(key, plaintext) {
        const nonce = randomBytes(12);
        const cipher = createCipheriv(algorithm, secret, nonce) as import('node:crypto').CipherGCM;
        cipher.setAAD(Buffer.from(key));
        const body = Buffer.concat([nonce, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
        return prefix() + body.toString('base64');
      },
      read(key, stored) {
        const body = Buffer.from(stored.slice(prefix().length), 'base64');
        if (body.length < 28) throw new Error('the stored data was shorter than the required size');
        const decipher = createDecipheriv(algorithm, secret, body.subarray(0, 12)) as import('node:crypto').DecipherGCM;
        decipher.setAAD(Buffer.from(key));
        decipher.setAuthTag(body.subarray(body.length - 16));
        return Buffer.concat([decipher.update(body.subarray(12, body.length - 16)), decipher.final()]).toString('utf8');
      },
    };
  }
  return {
    kind,
    prefix,
    write(_key, plaintext) {
      const iv = randomBytes(16);
      const cipher = createCipheriv(algorithm, secret, iv);
      return prefix() + Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final()]).toString('base64');
    },
    read(_key, stored) {
      const body = Buffer.from(stored.slice(prefix().length), 'base64');
      if (body.length < 32 || body.length % 16 !== 0) throw new Error('the stored data is not a multiple of the block size');
      const decipher = createDecipheriv(algorithm, secret, body.subarray(0, 16));
      return Buffer.concat([decipher.update(body.subarray(16)), decipher.final()]).toString('utf8');
    },
  };
}

/** Reads with whichever provider's prefix the value carries; identity only for unprefixed values. */
export function readValue(providers: Provider[], key: string, stored: string): string | Promise<string> {
  for (const p of providers) {
    const prefix = p.prefix();
    if (prefix && stored.startsWith(prefix)) return p.read(key, stored);
  }
  if (stored.startsWith(encryptedPrefix())) {
    const version = /:v[12]:/.exec(stored);
    const name = version ? stored.slice(0, stored.indexOf(':', version.index + 4) + 1) : '';
    throw new Error(`no provider can read ${key}: its value is encrypted as ${name || encryptedPrefix()} and no configured key matches`);
  }
  if (providers.some((p) => p.kind === 'identity')) return stored;
  throw new Error(`no provider can read ${key}: the value is not encrypted and the identity provider is not configured`);
}
