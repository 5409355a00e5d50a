/**
 * A command line parsed against an option table: Go-style forms normalized, oclif's parser for the
 * tokens, then typed values, defaults, cross-option rules and warnings (src/options/resolve.ts).
 * Uses only oclif's parser module, so a fast entry point can parse exactly as the oclif command does.
 */
import {parse} from '@oclif/core/parser';
import {normalizeArgv} from '../options/argv.js';
import {oclifFlagsFor} from '../options/flags.js';
import {resolveOptions, type ResolvedOptions, type RawFlags} from '../options/resolve.js';
import type {OptionTable, Program} from '../options/spec.js';

export interface ParsedCommandLine {
  options: ResolvedOptions;
  /** Positional arguments. */
  argv: string[];
}

const flagCache = new WeakMap<OptionTable, Record<string, any>>();

/** `quiet`: options the program itself set, which get no deprecation or not-in-effect warning. */
export async function parseCommandLine(program: Program, table: OptionTable, argv: readonly string[], quiet?: ReadonlySet<string>): Promise<ParsedCommandLine> {
  let flags = flagCache.get(table);
  if (!flags) flagCache.set(table, (flags = oclifFlagsFor(table)));
  const parsed = await parse(normalizeArgv(table, argv), {flags, args: {}, strict: false});
  const options = resolveOptions(program, table, parsed.flags as RawFlags, quiet);
  for (const warning of options.warnings) process.stderr.write(`Warning: ${warning}\n`);
  return {options, argv: parsed.argv as string[]};
}
