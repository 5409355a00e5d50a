/**
 * The short mode of bench/traffic.mjs in CI: every client kind and body size of the benchmark, a few
 * hundred requests, the built CLI as the server; the benchmark exits 1 when a write failed or a final
 * list disagreed with what the clients were told. (Build first: npm run build.)
 */
import {spawn} from 'node:child_process';
import {join} from 'node:path';
import {expect, it} from '@jest/globals';
import {repoRoot} from '../helpers/run-orch.js';

it('bench/traffic.mjs --short: no failures, nothing lost, refused or duplicated', async () => {
  const {code, out, err} = await new Promise<{code: number | null; out: string; err: string}>((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'bench', 'traffic.mjs'), '--short'], {cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe']});
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 170_000);
    child.on('error', reject);
    child.on('close', (exit) => {
      clearTimeout(timer);
      resolve({code: exit, out, err});
    });
  });
  expect({code, summary: out.split('\n').find((l) => /requests, \d+ failures/.test(l))}).toEqual({
    code: 0,
    summary: expect.stringMatching(/^\d+ requests, 0 failures; final lists: 0 lost, 0 unseen by a watch \(\d+ watches ended by the server and resumed, 0 ERROR events\), 0 refused but applied, 0 duplicated$/),
  });
  expect(err).not.toMatch(/Error/);
}, 180_000);
