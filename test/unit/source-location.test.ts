/**
 * klog's source locations in the built bundle: esbuild's source map of a small bundle becomes a line
 * table (scripts/line-tables.mjs, as the build does), and a place in the bundle maps back to the
 * TypeScript file and line, even with two source files joined on one bundle line.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {build} from 'esbuild';
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {sourceLocation} from '../../src/lib/source-location.js';
// @ts-expect-error: a build script without type declarations
import {writeLineTables} from '../../scripts/line-tables.mjs';

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orch-lines-'));
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'helper.ts'), '// a comment\n\nexport function helper(x: number): number {\n  return x * 2; // HELPER\n}\n');
  writeFileSync(join(dir, 'src', 'main.ts'), "import {helper} from './helper.js';\n\ninterface T { a: number }\nconst t: T = {a: 1};\nconsole.log(helper(t.a)); // MAIN\n");
  await build({entryPoints: [join(dir, 'src', 'main.ts')], bundle: true, format: 'esm', platform: 'node', outfile: join(dir, 'dist', 'main.js'), sourcemap: 'linked', sourcesContent: false, logLevel: 'silent'});
  writeLineTables(join(dir, 'dist'));
});
afterAll(() => rmSync(dir, {recursive: true, force: true}));

/** The 1-based line and column of a text in the bundle. */
function placeOf(text: string): [number, number] {
  const lines = readFileSync(join(dir, 'dist', 'main.js'), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(text));
  return [i + 1, lines[i]!.indexOf(text) + 1];
}

describe('source locations of bundle lines', () => {
  it('maps a bundle line to its TypeScript file and line', () => {
    const [line, column] = placeOf('x * 2');
    expect(sourceLocation(join(dir, 'dist', 'main.js'), line, column)).toEqual({file: 'helper.ts', line: 4});
    const [mainLine, mainColumn] = placeOf('console.log');
    expect(sourceLocation(join(dir, 'dist', 'main.js'), mainLine, mainColumn)).toEqual({file: 'main.ts', line: 5});
  });

  it('gives nothing for a file without a table or a line outside it', () => {
    expect(sourceLocation(join(dir, 'dist', 'nope.js'), 1, 1)).toBeUndefined();
    expect(sourceLocation(join(dir, 'dist', 'main.js'), 10_000, 1)).toBeUndefined();
  });
});
