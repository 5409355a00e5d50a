/**
 * `orch apiserver` with upstream's alpha text-logging options, as a real process: info lines on
 * stdout and warnings on stderr with --log-text-split-stream; with --log-text-info-buffer-size the
 * info lines stay buffered (flush period 1h here) until the buffer fills or the process exits; both
 * refused without the LoggingAlphaOptions gate.
 */
import {afterEach, describe, expect, it} from '@jest/globals';
import {spawn, type ChildProcess} from 'node:child_process';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {orchBin, repoRoot} from '../helpers/run-orch.js';
import {freePort, sleep} from '../helpers/apiserver.js';

const dirs: string[] = [];
const procs: ChildProcess[] = [];

afterEach(() => {
  for (const p of procs.splice(0)) if (p.exitCode === null) p.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true});
});

async function run(args: string[]) {
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-logstreams-'));
  dirs.push(dataDir);
  const port = await freePort();
  const proc = spawn(process.execPath, [orchBin, 'apiserver', '--data-dir', dataDir, '--bind-address', '127.0.0.1', '--secure-port', String(port), ...args], {cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe']});
  procs.push(proc);
  const out = {stdout: '', stderr: ''};
  proc.stdout!.on('data', (c: Buffer) => (out.stdout += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out.stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return {proc, out, exited};
}

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const GATE = '--feature-gates=LoggingAlphaOptions=true';
// An audit backend without a policy makes the server warn at start: a W line to look for.
const WARN = ['--audit-log-path', '/dev/null'];

describe('orch apiserver text log streams', () => {
  it('writes info lines to stdout and warnings to stderr with --log-text-split-stream', async () => {
    const {proc, out, exited} = await run(['--log-text-split-stream', GATE, ...WARN]);
    await until(() => out.stdout.includes('"Serving securely"'), 'the serving line on stdout');
    expect(out.stderr).toMatch(/^W\d{4} .*Audit backends are configured but --audit-policy-file is not/m);
    expect(out.stdout.split('\n').filter(Boolean).every((l) => l.startsWith('I'))).toBe(true);
    expect(out.stderr).not.toMatch(/^I\d{4}/m);
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 30_000);

  it('holds info lines in the buffer until exit with --log-text-info-buffer-size', async () => {
    const {proc, out, exited} = await run(['--log-text-split-stream', '--log-text-info-buffer-size=1Mi', '--log-flush-frequency=1h', GATE, ...WARN]);
    await until(() => out.stderr.includes('Audit backends are configured'), 'the warning on stderr');
    // Serving is logged well after the warning; give it time, then see that stdout got nothing yet.
    await sleep(3000);
    expect(out.stdout).toBe('');
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out.stdout).toContain('"Serving securely"');
    expect(out.stdout).toContain('"Stopped"');
  }, 30_000);

  it('refuses the options without the LoggingAlphaOptions gate, and a buffer without split streams', async () => {
    const a = await run(['--log-text-split-stream']);
    expect(await a.exited).not.toBe(0);
    expect(a.out.stderr).toContain('--log-text-split-stream requires the LoggingAlphaOptions feature gate');
    const b = await run(['--log-text-info-buffer-size=4Ki', GATE]);
    expect(await b.exited).not.toBe(0);
    expect(b.out.stderr).toContain('--log-text-info-buffer-size=4Ki is only supported in combination with --log-text-split-stream');
  }, 30_000);
});
