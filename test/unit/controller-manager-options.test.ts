import { describe, expect, test } from '@jest/globals';
import { IMPLEMENTED_CONTROLLER_MANAGER_OPTIONS } from '../../src/daemons/controller-manager/config.js';
import { CONTROLLER_OPTIONS_IMPLEMENTED } from '../../src/daemons/controller-manager/controllers/index.js';
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { controllerManagerOptions } from '../../src/options/controller-manager.js';
import type { OptionSpec, ValueType } from '../../src/options/spec.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const seedFile = path.resolve(repoRoot, '../shared/seeds', '2-controller-manager.md');

/** One option row as the seed writes it. */
interface SeedOption {
  name: string;
  short?: string;
  seedType: string;
  seedDefault: string;
  section: string;
}

/**
 * Reads the option tables (`| Option | Type | Default | ... |`) of a seed document, remembering the
 * nearest heading as the section. The first cell is `--name`, `-x, --name`, `--a, --b` (two options
 * sharing a row, defaults comma-separated in the same order) or `--old → --new` (renamed: the new name).
 */
function parseSeedOptionTables(markdown: string): SeedOption[] {
  const options: SeedOption[] = [];
  let section = '';
  let inOptionTable = false;
  for (const line of markdown.split('\n')) {
    const heading = /^#{2,6}\s+(.*)$/.exec(line);
    if (heading) section = heading[1].trim();
    if (!line.startsWith('|')) {
      inOptionTable = false;
      continue;
    }
    const cells = line.split('|').slice(1, -1).map((cell) => cell.trim());
    if (cells[0] === 'Option' && cells[1] === 'Type' && cells[2] === 'Default') {
      inOptionTable = true;
      continue;
    }
    if (!inOptionTable || /^-+$/.test(cells[0])) continue;
    options.push(...parseOptionCell(cells[0], cells[1], cells[2], section));
  }
  return options;
}

function parseOptionCell(cell: string, seedType: string, seedDefault: string, section: string): SeedOption[] {
  const renamed = cell.split('→').map((part) => part.trim());
  const names = renamed[renamed.length - 1].split(',').map((part) => part.trim());
  const shortForm = /^-([A-Za-z])$/.exec(names[0]);
  if (shortForm && names.length === 2) {
    return [{ name: names[1].replace(/^--/, ''), short: shortForm[1], seedType, seedDefault, section }];
  }
  if (names.length === 1) return [{ name: names[0].replace(/^--/, ''), seedType, seedDefault, section }];
  const defaults = seedDefault.split(',').map((part) => part.trim());
  return names.map((name, index) => ({
    name: name.replace(/^--/, ''),
    seedType,
    seedDefault: defaults[index] ?? seedDefault,
    section,
  }));
}

/** Options the seed names only in prose, as "`--name` (type)", within the given section. */
function parseProseOptions(markdown: string, sectionTitle: string): SeedOption[] {
  const start = markdown.indexOf(`## ${sectionTitle}`);
  if (start < 0) return [];
  const rest = markdown.slice(start);
  const end = rest.indexOf('\n## ', 1);
  const body = end < 0 ? rest : rest.slice(0, end);
  const options: SeedOption[] = [];
  for (const line of body.split('\n')) {
    const defaultsToNone = /default to none/i.test(line);
    for (const match of line.matchAll(/`--([a-z0-9-]+)` \(([^)]+)\)/g)) {
      options.push({ name: match[1], seedType: match[2], seedDefault: defaultsToNone ? 'none' : '', section: sectionTitle });
    }
  }
  return options;
}

const byName = new Map(controllerManagerOptions.map((option) => [option.name, option]));
const seedMarkdown = existsSync(seedFile) ? readFileSync(seedFile, 'utf8') : undefined;
if (!seedMarkdown) console.log(`seed ${seedFile} not found: skipping the seed comparison tests`);
const describeWithSeed = seedMarkdown ? describe : describe.skip;

const goDuration = /^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$/;
const integer = /^-?[0-9]+$/;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** Structural checks of a default, per type; types absent here accept any text. */
const defaultIsWellFormed: Partial<Record<ValueType, (value: string) => boolean>> = {
  duration: (value) => goDuration.test(value),
  int: (value) => integer.test(value) && Number.isSafeInteger(Number(value)),
  int32: (value) => integer.test(value) && Number(value) >= INT32_MIN && Number(value) <= INT32_MAX,
  float: (value) => value.trim() !== '' && Number.isFinite(Number(value)),
  bool: (value) => value === 'true' || value === 'false',
  quantity: (value) => /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([numkMGTPE]|[KMGTPE]i|[eE][+-]?[0-9]+)?$/.test(value),
  ip: (value) => isIP(value) !== 0,
  int32Slice: (value) => value.split(',').every((part) => integer.test(part.trim())),
};

/** Seed defaults that mean "no value": the option is then declared without a default. */
const NO_DEFAULT = new Set(['none', 'empty', '[]']);
/** Seed defaults that describe a computed value rather than give one. */
const DESCRIBED_DEFAULTS = new Set(['runtime defaults', '24 (IPv4), 64 (IPv6)']);


describe('controller manager option table', () => {
  test('option names and short names are unique', () => {
    const names = controllerManagerOptions.map((option) => option.name);
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
    const shorts = controllerManagerOptions.flatMap((option) => (option.short ? [option.short] : []));
    expect(shorts.filter((short, index) => shorts.indexOf(short) !== index)).toEqual([]);
  });

  test.each(controllerManagerOptions.filter((option) => option.default !== undefined).map((o) => [o.name, o] as const))(
    'default of --%s is well formed for its type, enum and bounds',
    (_name, option: OptionSpec) => {
      const value = option.default as string;
      const check = defaultIsWellFormed[option.type];
      if (check) expect({ value, wellFormed: check(value) }).toEqual({ value, wellFormed: true });
      if (option.enum) expect(option.enum).toContain(value);
      if (option.min !== undefined) expect(Number(value)).toBeGreaterThanOrEqual(option.min);
      if (option.max !== undefined) expect(Number(value)).toBeLessThanOrEqual(option.max);
    },
  );

  test.each(controllerManagerOptions.map((o) => [o.name, o] as const))(
    'default of --%s follows its seed default',
    (_name, option: OptionSpec) => {
      if (NO_DEFAULT.has(option.seedDefault) || DESCRIBED_DEFAULTS.has(option.seedDefault)) {
        expect(option.default).toBeUndefined();
      } else {
        // The seed may quote a default in backticks (`*`); the raw command-line value drops them.
        expect(option.default).toBe(option.seedDefault.replace(/^`(.*)`$/, '$1'));
      }
    },
  );

  test('exactly the options the manager configuration reads are marked implemented', () => {
    const implemented = controllerManagerOptions.filter((option) => option.implemented).map((option) => option.name);
    expect(implemented.sort()).toEqual([...IMPLEMENTED_CONTROLLER_MANAGER_OPTIONS, ...CONTROLLER_OPTIONS_IMPLEMENTED].sort());
  });

  test.each([
    ['leader-elect-resource-lock', ['leases']],
    ['logging-format', ['text']],
  ])('--%s accepts only the closed set the seed lists', (name, values) => {
    expect(byName.get(name)?.enum).toEqual(values);
  });

  test.each([
    ['cluster-cidr', 'cidrs'],
    ['service-cluster-ip-range', 'cidrs'],
    ['tls-min-version', 'tlsVersion'],
    ['tls-cipher-suites', 'cipherSuites'],
    ['feature-gates', 'featureGates'],
    ['vmodule', 'vmodule'],
    ['version', 'version'],
  ])('--%s is parsed as %s', (name, type) => {
    expect(byName.get(name)?.type).toBe(type);
  });

  test.each([
    ['v', 'v'],
    ['help', 'h'],
  ])('--%s has the shorthand -%s', (name, short) => {
    expect(byName.get(name)?.short).toBe(short);
  });

  test('every help text is a single non-empty sentence-like line', () => {
    const bad = controllerManagerOptions.filter((option) => option.help.trim() === '' || option.help.includes('\n'));
    expect(bad.map((option) => option.name)).toEqual([]);
  });
});

describeWithSeed('controller manager option table against the seed', () => {
  const markdown = seedMarkdown ?? '';
  const seedOptions = [...parseSeedOptionTables(markdown), ...parseProseOptions(markdown, 'Versioning')];

  test('the seed parser finds the option tables', () => {
    // Guards against a parser that silently finds nothing, which would make the row tests vacuous.
    expect(seedOptions.length).toBeGreaterThan(100);
  });

  test.each(seedOptions.map((option) => [option.name, option] as const))(
    '--%s is declared with the seed type, default and section',
    (_name, seed: SeedOption) => {
      const option = byName.get(seed.name);
      expect(option).toBeDefined();
      expect({ seedType: option?.seedType, section: option?.section }).toEqual({ seedType: seed.seedType, section: seed.section });
      if (seed.seedDefault !== '') expect(option?.seedDefault).toBe(seed.seedDefault);
      if (seed.short) expect(option?.short).toBe(seed.short);
    },
  );

  test('every declared option comes from the seed unless marked orch-only', () => {
    const seedNames = new Set(seedOptions.map((option) => option.name));
    const invented = controllerManagerOptions.filter((option) => !option.orchOnly && !seedNames.has(option.name));
    expect(invented.map((option) => option.name)).toEqual([]);
  });
});
