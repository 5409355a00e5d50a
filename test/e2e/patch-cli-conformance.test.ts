/**
 * The kubectl-recorded patch corpus (test/conformance/patch) run through the real CLI:
 * `orch patch --local -f FILE --type T -p P -o json` as a process, compared with what kubectl printed.
 * Processes run a few at a time so the suite stays quick on two cores.
 */
import {describe, expect, it, beforeAll, afterAll} from '@jest/globals';
import {spawn} from 'node:child_process';
import {mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {orchBin, repoRoot} from '../helpers/run-orch.js';

interface PatchCase {
  name: string;
  object: unknown;
  type: string;
  patch: string;
  expected: {stdout: unknown} | {error: string; exitCode: number};
  layer?: 'cli';
}

interface Outcome {
  stdout: string;
  stderr: string;
  code: number;
}

const corpusDir = join(repoRoot, 'test/conformance/patch');
const cases: Array<PatchCase & {file: string}> = readdirSync(corpusDir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .flatMap((file) => (JSON.parse(readFileSync(join(corpusDir, file), 'utf8')) as PatchCase[]).map((c) => ({...c, file})));

let dir: string;
const outcomes = new Map<number, Outcome>();

function run(args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [orchBin, ...args], {env: {...process.env, NO_COLOR: '1'}});
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({stdout, stderr, code: code ?? -1}));
    child.stdin.end();
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orch-patch-cli-'));
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      const file = join(dir, `case-${i}.json`);
      writeFileSync(file, JSON.stringify(cases[i].object));
      outcomes.set(i, await run(['patch', '--local', '-f', file, '--type', cases[i].type, '-p', cases[i].patch, '-o', 'json']));
    }
  };
  await Promise.all(Array.from({length: 4}, worker));
}, 300_000);

afterAll(() => rmSync(dir, {recursive: true, force: true}));

describe('orch patch --local matches kubectl on the recorded corpus', () => {
  it(`has a corpus of at least 150 cases (has ${cases.length})`, () => {
    expect(cases.length).toBeGreaterThanOrEqual(150);
  });

  it.each(cases.map((c, i) => [`${c.file}: ${c.name}`, i] as const))('%s', (_name, i) => {
    const c = cases[i];
    const out = outcomes.get(i) as Outcome;
    if ('stdout' in c.expected) {
      expect(out.stderr).toBe('');
      expect(out.code).toBe(0);
      expect(JSON.parse(out.stdout)).toEqual(c.expected.stdout);
    } else if (c.layer === 'cli') {
      // kubectl reads text starting with "{" as JSON only; so does orch, with its own wording.
      expect(out.code).toBe(c.expected.exitCode);
      expect(out.stderr).toMatch(/^error: .*JSON/);
    } else {
      expect(out.code).toBe(c.expected.exitCode);
      expect(out.stderr.trimEnd()).toBe(c.expected.error);
      expect(out.stdout).toBe('');
    }
  });
});
