// For each bundle file with a source map, writes `<file>.lines.json`: the TypeScript source file and
// line of each line of the bundle, so klog can name `server.ts:123` in a log line with one small
// JSON read (src/lib/source-location.ts) instead of decoding a whole source map at run time (a
// quarter of a second for the largest chunk, on the first log line of a daemon).
//
// Format: {sources: [basename, ...], lines: [[column, source, line, ...], ...]}: for each bundle line
// (the first is lines[0]), the 0-based columns where the source place changes, each with the index
// of its source and its 1-based line; [] where the line maps to none of the project's sources.
import {readdirSync, readFileSync, writeFileSync} from 'node:fs';
import {basename, join} from 'node:path';
import {TraceMap, eachMapping} from '@jridgewell/trace-mapping';

function* mapFiles(dir) {
  for (const entry of readdirSync(dir, {withFileTypes: true})) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* mapFiles(path);
    else if (entry.name.endsWith('.js.map')) yield path;
  }
}

export function writeLineTables(dir) {
  for (const mapPath of mapFiles(dir)) {
    const map = new TraceMap(readFileSync(mapPath, 'utf8'));
    const sources = [];
    const index = new Map();
    const lines = [];
    eachMapping(map, (m) => {
      // Only the project's own sources: a dependency's lines keep the bundle's name.
      if (m.source === null || m.originalLine === null || !/(^|\/)src\//.test(m.source)) return;
      if (!index.has(m.source)) {
        index.set(m.source, sources.length);
        sources.push(basename(m.source));
      }
      const source = index.get(m.source);
      while (lines.length < m.generatedLine) lines.push([]);
      const segments = lines[m.generatedLine - 1];
      const n = segments.length;
      // A new segment only where the source place changes along the bundle line.
      if (n === 0 || segments[n - 2] !== source || segments[n - 1] !== m.originalLine) segments.push(m.generatedColumn, source, m.originalLine);
    });
    writeFileSync(mapPath.replace(/\.map$/, '.lines.json'), JSON.stringify({sources, lines}));
  }
}
