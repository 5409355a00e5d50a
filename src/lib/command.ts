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

/**
 * The daemons' commands: once a daemon has stopped (cleanly or not), the process must end even if a
 * library left a socket or timer behind; a short, unref'd timer ends it only in that case, after
 * the output has had time to flush.
 */
export abstract class DaemonCommand extends OrchCommand {
  protected async finally(error: Error | undefined): Promise<any> {
    await super.finally(error);
    setTimeout(() => process.exit(process.exitCode ?? 0), 500).unref();
  }
}
