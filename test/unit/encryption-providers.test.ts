import {describe, expect, it} from '@jest/globals';
import {aesProvider, identityProvider, readValue} from '../../src/daemons/apiserver/encryption/providers.js';
import {parseEncryptionConfig, providersFor} from '../../src/daemons/apiserver/encryption/config.js';
import {secretboxProvider} from '../../src/daemons/apiserver/encryption/secretbox.js';
import {KmsProvider} from '../../src/daemons/apiserver/encryption/kms/provider.js';
import {decodeEncryptedObject, type KmsService} from '../../src/daemons/apiserver/encryption/kms/api.js';
import {FakeClock} from '../../src/daemons/shared/clock.js';

const secret = (byte: number, n = 32) => Buffer.alloc(n, byte);

describe('encryption providers', () => {
  it.each(['aesgcm', 'aescbc'] as const)('%s round-trips with its prefix and never stores plaintext', (kind) => {
    const p = aesProvider(kind, 'k1', secret(7));
    const stored = p.write('/registry/secrets/a/b', '{"data":"plain-value"}');
    expect(stored.startsWith(`orch:enc:${kind}:v1:k1:`)).toBe(true);
    expect(stored).not.toContain('plain-value');
    expect(p.write('/registry/secrets/a/b', 'x')).not.toBe(p.write('/registry/secrets/a/b', 'x'));
    expect(readValue([p], '/registry/secrets/a/b', stored)).toBe('{"data":"plain-value"}');
  });

  it('binds aesgcm values to their key: a value copied elsewhere does not decrypt', () => {
    const p = aesProvider('aesgcm', 'k1', secret(7, 16));
    const stored = p.write('/registry/secrets/a/b', 'v');
    expect(() => readValue([p], '/registry/secrets/a/other', stored)).toThrow();
  });

  it('reads with whichever key the prefix names, and says which key is missing', () => {
    const k1 = aesProvider('aesgcm', 'k1', secret(1));
    const k2 = aesProvider('aesgcm', 'k2', secret(2));
    const stored = k1.write('/k', 'v');
    expect(readValue([k2, k1], '/k', stored)).toBe('v');
    expect(() => readValue([k2], '/k', stored)).toThrow(/encrypted as orch:enc:aesgcm:v1:k1: and no configured key matches/);
    expect(() => readValue([k2], '/k', '{"plain":1}')).toThrow(/not encrypted and the identity provider is not configured/);
    expect(readValue([k2, identityProvider()], '/k', '{"plain":1}')).toBe('{"plain":1}');
  });
});

describe('secretbox', () => {
  it('round-trips under its prefix with a fresh nonce, and a wrong key does not authenticate', () => {
    const p = secretboxProvider('box1', secret(9));
    const stored = p.write('/registry/secrets/a/b', '{"data":"plain-value"}');
    expect(stored.startsWith('orch:enc:secretbox:v1:box1:')).toBe(true);
    expect(stored).not.toContain('plain-value');
    // 24-byte nonce + 16-byte tag around the 22 bytes of plaintext.
    expect(Buffer.from(stored.slice('orch:enc:secretbox:v1:box1:'.length), 'base64').length).toBe(24 + 16 + 22);
    expect(p.write('/k', 'x')).not.toBe(p.write('/k', 'x'));
    expect(readValue([p], '/registry/secrets/a/b', stored)).toBe('{"data":"plain-value"}');
    const other = secretboxProvider('box1', secret(8));
    expect(() => readValue([other], '/k', stored)).toThrow(/secretbox key box1: the value does not authenticate/);
  });
});

/** A plugin in memory: AES-GCM under its current key id, as a real plugin would wrap DEKs. */
function memoryKms(state: {keyId: string; healthz?: string; down?: boolean; calls: string[]}): KmsService {
  const kek = (id: string) => Buffer.alloc(32, id.length);
  return {
    async status() {
      state.calls.push('status');
      if (state.down) throw new Error('connect ECONNREFUSED');
      return {version: 'v2', healthz: state.healthz ?? 'ok', keyId: state.keyId};
    },
    async encrypt(_uid, plaintext) {
      state.calls.push('encrypt');
      if (state.down) throw new Error('connect ECONNREFUSED');
      return {ciphertext: Buffer.concat([Buffer.from(state.keyId + '|'), plaintext.map((b) => b ^ kek(state.keyId)[0]!)]), keyId: state.keyId, annotations: {}};
    },
    async decrypt(_uid, request) {
      state.calls.push('decrypt');
      if (state.down) throw new Error('connect ECONNREFUSED');
      const bar = request.ciphertext.indexOf('|');
      return Buffer.from(request.ciphertext.subarray(bar + 1).map((b) => b ^ kek(request.keyId)[0]!));
    },
    close() {},
  };
}

describe('kms v2 envelope', () => {
  const timings = {statusIntervalMs: 60_000, statusRetryMs: 10_000, okTtlMs: 20_000, failedTtlMs: 3_000, writeTtlMs: 180_000};
  const settle = () => new Promise((r) => setImmediate(r));

  it('writes locally with a DEK seed the plugin wrapped, reads back, and rotates with the key id', async () => {
    const plugin = {keyId: 'key-1', calls: [] as string[]};
    const clock = new FakeClock(1_000_000);
    const p = new KmsProvider('vault', memoryKms(plugin), {clock, timings});
    expect(() => p.write('/k', 'v')).toThrow(/kms provider vault: no DEK to encrypt with/);
    p.start();
    await settle();
    const a = p.write('/registry/secrets/ns/a', '{"password":"hunter2"}');
    const b = p.write('/registry/secrets/ns/b', '{"password":"hunter2"}');
    expect(a.startsWith('orch:enc:kms:v2:vault:')).toBe(true);
    expect(a).not.toContain('hunter2');
    // One Encrypt for the seed, none per write.
    expect(plugin.calls).toEqual(['status', 'encrypt']);
    const object = decodeEncryptedObject(Buffer.from(a.slice('orch:enc:kms:v2:vault:'.length), 'base64'));
    expect(object).toMatchObject({keyID: 'key-1', encryptedDEKSourceType: 1});
    expect(await p.read('/registry/secrets/ns/a', a)).toBe('{"password":"hunter2"}');
    expect(() => p.read('/registry/secrets/ns/other', a) as string).toThrow();
    expect(p.keyVersion(b)).toBe('key-1');
    expect(p.currentKeyVersion()).toBe('key-1');

    plugin.keyId = 'key-22';
    await clock.advance(60_000);
    await settle();
    const c = p.write('/registry/secrets/ns/c', 'new');
    expect(decodeEncryptedObject(Buffer.from(c.slice('orch:enc:kms:v2:vault:'.length), 'base64')).keyID).toBe('key-22');
    expect(p.currentKeyVersion()).toBe('key-22');
    expect(p.keyVersion(c)).toBe('key-22');
    // A fresh provider (another server, a restart) unwraps the old seed through the plugin once.
    const fresh = new KmsProvider('vault', memoryKms(plugin), {clock, timings});
    plugin.calls.length = 0;
    expect(await fresh.read('/registry/secrets/ns/b', b)).toBe('{"password":"hunter2"}');
    expect(await fresh.read('/registry/secrets/ns/a', a)).toBe('{"password":"hunter2"}');
    expect(plugin.calls).toEqual(['decrypt']);
    p.stop();
  });

  it('fails its check naming the provider when the plugin is down, and stops writing once the DEK expires', async () => {
    const plugin = {keyId: 'key-1', calls: [] as string[], down: false, healthz: 'ok'};
    const clock = new FakeClock(1_000_000);
    const p = new KmsProvider('vault', memoryKms(plugin), {clock, timings});
    p.start();
    await settle();
    expect(await p.check()).toBeUndefined();
    plugin.down = true;
    // The passing answer is reused for 20 s, as upstream.
    expect(await p.check()).toBeUndefined();
    await clock.advance(20_001);
    expect(await p.check()).toBe('failed to perform status section of the healthz check for KMS Provider vault, error: connect ECONNREFUSED');
    expect(p.write('/k', 'still within the DEK lifetime')).toMatch(/^orch:enc:kms:v2:vault:/);
    await clock.advance(180_000);
    await settle();
    expect(() => p.write('/k', 'v')).toThrow(/kms provider vault: encryptedDEKSource with keyID hash "sha256:[0-9a-f]{64}" expired at/);
    plugin.down = false;
    plugin.healthz = 'degraded';
    await clock.advance(10_000);
    await settle();
    expect(await p.check()).toBe('kmsv2 Provider vault is not healthy, error: got unexpected healthz status: degraded');
    p.stop();
  });
});

describe('EncryptionConfiguration', () => {
  const doc = (resources: string) => `apiVersion: apiserver.config.orch.io/v1\nkind: EncryptionConfiguration\nresources:\n${resources}`;
  it('matches exact names before wildcards, in order', () => {
    const config = parseEncryptionConfig(doc(`  - resources: [secrets, deployments.apps]\n    providers: [{identity: {}}]\n  - resources: ["*.apps", "*."]\n    providers: [{aescbc: {keys: [{name: a, secret: ${secret(1).toString('base64')}}]}}]\n  - resources: ["*.*"]\n    providers: [{aesgcm: {keys: [{name: g, secret: ${secret(2).toString('base64')}}]}}]\n`));
    expect(providersFor(config, '', 'secrets')?.[0]?.kind).toBe('identity');
    expect(providersFor(config, 'apps', 'deployments')?.[0]?.kind).toBe('identity');
    expect(providersFor(config, 'apps', 'statefulsets')?.[0]?.kind).toBe('aescbc');
    expect(providersFor(config, '', 'configmaps')?.[0]?.kind).toBe('aescbc');
    expect(providersFor(config, 'stable.example.com', 'crontabs')?.[0]?.kind).toBe('aesgcm');
  });

  it.each([
    ['a key that is not base64', `[{aesgcm: {keys: [{name: a, secret: "not base64!"}]}}]`, /keys\[0\]\.secret: Invalid value: REDACTED: secrets must be base64-encoded/],
    ['a kms v1 provider', `[{kms: {name: x, endpoint: "unix:///k.sock"}}]`, /providers\[0\]\.kms\.apiVersion: Invalid value: "v1": KMSv1 is deprecated/],
    ['a kms endpoint that is not a unix socket', `[{kms: {apiVersion: v2, name: x, endpoint: "tcp://127.0.0.1:1"}}]`, /kms\.endpoint: Invalid value: "tcp:\/\/127\.0\.0\.1:1": unsupported scheme "tcp" for KMS provider, only unix is supported/],
    ['a kms cachesize (v1 only)', `[{kms: {apiVersion: v2, name: x, endpoint: "unix:///k.sock", cachesize: 10}}]`, /kms\.cachesize: Invalid value: 10: cachesize is not supported in v2/],
    ['two kms providers of one name', `[{kms: {apiVersion: v2, name: x, endpoint: "unix:///a.sock"}}, {kms: {apiVersion: v2, name: x, endpoint: "unix:///b.sock"}}]`, /providers\[1\]\.kms\.name: Invalid value: "x": duplicate KMS provider name/],
    ['a secretbox key that is not 32 bytes', `[{secretbox: {keys: [{name: s, secret: ${secret(1, 16).toString('base64')}}]}}]`, /secretbox\.keys\[0\]\.secret: Invalid value: REDACTED: secret is not of the expected length, got 16, expected 32/],
    ['no providers', `[]`, /resources\[0\]\.providers: Required value/],
    ['two keys of one name', `[{aescbc: {keys: [{name: a, secret: ${secret(1).toString('base64')}}, {name: a, secret: ${secret(1).toString('base64')}}]}}]`, /keys\[1\]\.name: Duplicate value: "a"/],
  ])('refuses %s', (_case, providers, message) => {
    expect(() => parseEncryptionConfig(doc(`  - resources: [secrets]\n    providers: ${providers}\n`))).toThrow(message);
  });
});
