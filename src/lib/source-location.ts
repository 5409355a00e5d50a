/**
 * The TypeScript source file and line of a line of the built bundle, so that a klog line names
 * `server.ts:123`, as upstream's `server.go:123`, rather than a bundle chunk. The build writes a
 * line table beside each bundle file (scripts/line-tables.mjs, from esbuild's source maps); a table
 * is read the first time a line from its file is logged, then kept. A file without one (a source
 * run, a dependency) gives undefined, and the caller names the file itself.
 */
import {readFileSync} from 'node:fs';

interface LineTable {
  sources: string[];
  /** For each bundle line, triples: the 0-based column where a source place starts, its source's index, its line. */
  lines: number[][];
}

const tables = new Map<string, LineTable | null>();

function tableOf(file: string): LineTable | null {
  let table = tables.get(file);
  if (table === undefined) {
    try {
      table = JSON.parse(readFileSync(`${file.replace(/\.[cm]?js$/, '')}.js.lines.json`, 'utf8')) as LineTable;
    } catch {
      table = null;
    }
    tables.set(file, table);
  }
  return table;
}

/** The source file's name and line of a 1-based line and column of a built file, if its line table knows it. */
export function sourceLocation(file: string, line: number, column: number): {file: string; line: number} | undefined {
  const segments = tableOf(file)?.lines[line - 1];
  if (!segments || segments.length === 0) return undefined;
  // The last segment starting at or before the column (the first one when none does).
  let at = 0;
  for (let i = 3; i < segments.length && segments[i]! <= column - 1; i += 3) at = i;
  return {file: tableOf(file)!.sources[segments[at + 1]!]!, line: segments[at + 2]!};
}
