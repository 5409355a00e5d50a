/**
 * The clients a user picks, each in its own process against the API server, writing ConfigMaps below
 * and above one TLS record (16 KiB) with a watch of them open: kubectl (HTTP/2, and HTTP/1.1 with
 * DISABLE_HTTP2), @kubernetes/client-node (HTTP/1.1) and the Python kubernetes client (python3-kubernetes,
 * HTTP/1.1 keep-alive: the client of issue 18, which lost writes to RemoteDisconnected). Every write is
 * acknowledged, seen by the watch, and in the final list.
 */
import {spawn} from 'node:child_process';
import {existsSync} from 'node:fs';
import {join} from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {type InProcessServer, kubectl, kubectlStream, startApiServer} from '../helpers/apiserver.js';
import {listNames, runJsonProcess} from '../helpers/traffic.js';

const NS = 'default';
const SIZES = [100, 20_000, 200_000];

interface ClientResult {
  size: number;
  requests: number;
  acknowledged: string[];
  errors: Record<string, number>;
  watchMissing: string[];
}

const run = (command: string, args: string[]) => runJsonProcess<ClientResult[]>(command, args);

/** Debian's python3 (where python3-kubernetes installs), not a python3 of pyenv or a venv earlier on PATH. */
function systemPython(): string {
  return existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
}

function expectAllWritten(results: ClientResult[], count: number): void {
  for (const r of results) {
    expect({size: r.size, errors: r.errors, acknowledged: r.acknowledged.length, watchMissing: r.watchMissing}).toEqual({size: r.size, errors: {}, acknowledged: count, watchMissing: []});
  }
}

describe('real clients', () => {
  let api: InProcessServer;

  beforeAll(async () => {
    api = await startApiServer({engine: 'sqlite'});
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('python3-kubernetes: every write acknowledged, watched and listed', async () => {
    const probe = await new Promise<number>((resolve) => spawn(systemPython(), ['-c', 'import kubernetes'], {stdio: 'ignore'}).on('close', (code) => resolve(code ?? 1)));
    if (probe !== 0) throw new Error('the Python kubernetes client is missing: apt-get install python3-kubernetes (see scripts/test-debian-packages.txt)');
    const count = 30;
    const results = await run(systemPython(), [join('test', 'helpers', 'python-load.py'), api.orchconfigPath, NS, 'py', String(count), SIZES.join(',')]);
    expectAllWritten(results, count);
    expect(await listNames(api.client, NS, 'py-')).toHaveLength(count * SIZES.length);
  }, 120_000);

  it('@kubernetes/client-node: every write acknowledged, watched and listed', async () => {
    const count = 30;
    const results = await run(process.execPath, [join('test', 'helpers', 'client-node-load.mjs'), api.orchconfigPath, NS, 'cn', String(count), SIZES.join(','), '4']);
    expectAllWritten(results, count);
    expect(await listNames(api.client, NS, 'cn-')).toHaveLength(count * SIZES.length);
  }, 120_000);

  it.each([
    ['HTTP/2', {}],
    ['HTTP/1.1', {DISABLE_HTTP2: '1'}],
  ])('kubectl over %s: creates of 200 KB ConfigMaps with a watch open', async (protocol, env) => {
    const prefix = `kc${protocol === 'HTTP/2' ? '2' : '1'}`;
    const count = 12;
    const manifests = Array.from({length: count}, (_, i) =>
      JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: `${prefix}-${i}`, labels: {traffic: prefix}}, data: {k: 'x'.repeat(200_000)}}),
    ).join('\n');
    const previous = {...process.env};
    Object.assign(process.env, env);
    try {
      const watch = kubectlStream(api.orchconfigPath, ['get', 'configmaps', '-n', NS, '-l', `traffic=${prefix}`, '--watch', '-o', 'name']);
      try {
        const created = await kubectl(api.orchconfigPath, ['create', '-n', NS, '-f', '-'], {input: manifests, timeoutMs: 60_000});
        // klog's info lines are not complaints: with DISABLE_HTTP2 kubectl says so (`I... HTTP2 has been
        // explicitly disabled`) each time it builds a transport, e.g. for discovery on a fresh cache.
        const complaints = created.stderr.split('\n').filter((line) => line !== '' && !/^I\d{4} /.test(line));
        expect({code: created.code, complaints}).toEqual({code: 0, complaints: []});
        expect(created.stdout.trim().split('\n')).toHaveLength(count);
        await watch.waitFor(new RegExp(`${prefix}-${count - 1}\\b`), 20_000);
        for (let i = 0; i < count; i++) expect(watch.output()).toContain(`configmap/${prefix}-${i}\n`);
      } finally {
        await watch.stop();
      }
    } finally {
      for (const key of Object.keys(env)) if (previous[key] === undefined) delete process.env[key];
    }
    expect(await listNames(api.client, NS, `${prefix}-`)).toHaveLength(count);
  }, 120_000);
});
