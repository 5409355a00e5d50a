/** `orch patch` from its raw arguments to its results: shared by the oclif command and the fast entry. */
import {parseCommandLine} from '../../lib/parse-command-line.js';
import {patchOptions} from '../../options/patch.js';
import {completePatchOptions, validatePatchOptions} from './options.js';
import {runPatch, type PatchResult} from './run.js';
import {printerDependencies} from './printing.js';
import {loadForTerminal} from '../../lib/load-for-terminal.js';

export async function patchMain(argv: readonly string[]): Promise<PatchResult[]> {
  const {options, argv: args} = await parseCommandLine('patch', patchOptions, argv);
  const o = completePatchOptions(options.values, args);
  validatePatchOptions(o, {stdinIsTTY: Boolean(process.stdin.isTTY), stdoutIsTTY: Boolean(process.stdout.isTTY)});
  try {
    return await runPatch(
      o,
      {
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
        // Ink and React load only here, when a prompt is really shown.
        confirm: async (name, diff) => (await loadForTerminal(() => import('../../ui/confirm-patch.js'))).confirmPatch(name, diff),
        colors: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR,
      },
      printerDependencies,
    );
  } catch (error) {
    // Server errors come with kubectl's complete text (`Error from server (NotFound): ...`, one
    // line per failed object), which must not get the `error: ` prefix of other failures.
    const text = (error as {stderrText?: unknown}).stderrText;
    if (typeof text !== 'string') throw error;
    process.stderr.write(text);
    process.exitCode = 1;
    return [];
  }
}
