/**
 * --storage-media-type on a real server (SQLite and etcd), reached with kubectl: built-in objects are
 * stored as the protobuf envelope, YAML or JSON; custom resources stay JSON; a store written under one
 * setting reads back after a restart under another; protobuf under encryption round-trips too.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {ApiClient, kubectl, readAdminOrchconfig, testConfig, type Engine} from '../helpers/apiserver.js';
import {type EtcdServer, startEtcd} from '../helpers/etcd.js';
import {ApiServer, type ApiServerConfig} from '../../src/daemons/apiserver/server.js';
import {rawStoredValue} from '../helpers/raw-store.js';
import {configureKlog} from '../../src/lib/klog.js';

describe.each<Engine>(['sqlite', 'etcd'])('storage media type (%s)', (engine) => {
  let dir: string;
  let etcd: EtcdServer | undefined;
  let base: ApiServerConfig;
  let server: ApiServer | undefined;
  let kubeconfig: string;

  const start = async (mediaType: string, extra: Partial<ApiServerConfig> = {}) => {
    await server?.stop();
    server = new ApiServer({...base, ...extra, storage: {...base.storage, mediaType}});
    await server.start();
    const client = new ApiClient(readAdminOrchconfig(base.orchconfigPath));
    await client.waitReady();
    client.close();
  };
  const raw = (k: string) => rawStoredValue(engine, join(dir, 'data'), etcd?.endpoint, `${base.keyPrefix}/${k}`);
  const ok = async (args: string[], input?: string) => {
    const r = await kubectl(kubeconfig, args, input === undefined ? undefined : {input});
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
    return r.stdout;
  };

  beforeAll(async () => {
    configureKlog({out: () => undefined});
    dir = mkdtempSync(join(tmpdir(), 'orch-media-'));
    if (engine === 'etcd') etcd = await startEtcd();
    base = testConfig(join(dir, 'data'), engine, etcd?.endpoint);
    kubeconfig = base.orchconfigPath;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await etcd?.stop();
    rmSync(dir, {recursive: true, force: true});
  });

  it('stores built-in objects as the protobuf envelope, custom resources as JSON', async () => {
    await start('application/vnd.kubernetes.protobuf');
    await ok(['create', 'configmap', 'pb', '--from-literal=color=blue-protobuf']);
    await ok(['create', 'secret', 'generic', 'pb', '--from-literal=k=v']);
    await ok(['create', 'deployment', 'pb', '--image=nginx:1.27', '--replicas=2']);
    const stored = (await raw('configmaps/default/pb'))!;
    expect(stored.startsWith('k8s\u0000')).toBe(true);
    expect(stored).not.toContain('"data"');
    expect(stored).toContain('blue-protobuf');
    expect((await raw('deployments/default/pb'))!.startsWith('k8s\u0000')).toBe(true);
    expect(await ok(['get', 'configmap', 'pb', '-o', 'jsonpath={.data.color}'])).toBe('blue-protobuf');
    expect(await ok(['get', 'deployment', 'pb', '-o', 'jsonpath={.spec.replicas}'])).toBe('2');
    // Kinds without a protobuf schema here are JSON, as upstream stores unregistered types.
    await ok(['create', '-f', '-'], JSON.stringify({apiVersion: 'v1', kind: 'Endpoints', metadata: {name: 'pb'}, subsets: [{addresses: [{ip: '10.0.0.1'}], ports: [{port: 80}]}]}));
    expect(JSON.parse((await raw('services/endpoints/default/pb'))!).subsets[0].addresses).toEqual([{ip: '10.0.0.1'}]);
  }, 60_000);

  it('reads a protobuf store after a restart as YAML, writes YAML, and back as JSON', async () => {
    await start('application/yaml');
    expect(await ok(['get', 'configmap', 'pb', '-o', 'jsonpath={.data.color}'])).toBe('blue-protobuf');
    await ok(['create', 'configmap', 'ym', '--from-literal=color=green-yaml']);
    const stored = (await raw('configmaps/default/ym'))!;
    expect(stored.slice(0, 40)).toMatch(/^kind: ConfigMap\napiVersion: v1\n/);
    expect(stored).toContain('color: green-yaml');
    // An update rewrites the protobuf object in the current encoding.
    await ok(['label', 'configmap', 'pb', 'moved=yes']);
    expect((await raw('configmaps/default/pb'))!).toMatch(/^kind: ConfigMap\napiVersion: v1\n[^]*moved: "?yes"?/);

    await start('application/json');
    expect(await ok(['get', 'configmaps', 'pb', 'ym', '-o', 'jsonpath={.items[*].data.color}'])).toBe('blue-protobuf green-yaml');
    expect(await ok(['get', 'deployment', 'pb', '-o', 'jsonpath={.spec.template.spec.containers[0].image}'])).toBe('nginx:1.27');
    await ok(['create', 'configmap', 'js', '--from-literal=color=red-json']);
    expect(JSON.parse((await raw('configmaps/default/js'))!).data).toEqual({color: 'red-json'});
    // Lists, watches and deletes work on a mixed store.
    expect((await ok(['get', 'configmaps', '-o', 'name'])).split('\n').filter((l) => /\/(pb|ym|js)$/.test(l))).toEqual(['configmap/js', 'configmap/pb', 'configmap/ym']);
    await ok(['delete', 'configmap', 'pb', 'ym']);
  }, 60_000);

  it('encrypts the protobuf bytes: no plaintext, and the secret reads back', async () => {
    const file = join(dir, 'enc.yaml');
    writeFileSync(file, `apiVersion: apiserver.config.orch.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: [secrets]\n    providers:\n      - aesgcm: {keys: [{name: k1, secret: ${Buffer.alloc(32, 5).toString('base64')}}]}\n      - identity: {}\n`);
    await start('application/vnd.orch.protobuf', {encryptionProviderConfig: file});
    await ok(['create', 'secret', 'generic', 'enc', '--from-literal=password=pb-and-aes']);
    const stored = (await raw('secrets/default/enc'))!;
    expect(stored.startsWith('orch:enc:aesgcm:v1:k1:')).toBe(true);
    expect(stored).not.toContain('pb-and-aes');
    expect(Buffer.from(await ok(['get', 'secret', 'enc', '-o', 'jsonpath={.data.password}']), 'base64').toString()).toBe('pb-and-aes');
    // The unencrypted protobuf secret of the first test still reads.
    expect(await ok(['get', 'secret', 'pb', '-o', 'jsonpath={.data.k}'])).toBe(Buffer.from('v').toString('base64'));
  }, 60_000);
});
