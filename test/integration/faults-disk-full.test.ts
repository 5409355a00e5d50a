/**
 * A full disk under the embedded SQLite store, with `orch apiserver` as a child process:
 * - writes are refused with a 503 Status saying `database or disk is full` (never a dropped
 *   connection), and none of them is applied;
 * - reads go on; `/readyz` fails and `/readyz/kvstore-writable` says why;
 * - when space returns, the check passes again without a client write, and writes resume;
 * - after `kill -9` and a restart, every acknowledged write is there and no refused one is.
 *
 * As root the data directory is on a 16 MiB tmpfs the test mounts (a 6 MiB filler file is the space
 * that "returns"); otherwise the server runs under a file-size limit (prlimit --fsize) that is
 * lifted later. FAULTS_DISK=fsize forces the second way.
 */
import {execFileSync} from 'node:child_process';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {type ServerProcess, startApiServerProcess} from '../helpers/apiserver.js';
import {accountFor, listNames, runLoad, type LoadResult} from '../helpers/traffic.js';

const NS = 'default';
const FS_BYTES = 16 * 1024 * 1024;
const FILLER_BYTES = 6 * 1024 * 1024;

function tryMountTmpfs(dir: string): boolean {
  if (process.env.FAULTS_DISK === 'fsize' || process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${FS_BYTES}`, 'tmpfs', dir], {stdio: 'ignore'});
    return true;
  } catch {
    return false;
  }
}

describe('a full disk under the SQLite store', () => {
  const root = mkdtempSync(join(tmpdir(), 'orch-disk-full-'));
  let mounted = false;
  let server: ServerProcess;
  const filler = join(root, 'filler');
  const phases: LoadResult[] = [];

  beforeAll(async () => {
    mounted = tryMountTmpfs(root);
    if (mounted) writeFileSync(filler, Buffer.alloc(FILLER_BYTES));
    server = await startApiServerProcess({
      engine: 'sqlite',
      dataDir: join(root, 'data'),
      // The limit is on any one file: the database grows past it long before the disk would.
      wrapper: mounted ? undefined : ['prlimit', `--fsize=${FS_BYTES - FILLER_BYTES}:unlimited`, '--'],
    });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (mounted) execFileSync('umount', ['-l', root], {stdio: 'ignore'});
    rmSync(root, {recursive: true, force: true});
  });

  const freeSpace = () => {
    if (mounted) rmSync(filler, {force: true});
    else execFileSync('prlimit', ['--pid', String(server.pid), '--fsize=unlimited:unlimited']);
  };

  it('refuses writes with a 503 Status, keeps reading, and /readyz says why', async () => {
    const [load] = await runLoad({orchconfig: server.orchconfigPath, protocol: 'http1', connections: 2, count: 60, sizes: [200_000], prefix: 'full', namespace: NS});
    phases.push(load!);
    expect({failures: load!.failures, unknown: load!.unknown}).toEqual({failures: 0, unknown: []});
    expect(load!.acknowledged.length).toBeGreaterThan(0);
    expect(load!.refused.length).toBeGreaterThan(0);
    for (const refusal of load!.refused) {
      expect(refusal).toMatchObject({code: 503, kind: 'Status'});
      expect(refusal.message).toMatch(mounted ? /database or disk is full/ : /database or disk is full|disk I\/O error/);
    }

    const client = server.client;
    expect((await client.get(`/api/v1/namespaces/${NS}/configmaps/${load!.acknowledged[0]}`)).status).toBe(200);
    expect(await listNames(client, NS, 'full-')).toHaveLength(load!.acknowledged.length);

    const check = await client.get('/readyz/kvstore-writable');
    expect(check.status).toBe(500);
    expect(check.text).toMatch(/writes to the kvstore fail since .*: (database or disk is full|disk I\/O error)/);
    expect((await client.get('/readyz')).status).toBe(500);
    expect((await client.get('/livez')).status).toBe(200);
  }, 90_000);

  it('passes /readyz and takes writes again once space returns', async () => {
    freeSpace();
    const client = server.client;
    await client.waitFor(async () => (await client.get('/readyz/kvstore-writable')).status === 200, 'kvstore-writable to pass', 15_000);
    expect((await client.get('/readyz')).status).toBe(200);
    const [load] = await runLoad({orchconfig: server.orchconfigPath, protocol: 'http1', connections: 2, count: 8, sizes: [200_000], prefix: 'after', namespace: NS});
    phases.push(load!);
    expect({failures: load!.failures, refused: load!.refused, acknowledged: load!.acknowledged.length}).toEqual({failures: 0, refused: [], acknowledged: 8});
  }, 60_000);

  it('keeps every acknowledged write through kill -9 and a restart', async () => {
    await server.kill9();
    await server.restart();
    const listed = [...(await listNames(server.client, NS, 'full-')), ...(await listNames(server.client, NS, 'after-'))];
    expect(accountFor(phases, listed)).toEqual({lost: [], appliedThoughRefused: [], duplicated: []});
    expect(listed).toHaveLength(phases.reduce((n, p) => n + p.acknowledged.length, 0));
  }, 60_000);
});
