/**
 * Output printers of orch's client commands, matching kubectl 1.32 (`-o json|yaml|kyaml|name|
 * jsonpath...|go-template...`). Everything here is pure: the *-file formats report the path they
 * need and the caller reads it (see `resolvePrinter`), or injects a reader (`createPrinter`).
 *
 * A printer prints ONE object (kubectl patch builds a fresh printer per object, so no `---`
 * between YAML documents). Errors carry kubectl's message text; show them with `formatCliError`.
 */
import { goJsonMarshal } from './gojson.js';
import { goQuote, goSprintValue, goSyntaxValue, isPlainObject } from './govalues.js';
import { executeTemplate } from './gotemplate/exec.js';
import { builtinNames } from './gotemplate/funcs.js';
import { TemplateParseError, type Tree, parseTemplate } from './gotemplate/parser.js';
import { JsonPath } from './jsonpath.js';
import { toKyaml } from './kyaml.js';
import { MISSING_GVK_ERROR, isListObject, printName } from './name.js';
import { toKubectlYaml } from './yaml.js';

export interface PrinterOptions {
  /** --allow-missing-template-keys (default true). */
  allowMissingTemplateKeys?: boolean;
  /** --show-managed-fields (default false): keep metadata.managedFields in json/yaml/kyaml. */
  showManagedFields?: boolean;
  /** --template: the template text, or the template file path for the *-file formats. */
  template?: string;
  /** Verb the default (no -o) name printer appends, e.g. `patched`. */
  operation?: string;
}

/** What printing one object produced; `error` is set when kubectl would fail (exit 1). */
export interface PrintResult {
  stdout: string;
  error?: string;
}

export interface Printer {
  readonly format: string;
  print(obj: unknown): PrintResult;
}

export type PrinterResolution =
  | { kind: 'printer'; printer: Printer }
  | { kind: 'error'; message: string }
  /** A *-file format: read `path`, then call `withContent` (or `withReadError`). */
  | {
      kind: 'needs-file';
      path: string;
      withContent(text: string): PrinterResolution;
      withReadError(err: unknown): PrinterResolution;
    };

/** All -o values, in the order kubectl lists them (sorted), with kyaml added. */
export const ALLOWED_FORMATS = [
  'go-template', 'go-template-file', 'json', 'jsonpath', 'jsonpath-as-json', 'jsonpath-file', 'kyaml', 'name', 'template', 'templatefile', 'yaml',
];

const JSONPATH_FORMATS = ['jsonpath', 'jsonpath-file', 'jsonpath-as-json'];
const GO_TEMPLATE_FORMATS = ['go-template', 'go-template-file', 'template', 'templatefile'];

export function noCompatiblePrinterMessage(output: string): string {
  return `unable to match a printer suitable for the output format ${goQuote(output)}, allowed formats are: ${ALLOWED_FORMATS.join(',')}`;
}

/** How kubectl shows an error: `error: <message>` ending with exactly one newline added if missing. */
export function formatCliError(message: string): string {
  const text = `error: ${message}`;
  return text.endsWith('\n') ? text : text + '\n';
}

/** Go's text for a failed os.ReadFile (`open <path>: no such file or directory`). */
export function goFileError(path: string, err: unknown): string {
  const code = (err as { code?: string })?.code;
  switch (code) {
    case 'ENOENT': return `open ${path}: no such file or directory`;
    case 'EACCES': return `open ${path}: permission denied`;
    case 'EISDIR': return `read ${path}: is a directory`;
  }
  return `open ${path}: ${(err as Error)?.message ?? String(err)}`;
}

/** kubectl's OmitManagedFieldsPrinter: drops metadata.managedFields of the object or list items. */
export function omitManagedFields(obj: unknown): unknown {
  const strip = (o: unknown): unknown => {
    if (!isPlainObject(o) || !isPlainObject(o.metadata) || !('managedFields' in o.metadata)) return o;
    const { managedFields: _dropped, ...metadata } = o.metadata;
    return { ...o, metadata };
  };
  if (isListObject(obj)) return { ...obj, items: obj.items.map(strip) };
  return strip(obj);
}

function hasGvk(obj: unknown): boolean {
  return isPlainObject(obj) && Boolean(obj.kind || obj.apiVersion);
}

function serializingPrinter(format: string, showManagedFields: boolean, render: (o: unknown) => string): Printer {
  return {
    format,
    print(obj) {
      if (!hasGvk(obj)) return { stdout: '', error: MISSING_GVK_ERROR };
      return { stdout: render(showManagedFields ? obj : omitManagedFields(obj)) };
    },
  };
}

function jsonPathPrinter(format: string, template: string, allowMissing: boolean): PrinterResolution {
  let jp: JsonPath;
  try {
    jp = new JsonPath(template);
  } catch (e) {
    return { kind: 'error', message: `error parsing jsonpath ${template}, ${(e as Error).message}\n` };
  }
  jp.setAllowMissingKeys(allowMissing).enableJsonOutput(format === 'jsonpath-as-json');
  const printer: Printer = {
    format,
    print(obj) {
      try {
        return { stdout: jp.execute(obj) };
      } catch (e) {
        const debug =
          `Error executing template: ${(e as Error).message}. Printing more information for debugging the template:\n` +
          `\ttemplate was:\n\t\t${template}\n` +
          `\tobject given to jsonpath engine was:\n\t\t${goSyntaxValue(obj)}\n\n`;
        return { stdout: '', error: `error executing jsonpath ${goQuote(template)}: ${debug}\n` };
      }
    },
  };
  return { kind: 'printer', printer };
}

function goTemplatePrinter(format: string, template: string, allowMissing: boolean): PrinterResolution {
  let tree: Tree;
  try {
    tree = parseTemplate('output', template, builtinNames);
  } catch (e) {
    if (!(e instanceof TemplateParseError)) throw e;
    return { kind: 'error', message: `error parsing template ${template}, ${e.message}\n` };
  }
  const printer: Printer = {
    format,
    print(obj) {
      const { output, error } = executeTemplate(tree, obj, { name: 'output', missingKeyError: !allowMissing });
      if (!error) return { stdout: output };
      const debug =
        `Error executing template: ${error.message}. Printing more information for debugging the template:\n` +
        `\ttemplate was:\n\t\t${template}\n` +
        `\traw data was:\n\t\t${goJsonMarshal(obj)}\n` +
        `\tobject given to template engine was:\n\t\t${goSprintValue(obj)}\n\n`;
      return { stdout: output + debug, error: `error executing template ${goQuote(template)}: ${error.message}` };
    },
  };
  return { kind: 'printer', printer };
}

function templatePrinter(
  format: string,
  value: string,
  fileFormats: string[],
  build: (format: string, text: string) => PrinterResolution,
): PrinterResolution {
  if (value === '') return { kind: 'error', message: 'template format specified but no template given' };
  if (!fileFormats.includes(format)) return build(format, value);
  return {
    kind: 'needs-file',
    path: value,
    withContent: (text) => build(format, text),
    withReadError: (err) => ({ kind: 'error', message: `error reading --template ${value}, ${goFileError(value, err)}\n` }),
  };
}

/** Splits `format=template` the way kubectl's template print flags do. */
function splitTemplateFormat(output: string, formats: string[], templateArg: string): [string, string] {
  if (templateArg !== '') return [output, templateArg];
  for (const f of formats) if (output.startsWith(f + '=')) return [f, output.slice(f.length + 1)];
  return [output, ''];
}

/**
 * kubectl's PrintFlags.ToPrinter: picks the printer for `-o <output>` (empty when -o is absent).
 * A --template without -o selects go-template, as in kubectl.
 */
export function resolvePrinter(output: string | undefined, options: PrinterOptions = {}): PrinterResolution {
  const templateArg = options.template ?? '';
  const allowMissing = options.allowMissingTemplateKeys ?? true;
  const outputGiven = output !== undefined;
  let format = output ?? '';
  if (templateArg !== '' && !outputGiven) format = 'go-template';

  const lower = format.toLowerCase();
  if (lower === 'json') return { kind: 'printer', printer: serializingPrinter('json', !!options.showManagedFields, (o) => goJsonMarshal(o, '    ') + '\n') };
  if (lower === 'yaml') return { kind: 'printer', printer: serializingPrinter('yaml', !!options.showManagedFields, toKubectlYaml) };
  if (lower === 'kyaml') return { kind: 'printer', printer: serializingPrinter('kyaml', !!options.showManagedFields, toKyaml) };
  if (lower === 'name' || lower === '') {
    const operation = lower === 'name' ? '' : options.operation ?? '';
    return {
      kind: 'printer',
      printer: {
        format: 'name',
        print(obj) {
          try {
            return { stdout: printName(obj, operation) };
          } catch (e) {
            return { stdout: '', error: (e as Error).message };
          }
        },
      },
    };
  }
  if (templateArg !== '' || format !== '') {
    const [jpFormat, jpValue] = splitTemplateFormat(format, JSONPATH_FORMATS, templateArg);
    if (JSONPATH_FORMATS.includes(jpFormat)) {
      return templatePrinter(jpFormat, jpValue, ['jsonpath-file'], (f, t) => jsonPathPrinter(f, t, allowMissing));
    }
    const [gtFormat, gtValue] = splitTemplateFormat(format, GO_TEMPLATE_FORMATS, templateArg);
    if (GO_TEMPLATE_FORMATS.includes(gtFormat)) {
      return templatePrinter(gtFormat, gtValue, ['go-template-file', 'templatefile'], (f, t) => goTemplatePrinter(f, t, allowMissing));
    }
  }
  return { kind: 'error', message: noCompatiblePrinterMessage(output ?? '') };
}

/** resolvePrinter with the template file read by an injected reader (which may throw). */
export function createPrinter(
  output: string | undefined,
  options: PrinterOptions,
  readFile: (path: string) => string,
): { printer: Printer } | { error: string } {
  let r = resolvePrinter(output, options);
  if (r.kind === 'needs-file') {
    const pending = r;
    let text: string | undefined;
    try {
      text = readFile(pending.path);
    } catch (e) {
      r = pending.withReadError(e);
    }
    if (text !== undefined) r = pending.withContent(text);
  }
  if (r.kind === 'printer') return { printer: r.printer };
  if (r.kind === 'error') return { error: r.message };
  return { error: 'internal error: template file still unread' };
}
