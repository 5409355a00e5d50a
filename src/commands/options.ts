import {Args, Flags} from '@oclif/core';
import {OrchCommand, UserError} from '../lib/command.js';
import {PROGRAMS, loadOptionTable} from '../options/tables.js';
import {typeLabel} from '../options/flags.js';
import type {OptionSpec, Program} from '../options/spec.js';
import {ADMISSION_PLUGIN_ORDER, DEFAULT_ON_ADMISSION_PLUGINS} from '../api/admission-plugins.js';

export interface OptionRow {
  name: string;
  shorthand: string | null;
  type: string;
  seedType: string;
  default: string | null;
  seedDefault: string;
  section: string;
  deprecated: boolean;
  implemented: boolean;
  orchOnly: boolean;
  help: string;
}

export interface OptionsReport {
  program: Program;
  implemented: number;
  total: number;
  options: OptionRow[];
  /** For programs that take --names: the name set in effect by default, and how to choose. */
  names?: {default: string | null; accepted: readonly string[]; choose: string};
  /** The API server's admission plugins in execution order, and whether each is in the default set. */
  admissionPlugins?: {name: string; default: boolean}[];
}

/** What --enable-admission-plugins, --disable-admission-plugins and --admission-control choose from. */
export function admissionPluginsNote(program: Program): OptionsReport['admissionPlugins'] {
  if (program !== 'apiserver') return undefined;
  return ADMISSION_PLUGIN_ORDER.map((name) => ({name, default: DEFAULT_ON_ADMISSION_PLUGINS.has(name)}));
}

/** Which name set a program uses unless told, and how to choose (src/api/names.ts). */
export function namesNote(table: readonly OptionSpec[]): OptionsReport['names'] {
  const spec = table.find((o) => o.name === 'names');
  if (!spec) return undefined;
  return {
    default: spec.default ?? null,
    accepted: spec.enum ?? [],
    choose: `--names ${(spec.enum ?? []).join('|')}`,
  };
}

export function optionRow(spec: OptionSpec): OptionRow {
  return {
    name: spec.name,
    shorthand: spec.short ?? null,
    type: typeLabel(spec),
    seedType: spec.seedType,
    default: spec.default ?? null,
    seedDefault: spec.seedDefault,
    section: spec.section,
    deprecated: Boolean(spec.deprecated),
    implemented: spec.implemented,
    orchOnly: Boolean(spec.orchOnly),
    help: spec.help,
  };
}

/** A plain aligned table, one row per option, then the implemented/total count. */
export function formatOptionsTable(report: OptionsReport): string {
  const header = ['OPTION', 'TYPE', 'DEFAULT', 'SECTION', 'IMPLEMENTED', 'DEPRECATED'];
  const rows = report.options.map((o) => [
    (o.shorthand && o.shorthand !== o.name ? `-${o.shorthand}, ` : '') + `--${o.name}`,
    o.type,
    o.default ?? (['none', ''].includes(o.seedDefault) ? '' : o.seedDefault),
    o.section,
    o.implemented ? 'yes' : 'no',
    o.deprecated ? 'yes' : '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  const names = report.names
    ? [`names in effect: ${report.names.default ?? 'the API server\'s, learned from its discovery'} (choose with ${report.names.choose})`]
    : [];
  const admission = report.admissionPlugins
    ? [
      `admission plugins, in the order they run (* on by default; --enable-admission-plugins adds, --disable-admission-plugins removes):`,
      ...wrapWords(report.admissionPlugins.map((p) => `${p.name}${p.default ? '*' : ''}`), 100).map((l) => `  ${l}`),
    ]
    : [];
  return [line(header), ...rows.map(line), '', ...names, ...admission, `${report.implemented}/${report.total} options implemented`].join('\n');
}

/** Words joined by ", " in lines of at most `width` characters. */
function wrapWords(words: string[], width: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const [i, word] of words.entries()) {
    const piece = i < words.length - 1 ? `${word},` : word;
    if (current && current.length + 1 + piece.length > width) {
      lines.push(current);
      current = piece;
    } else current = current ? `${current} ${piece}` : piece;
  }
  if (current) lines.push(current);
  return lines;
}

export default class OptionsCommand extends OrchCommand {
  static summary = 'List the options of an orch program with their types, defaults and whether they take effect yet.';
  static args = {program: Args.string({required: true, description: `one of ${PROGRAMS.join(', ')}`})};
  static flags = {
    output: Flags.string({char: 'o', description: 'output format: table or json', default: 'table'}),
  };

  async run(): Promise<OptionsReport> {
    const {args, flags} = await this.parse(OptionsCommand);
    const program = args.program as Program;
    if (!PROGRAMS.includes(program)) {
      throw new UserError(`unknown program "${args.program}": expected one of ${PROGRAMS.join(', ')}`);
    }
    if (flags.output !== 'table' && flags.output !== 'json') {
      throw new UserError(`unknown output format "${flags.output}": expected table or json`);
    }
    const table = await loadOptionTable(program);
    const options = table.map(optionRow);
    const report = {
      program, implemented: options.filter((o) => o.implemented).length, total: options.length, options, names: namesNote(table),
      admissionPlugins: admissionPluginsNote(program),
    };
    process.stdout.write(
      (flags.output === 'json' ? JSON.stringify(report, null, 2) : formatOptionsTable(report)) + '\n',
    );
    return report;
  }
}
