/**
 * Replays the kubectl-recorded corpus (test/conformance/printers/cases.json, made by
 * scripts/record-printer-cases.mjs) through our printers and expects byte-identical output.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPrinter, formatCliError } from '../../src/printers/index.js';
import { isListObject } from '../../src/printers/name.js';

interface Case {
  name: string;
  object: unknown;
  output: string;
  flags?: { allowMissingTemplateKeys?: boolean; showManagedFields?: boolean; template?: string };
  templateFile?: string;
  expected: { stdout: string; stderr: string; exitCode: number };
  /** Present where orch deliberately differs from kubectl 1.32 (see `deviation`). */
  orchExpected?: { stdout: string; stderr: string; exitCode: number };
  deviation?: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const cases: Case[] = JSON.parse(readFileSync(join(here, '../conformance/printers/cases.json'), 'utf8'));
const TEMPLATE_PATH = '/tmp/orch-template.txt';

/** What `kubectl patch --local -f <object> -p '{}' -o <output>` prints, per our printers. */
function runCase(c: Case): { stdout: string; stderr: string; exitCode: number } {
  const readFile = (path: string): string => {
    if (path === TEMPLATE_PATH && c.templateFile !== undefined) return c.templateFile;
    throw Object.assign(new Error('not found'), { code: 'ENOENT' });
  };
  const output = c.output.replace('{file}', TEMPLATE_PATH);
  const created = createPrinter(output, { ...c.flags, template: c.flags?.template?.replace('{file}', TEMPLATE_PATH), operation: 'patched' }, readFile);
  if ('error' in created) return { stdout: '', stderr: formatCliError(created.error), exitCode: 1 };
  const items = isListObject(c.object) ? c.object.items : [c.object];
  let stdout = '';
  for (const item of items) {
    const r = created.printer.print(item);
    stdout += r.stdout;
    if (r.error !== undefined) return { stdout, stderr: formatCliError(r.error), exitCode: 1 };
  }
  return { stdout, stderr: '', exitCode: 0 };
}

describe('printers match kubectl 1.32 on the recorded corpus', () => {
  it('has a substantial corpus', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(runCase(c)).toEqual(c.orchExpected ?? c.expected);
  });
});
