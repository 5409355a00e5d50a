/**
 * The fast entry for `orch patch` (bin/run.js uses it unless help is asked for): the same parsing
 * and work as the oclif command, without loading oclif's configuration, plugin and command
 * discovery machinery, which costs more than the patch itself.
 */
import {patchMain} from '../cmd/patch/main.js';
import {reportError} from '../lib/errors.js';

export async function main(argv: readonly string[]): Promise<void> {
  try {
    await patchMain(argv);
  } catch (error) {
    reportError(error as Error);
  }
}
