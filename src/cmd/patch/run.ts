/**
 * The work of `orch patch --local`: read the objects, read and parse the patch, apply it to each
 * object with the patch engine, and print each result (the server form is ./server.ts). Returns typed results so `-o json` callers
 * and tests see the same data; all terminal I/O goes through the injected `io`.
 */
import {readFile} from 'node:fs/promises';
import {applyPatch, type JsonObject, type JsonValue} from '../../patch/index.js';
import {decodeObjects, parseDocuments} from '../../resources/decode.js';
import {flattenLists, type ApiObject} from '../../resources/object.js';
import {readSources} from '../../resources/sources.js';
import {UserError} from '../../lib/errors.js';
import type {PatchOptions} from './options.js';

export interface PatchResult {
  /** kubectl's name for the object, e.g. `deployment.apps/web`. */
  name: string;
  before: ApiObject;
  after: ApiObject;
  changed: boolean;
  /** False when the user declined in --interactive mode. */
  applied: boolean;
}

export interface PatchIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Asks whether to apply a change shown as a diff (only called with --interactive). */
  confirm(name: string, diff: string): Promise<boolean>;
  colors: boolean;
}

/** What printing one object gives: its text, and kubectl's error when printing fails. */
export interface ObjectPrinter {
  print(object: unknown): {stdout: string; error?: string};
}

export interface PatchDependencies {
  /** The printer for `-o` (or kubectl's `<kind>/<name> <operation>` line without -o). */
  printerFor(o: PatchOptions, operation: string): ObjectPrinter;
  objectName(object: ApiObject): string;
  toYaml(object: ApiObject): string;
}

export async function readPatchText(o: PatchOptions): Promise<string> {
  if (o.patch !== undefined) return o.patch;
  try {
    return await readFile(o.patchFile as string, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file or directory' : code === 'EISDIR' ? 'is a directory' : (error as Error).message;
    throw new UserError(`unable to read patch file: open ${o.patchFile}: ${why}`);
  }
}

/**
 * The patch text as JSON, as kubectl's yaml.ToJSON reads it for every --type: text starting with `{`
 * is JSON only; anything else is YAML (JSON being YAML too), so a JSON patch in flow style,
 * `[{op: remove, path: /spec/x}]`, is accepted. JSON is tried first, so that the YAML reader loads
 * only for YAML.
 */
export async function parsePatch(text: string): Promise<unknown> {
  if (text.trim() === '') throw new UserError('the patch is empty: give a JSON or YAML patch with -p or --patch-file');
  try {
    return JSON.parse(text);
  } catch (error) {
    if (text.trimStart().startsWith('{')) throw new UserError(`invalid JSON document in the patch: ${(error as Error).message}`);
  }
  let docs: unknown[];
  try {
    docs = await parseDocuments(text, 'patch');
  } catch (error) {
    throw new UserError(`the patch is neither valid JSON nor valid YAML: ${(error as Error).message.replace(/^patch: /, '')}`);
  }
  if (docs.length !== 1) throw new UserError(`the patch must be a single JSON or YAML document, got ${docs.length}`);
  return docs[0];
}

async function loadObjects(o: PatchOptions): Promise<ApiObject[]> {
  if (o.kustomize !== undefined) {
    const {kustomizeBuild} = await import('../../resources/kustomize.js');
    return kustomizeBuild(o.kustomize);
  }
  const objects: ApiObject[] = [];
  for (const source of await readSources(o.filenames, o.recursive)) {
    objects.push(...(await decodeObjects(source.text, source.name)));
  }
  if (objects.length === 0) throw new UserError('no objects passed to patch');
  return flattenLists(objects);
}

export async function runPatch(o: PatchOptions, io: PatchIO, deps: PatchDependencies): Promise<PatchResult[]> {
  if (o.dryRunDeprecated) io.stderr('Warning: --dry-run is deprecated and can be replaced with --dry-run=client.\n');
  // The client (HTTP, TLS, orchconfig, YAML) loads only when the server is contacted.
  if (!o.local) return (await import('./server.js')).runServerPatch(o, io, deps);
  const patch = await parsePatch(await readPatchText(o));
  const objects = await loadObjects(o);
  // Resolving the printer first reports a bad -o before any work, as kubectl does.
  deps.printerFor(o, 'patched');

  // Every object is patched before anything is printed, so a failure on the third object does not
  // leave half of the output behind.
  const results: PatchResult[] = objects.map((before) => {
    const {result, changed} = applyPatch({object: before as JsonObject, patch: patch as JsonValue, type: o.type});
    return {name: deps.objectName(before), before, after: result as ApiObject, changed, applied: true};
  });

  for (const r of results) {
    if (o.diff || o.interactive) {
      const {unifiedDiff, colorizeDiff} = await import('../../diff/unified.js');
      const diff = unifiedDiff(r.name, deps.toYaml(r.before), deps.toYaml(r.after));
      if (o.interactive) {
        r.applied = r.changed ? await io.confirm(r.name, diff) : true;
        if (!r.applied) {
          io.stdout(`${r.name} not patched\n`);
          continue;
        }
      } else if (diff) {
        // With -o the diff goes to stderr so stdout stays machine-readable.
        const text = (io.colors ? colorizeDiff(diff) : diff).replace(/\n?$/, '\n');
        if (o.output !== undefined) io.stderr(text);
        else io.stdout(text);
      }
    }
    const printed = deps.printerFor(o, r.changed ? 'patched' : 'patched (no change)').print(r.after);
    io.stdout(printed.stdout);
    if (printed.error !== undefined) throw new UserError(printed.error);
  }
  return results;
}
