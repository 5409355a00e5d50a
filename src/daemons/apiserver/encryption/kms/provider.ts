/**
 * The KMS v2 provider (upstream's envelope/kmsv2 and the kmsv2PluginProbe of encryptionconfig):
 * values are encrypted locally with a data encryption key (DEK) that the plugin's key encryption key
 * wraps, so a write costs no call to the plugin.
 *
 * - The DEK is a 32-byte seed (upstream's default, HKDF_SHA256_XNONCE_AES_GCM_SEED): every write draws
 *   32 random bytes of `info`, derives its AES-256-GCM key as HKDF-Expand-SHA256(seed, info), and
 *   stores info + nonce + ciphertext + tag, the storage key as additional data (as aesgcm).
 * - The stored value is `<product>:enc:kms:v2:<name>:` + the EncryptedObject protobuf (base64 here:
 *   our store holds text) carrying the wrapped seed, the plugin's key id and annotations.
 * - Status is polled (every minute, every 10 s after a failure); a new key id means a new seed
 *   wrapped by the plugin's new key. A write is refused once the plugin has not confirmed the current
 *   key id for 3 minutes (the DEK's write lifetime), so a plugin that is gone stops writes, it never
 *   lets plaintext through. Reads decrypt unknown wrapped seeds through the plugin once and cache them.
 * - Read values whose key id is not the current one are stale: a rewrite re-encrypts them.
 */
import {createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, randomUUID, type CipherGCM, type DecipherGCM} from 'node:crypto';
import {systemClock, type Clock, type TimerHandle} from '../../../shared/clock.js';
import {encryptedPrefix, type Provider} from '../providers.js';
import {decodeEncryptedObject, DEK_SOURCE_AES_GCM_KEY, DEK_SOURCE_HKDF_SEED, encodeEncryptedObject, validateKeyId, type EncryptedObject, type KmsService} from './api.js';

export interface KmsTimings {
  /** Status poll while the plugin is healthy (upstream: 1 minute). */
  statusIntervalMs: number;
  /** Status poll after a failure (upstream: 10 s). */
  statusRetryMs: number;
  /** How long a health check answer is reused: passing 20 s, failing 3 s (upstream's TTLs). */
  okTtlMs: number;
  failedTtlMs: number;
  /** How long the current DEK may write after the plugin last confirmed its key id (upstream: 3 minutes). */
  writeTtlMs: number;
}

export const KMS_TIMINGS: KmsTimings = {statusIntervalMs: 60_000, statusRetryMs: 10_000, okTtlMs: 20_000, failedTtlMs: 3_000, writeTtlMs: 180_000};

interface State {
  seed: Buffer;
  keyId: string;
  encryptedDEKSource: Buffer;
  annotations: Record<string, Buffer>;
  expiresAt: number;
}

/** A DEK or seed known in plain, by its wrapped form. */
interface Dek {
  type: number;
  key: Buffer;
  usedAt: number;
}

const SEED_SIZE = 32;
const INFO_SIZE = 32;
const NONCE_SIZE = 12;
const TAG_SIZE = 16;
/** Upstream keeps decrypted DEKs a day; plenty of key ids and restarts fit in this bound. */
const DEK_CACHE_TTL_MS = 24 * 3600_000;
const DEK_CACHE_MAX = 10_000;

/** Upstream's GetHashIfNotEmpty: key ids are not logged in clear. */
export function keyIdHash(keyId: string): string {
  return keyId ? `sha256:${createHash('sha256').update(keyId).digest('hex')}` : '';
}

/** HKDF-Expand with SHA-256 for one 32-byte block (the seed is already uniformly random, no extract step). */
function expandKey(seed: Buffer, info: Buffer): Buffer {
  return createHmac('sha256', seed).update(info).update(Buffer.from([1])).digest();
}

function gcmSeal(key: Buffer, plaintext: Buffer, aad: string): Buffer {
  const nonce = randomBytes(NONCE_SIZE);
  const cipher = createCipheriv('aes-256-gcm', key, nonce) as CipherGCM;
  cipher.setAAD(Buffer.from(aad));
  return Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

function gcmOpen(key: Buffer, sealed: Buffer, aad: string): Buffer {
  if (sealed.length < NONCE_SIZE + TAG_SIZE) throw new Error('the stored data was shorter than the required size');
  const decipher = createDecipheriv(`aes-${key.length * 8}-gcm`, key, sealed.subarray(0, NONCE_SIZE)) as DecipherGCM;
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_SIZE));
  return Buffer.concat([decipher.update(sealed.subarray(NONCE_SIZE, sealed.length - TAG_SIZE)), decipher.final()]);
}

function dekCacheKey(o: Pick<EncryptedObject, 'encryptedDEKSourceType' | 'encryptedDEKSource' | 'keyID' | 'annotations'>): string {
  const annotations = Object.keys(o.annotations).sort().map((k) => `${k}=${o.annotations[k]!.toString('base64')}`);
  return [o.encryptedDEKSourceType, o.keyID, o.encryptedDEKSource.toString('base64'), ...annotations].join('\n');
}

export class KmsProvider implements Provider {
  readonly kind = 'kms';
  private state?: State;
  private readonly deks = new Map<string, Dek>();
  private last?: {error?: string; at: number; ttlMs: number};
  private inFlight?: Promise<string | undefined>;
  private timer?: TimerHandle;
  private stopped = false;
  private lastDecoded?: {stored: string; object: EncryptedObject};

  constructor(
    /** The provider's `name` in the configuration. */
    readonly name: string,
    private readonly service: KmsService,
    private readonly options: {clock?: Clock; timings?: KmsTimings; log?: (message: string) => void} = {},
  ) {}

  private get clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  private get timings(): KmsTimings {
    return this.options.timings ?? KMS_TIMINGS;
  }

  prefix(): string {
    return `${encryptedPrefix()}kms:v2:${this.name}:`;
  }

  /** Starts the Status poll (the first at once): until it succeeded once, there is no DEK to write with. */
  start(): void {
    const loop = async () => {
      const error = await this.check().catch((e: Error) => e.message);
      if (this.stopped) return;
      if (error) this.options.log?.(error);
      this.timer = this.clock.setTimeout(() => void loop(), error ? this.timings.statusRetryMs : this.timings.statusIntervalMs);
      this.timer.unref?.();
    };
    void loop();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.service.close();
  }

  /** The health check: undefined when healthy, else why (answers are reused for their TTL, as upstream). */
  async check(): Promise<string | undefined> {
    const now = this.clock.now();
    if (this.last && now - this.last.at < this.last.ttlMs) return this.last.error;
    this.inFlight ??= this.probe().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async probe(): Promise<string | undefined> {
    const record = (error?: string) => {
      this.last = {error, at: this.clock.now(), ttlMs: error ? this.timings.failedTtlMs : this.timings.okTtlMs};
      return error;
    };
    // The write deadline starts before the call, as upstream: it bounds how stale a key id may be.
    const expiresAt = this.clock.now() + this.timings.writeTtlMs;
    let status;
    try {
      status = await this.service.status();
    } catch (error) {
      return record(`failed to perform status section of the healthz check for KMS Provider ${this.name}, error: ${(error as Error).message}`);
    }
    const problems: string[] = [];
    if (status.healthz !== 'ok') problems.push(`got unexpected healthz status: ${status.healthz}`);
    if (status.version !== 'v2' && status.version !== 'v2beta1') problems.push(`expected KMSv2 API version v2, got ${status.version}`);
    const keyIdProblem = validateKeyId(status.keyId);
    if (keyIdProblem) problems.push(`expected KMSv2 KeyID to be set, got ${status.keyId}`);
    if (problems.length) return record(`kmsv2 Provider ${this.name} is not healthy, error: ${problems.join(', ')}`);
    try {
      await this.rotateOnKeyIdChange(status.keyId, expiresAt);
    } catch (error) {
      return record(`kmsv2 Provider ${this.name} is not healthy, error: ${(error as Error).message}`);
    }
    return record(undefined);
  }

  /** Keeps the DEK while the key id is unchanged (moving its write deadline on); a new key id gets a new seed. */
  private async rotateOnKeyIdChange(statusKeyId: string, expiresAt: number): Promise<void> {
    if (this.state && this.state.keyId === statusKeyId) {
      this.state.expiresAt = expiresAt;
      return;
    }
    const seed = randomBytes(SEED_SIZE);
    const uid = randomUUID();
    let response;
    try {
      response = await this.service.encrypt(uid, seed);
    } catch (error) {
      throw new Error(`failed to rotate DEK uid="${uid}": failed to encrypt DEK, error: ${(error as Error).message}`);
    }
    if (response.keyId !== statusKeyId) {
      throw new Error(`failed to rotate DEK uid="${uid}": statusKeyIDHash="${keyIdHash(statusKeyId)}", encryptKeyIDHash="${keyIdHash(response.keyId)}" differ`);
    }
    const state: State = {seed, keyId: response.keyId, encryptedDEKSource: response.ciphertext, annotations: response.annotations, expiresAt};
    this.deks.set(dekCacheKey({encryptedDEKSourceType: DEK_SOURCE_HKDF_SEED, encryptedDEKSource: state.encryptedDEKSource, keyID: state.keyId, annotations: state.annotations}), {type: DEK_SOURCE_HKDF_SEED, key: seed, usedAt: this.clock.now()});
    this.options.log?.(`kms provider ${this.name}: new DEK seed for key id hash ${keyIdHash(state.keyId)}`);
    this.state = state;
  }

  write(key: string, plaintext: string): string {
    const state = this.state;
    if (!state) throw new Error(`kms provider ${this.name}: no DEK to encrypt with: the KMS plugin has not answered Status and Encrypt since the server started (see its health check kms-provider)`);
    const now = this.clock.now();
    if (now > state.expiresAt) {
      throw new Error(
        `kms provider ${this.name}: encryptedDEKSource with keyID hash "${keyIdHash(state.keyId)}" expired at ${new Date(state.expiresAt).toISOString()} (current time is ${new Date(now).toISOString()}): the KMS plugin has not confirmed its key since`,
      );
    }
    const info = randomBytes(INFO_SIZE);
    const data = Buffer.concat([info, gcmSeal(expandKey(state.seed, info), Buffer.from(plaintext, 'utf8'), key)]);
    const object: EncryptedObject = {encryptedData: data, keyID: state.keyId, encryptedDEKSource: state.encryptedDEKSource, annotations: state.annotations, encryptedDEKSourceType: DEK_SOURCE_HKDF_SEED};
    return this.prefix() + encodeEncryptedObject(object).toString('base64');
  }

  private decodeStored(stored: string): EncryptedObject {
    // A read asks twice in a row (its key id for staleness, then the plaintext): decode once.
    if (stored !== this.lastDecoded?.stored) {
      let object: EncryptedObject;
      try {
        object = decodeEncryptedObject(Buffer.from(stored.slice(this.prefix().length), 'base64'));
      } catch (error) {
        throw new Error(`kms provider ${this.name}: the stored value is not a valid KMS v2 EncryptedObject: ${(error as Error).message}`);
      }
      this.lastDecoded = {stored, object};
    }
    return this.lastDecoded.object;
  }

  read(key: string, stored: string): string | Promise<string> {
    const object = this.decodeStored(stored);
    // Most reads are of values written with the current seed: no cache key to build for those.
    const state = this.state;
    if (state && object.encryptedDEKSourceType === DEK_SOURCE_HKDF_SEED && object.keyID === state.keyId && object.encryptedDEKSource.equals(state.encryptedDEKSource)) {
      return this.open({type: DEK_SOURCE_HKDF_SEED, key: state.seed, usedAt: 0}, object, key);
    }
    const id = dekCacheKey(object);
    const dek = this.deks.get(id);
    if (dek) {
      dek.usedAt = this.clock.now();
      return this.open(dek, object, key);
    }
    return this.service
      .decrypt(randomUUID(), {ciphertext: object.encryptedDEKSource, keyId: object.keyID, annotations: object.annotations})
      .catch((error: Error) => {
        throw new Error(`kms provider ${this.name}: failed to decrypt DEK, error: ${error.message}`);
      })
      .then((plain) => {
        const found: Dek = {type: object.encryptedDEKSourceType, key: plain, usedAt: this.clock.now()};
        this.remember(id, found);
        return this.open(found, object, key);
      });
  }

  private open(dek: Dek, object: EncryptedObject, key: string): string {
    const data = object.encryptedData;
    if (dek.type === DEK_SOURCE_AES_GCM_KEY) return gcmOpen(dek.key, data, key).toString('utf8');
    if (data.length < INFO_SIZE) throw new Error('the stored data was shorter than the required size');
    return gcmOpen(expandKey(dek.key, data.subarray(0, INFO_SIZE)), data.subarray(INFO_SIZE), key).toString('utf8');
  }

  private remember(id: string, dek: Dek): void {
    if (this.deks.size >= DEK_CACHE_MAX) {
      const now = this.clock.now();
      for (const [k, v] of this.deks) if (now - v.usedAt > DEK_CACHE_TTL_MS || this.deks.size >= DEK_CACHE_MAX) this.deks.delete(k);
    }
    this.deks.set(id, dek);
  }

  /** The key id a value was written under: a rewrite re-encrypts values of another one than the current. */
  keyVersion(stored: string): string | undefined {
    try {
      return this.decodeStored(stored).keyID;
    } catch {
      return undefined;
    }
  }

  currentKeyVersion(): string | undefined {
    return this.state?.keyId;
  }
}
