/**
 * GOGC for orch's daemons: parsed as Go does (a positive percent, or off), and in effect on the heap
 * of a real process (a live set plus garbage churn: the heap peaks lower with GOGC=25 than with V8's
 * own heuristics, GOGC=off).
 */
import {describe, expect, it} from '@jest/globals';
import {spawnSync} from 'node:child_process';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {build} from 'esbuild';
import {DEFAULT_GOGC, parseGogc} from '../../src/lib/heap-growth.js';

describe('parseGogc', () => {
  it.each([
    [undefined, DEFAULT_GOGC],
    ['', DEFAULT_GOGC],
    ['100', 100],
    ['25', 25],
    ['off', undefined],
    ['OFF', undefined],
  ])('GOGC=%p -> %p', (value, expected) => expect(parseGogc(value)).toBe(expected));

  it.each(['0', '-5', '1.5', 'fast'])('refuses GOGC=%p naming the accepted form', (value) => {
    expect(() => parseGogc(value)).toThrow(`invalid GOGC "${value}": want a positive whole percent (e.g. 100) or "off"`);
  });
});

describe('applyHeapGrowth in a real process', () => {
  it('keeps the heap closer to the live set with a lower GOGC', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-gogc-'));
    try {
      const script = join(dir, 'churn.mjs');
      await build({entryPoints: [join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'heap-growth-churn.ts')], bundle: true, platform: 'node', format: 'esm', outfile: script, logLevel: 'silent'});
      const peak = (gogc: string) => {
        const run = spawnSync(process.execPath, [script], {env: {...process.env, GOGC: gogc}, encoding: 'utf8', timeout: 60_000});
        expect(run.status).toBe(0);
        return (JSON.parse(run.stdout) as {peak: number}).peak;
      };
      const [tight, v8Default] = [peak('25'), peak('off')];
      expect(tight).toBeLessThan(v8Default * 0.75);
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
  }, 90_000);
});
