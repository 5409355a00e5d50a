/**
 * The OpenAPI (swagger 2.0) definitions of the built-in types, as scripts/generate-schemas.mjs
 * derives them from upstream's own documents (data/definitions.json.gz: upstream's definition
 * names, `x-kubernetes-*` extensions, descriptions). Loaded once, on first use, by the daemons that
 * serve or validate objects; `orch patch` never loads them (it reads merge-table.generated.ts).
 *
 * Group names in the data are upstream's (`rbac.authorization.k8s.io`); `builtinSchemas()` gives the
 * definitions with the active name set's groups in `x-kubernetes-group-version-kind`, so they serve
 * both name sets.
 */
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { names, nameSet, type NameSetId } from '../names.js';

/** A swagger 2.0 / OpenAPI v3 schema object (the subset Kubernetes' documents use). */
export interface Schema {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  $ref?: string;
  allOf?: Schema[];
  default?: unknown;
  'x-kubernetes-group-version-kind'?: GroupVersionKind[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  [extension: `x-${string}`]: unknown;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface Definitions {
  /** Where the data came from (package and document), for `info.description` of the documents. */
  source: { document: string; fields: string };
  definitions: Record<string, Schema>;
}

const DATA_FILE = 'definitions.json.gz';

let raw: Definitions | undefined;

/** Next to this module in the sources (`./data/`), or `dist/data/` beside the bundle's chunk folders. */
function dataPath(): string {
  const candidates = [new URL(`./data/${DATA_FILE}`, import.meta.url), new URL(`../data/${DATA_FILE}`, import.meta.url), new URL(`./data/${DATA_FILE}`, import.meta.url)];
  for (const url of candidates) {
    const path = fileURLToPath(url);
    if (existsSync(path)) return path;
  }
  throw new Error(`the built-in OpenAPI definitions (${DATA_FILE}) are missing: run "npm run build"`);
}

/** The packaged definitions with upstream's group names. */
export function upstreamDefinitions(): Definitions {
  raw ??= JSON.parse(gunzipSync(readFileSync(dataPath())).toString('utf8')) as Definitions;
  return raw;
}

/** Upstream group name -> the name set's group name (`rbac.authorization.k8s.io` -> `rbac.orch.io`). */
export function groupMapping(id: NameSetId): Map<string, string> {
  const upstream = nameSet('kubernetes').groups;
  const target = nameSet(id).groups;
  const map = new Map<string, string>();
  for (const key of Object.keys(upstream) as (keyof typeof upstream)[]) map.set(upstream[key], target[key]);
  return map;
}

/** The built-in schemas of one name set: definitions plus a GVK index. */
export interface BuiltinSchemas {
  source: Definitions['source'];
  definitions: Record<string, Schema>;
  /** `group/version/Kind` (the name set's group) -> definition name. */
  byGvk: Map<string, string>;
}

const perNameSet = new Map<NameSetId, BuiltinSchemas>();

export function gvkKey(group: string, version: string, kind: string): string {
  return `${group}/${version}/${kind}`;
}

/** The built-in definitions for the active name set (memoized per name set). */
export function builtinSchemas(): BuiltinSchemas {
  const id = names().id;
  let found = perNameSet.get(id);
  if (found) return found;
  const { source, definitions } = upstreamDefinitions();
  const mapping = groupMapping(id);
  const renamed: Record<string, Schema> = {};
  const byGvk = new Map<string, string>();
  for (const [name, schema] of Object.entries(definitions)) {
    const gvks = schema['x-kubernetes-group-version-kind'];
    if (!gvks) {
      renamed[name] = schema;
      continue;
    }
    const mapped = gvks.map((g) => ({ ...g, group: mapping.get(g.group) ?? g.group }));
    renamed[name] = { ...schema, 'x-kubernetes-group-version-kind': mapped };
    for (const g of mapped) if (schema.properties?.metadata && gvks.length === 1) byGvk.set(gvkKey(g.group, g.version, g.kind), name);
  }
  found = { source, definitions: renamed, byGvk };
  perNameSet.set(id, found);
  return found;
}

/** The definition a `$ref` names (`#/definitions/<name>` or `#/components/schemas/<name>`). */
export function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1);
}
