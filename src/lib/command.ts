/**
 * The base of orch's commands: options come from a seed table (src/options), are parsed by oclif,
 * typed and validated by src/options/resolve.ts, and every failure leaves through one path that
 * prints `error: ...` on stderr and exits 1, as kubectl does.
 */
import {Command} from '@oclif/core';
import {normalizeArgv, ArgvError} from '../options/argv.js';
import {resolveOptions, OptionsError, type ResolvedOptions, type RawFlags} from '../options/resolve.js';
import type {OptionTable, Program} from '../options/spec.js';

/** An error whose message is meant for the user as is. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export interface ParsedCommandLine {
  options: ResolvedOptions;
  args: Record<string, string | undefined>;
  argv: string[];
}

export abstract class OrchCommand extends Command {
  /** Parses this command's flags against its option table, then types and validates them. */
  protected async parseOptions(program: Program, table: OptionTable): Promise<ParsedCommandLine> {
    this.argv = normalizeArgv(table, this.argv);
    const ctor = this.constructor as typeof Command;
    const {flags, args, argv} = await this.parse(ctor);
    const options = resolveOptions(program, table, flags as RawFlags);
    for (const warning of options.warnings) process.stderr.write(`Warning: ${warning}\n`);
    return {options, args: args as Record<string, string | undefined>, argv: argv as string[]};
  }

  protected async catch(error: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<any> {
    // oclif's own exit (this.exit) and help requests pass through untouched.
    if (error.oclif?.exit !== undefined && !(error instanceof UserError)) {
      if (error.oclif.exit === 0) throw error;
    }
    const message =
      error instanceof OptionsError
        ? error.problems.map((p) => `error: ${p}`).join('\n')
        : `error: ${error instanceof ArgvError || error instanceof UserError ? error.message : oclifMessage(error)}`;
    process.stderr.write(message + '\n');
    process.exitCode = error instanceof UserError ? error.exitCode : 1;
  }
}

/** oclif's parser errors carry a multi-line message with a "See more help" hint; keep the first part. */
function oclifMessage(error: Error): string {
  return error.message.replace(/\n+See more help with --help$/, '').trim();
}
