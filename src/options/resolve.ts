/**
 * From raw command-line values to typed option values: parse every value with its type's parser,
 * fill in defaults, apply the cross-option rules, and collect the warnings a user must see
 * (deprecated options used, options set that take no effect yet). Pure: no I/O, no exit.
 */
import {parseOptionValue, OptionValueError} from './types.js';
import {validateOptionRules} from './rules.js';
import type {OptionTable, Program} from './spec.js';
import {nameSet, names, parseNameSetId, type NameSet} from '../api/names.js';

export interface ResolvedOptions {
  /** Every option with a default or an explicit value, typed, keyed by long name. */
  values: Record<string, unknown>;
  /** Names the user set on the command line. */
  explicit: Set<string>;
  /** Lines to print on stderr before starting. */
  warnings: string[];
}

export class OptionsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
  }
}

/** What oclif parsed: a list for repeatable options, a string for others, a boolean for bool options. */
export type RawFlags = Record<string, string[] | string | boolean | undefined>;

/**
 * The name set whose defaults apply: the table's `--names` when given and valid, else the one in
 * effect in the process (a bad --names is reported with the other problems below).
 */
function nameSetFor(table: OptionTable, raw: RawFlags): NameSet {
  const given = raw.names;
  if (typeof given === 'string' && table.some((spec) => spec.name === 'names')) {
    try {
      return nameSet(parseNameSetId(given));
    } catch {
      // reported by the names option's own parser
    }
  }
  return names();
}

/**
 * Sets the name-set-dependent defaults (`namesDefault`) of the options not given: used when the
 * name set becomes known after the options were resolved (a daemon that learns it from the server).
 */
export function applyNameSetDefaults(table: OptionTable, resolved: Pick<ResolvedOptions, 'values' | 'explicit'>, n: NameSet): void {
  for (const spec of table) {
    if (spec.namesDefault && !resolved.explicit.has(spec.name)) resolved.values[spec.name] = parseOptionValue(spec, spec.namesDefault(n));
  }
}

/**
 * `quiet`: options a program set itself (orch up for its daemons); their deprecation and
 * not-in-effect warnings would tell the user about something the user did not do.
 */
export function resolveOptions(program: Program, table: OptionTable, raw: RawFlags, quiet: ReadonlySet<string> = new Set()): ResolvedOptions {
  const n = nameSetFor(table, raw);
  const values: Record<string, unknown> = {};
  const explicit = new Set<string>();
  const problems: string[] = [];
  const deprecated: string[] = [];
  const notImplemented: string[] = [];

  for (const spec of table) {
    if (spec.name === 'help') continue;
    const given = raw[spec.name];
    try {
      if (given === undefined) {
        const fallback = spec.namesDefault ? spec.namesDefault(n) : spec.default;
        if (fallback !== undefined) values[spec.name] = parseOptionValue(spec, expandHome(fallback));
        continue;
      }
      explicit.add(spec.name);
      if (typeof given === 'boolean') {
        values[spec.name] = given;
      } else {
        let value: unknown;
        const texts = Array.isArray(given) ? given : [given];
        if (spec.type === 'string' && spec.repeatable) {
          // A repeatable plain string (such as --tls-sni-cert-key) keeps every occurrence, in order.
          value = texts.map((text) => parseOptionValue(spec, text));
        } else {
          for (const text of texts) value = parseOptionValue(spec, text, value);
        }
        values[spec.name] = value;
      }
      if (spec.deprecated && !quiet.has(spec.name)) {
        const hint = typeof spec.deprecated === 'string' ? `; ${spec.deprecated}` : '';
        deprecated.push(`Flag --${spec.name} has been deprecated${hint}`);
      }
      if (!spec.implemented && spec.name !== 'version' && !quiet.has(spec.name)) notImplemented.push(`--${spec.name}`);
    } catch (error) {
      if (error instanceof OptionValueError) problems.push(error.message);
      else throw error;
    }
  }
  if (problems.length === 0) problems.push(...validateOptionRules(program, values, explicit));
  if (problems.length > 0) throw new OptionsError(problems);

  const warnings = [...deprecated];
  if (notImplemented.length > 0) {
    warnings.push(`these options are accepted and validated but have no effect yet: ${notImplemented.join(', ')}`);
  }
  return {values, explicit, warnings};
}

/** Seed defaults such as `$HOME/.orch/cache` and orch's `~/.orch/...` refer to the user's home. */
export function expandHome(text: string): string {
  const home = process.env.HOME ?? '';
  return text.replace(/^\$HOME(?=\/|$)/, home).replace(/^~(?=\/|$)/, home);
}
