#!/usr/bin/env node
/**
 * Re-records the expected outputs of the `orch patch` conformance corpus from the real kubectl.
 *
 * Corpus layout: test/conformance/patch/*.json, each file a JSON array of cases
 *   { name, object, type: "strategic"|"merge"|"json", patch: "<text passed to -p>", expected }
 * where `expected` is either { stdout: <the object kubectl printed with -o json> } or
 * { error: "<stderr without the trailing newline>", exitCode: <n> }.
 * The input fields are kept as they are; only `expected` is rewritten, in place.
 * An optional `layer: "cli"` marks a case whose outcome comes from kubectl's reading of the patch
 * text (e.g. text starting with `{` is taken as JSON, never YAML); engine tests skip those.
 * Patch text that is not JSON is YAML 1.1 for kubectl: `yes`, `no`, `on`, `off`, `y`, `n` are booleans.
 *
 * For each case the object is written to a temporary file and kubectl is run as
 *   kubectl patch --local -f <file> --type <type> -p <patch> -o json
 * which needs no server. kubectl 1.32 was used to record the committed corpus.
 *
 * Usage: node scripts/record-patch-cases.mjs [corpus-file.json ...]   (default: all files)
 *        KUBECTL=/path/to/kubectl to use another binary.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const corpusDir = resolve(import.meta.dirname, '../test/conformance/patch');
const kubectl = process.env.KUBECTL ?? 'kubectl';
const files = process.argv.length > 2
  ? process.argv.slice(2).map((f) => resolve(f))
  : readdirSync(corpusDir).filter((f) => f.endsWith('.json')).sort().map((f) => join(corpusDir, f));

const work = mkdtempSync(join(tmpdir(), 'patch-cases-'));
const objectFile = join(work, 'object.json');

function record(testCase) {
  writeFileSync(objectFile, JSON.stringify(testCase.object));
  const run = spawnSync(kubectl, ['patch', '--local', '-f', objectFile, '--type', testCase.type, '-p', testCase.patch, '-o', 'json'], {
    encoding: 'utf8',
  });
  if (run.error) throw run.error;
  if (run.status === 0) return { stdout: JSON.parse(run.stdout) };
  return { error: run.stderr.replace(/\n$/, ''), exitCode: run.status };
}

try {
  let total = 0;
  for (const file of files) {
    const cases = JSON.parse(readFileSync(file, 'utf8'));
    for (const testCase of cases) testCase.expected = record(testCase);
    writeFileSync(file, `${JSON.stringify(cases, null, 2)}\n`);
    total += cases.length;
    console.log(`${file}: ${cases.length} cases recorded`);
  }
  console.log(`${total} cases recorded with ${kubectl}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
