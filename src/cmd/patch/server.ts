/**
 * `orch patch` against the API server, following kubectl patch's server flow (reference patch.md §6):
 * resolve the targets (TYPE NAME / TYPE/NAME through discovery, or the objects of -f/-k files by
 * their apiVersion and kind), GET each named object, then PATCH it with the patch type's content
 * type, `fieldManager` and, for `--dry-run=server`, `dryRun=All`; `--dry-run=client` applies the
 * patch locally with the patch engine instead of sending it. Each object is reported as kubectl
 * does (`pod/web patched`, `... (no change)` when the object did not change); a failing object does
 * not stop the others, and the errors are printed at the end with kubectl's texts.
 *
 * Loaded only when the server is contacted (run.ts imports it dynamically), so `--local` never
 * loads the client, the orchconfig reader or YAML.
 */
import {applyPatch, type JsonObject, type JsonValue} from '../../patch/index.js';
import {jsonEqual} from '../../patch/types.js';
import {decodeObjects} from '../../resources/decode.js';
import {flattenLists, type ApiObject} from '../../resources/object.js';
import {readSources} from '../../resources/sources.js';
import {UserError} from '../../lib/errors.js';
import {resolveClientConfig, type ClientConfig} from '../../client/orchconfig.js';
import {RestClient} from '../../client/rest-client.js';
import {ApiStatusError} from '../../client/errors.js';
import {errorReport} from '../../client/error-text.js';
import {parseRequestTimeout} from '../../client/request-timeout.js';
import {WarningWriter, warningsAsErrorsMessage} from '../../client/warnings.js';
import {qualifiedResource, resourcePath, type ResourceMapper, type ResourceMapping} from '../../client/resource-mapper.js';
import {argumentTargets, type PatchOptions} from './options.js';
import {parsePatch, readPatchText, type PatchDependencies, type PatchIO, type PatchResult} from './run.js';

export const PATCH_CONTENT_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
} as const;

/** An error whose complete stderr text is already written kubectl's way; src/cmd/patch/main.ts prints it as is. */
export class ReportedError extends Error {
  override name = 'ReportedError';
  constructor(readonly stderrText: string) {
    super(stderrText.trimEnd());
  }
}

/** One object to patch. */
interface Target {
  mapping: ResourceMapping;
  namespace?: string;
  name: string;
  /** The object as the file gives it (-f/-k); undefined for TYPE NAME, which is fetched. */
  fromFile?: ApiObject;
}

/** `group/version, Kind=Kind`, Go's GroupVersionKind.String(), as kubectl names a type in messages. */
function gvkText(mapping: ResourceMapping): string {
  return `${mapping.group}/${mapping.version}, Kind=${mapping.kind}`;
}

/** `--as-user-extra key=value` entries as impersonation extras (several values per key accumulate). */
export function parseUserExtra(entries: readonly string[]): Record<string, string[]> {
  const extra: Record<string, string[]> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new UserError(`invalid --as-user-extra "${entry}": expected key=value`);
    (extra[entry.slice(0, eq)] ??= []).push(entry.slice(eq + 1));
  }
  return extra;
}

async function connect(o: PatchOptions, io: PatchIO, warnings: WarningWriter): Promise<{client: RestClient; config: ClientConfig}> {
  let timeout;
  try {
    timeout = parseRequestTimeout(o.requestTimeout);
  } catch (error) {
    throw new UserError((error as Error).message);
  }
  const config = await resolveClientConfig(o.client);
  for (const warning of config.warnings) io.stderr(`Warning: ${warning}\n`);
  if (o.asUserExtra.length > 0) {
    if (!config.impersonate && !o.client.as) throw new UserError('requesting uid, groups or user-extra without impersonating a user');
    if (config.impersonate) config.impersonate.extra = {...config.impersonate.extra, ...parseUserExtra(o.asUserExtra)};
  }
  const client = new RestClient({config, timeoutMs: timeout.ms, timeoutText: timeout.text, warnings});
  return {client, config};
}

async function loadFileObjects(o: PatchOptions): Promise<{object: ApiObject; source: string}[]> {
  if (o.kustomize !== undefined) {
    const {kustomizeBuild} = await import('../../resources/kustomize.js');
    return (await kustomizeBuild(o.kustomize)).map((object) => ({object, source: o.kustomize as string}));
  }
  const out: {object: ApiObject; source: string}[] = [];
  for (const source of await readSources(o.filenames, o.recursive)) {
    for (const object of flattenLists(await decodeObjects(source.text, source.name))) out.push({object, source: source.name});
  }
  return out;
}

/** The objects the command line names, each mapped to its resource. */
async function resolveTargets(o: PatchOptions, mapper: () => Promise<ResourceMapper>, config: ClientConfig): Promise<Target[]> {
  if (o.args.length > 0) {
    const resources = await mapper();
    return argumentTargets(o.args).map(({type, name}) => {
      const mapping = resources.resourceFor(type);
      return {mapping, name, namespace: mapping.namespaced ? config.namespace : undefined};
    });
  }
  const files = await loadFileObjects(o);
  if (files.length === 0) throw new UserError('no objects passed to patch');
  const resources = await mapper();
  return files.map(({object, source}) => {
    const name = object.metadata?.name ?? '';
    const fileNamespace = object.metadata?.namespace ?? '';
    const mapping = resources.resourceForKind(String(object.apiVersion ?? ''), String(object.kind ?? ''));
    if (!mapping) {
      throw new UserError(
        `resource mapping not found for name: ${JSON.stringify(name)} namespace: ${JSON.stringify(fileNamespace)} from ${JSON.stringify(source)}: ` +
          `no matches for kind ${JSON.stringify(object.kind ?? '')} in version ${JSON.stringify(object.apiVersion ?? '')}\nensure CRDs are installed first`,
      );
    }
    if (name === '') throw new UserError('resource name may not be empty');
    // Only an explicit -n is enforced against the file (kubectl's enforceNamespace).
    if (mapping.namespaced && o.client.namespace && fileNamespace !== '' && fileNamespace !== o.client.namespace) {
      throw new UserError(
        `the namespace from the provided object ${JSON.stringify(fileNamespace)} does not match the namespace ${JSON.stringify(o.client.namespace)}. ` +
          `You must pass '--namespace=${fileNamespace}' to perform this operation.`,
      );
    }
    return {mapping, name, namespace: mapping.namespaced ? fileNamespace || config.namespace : undefined, fromFile: object};
  });
}

/** managedFields change on every write; a diff shows them only with --show-managed-fields. */
function forDiff(o: PatchOptions, object: ApiObject): ApiObject {
  if (o.showManagedFields || !object.metadata || !('managedFields' in object.metadata)) return object;
  const {managedFields: _dropped, ...metadata} = object.metadata;
  return {...object, metadata};
}

export async function runServerPatch(o: PatchOptions, io: PatchIO, deps: PatchDependencies): Promise<PatchResult[]> {
  const warnings = new WarningWriter(io.stderr);
  let client: RestClient | undefined;
  const results: PatchResult[] = [];
  const errors: unknown[] = [];
  try {
    const patch = await parsePatch(await readPatchText(o));
    // A bad -o is reported before any request, as kubectl does.
    deps.printerFor(o, 'patched');
    const connected = await connect(o, io, warnings);
    client = connected.client;
    const rest = client;
    const targets = await resolveTargets(o, () => rest.discover(), connected.config);
    for (const target of targets) {
      try {
        const result = await patchOne(o, io, deps, rest, target, patch);
        if (result) results.push(result);
      } catch (error) {
        // kubectl's ContinueOnError: the other objects are still patched; errors come last.
        errors.push(error);
      }
    }
  } catch (error) {
    errors.push(error);
  } finally {
    client?.close();
  }
  if (errors.length > 0) throw new ReportedError(errorReport(errors));
  const failure = o.warningsAsErrors ? warningsAsErrorsMessage(warnings.written) : undefined;
  if (failure) throw new ReportedError(errorReport([new Error(failure)]));
  return results;
}

async function patchOne(o: PatchOptions, io: PatchIO, deps: PatchDependencies, client: RestClient, target: Target, patch: unknown): Promise<PatchResult | undefined> {
  const {mapping, namespace, name} = target;
  const path = resourcePath(mapping, {namespace, name, subresource: o.subresource});
  const context = {resource: qualifiedResource(mapping), group: mapping.group, name};
  // kubectl's resource builder fetches every named object (the subresource, with --subresource);
  // objects from files are taken as the file gives them.
  const live = async (): Promise<ApiObject> => {
    try {
      return await client.get<ApiObject>(path, undefined, context);
    } catch (error) {
      // As kubectl's Info.Get: an object missing from a namespace other than `default` may be
      // missing because the namespace is; then that is what is reported.
      if (error instanceof ApiStatusError && error.code === 404 && namespace && namespace !== 'default') {
        const nsPath = resourcePath({group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false}, {name: namespace});
        const missing = await client.get(nsPath, undefined, {resource: 'namespaces', name: namespace}).then(
          () => undefined,
          (nsError: unknown) => (nsError instanceof ApiStatusError && nsError.code === 404 ? nsError : undefined),
        );
        if (missing) throw missing;
      }
      throw error;
    }
  };
  const before = target.fromFile ?? (await live());
  const showChange = o.diff || o.interactive;
  const diffBase = showChange ? (target.fromFile ? await live() : before) : undefined;

  const send = async (dryRun: boolean): Promise<ApiObject> => {
    const contentType = PATCH_CONTENT_TYPES[o.type];
    try {
      return await client.patch<ApiObject>(path, contentType, patch, {dryRun: dryRun ? 'All' : undefined, fieldManager: o.fieldManager}, context);
    } catch (error) {
      if (error instanceof ApiStatusError && error.code === 415) {
        throw new UserError(`${contentType} is not supported by ${gvkText(mapping)}: ${error.message}`);
      }
      throw error;
    }
  };

  let after: ApiObject;
  if (o.dryRun === 'client') {
    after = applyPatch({object: before as JsonObject, patch: patch as JsonValue, type: o.type}).result as ApiObject;
  } else if (o.interactive) {
    // Show what the server would make of the patch (a server dry run), and send it only if accepted.
    const preview = await send(true);
    const diff = await unifiedDiffOf(deps, forDiff(o, diffBase as ApiObject), forDiff(o, preview), deps.objectName(preview));
    const accepted = jsonEqual(forDiff(o, diffBase as ApiObject) as JsonValue, forDiff(o, preview) as JsonValue)
      ? true
      : await io.confirm(deps.objectName(preview), diff);
    if (!accepted) {
      io.stdout(`${deps.objectName(preview)} not patched\n`);
      return {name: deps.objectName(preview), before, after: preview, changed: false, applied: false};
    }
    after = o.dryRun === 'server' ? preview : await send(false);
  } else {
    after = await send(o.dryRun === 'server');
  }

  if (o.diff && !o.interactive) {
    const {colorizeDiff} = await import('../../diff/unified.js');
    const diff = await unifiedDiffOf(deps, forDiff(o, diffBase as ApiObject), forDiff(o, after), deps.objectName(after));
    if (diff) {
      const text = (io.colors ? colorizeDiff(diff) : diff).replace(/\n?$/, '\n');
      if (o.output !== undefined) io.stderr(text);
      else io.stdout(text);
    }
  }
  // kubectl's "did patch" test: the object before (fetched or from the file) against the result.
  const changed = !jsonEqual(before as JsonValue, after as JsonValue);
  const printed = deps.printerFor(o, changed ? 'patched' : 'patched (no change)').print(after);
  io.stdout(printed.stdout);
  if (printed.error !== undefined) throw new UserError(printed.error);
  return {name: deps.objectName(after), before, after, changed, applied: true};
}

async function unifiedDiffOf(deps: PatchDependencies, before: ApiObject, after: ApiObject, name: string): Promise<string> {
  const {unifiedDiff} = await import('../../diff/unified.js');
  return unifiedDiff(name, deps.toYaml(before), deps.toYaml(after));
}
