/**
 * Encryption at rest on a real server (SQLite and etcd), reached with kubectl: a secret is stored
 * under the aesgcm provider's prefix with no plaintext, reads back through kubectl, survives a key
 * rotation (new key first, old key still read), and `kubectl get -o json | kubectl replace -f -`
 * re-encrypts it with the new key. A bad configuration stops the start naming the problem.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import Database from 'better-sqlite3';
import {ApiClient, kubectl, readAdminOrchconfig, testConfig, type Engine} from '../helpers/apiserver.js';
import {type EtcdServer, startEtcd} from '../helpers/etcd.js';
import {ApiServer, type ApiServerConfig} from '../../src/daemons/apiserver/server.js';
import {EtcdStore} from '../../src/daemons/apiserver/storage/index.js';
import {configureKlog} from '../../src/lib/klog.js';

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
  const raw = async (k: string): Promise<string> => {
    if (engine === 'sqlite') {
      const db = new Database(join(dir, 'data', 'kvstore.sqlite'), {readonly: true});
      try {
        return (db.prepare('SELECT value FROM kv WHERE key = ?').get(k) as {value: string}).value;
      } finally {
        db.close();
      }
    }
    const store = new EtcdStore({endpoints: [etcd!.endpoint]});
    try {
      return (await store.get(k))!.value;
    } finally {
      await store.close();
    }
  };
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

