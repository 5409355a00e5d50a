import {describe, expect, it} from '@jest/globals';
import {aesProvider, identityProvider, readValue} from '../../src/daemons/apiserver/encryption/providers.js';
import {parseEncryptionConfig, providersFor} from '../../src/daemons/apiserver/encryption/config.js';

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
    ['a provider not supported yet', `[{kms: {name: x}}]`, /providers\[0\]\.kms: Unsupported value: the kms provider is not supported yet/],
    ['no providers', `[]`, /resources\[0\]\.providers: Required value/],
    ['two keys of one name', `[{aescbc: {keys: [{name: a, secret: ${secret(1).toString('base64')}}, {name: a, secret: ${secret(1).toString('base64')}}]}}]`, /keys\[1\]\.name: Duplicate value: "a"/],
  ])('refuses %s', (_case, providers, message) => {
    expect(() => parseEncryptionConfig(doc(`  - resources: [secrets]\n    providers: ${providers}\n`))).toThrow(message);
  });
});
