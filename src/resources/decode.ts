/**
 * Text to API objects: JSON, or YAML with one or more documents. JSON is tried first so the YAML
 * library is loaded only when the input is YAML (a fast start matters for `orch patch --local`).
 * YAML is read with YAML 1.1 rules because kubectl's reader (go-yaml v2) does: `yes`, `on`, `Y`
 * become booleans.
 */
import {isApiObject, type ApiObject} from './object.js';

export class DecodeError extends Error {}

export function looksLikeJson(text: string): boolean {
  const first = text.trimStart()[0];
  return first === '{' || first === '[';
}

/** Parses JSON or YAML text into plain values: one per YAML document (JSON gives one). */
export async function parseDocuments(text: string, source: string): Promise<unknown[]> {
  if (looksLikeJson(text)) {
    try {
      return [JSON.parse(text)];
    } catch {
      // Not JSON after all: YAML is a superset of JSON, so let the YAML reader explain the problem.
    }
  }
  const yaml = await import('yaml');
  // The yaml package is CommonJS under Node: bundled, its exports may sit on `default`.
  const parseAllDocuments = yaml.parseAllDocuments ?? (yaml as unknown as {default: typeof yaml}).default.parseAllDocuments;
  const docs = parseAllDocuments(text, {version: '1.1', merge: true, uniqueKeys: false});
  const values: unknown[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    if (doc.errors.length > 0) {
      const e = doc.errors[0];
      const where = e.linePos?.[0] ? ` (line ${e.linePos[0].line}, column ${e.linePos[0].col})` : '';
      throw new DecodeError(`${source}: invalid YAML${where}: ${e.message.split('\n')[0]}`);
    }
    const value = doc.toJS({maxAliasCount: 1000});
    if (value !== null && value !== undefined) values.push(value);
  }
  return values;
}

/** The API objects in a file's text; anything that is not an object with apiVersion and kind is an error. */
export async function decodeObjects(text: string, source: string): Promise<ApiObject[]> {
  const docs = await parseDocuments(text, source);
  return docs.map((doc, index) => {
    const where = docs.length > 1 ? `${source} (document ${index + 1})` : source;
    if (!isApiObject(doc)) {
      throw new DecodeError(`${where}: expected an API object (a map with apiVersion and kind), got ${describe(doc)}`);
    }
    if (typeof doc.kind !== 'string' || doc.kind === '') {
      throw new DecodeError(`${where}: Object 'Kind' is missing in '${compact(doc)}'`);
    }
    if (typeof doc.apiVersion !== 'string' || doc.apiVersion === '') {
      throw new DecodeError(`${where}: Object 'apiVersion' is missing in '${compact(doc)}'`);
    }
    return doc;
  });
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return `a ${typeof value}`;
}

function compact(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > 200 ? text.slice(0, 197) + '...' : text;
}
