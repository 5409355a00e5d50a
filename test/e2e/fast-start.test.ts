/**
 * The fast-start rule: `orch --version` and `orch patch` load no React, Ink, daemon or TLS code,
 * and YAML only when the input is YAML. Checked on the built bundle: the static import closure of
 * each entry must not contain those packages (they may only be reached through dynamic import()).
 */
import {describe, expect, it} from '@jest/globals';
import {existsSync, readFileSync} from 'node:fs';
import {dirname, join, resolve} from 'node:path';
import {repoRoot} from '../helpers/run-orch.js';

function staticClosure(entry: string): Map<string, string> {
  const seen = new Map<string, string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    const text = readFileSync(file, 'utf8');
    seen.set(file, text);
    // Static imports only: `import ... from "./x.js"` and `import "./x.js"`, not `import("./x.js")`.
    for (const m of text.matchAll(/^\s*import\s+(?:[^'"()]*?\s+from\s+)?["'](\.[^"']+)["'];?/gm)) {
      const target = resolve(dirname(file), m[1]);
      if (existsSync(target)) visit(target);
    }
  };
  visit(entry);
  return seen;
}

const forbidden = ['node_modules/ink/', 'node_modules/react/', 'node_modules/yaml/', 'node_modules/better-sqlite3', 'node_modules/etcd3', 'node_modules/@peculiar/', 'src/daemons/', 'src/ui/'];

describe.each([
  ['orch --version', 'dist/version.js'],
  ['orch patch (fast entry)', 'dist/fast/patch.js'],
])('%s', (_name, entry) => {
  it('statically loads none of React, Ink, YAML, the daemons or TLS code', () => {
    const closure = staticClosure(join(repoRoot, entry));
    expect(closure.size).toBeGreaterThan(0);
    for (const [file, text] of closure) {
      for (const marker of forbidden) {
        if (text.includes(`// ${marker}`)) throw new Error(`${entry} statically loads ${marker} through ${file}`);
      }
    }
  });
});
