/**
 * `orch patch` as kubectl structures it: flags become a PatchOptions object (complete), a pure
 * validate() checks the combination, and run() (./run.ts) does the work.
 */
import {UserError} from '../../lib/errors.js';
import type {PatchType} from '../../patch/index.js';

export type DryRun = 'none' | 'server' | 'client';

export interface PatchOptions {
  /** TYPE NAME (or TYPE/NAME) arguments: the server form. */
  args: string[];
  patch?: string;
  patchFile?: string;
  type: PatchType;
  filenames: string[];
  recursive: boolean;
  kustomize?: string;
  local: boolean;
  dryRun: DryRun;
  /** Set when `--dry-run` was given bare, which kubectl still accepts with a deprecation warning. */
  dryRunDeprecated: boolean;
  output?: string;
  template?: string;
  allowMissingTemplateKeys: boolean;
  showManagedFields: boolean;
  diff: boolean;
  interactive: boolean;
}

/** Builds the options object from the typed option values of src/options. */
export function completePatchOptions(values: Record<string, unknown>, args: string[]): PatchOptions {
  const dryRun = (values['dry-run'] as string | undefined) ?? 'none';
  return {
    args,
    patch: values.patch as string | undefined,
    patchFile: values['patch-file'] as string | undefined,
    type: ((values.type as string | undefined) ?? 'strategic') as PatchType,
    filenames: (values.filename as string[] | undefined) ?? [],
    recursive: values.recursive === true,
    kustomize: values.kustomize as string | undefined,
    local: values.local === true,
    dryRun: dryRun === 'unchanged' ? 'client' : (dryRun as DryRun),
    dryRunDeprecated: dryRun === 'unchanged',
    output: values.output as string | undefined,
    template: values.template as string | undefined,
    allowMissingTemplateKeys: values['allow-missing-template-keys'] !== false,
    showManagedFields: values['show-managed-fields'] === true,
    diff: values.diff === true,
    interactive: values.interactive === true,
  };
}

export interface Terminal {
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
}

/** Checks the combination of options; throws a UserError naming what is wrong and what to do. */
export function validatePatchOptions(o: PatchOptions, terminal: Terminal): void {
  if (o.patch === undefined && o.patchFile === undefined) {
    throw new UserError('must specify --patch or --patch-file containing the contents of the patch');
  }
  if (o.patch !== undefined && o.patchFile !== undefined) {
    throw new UserError('cannot specify --patch and --patch-file together');
  }
  if (o.kustomize !== undefined && (o.filenames.length > 0 || o.recursive)) {
    throw new UserError('--kustomize (-k) cannot be combined with --filename (-f) or --recursive (-R)');
  }
  if (o.local && o.args.length > 0) throw new UserError('cannot specify --local and server resources');
  if (o.filenames.length === 0 && o.kustomize === undefined && o.args.length === 0) {
    throw new UserError(
      [
        'You must provide one or more resources by argument or filename.',
        'Example resource specifications include:',
        "   '-f rsrc.yaml'",
        "   '--filename=rsrc.json'",
        "   '<resource> <name>'",
        "   '<resource>'",
      ].join('\n'),
    );
  }
  if (o.local && o.dryRun === 'server') {
    throw new UserError('cannot specify --local and --dry-run=server - did you mean --dry-run=client?');
  }
  if (!o.local) {
    throw new UserError(
      'patching objects on a server needs the orch API server, which this version does not have yet; ' +
        'add --local to patch the content of the files given with -f or -k',
    );
  }
  if (o.interactive && !(terminal.stdinIsTTY && terminal.stdoutIsTTY)) {
    throw new UserError('--interactive (-i) needs a terminal to ask in: standard input and output must be a TTY; use --diff to preview without asking');
  }
}
