/** Runs the built CLI (bin/run.js) as a user would, and returns what it printed and its exit code. */
import {spawnSync} from 'node:child_process';
import {fileURLToPath} from 'node:url';
import {dirname, join} from 'node:path';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const orchBin = join(repoRoot, 'bin', 'run.js');

export interface RunResult {
  stdout: string;
  stderr: string;
  code: number;
}

export function runOrch(args: readonly string[], options: {input?: string; cwd?: string; env?: NodeJS.ProcessEnv} = {}): RunResult {
  const r = spawnSync(process.execPath, [orchBin, ...args], {
    encoding: 'utf8',
    input: options.input ?? '',
    cwd: options.cwd ?? repoRoot,
    env: {...process.env, NO_COLOR: '1', ...options.env},
    timeout: 20_000,
  });
  return {stdout: r.stdout, stderr: r.stderr, code: r.status ?? -1};
}
