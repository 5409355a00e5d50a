/**
 * The schema-validation stage of writes (create, update, patch), as upstream's decoding with field
 * validation (apiserver handlers: `fieldValidation=Strict|Warn|Ignore`, default Warn):
 * - a value of the wrong type: 400 `<Kind> in version "<v>" cannot be handled as a <Kind>: json: cannot unmarshal ...`;
 * - unknown and duplicate fields: Strict fails with 400 `... strict decoding error: unknown field "spec.foo", ...`;
 *   Warn answers with one Warning header per finding; Ignore says nothing. Unknown fields are
 *   dropped before storing, as upstream's typed decoding drops them;
 * - required fields missing: 422 Invalid with `details.causes[].field`.
 * Kinds without a schema (a custom resource whose CRD registered none) pass unchecked.
 */
import { parseDocument, LineCounter, isMap, isScalar, isSeq, type Node } from 'yaml';
import { badRequest, field, invalid, type FieldError } from '../../../../api/status.js';
import { countKeyTokens, scanKeys } from '../../../../api/schema/duplicates.js';
import { validateAgainstSchema } from '../../../../api/schema/validate.js';
import { names } from '../../../../api/names.js';
import type { SchemaProvider } from './schema-registry.js';

export { SchemaRegistry, builtinSchemaProvider, type CustomKindSchema, type SchemaProvider } from './schema-registry.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** `fieldValidation` of Create/Update/PatchOptions; an unknown value is a 422 naming the accepted ones. */
export function parseFieldValidation(query: URLSearchParams, optionsKind: string): FieldValidation {
  const value = query.get('fieldValidation') ?? '';
  if (value === '') return 'Warn';
  if (value === 'Strict' || value === 'Warn' || value === 'Ignore') return value;
  throw invalid({ group: names().groups.meta, kind: optionsKind }, '', [field.notSupported('fieldValidation', value, ['', 'Ignore', 'Strict', 'Warn'])]);
}

export interface WriteValidation {
  group: string;
  version: string;
  kind: string;
  /** The object's name, for a 422's message. */
  name: string;
  /** The object to store (the decoded body, or the patched object); unknown fields are removed from it unless Strict fails. */
  object: unknown;
  mode: FieldValidation;
  /** `apply`: the applied configuration of a server-side apply (checked before it is merged). */
  operation: 'create' | 'update' | 'patch' | 'apply';
  /** The request body as sent (JSON: duplicate keys; YAML: duplicate keys with their lines). */
  body?: { text: string; yaml: boolean };
  /** Required fields are checked on whole objects (not on a subresource's partial views). */
  checkRequired?: boolean;
  /** Value types (default true; the API server leaves custom resources' to their CRD's validator). */
  checkTypes?: boolean;
  /**
   * Answer required-field errors instead of failing with them: the API server reports them with the
   * kind's own field errors in one 422 (WriteContext.schemaErrors).
   */
  deferRequired?: boolean;
}

export interface ValidationResult {
  /** Warning texts (Warn mode), in upstream's order. */
  warnings: string[];
  /** Required fields missing, when `deferRequired` (otherwise they fail the write). */
  required: FieldError[];
}

/** Runs the stage; throws the ApiError upstream answers with, or returns the warnings. */
export function validateWrite(provider: SchemaProvider, input: WriteValidation): ValidationResult {
  const schema = provider.schemaFor(input.group, input.version, input.kind);
  if (!schema) return { warnings: [], required: [] };
  const isPatch = input.operation === 'patch' || input.operation === 'apply';
  // Patches: upstream re-encodes the patched object, so unknown fields come out sorted.
  const sorted = isPatch || input.body?.yaml === true;
  // Custom resources (no Go type: no rootName) are unstructured upstream: types and required
  // fields are their CRD's schema validation (422, src/api/structural), not decoding errors.
  const custom = !schema.rootName;
  const findings = validateAgainstSchema(input.object, schema, {
    sorted, required: input.checkRequired !== false && input.operation !== 'apply' && !custom, types: input.checkTypes !== false,
  });
  const handledAs = `${input.kind} in version "${input.version}" cannot be handled as a ${input.kind}`;
  if (findings.typeError && !custom) throw badRequest(`${handledAs}: ${findings.typeError}`);

  const strict: string[] = [];
  if (input.mode !== 'Ignore' && (findings.unknown.length || input.body)) {
    strict.push(...orderedFindings(input, findings.unknown, isPatch, findings.keys));
  }
  if (input.mode === 'Strict' && strict.length) {
    if (input.operation === 'apply' && strict[0]!.startsWith('yaml: ')) {
      // Upstream decodes an apply configuration as YAML first and stops at its repeated keys.
      throw badRequest(`error strict decoding YAML: error converting YAML to JSON: ${strict[0]}`);
    }
    const message = `strict decoding error: ${strict.join(', ')}`;
    throw badRequest(isPatch ? message : `${handledAs}: ${message}`);
  }
  if (findings.unknown.length) prune(input.object, findings.unknown);
  const typeCauses = findings.required.filter((e) => e.type !== 'FieldValueRequired');
  const required = findings.required.filter((e) => e.type === 'FieldValueRequired');
  if (typeCauses.length || (required.length && !input.deferRequired)) {
    throw invalid({ group: input.group, kind: input.kind }, input.name, input.deferRequired ? typeCauses : findings.required);
  }
  const warnings = input.mode === 'Warn' ? strict.flatMap((s) => s.split('\n')).map(trimYamlLine).filter(Boolean) : [];
  return { warnings, required: input.deferRequired ? required : [] };
}

function trimYamlLine(text: string): string {
  return text.replace(/^yaml: unmarshal errors:$/, '').trim();
}

/**
 * Findings in upstream's order. JSON bodies of creates and updates: as the decoder streams them
 * (document order; a field both unknown and duplicated is reported once, as unknown). Patches:
 * the patch body's duplicates, then the patched object's unknown fields. YAML: the duplicate keys
 * with their lines first (`yaml: unmarshal errors:` block), then unknown fields.
 */
function orderedFindings(input: WriteValidation, unknown: string[], isPatch: boolean, walkedKeys: number): string[] {
  const unknownTexts = unknown.map((p) => `unknown field ${JSON.stringify(p)}`);
  const body = input.body;
  if (!body) return unknownTexts;
  if (body.yaml) {
    // JSON is YAML (kubectl sends apply configurations as JSON): a JSON text without repeated keys needs no YAML parse.
    const lines = jsonWithoutDuplicates(body.text) ? [] : yamlDuplicateKeys(body.text);
    const head = lines.length ? [`yaml: unmarshal errors:\n${lines.map((l) => `  ${l}`).join('\n')}`] : [];
    return [...head, ...unknownTexts];
  }
  // The walk saw every key of the body once: nothing repeats (the common case, without the scan's sets).
  if (!isPatch && countKeyTokens(body.text) === walkedKeys) return unknownTexts;
  const scan = scanKeys(body.text, false);
  const duplicateTexts = scan.duplicates.map((d) => `duplicate field ${JSON.stringify(d.path)}`);
  if (isPatch) return [...duplicateTexts, ...unknownTexts];
  if (scan.duplicates.length === 0) return unknownTexts;
  if (unknown.length === 0) return duplicateTexts;
  return interleaved(scanKeys(body.text, true), unknown);
}

/** Duplicates and unknown fields of a create or update body, in document order as the decoder streams them. */
function interleaved(scan: ReturnType<typeof scanKeys>, unknown: string[]): string[] {
  const unknownSet = new Set(unknown);
  const events: { offset: number; text: string }[] = [];
  for (const d of scan.duplicates) if (!unknownSet.has(d.path)) events.push({ offset: d.offset, text: `duplicate field ${JSON.stringify(d.path)}` });
  for (const p of unknown) events.push({ offset: scan.firstOffset.get(p) ?? Number.MAX_SAFE_INTEGER, text: `unknown field ${JSON.stringify(p)}` });
  return events.sort((a, b) => a.offset - b.offset).map((e) => e.text);
}

function jsonWithoutDuplicates(text: string): boolean {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return false;
  try {
    JSON.parse(text);
  } catch {
    return false;
  }
  return scanKeys(text, false).duplicates.length === 0;
}

/** `line 5: key "name" already set in map`, as go-yaml reports repeated mapping keys. */
export function yamlDuplicateKeys(text: string): string[] {
  const counter = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: false, lineCounter: counter });
  const out: string[] = [];
  const visit = (node: Node | null | undefined): void => {
    if (!node) return;
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
        if (key !== undefined) {
          if (seen.has(key)) {
            const offset = (pair.key as Node).range?.[0] ?? 0;
            out.push(`line ${counter.linePos(offset).line}: key ${JSON.stringify(key)} already set in map`);
          } else seen.add(key);
        }
        visit(pair.value as Node);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) visit(item as Node);
    }
  };
  visit(doc.contents as Node);
  return out;
}

/** Removes unknown fields (paths as `a.b[0].c`) from the object, as typed decoding drops them. */
function prune(object: unknown, paths: string[]): void {
  for (const path of paths) {
    const parts = path.match(/[^.[\]]+|\[\d+\]/g) ?? [];
    let current: unknown = object;
    for (let i = 0; i < parts.length - 1 && current !== undefined && current !== null; i++) {
      const part = parts[i]!;
      current = part.startsWith('[') ? (current as unknown[])[Number(part.slice(1, -1))] : (current as Record<string, unknown>)[part];
    }
    const last = parts[parts.length - 1];
    if (current && typeof current === 'object' && last !== undefined) delete (current as Record<string, unknown>)[last];
  }
}
