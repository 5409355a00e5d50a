/**
 * The encrypting store over an in-memory engine: watch events stay in revision order when one of
 * them must wait for a KMS plugin to unwrap its key (a value written by another server or before a
 * restart), and a value that cannot be read ends the watch with the error instead of skipping it.
 */
import {describe, expect, it} from '@jest/globals';
import {MemoryStore} from '../helpers/memory-store.js';
import {EncryptingStore, keyResolver} from '../../src/daemons/apiserver/encryption/store.js';
import {parseEncryptionConfig} from '../../src/daemons/apiserver/encryption/config.js';
import {KmsProvider} from '../../src/daemons/apiserver/encryption/kms/provider.js';
import type {KmsService} from '../../src/daemons/apiserver/encryption/kms/api.js';
import type {StoreEvent} from '../../src/daemons/apiserver/storage/store.js';

/** A plugin whose Decrypt answers after `decryptDelayMs` (wrapping is the identity: the test is about ordering). */
const plugin = (keyId: string, decryptDelayMs = 0): KmsService => ({
  status: async () => ({version: 'v2', healthz: 'ok', keyId}),
  encrypt: async (_uid, plaintext) => ({ciphertext: Buffer.from(plaintext), keyId, annotations: {}}),
  decrypt: (_uid, request) => new Promise((resolve) => setTimeout(() => resolve(Buffer.from(request.ciphertext)), decryptDelayMs)),
  close() {},
});

const config = (make: () => KmsProvider) =>
  parseEncryptionConfig(
    'apiVersion: apiserver.config.orch.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: [configmaps]\n    providers:\n      - kms: {apiVersion: v2, name: vault, endpoint: "unix:///unused.sock"}\n      - identity: {}\n',
    'test',
    () => make(),
  );

describe('EncryptingStore watch', () => {
  it('delivers events in revision order while a KMS key is unwrapped', async () => {
    const engine = new MemoryStore();
    // Another server wrote the first values with its own DEK seed: this one has to ask the plugin.
    const other = new KmsProvider('vault', plugin('key-1'));
    await other.check();
    const writer = new EncryptingStore(engine, () => config(() => other), keyResolver('/registry'));
    await writer.create('/registry/configmaps/default/a', '{"n":1}');
    await writer.create('/registry/configmaps/default/b', '{"n":2}');

    const mine = new KmsProvider('vault', plugin('key-1', 50));
    await mine.check();
    const reader = new EncryptingStore(engine, () => config(() => mine), keyResolver('/registry'));
    const events: StoreEvent[] = [];
    const progress: number[] = [];
    const done = new Promise<void>((resolve) => {
      reader.watch('/registry/configmaps/', 0, (e) => {
        events.push(e);
        if (events.length === 4) resolve();
      }, (error) => {
        throw error;
      }, (revision) => progress.push(revision));
    });
    // Values of this server's own seed decrypt at once, yet come after the ones waiting for the plugin.
    await reader.create('/registry/configmaps/default/c', '{"n":3}');
    await reader.update('/registry/configmaps/default/a', '{"n":4}', 1);
    await done;
    expect(events.map((e) => [e.key.split('/').pop(), e.value])).toEqual([['a', '{"n":1}'], ['b', '{"n":2}'], ['c', '{"n":3}'], ['a', '{"n":4}']]);
    expect(events.map((e) => e.revision)).toEqual([...events.map((e) => e.revision)].sort((x, y) => x - y));
    expect(events[3]!.prevValue).toBe('{"n":1}');
    other.stop();
    mine.stop();
  });

  it('ends the watch with the error when a value cannot be read', async () => {
    const engine = new MemoryStore();
    const p = new KmsProvider('vault', plugin('key-1'));
    await p.check();
    const store = new EncryptingStore(engine, () => config(() => p), keyResolver('/registry'));
    await engine.create('/registry/configmaps/default/bad', 'orch:enc:kms:v2:vault:not-an-envelope');
    await store.create('/registry/configmaps/default/good', '{"n":1}');
    const events: StoreEvent[] = [];
    const error = await new Promise<Error>((resolve) => store.watch('/registry/configmaps/', 0, (e) => events.push(e), resolve));
    expect(error.message).toMatch(/^kms provider vault: the stored value is not a valid KMS v2 EncryptedObject: /);
    expect(events).toEqual([]);
    p.stop();
  });
});
