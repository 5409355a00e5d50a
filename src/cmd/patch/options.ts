/**
 * `orch patch` as kubectl structures it: flags become a PatchOptions object (complete), a pure
 * validate() checks the combination, and run() (./run.ts) does the work.
 */
import {UserError} from '../../lib/errors.js';
import type {PatchType} from '../../patch/index.js';
import type {ClientConfigOverrides} from '../../client/orchconfig.js';

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
  /** Server mode: the orchconfig selection and the connection flags (`-s`, `-n`, `--token`...). */
  client: ClientConfigOverrides;
  /** `--as-user-extra key=value` entries (orchconfig overrides have no field for them). */
  asUserExtra: string[];
  /** `--request-timeout` as given (`0`, `5`, `30s`); parsed with kubectl's rule when used. */
  requestTimeout: string;
  subresource?: string;
  fieldManager: string;
  warningsAsErrors: boolean;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

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
    client: {
      orchconfig: str(values.orchconfig),
      context: str(values.context),
      cluster: str(values.cluster),
      user: str(values.user),
      namespace: str(values.namespace),
      server: str(values.server),
      token: str(values.token),
      certificateAuthority: str(values['certificate-authority']),
      clientCertificate: str(values['client-certificate']),
      clientKey: str(values['client-key']),
      insecureSkipTlsVerify: values['insecure-skip-tls-verify'] === true ? true : undefined,
      tlsServerName: str(values['tls-server-name']),
      username: str(values.username),
      password: str(values.password),
      as: str(values.as),
      asGroups: (values['as-group'] as string[] | undefined) ?? [],
      asUid: str(values['as-uid']),
    },
    asUserExtra: (values['as-user-extra'] as string[] | undefined) ?? [],
    requestTimeout: str(values['request-timeout']) ?? '0',
    subresource: str(values.subresource),
    fieldManager: str(values['field-manager']) ?? 'orch-patch',
    warningsAsErrors: values['warnings-as-errors'] === true,
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
  if (!o.local) validateServerArguments(o);
  if (o.interactive && !(terminal.stdinIsTTY && terminal.stdoutIsTTY)) {
    throw new UserError('--interactive (-i) needs a terminal to ask in: standard input and output must be a TTY; use --diff to preview without asking');
  }
}

/** The TYPE NAME... / TYPE/NAME... argument rules of kubectl's resource builder. */
function validateServerArguments(o: PatchOptions): void {
  const hasFiles = o.filenames.length > 0 || o.kustomize !== undefined;
  if (hasFiles && o.args.length > 0) {
    throw new UserError('when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well');
  }
  if (o.args.length === 0) return;
  const slashed = o.args.filter((arg) => arg.includes('/'));
  if (slashed.length > 0 && slashed.length < o.args.length) {
    throw new UserError(
      "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'orch patch resource/<resource_name>' instead of 'orch patch resource resource/<resource_name>'",
    );
  }
  for (const arg of slashed) {
    const parts = arg.split('/');
    if (parts.length > 2) throw new UserError('arguments in resource/name form may not have more than one slash');
    if (parts[0] === '' || parts[1] === '') throw new UserError('arguments in resource/name form must have a single resource and name');
  }
  if (slashed.length === 0 && o.args.length === 1) throw new UserError('resource(s) were provided, but no name was specified');
}

/** The server-side targets named by the arguments: `TYPE NAME...` or `TYPE/NAME...` (TYPE may list several, `pods,svc`). */
export function argumentTargets(args: readonly string[]): {type: string; name: string}[] {
  if (args.length === 0) return [];
  if (args[0].includes('/')) {
    return args.map((arg) => {
      const slash = arg.indexOf('/');
      return {type: arg.slice(0, slash), name: arg.slice(slash + 1)};
    });
  }
  const [types, ...names] = args;
  return types
    .split(',')
    .filter((type) => type !== '')
    .flatMap((type) => names.map((name) => ({type, name})));
}
