/**
 * The kubectl-recorded printer corpus (test/conformance/printers/cases.json) run through the CLI:
 * `orch patch --local -f OBJ --type merge -p '{}' -o FORMAT` as a process must print exactly what
 * kubectl printed (stdout, stderr and exit code). Cases marked with `orchExpected` are the places
 * where orch deliberately differs (its format list also names kyaml).
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {spawn} from 'node:child_process';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {orchBin, repoRoot} from '../helpers/run-orch.js';

interface Expected {
  stdout: string;
  stderr: string;
  exitCode: number;
}
interface PrinterCase {
  name: string;
  object: unknown;
  output: string;
  flags?: {allowMissingTemplateKeys?: boolean; showManagedFields?: boolean; template?: string};
  templateFile?: string;
  expected: Expected;
  orchExpected?: Expected;
}

const cases = JSON.parse(readFileSync(join(repoRoot, 'test/conformance/printers/cases.json'), 'utf8')) as PrinterCase[];
let dir: string;
const outcomes = new Map<number, Expected>();

function argsFor(c: PrinterCase, i: number): string[] {
  const objectFile = join(dir, `object-${i}.json`);
  const templateFile = join(dir, `template-${i}.txt`);
  writeFileSync(objectFile, JSON.stringify(c.object));
  if (c.templateFile !== undefined) writeFileSync(templateFile, c.templateFile);
  const args = ['patch', '--local', '-f', objectFile, '--type', 'merge', '-p', '{}', '-o', c.output.replace('{file}', templateFile)];
  if (c.flags?.template !== undefined) args.push('--template', c.flags.template.replace('{file}', templateFile));
  if (c.flags?.allowMissingTemplateKeys === false) args.push('--allow-missing-template-keys=false');
  if (c.flags?.showManagedFields) args.push('--show-managed-fields');
  return args;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orch-printers-cli-'));
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      outcomes.set(
        i,
        await new Promise<Expected>((resolve) => {
          const child = spawn(process.execPath, [orchBin, ...argsFor(cases[i], i)], {env: {...process.env, NO_COLOR: '1'}});
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d) => (stdout += d));
          child.stderr.on('data', (d) => (stderr += d));
          child.on('close', (code) => resolve({stdout, stderr, exitCode: code ?? -1}));
          child.stdin.end();
        }),
      );
    }
  };
  await Promise.all(Array.from({length: 4}, worker));
}, 120_000);
afterAll(() => rmSync(dir, {recursive: true, force: true}));

describe('orch patch -o FORMAT prints what kubectl prints', () => {
  it.each(cases.map((c, i) => [c.name, i] as const))('%s', (_name, i) => {
    const c = cases[i];
    expect(outcomes.get(i)).toEqual(c.orchExpected ?? c.expected);
  });
});
