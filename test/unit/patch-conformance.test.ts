/**
 * Runs every case of the kubectl-recorded corpus (test/conformance/patch/*.json, recorded by
 * scripts/record-patch-cases.mjs) through the patch engine and compares with kubectl's output.
 */
import { describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { applyPatch, PatchError, type JsonObject, type JsonValue, type PatchType } from '../../src/patch/index.js';

interface PatchCase {
  name: string;
  object: JsonObject;
  type: PatchType;
  patch: string;
  expected: { stdout: JsonObject } | { error: string; exitCode: number };
  /** "cli": the outcome comes from kubectl's reading of the patch text, not from the engine. */
  layer?: 'cli';
}

const corpusDir = join(process.cwd(), 'test/conformance/patch');
const files = readdirSync(corpusDir).filter((f) => f.endsWith('.json')).sort();

/** kubectl reads -p as JSON, or else as YAML 1.1 (where yes/no/on/off/y/n are booleans). */
function parsePatchText(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return parseYaml(text, { version: '1.1' }) as JsonValue;
  }
}

describe.each(files)('%s', (file) => {
  const cases = (JSON.parse(readFileSync(join(corpusDir, file), 'utf8')) as PatchCase[]).filter((c) => c.layer !== 'cli');
  test.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const run = () => applyPatch({ object: c.object, patch: parsePatchText(c.patch), type: c.type });
    if ('stdout' in c.expected) {
      const { result, changed } = run();
      expect(result).toEqual(c.expected.stdout);
      expect(changed).toBe(JSON.stringify(sortKeys(result)) !== JSON.stringify(sortKeys(c.object)));
    } else {
      let error: unknown;
      try {
        run();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(PatchError);
      // kubectl prints `error: <message>` plus a newline unless the message ends with one;
      // the recorder strips one trailing newline.
      expect(`error: ${(error as Error).message}`.replace(/\n$/, '')).toBe(c.expected.error);
    }
  });
});

function sortKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys(value[k])]));
  }
  return value;
}
