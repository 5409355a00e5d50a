/**
 * Holds the declared `orch apiserver` option table to seed document 1: every seed row must be declared
 * with the seed's type and default text, and every declared default must be something our parsers take.
 */
import { describe, expect, it } from '@jest/globals';
import { IMPLEMENTED_APISERVER_OPTIONS } from '../../src/daemons/apiserver/config.js';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiserverOptions } from '../../src/options/apiserver.js';
import type { OptionSpec } from '../../src/options/spec.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const seedPath = resolve(repoRoot, '../shared/seeds/1-apiserver.md');

interface SeedRow {
  name: string;
  short?: string;
  seedType: string;
  seedDefault: string;
}

/**
 * Reads the `| Option | Type | Default | Effect |` tables of a seed. A first cell naming two long
 * options (`--a, --b`) declares both, with comma-separated defaults in the same order.
 */
function parseSeedOptionRows(markdown: string): SeedRow[] {
  const rows: SeedRow[] = [];
  let inOptionTable = false;
  for (const line of markdown.split('\n')) {
    if (/^\|\s*Option\s*\|\s*Type\s*\|\s*Default\s*\|\s*Effect\s*\|/.test(line)) {
      inOptionTable = true;
      continue;
    }
    if (!line.startsWith('|')) {
      inOptionTable = false;
      continue;
    }
    if (!inOptionTable || /^\|\s*-+\s*\|/.test(line)) continue;
    const [first, seedType, seedDefault] = line.split('|').slice(1, 4).map((cell) => cell.trim());
    let short: string | undefined;
    const longNames: string[] = [];
    for (const part of first.split(',').map((p) => p.trim())) {
      if (/^-[A-Za-z]$/.test(part)) short = part.slice(1);
      else if (/^--[a-z0-9-]+$/.test(part)) longNames.push(part.slice(2));
      else throw new Error(`unexpected option cell: ${first}`);
    }
    const defaults = seedDefault.split(',').map((d) => d.trim());
    longNames.forEach((name, i) => {
      const ownDefault = longNames.length > 1 && defaults.length === longNames.length ? defaults[i] : seedDefault;
      rows.push({ name, short: longNames.length === 1 ? short : undefined, seedType, seedDefault: ownDefault });
    });
  }
  return rows;
}

// Shapes our parsers accept; deliberately independent of src/options/types.ts so a parser bug cannot
// hide a bad default here.
const GO_DURATION = /^(0|(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$/;
const INTEGER = /^-?\d+$/;
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/;

function defaultLooksParseable(spec: OptionSpec, value: string): boolean {
  switch (spec.type) {
    case 'duration':
      return GO_DURATION.test(value);
    case 'int':
    case 'int32':
      return INTEGER.test(value);
    case 'float':
      return value.trim() !== '' && Number.isFinite(Number(value));
    case 'bool':
      return value === 'true' || value === 'false';
    case 'quantity':
      return QUANTITY.test(value);
    case 'portRange': {
      const m = /^(\d+)-(\d+)$/.exec(value);
      return m !== null && Number(m[1]) <= Number(m[2]) && Number(m[2]) <= 65535;
    }
    default:
      return value.length > 0;
  }
}

const withDefault = apiserverOptions.filter((o): o is OptionSpec & { default: string } => o.default !== undefined);

describe('apiserver option table', () => {
  it('declares each long name and each shorthand once', () => {
    const names = apiserverOptions.map((o) => o.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    const shorts = apiserverOptions.flatMap((o) => (o.short ? [o.short] : []));
    expect(shorts.filter((s, i) => shorts.indexOf(s) !== i)).toEqual([]);
    expect(shorts.sort()).toEqual(['h', 'v']);
  });

  it.each(withDefault.map((o) => [o.name, o.type, o.default] as const))(
    '--%s (%s) has a default our parser accepts: %s',
    (name, _type, value) => {
      const spec = apiserverOptions.find((o) => o.name === name)!;
      expect(defaultLooksParseable(spec, value)).toBe(true);
      if (spec.min !== undefined) expect(Number(value)).toBeGreaterThanOrEqual(spec.min);
      if (spec.max !== undefined) expect(Number(value)).toBeLessThanOrEqual(spec.max);
    },
  );

  it('keeps every enum default inside its enum (each item, for lists)', () => {
    const outside = withDefault
      .filter((o) => o.enum)
      .flatMap((o) => (o.type === 'strings' ? o.default.split(',') : [o.default]).map((v) => [o.name, v]))
      .filter(([name, v]) => !apiserverOptions.find((o) => o.name === name)!.enum!.includes(v));
    expect(outside).toEqual([]);
  });

  it('declares no default where the seed has none or only describes one', () => {
    const undeclarable = ['none', 'empty', '[]', 'runtime default suites', 'kvstore backend'];
    const wrong = apiserverOptions
      .filter((o) => o.default !== undefined && (undeclarable.includes(o.seedDefault) || o.seedDefault.includes(' when ')))
      .map((o) => o.name);
    expect(wrong).toEqual([]);
  });

  it('marks exactly the options the server configuration reads as implemented', () => {
    const implemented = apiserverOptions.filter((o) => o.implemented).map((o) => o.name).sort();
    expect(implemented).toEqual([...IMPLEMENTED_APISERVER_OPTIONS].sort());
  });

  it('warns about the deprecated --admission-control and points at its replacements', () => {
    const deprecated = apiserverOptions.filter((o) => o.deprecated);
    expect(deprecated.map((o) => o.name)).toEqual(['admission-control']);
    expect(String(deprecated[0].deprecated)).toContain('enable-admission-plugins');
  });

  it('groups orch-only options under "orch" and declares --data-dir and --names there', () => {
    const orchOnly = apiserverOptions.filter((o) => o.orchOnly);
    expect(orchOnly.map((o) => [o.name, o.section, o.default])).toEqual([['data-dir', 'orch', '~/.orch/apiserver'], ['names', 'orch', 'orch']]);
  });
});

const describeWithSeed = existsSync(seedPath) ? describe : describe.skip;
if (!existsSync(seedPath)) console.log(`seed not found at ${seedPath}; skipping the seed comparison`);

describeWithSeed('apiserver option table against seed 1', () => {
  const seedRows = existsSync(seedPath) ? parseSeedOptionRows(readFileSync(seedPath, 'utf8')) : [];
  const declared = new Map(apiserverOptions.map((o) => [o.name, o]));

  it('finds the option tables of the seed', () => {
    expect(seedRows.length).toBeGreaterThan(150);
  });

  it('declares every seed option with the seed type and default text verbatim', () => {
    const mismatches = seedRows
      .map((row) => ({ row, spec: declared.get(row.name) }))
      .filter(({ row, spec }) =>
        !spec || spec.seedType !== row.seedType || spec.seedDefault !== row.seedDefault || spec.short !== row.short,
      )
      .map(({ row, spec }) => ({
        name: row.name,
        seed: [row.short, row.seedType, row.seedDefault],
        declared: spec ? [spec.short, spec.seedType, spec.seedDefault] : 'missing',
      }));
    expect(mismatches).toEqual([]);
  });

  it('declares nothing beyond the seed except orch-only options', () => {
    const seedNames = new Set(seedRows.map((r) => r.name));
    const extra = apiserverOptions.filter((o) => !o.orchOnly && !seedNames.has(o.name)).map((o) => o.name);
    expect(extra).toEqual([]);
  });

  it('declares an option listed twice in the seed only once, with one type and default', () => {
    const byName = new Map<string, SeedRow[]>();
    for (const row of seedRows) byName.set(row.name, [...(byName.get(row.name) ?? []), row]);
    const conflicting = [...byName.values()]
      .filter((rows) => new Set(rows.map((r) => `${r.seedType}|${r.seedDefault}`)).size > 1)
      .map((rows) => rows[0].name);
    expect(conflicting).toEqual([]);
    expect(apiserverOptions.filter((o) => !o.orchOnly)).toHaveLength(byName.size);
  });
});

describe('parseSeedOptionRows', () => {
  it.each([
    ['| --secure-port | int | 6443 | x |', [{ name: 'secure-port', short: undefined, seedType: 'int', seedDefault: '6443' }]],
    ['| -v, --v | int | none | x |', [{ name: 'v', short: 'v', seedType: 'int', seedDefault: 'none' }]],
    [
      '| --event-qps, --event-burst | int32 | 50, 100 | x |',
      [
        { name: 'event-qps', short: undefined, seedType: 'int32', seedDefault: '50' },
        { name: 'event-burst', short: undefined, seedType: 'int32', seedDefault: '100' },
      ],
    ],
    [
      '| --a-frequency, --b-frequency | duration | 20s each | x |',
      [
        { name: 'a-frequency', short: undefined, seedType: 'duration', seedDefault: '20s each' },
        { name: 'b-frequency', short: undefined, seedType: 'duration', seedDefault: '20s each' },
      ],
    ],
  ])('reads %s', (row, expected) => {
    const table = `| Option | Type | Default | Effect |\n|---|---|---|---|\n${row}\n`;
    expect(parseSeedOptionRows(table)).toEqual(expected);
  });

  it('ignores tables that are not option tables', () => {
    expect(parseSeedOptionRows('| Parameter | Form | Effect |\n|---|---|---|\n| --x | y | z |\n')).toEqual([]);
  });
});
