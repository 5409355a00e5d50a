/**
 * The base of orch's commands: options come from a seed table (src/options) and are parsed by
 * src/lib/parse-command-line.ts; every failure leaves through src/lib/errors.ts, which prints
 * `error: ...` on stderr and exits 1, as kubectl does.
 */
import {Command} from '@oclif/core';
import {parseCommandLine, type ParsedCommandLine} from './parse-command-line.js';
import {reportError, UserError} from './errors.js';
import type {OptionTable, Program} from '../options/spec.js';

export {UserError};

export abstract class OrchCommand extends Command {
  protected parseOptions(program: Program, table: OptionTable): Promise<ParsedCommandLine> {
    return parseCommandLine(program, table, this.argv);
  }

  protected async catch(error: Error & {oclif?: {exit?: number}}): Promise<any> {
    // oclif's own successful exits (help, this.exit(0)) pass through.
    if (error.oclif?.exit === 0) throw error;
    reportError(error);
  }
}
