/**
 * Encryption at rest on a real server (SQLite and etcd), reached with kubectl: a secret is stored
 * under the aesgcm provider's prefix with no plaintext, reads back through kubectl, survives a key
 * rotation (new key first, old key still read), and `kubectl get -o json | kubectl replace -f -`
 * re-encrypts it with the new key. A bad configuration stops the start naming the problem.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {createCipheriv, createDecipheriv, randomBytes} from 'node:crypto';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {ApiClient, kubectl, readAdminOrchconfig, startApiServer, testConfig, type Engine, type InProcessServer} from '../helpers/apiserver.js';
import {type EtcdServer, startEtcd} from '../helpers/etcd.js';
import {ApiServer, type ApiServerConfig} from '../../src/daemons/apiserver/server.js';
import {rawStoredValue} from '../helpers/raw-store.js';
import {configureKlog} from '../../src/lib/klog.js';
import {decodeEncryptedObject, KMS_V2_SERVICE} from '../../src/daemons/apiserver/encryption/kms/api.js';

const key = (byte: number, length = 32) => Buffer.alloc(length, byte).toString('base64');
const encryptionConfig = (providers: string) => `apiVersion: apiserver.config.orch.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
${providers}
`;
const KEY1 = `      - aesgcm:\n          keys:\n            - {name: key1, secret: ${key(1)}}\n`;
const KEY2 = `      - aesgcm:\n          keys:\n            - {name: key2, secret: ${key(2, 16)}}\n`;
const CBC = `      - aescbc:\n          keys:\n            - {name: cbc1, secret: ${key(3)}}\n`;
const IDENTITY = '      - identity: {}\n';
const BOX = `      - secretbox:\n          keys:\n            - {name: box1, secret: ${key(4)}}\n`;

const rawValue = (engine: Engine, dataDir: string, etcd: EtcdServer | undefined, k: string) => rawStoredValue(engine, dataDir, etcd?.endpoint, k);

describe.each<Engine>(['sqlite', 'etcd'])('encryption at rest (%s)', (engine) => {
  let dir: string;
  let etcd: EtcdServer | undefined;
  let base: ApiServerConfig;
  let server: ApiServer | undefined;
  let kubeconfig: string;

  const start = async (providers: string) => {
    const file = join(dir, `encryption-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, encryptionConfig(providers));
    server = new ApiServer({...base, encryptionProviderConfig: file});
    await server.start();
    const client = new ApiClient(readAdminOrchconfig(base.orchconfigPath));
    await client.waitReady();
    client.close();
    kubeconfig = base.orchconfigPath;
  };
  const stop = async () => {
    await server?.stop();
    server = undefined;
  };
  const raw = async (k: string): Promise<string> => (await rawValue(engine, join(dir, 'data'), etcd, k))!;
  const secretKey = (name: string) => `${base.keyPrefix}/secrets/default/${name}`;

  beforeAll(async () => {
    configureKlog({out: () => undefined});
    dir = mkdtempSync(join(tmpdir(), 'orch-encryption-'));
    if (engine === 'etcd') etcd = await startEtcd();
    base = testConfig(join(dir, 'data'), engine, etcd?.endpoint);
  }, 60_000);

  afterAll(async () => {
    await stop();
    await etcd?.stop();
    rmSync(dir, {recursive: true, force: true});
  });

  it('stores secrets under the first provider, without plaintext, and reads them back', async () => {
    await start(KEY1 + IDENTITY);
    expect((await kubectl(kubeconfig, ['create', 'secret', 'generic', 's1', '--from-literal=password=hunter2-plain'])).code).toBe(0);
    expect((await kubectl(kubeconfig, ['create', 'configmap', 'c1', '--from-literal=visible=yes'])).code).toBe(0);
    const stored = await raw(secretKey('s1'));
    expect(stored.startsWith('orch:enc:aesgcm:v1:key1:')).toBe(true);
    expect(stored).not.toContain('hunter2');
    expect(stored).not.toContain(Buffer.from('hunter2-plain').toString('base64'));
    expect(stored).not.toContain('"s1"');
    // Resources the configuration does not name stay as they are.
    expect(await raw(`${base.keyPrefix}/configmaps/default/c1`)).toContain('"visible":"yes"');
    const got = await kubectl(kubeconfig, ['get', 'secret', 's1', '-o', 'jsonpath={.data.password}']);
    expect(Buffer.from(got.stdout, 'base64').toString()).toBe('hunter2-plain');
  }, 60_000);

  it('rotates keys: the old key still reads, a rewrite re-encrypts with the new first key', async () => {
    await stop();
    await start(KEY2 + KEY1);
    const got = await kubectl(kubeconfig, ['get', 'secret', 's1', '-o', 'jsonpath={.data.password}']);
    expect(Buffer.from(got.stdout, 'base64').toString()).toBe('hunter2-plain');
    expect((await raw(secretKey('s1'))).startsWith('orch:enc:aesgcm:v1:key1:')).toBe(true);
    const all = await kubectl(kubeconfig, ['get', 'secrets', '-A', '-o', 'json']);
    const replaced = await kubectl(kubeconfig, ['replace', '-f', '-'], {input: all.stdout});
    expect(replaced.code).toBe(0);
    expect((await raw(secretKey('s1'))).startsWith('orch:enc:aesgcm:v1:key2:')).toBe(true);
  }, 60_000);

  it('writes with aescbc while aesgcm values still read', async () => {
    await stop();
    await start(CBC + KEY2);
    expect((await kubectl(kubeconfig, ['create', 'secret', 'generic', 's2', '--from-literal=a=b'])).code).toBe(0);
    expect((await raw(secretKey('s2'))).startsWith('orch:enc:aescbc:v1:cbc1:')).toBe(true);
    expect((await kubectl(kubeconfig, ['get', 'secrets', 's1', 's2', '-o', 'name'])).stdout.trim().split('\n')).toEqual(['secret/s1', 'secret/s2']);
  }, 60_000);

  it('writes with secretbox, without plaintext, while the aescbc and aesgcm values still read', async () => {
    await stop();
    await start(BOX + CBC + KEY2);
    expect((await kubectl(kubeconfig, ['create', 'secret', 'generic', 's3', '--from-literal=token=boxed-plaintext'])).code).toBe(0);
    const stored = await raw(secretKey('s3'));
    expect(stored.startsWith('orch:enc:secretbox:v1:box1:')).toBe(true);
    expect(stored).not.toContain('boxed-plaintext');
    expect(stored).not.toContain(Buffer.from('boxed-plaintext').toString('base64'));
    const got = await kubectl(kubeconfig, ['get', 'secret', 's3', '-o', 'jsonpath={.data.token}']);
    expect(Buffer.from(got.stdout, 'base64').toString()).toBe('boxed-plaintext');
    expect((await kubectl(kubeconfig, ['get', 'secrets', 's1', 's2', 's3', '-o', 'name'])).stdout.trim().split('\n')).toEqual(['secret/s1', 'secret/s2', 'secret/s3']);
  }, 60_000);
});

describe('a bad encryption configuration', () => {
  it('stops the start naming the provider, the key and the problem', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-encryption-bad-'));
    try {
      const file = join(dir, 'enc.yaml');
      writeFileSync(file, encryptionConfig(`      - aesgcm:\n          keys:\n            - {name: short, secret: ${key(1, 10)}}\n      - secretbox: {keys: []}\n`));
      const server = new ApiServer({...testConfig(join(dir, 'data'), 'sqlite'), encryptionProviderConfig: file});
      await expect(server.start()).rejects.toThrow(
        /--encryption-provider-config .*enc\.yaml: resources\[0\]\.providers\[0\]\.aesgcm\.keys\[0\]\.secret: Invalid value: REDACTED: secret is not of the expected length, got 10, expected one of \[16 24 32\]; resources\[0\]\.providers\[1\]\.secretbox\.keys: Required value: at least one key is required/,
      );
      await server.stop().catch(() => undefined);
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
  });
});


/**
 * A KMS v2 plugin as a real gRPC server on a unix socket: each key id has its own AES-256-GCM key
 * encryption key, Encrypt wraps under the current one, Decrypt under the one the request names.
 */
class KmsPlugin {
  keyId = 'key-1';
  encrypts = 0;
  private readonly keks = new Map<string, Buffer>();
  private server?: grpc.Server;

  constructor(readonly socket: string) {}

  private kek(id: string): Buffer {
    if (!this.keks.has(id)) this.keks.set(id, randomBytes(32));
    return this.keks.get(id)!;
  }

  async start(): Promise<void> {
    rmSync(this.socket, {force: true});
    const server = new grpc.Server();
    server.addService(KMS_V2_SERVICE, {
      Status: (_call: unknown, callback: grpc.sendUnaryData<object>) => callback(null, {version: 'v2', healthz: 'ok', key_id: this.keyId}),
      Encrypt: (call: grpc.ServerUnaryCall<{plaintext: Buffer}, object>, callback: grpc.sendUnaryData<object>) => {
        this.encrypts++;
        const nonce = randomBytes(12);
        const cipher = createCipheriv('aes-256-gcm', this.kek(this.keyId), nonce);
        const sealed = Buffer.concat([nonce, cipher.update(call.request.plaintext), cipher.final(), cipher.getAuthTag()]);
        callback(null, {ciphertext: sealed, key_id: this.keyId, annotations: {'kms.example.com/v': Buffer.from('1')}});
      },
      Decrypt: (call: grpc.ServerUnaryCall<{ciphertext: Buffer; key_id: string}, object>, callback: grpc.sendUnaryData<object>) => {
        try {
          const c = call.request.ciphertext;
          const decipher = createDecipheriv('aes-256-gcm', this.kek(call.request.key_id), c.subarray(0, 12));
          decipher.setAuthTag(c.subarray(c.length - 16));
          callback(null, {plaintext: Buffer.concat([decipher.update(c.subarray(12, c.length - 16)), decipher.final()])});
        } catch (error) {
          callback({code: grpc.status.INVALID_ARGUMENT, details: (error as Error).message} as grpc.ServiceError);
        }
      },
    } as unknown as grpc.UntypedServiceImplementation);
    await new Promise<void>((resolve, reject) => server.bindAsync(`unix:${this.socket}`, grpc.ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())));
    this.server = server;
  }

  stop(): void {
    this.server?.forceShutdown();
    this.server = undefined;
  }
}

const KMS_PREFIX = 'orch:enc:kms:v2:vault:';
const keyIdOf = (stored: string) => decodeEncryptedObject(Buffer.from(stored.slice(KMS_PREFIX.length), 'base64')).keyID;
/** Upstream's timings shortened: Status every 200 ms, answers never reused, a DEK writes 2 s after the last good Status. */
const FAST_KMS = {statusIntervalMs: 200, statusRetryMs: 200, okTtlMs: 0, failedTtlMs: 0, writeTtlMs: 2000};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each<Engine>(['sqlite', 'etcd'])('KMS v2 encryption (%s)', (engine) => {
  let dir: string;
  let etcd: EtcdServer | undefined;
  let plugin: KmsPlugin;
  let s: InProcessServer;
  let client: ApiClient;
  let kubeconfig: string;
  let secretKey: (name: string) => string;
  const raw = (k: string) => rawValue(engine, s.dataDir, etcd, k);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-kms-'));
    if (engine === 'etcd') etcd = await startEtcd();
    plugin = new KmsPlugin(join(dir, 'kms.sock'));
    await plugin.start();
    const file = join(dir, 'encryption.yaml');
    writeFileSync(file, encryptionConfig(`      - kms:\n          apiVersion: v2\n          name: vault\n          endpoint: unix://${plugin.socket}\n          timeout: 1s\n${IDENTITY}`));
    s = await startApiServer({engine, etcdEndpoint: etcd?.endpoint, config: {encryptionProviderConfig: file, kmsTimings: FAST_KMS}});
    ({client, orchconfigPath: kubeconfig} = s);
    secretKey = (name) => `${s.server.config.keyPrefix}/secrets/default/${name}`;
  }, 60_000);

  afterAll(async () => {
    await s?.stop();
    plugin?.stop();
    await etcd?.stop();
    rmSync(dir, {recursive: true, force: true});
  });

  it('stores secrets as KMS envelopes without plaintext, one plugin call per DEK, not per write', async () => {
    expect((await client.get('/readyz/kms-provider-0')).status).toBe(200);
    expect((await client.get('/livez?verbose')).text).toContain('[+]kms-provider-0 ok');
    const encryptsBefore = plugin.encrypts;
    for (const name of ['k1', 'k2']) expect((await kubectl(kubeconfig, ['create', 'secret', 'generic', name, '--from-literal=password=kms-plaintext'])).code).toBe(0);
    expect(plugin.encrypts).toBe(encryptsBefore);
    const stored = (await raw(secretKey('k1')))!;
    expect(stored.startsWith(KMS_PREFIX)).toBe(true);
    expect(stored).not.toContain('kms-plaintext');
    expect(stored).not.toContain(Buffer.from('kms-plaintext').toString('base64'));
    expect(keyIdOf(stored)).toBe('key-1');
    const got = await kubectl(kubeconfig, ['get', 'secret', 'k1', '-o', 'jsonpath={.data.password}']);
    expect(Buffer.from(got.stdout, 'base64').toString()).toBe('kms-plaintext');
  }, 60_000);

  it('rotates with the plugin key id: new writes use it, old values read, a rewrite re-encrypts', async () => {
    plugin.keyId = 'key-2';
    await sleep(800);
    expect((await kubectl(kubeconfig, ['create', 'secret', 'generic', 'k3', '--from-literal=a=b'])).code).toBe(0);
    expect(keyIdOf((await raw(secretKey('k3')))!)).toBe('key-2');
    expect(keyIdOf((await raw(secretKey('k1')))!)).toBe('key-1');
    const got = await kubectl(kubeconfig, ['get', 'secret', 'k1', '-o', 'jsonpath={.data.password}']);
    expect(Buffer.from(got.stdout, 'base64').toString()).toBe('kms-plaintext');
    const all = await kubectl(kubeconfig, ['get', 'secrets', '-A', '-o', 'json']);
    expect((await kubectl(kubeconfig, ['replace', '-f', '-'], {input: all.stdout})).code).toBe(0);
    expect(keyIdOf((await raw(secretKey('k1')))!)).toBe('key-2');
    expect(keyIdOf((await raw(secretKey('k2')))!)).toBe('key-2');
  }, 60_000);

  it('plugin down: the check fails naming the provider, writes are refused and nothing is stored', async () => {
    plugin.stop();
    await client.waitFor(async () => (await client.get('/readyz/kms-provider-0')).status !== 200, 'kms-provider-0 to fail', 10_000);
    const check = await client.get('/healthz/kms-provider-0');
    expect(check.status).toBe(500);
    expect(check.text).toContain('KMS Provider vault');
    expect((await client.get('/readyz')).status).toBe(500);
    // Writes go on with the DEK in hand until its write lifetime has passed without a good Status.
    await sleep(FAST_KMS.writeTtlMs + 300);
    const refused = await kubectl(kubeconfig, ['create', 'secret', 'generic', 'k4', '--from-literal=leak=never-stored']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('kms provider vault');
    expect(await raw(secretKey('k4'))).toBeUndefined();

    await plugin.start();
    await client.waitFor(async () => (await client.get('/readyz/kms-provider-0')).status === 200, 'kms-provider-0 to pass again', 20_000);
    expect((await kubectl(kubeconfig, ['create', 'secret', 'generic', 'k4', '--from-literal=a=b'])).code).toBe(0);
    expect((await raw(secretKey('k4')))!.startsWith(KMS_PREFIX)).toBe(true);
  }, 60_000);
});

describe('--encryption-provider-config-automatic-reload', () => {
  let dir: string;
  let plugin: KmsPlugin;
  let s: InProcessServer;
  let client: ApiClient;
  let kubeconfig: string;
  let file: string;
  const logs: string[] = [];
  const raw = (name: string) => rawValue('sqlite', s.dataDir, undefined, `/registry/secrets/default/${name}`);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-kms-reload-'));
    plugin = new KmsPlugin(join(dir, 'kms.sock'));
    await plugin.start();
    file = join(dir, 'encryption.yaml');
    writeFileSync(file, encryptionConfig(KEY1));
    s = await startApiServer({engine: 'sqlite', config: {encryptionProviderConfig: file, encryptionProviderConfigAutomaticReload: true, encryptionReloadIntervalMs: 100, kmsTimings: FAST_KMS}});
    ({client, orchconfigPath: kubeconfig} = s);
    configureKlog({out: (line: string) => void logs.push(line)});
  }, 60_000);

  afterAll(async () => {
    await s?.stop();
    plugin?.stop();
    rmSync(dir, {recursive: true, force: true});
  });

  it('has one kms-providers check, keeps the running config on a broken file, swaps in a valid one', async () => {
    const verbose = (await client.get('/readyz?verbose')).text;
    expect(verbose).toContain('[+]kms-providers ok');
    expect(verbose).not.toContain('kms-provider-0');
    expect((await kubectl(kubeconfig, ['create', 'secret', 'generic', 'r1', '--from-literal=a=b'])).code).toBe(0);
    expect((await raw('r1'))!.startsWith('orch:enc:aesgcm:v1:key1:')).toBe(true);

    writeFileSync(file, encryptionConfig(`      - secretbox: {keys: [{name: short, secret: ${key(1, 16)}}]}\n`));
    await client.waitFor(async () => logs.some((l) => l.includes('encryption provider config reload failed')), 'the broken file to be logged', 5000);
    expect(logs.find((l) => l.includes('reload failed'))).toContain('got 16, expected 32');
    expect((await kubectl(kubeconfig, ['create', 'secret', 'generic', 'r2', '--from-literal=a=b'])).code).toBe(0);
    expect((await raw('r2'))!.startsWith('orch:enc:aesgcm:v1:key1:')).toBe(true);

    writeFileSync(file, encryptionConfig(`      - kms:\n          apiVersion: v2\n          name: vault\n          endpoint: unix://${plugin.socket}\n${KEY1}`));
    await client.waitFor(async () => logs.some((l) => l.includes('encryption provider config reloaded')), 'the new file to take over', 5000);
    expect((await kubectl(kubeconfig, ['create', 'secret', 'generic', 'r3', '--from-literal=a=b'])).code).toBe(0);
    expect((await raw('r3'))!.startsWith(KMS_PREFIX)).toBe(true);
    // Values of the old configuration still read through the key the new one kept.
    expect((await kubectl(kubeconfig, ['get', 'secrets', 'r1', 'r2', 'r3', '-o', 'name'])).stdout.trim().split('\n')).toEqual(['secret/r1', 'secret/r2', 'secret/r3']);
    // Rewriting every secret moves the old values to the new first provider, without a restart.
    const all = await kubectl(kubeconfig, ['get', 'secrets', '-A', '-o', 'json']);
    expect((await kubectl(kubeconfig, ['replace', '-f', '-'], {input: all.stdout})).code).toBe(0);
    for (const name of ['r1', 'r2']) expect((await raw(name))!.startsWith(KMS_PREFIX)).toBe(true);
    expect((await client.get('/healthz/kms-providers')).status).toBe(200);
    plugin.stop();
    await client.waitFor(async () => (await client.get('/healthz/kms-providers')).status === 500, 'kms-providers to fail', 10_000);
    expect((await client.get('/healthz/kms-providers')).text).toContain('KMS Provider vault');
  }, 60_000);
});
