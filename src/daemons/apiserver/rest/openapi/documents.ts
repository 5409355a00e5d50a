/**
 * The OpenAPI documents the API server publishes, built from the schemas it validates with
 * (built-in definitions and what custom resources registered):
 * - `/openapi/v2`: one swagger 2.0 document with every definition (kubectl reads it, in protobuf,
 *   for client-side validation and for apply's patch computation);
 * - `/openapi/v3/<api/v1 | apis/<group>/<version>>`: one OpenAPI 3.0 document per group version
 *   with the schemas its kinds reach (`components.schemas`) and, per resource, operations that
 *   declare the `fieldValidation` parameter (kubectl then validates on the server) and carry
 *   `x-kubernetes-group-version-kind`; `kubectl explain` reads them.
 * Definitions keep upstream's names and `x-kubernetes-*` extensions; group names in
 * `x-kubernetes-group-version-kind` are the active name set's. Pure.
 */
import { groupVersionOf, type ResourceInfo, type ResourceRegistry } from '../../../../api/resources.js';
import { builtinSchemas, gvkKey, type Schema } from '../../../../api/schema/definitions.js';
import type { CustomKindSchema, SchemaRegistry } from '../validation/schema-registry.js';
import { swagger2Schema } from '../../../../api/structural/openapi.js';

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** The path of a group version's document below `/openapi/v3/`: `api/v1` or `apis/<group>/<version>`. */
export function openApiPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

/** Upstream's definition name of a custom kind: the group reversed, the version, the kind (`com.example.v1.Widget`). */
export function customDefinitionName(group: string, version: string, kind: string): string {
  return [...group.split('.').reverse(), version, kind].join('.');
}

/** Every definition by name: the built-ins plus the custom kinds (whose schemas get apiVersion, kind, metadata). */
function allDefinitions(schemas: SchemaRegistry): { definitions: Record<string, Schema>; byGvk: Map<string, string> } {
  const builtins = builtinSchemas();
  const custom = schemas.customKinds();
  if (custom.length === 0) return builtins;
  const definitions = { ...builtins.definitions };
  const byGvk = new Map(builtins.byGvk);
  for (const k of custom) {
    const name = customDefinitionName(k.group, k.version, k.kind);
    definitions[name] = customDefinition(k);
    byGvk.set(gvkKey(k.group, k.version, k.kind), name);
  }
  return { definitions, byGvk };
}

function customDefinition(k: CustomKindSchema): Schema {
  return {
    ...k.schema,
    type: 'object',
    properties: {
      apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
      kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
      metadata: { $ref: `#/definitions/${OBJECT_META}`, description: "Standard object's metadata." },
      ...k.schema.properties,
    },
    'x-kubernetes-group-version-kind': [{ group: k.group, version: k.version, kind: k.kind }],
  };
}

/** Rewrites `#/definitions/` references for OpenAPI v3 (`#/components/schemas/`), deeply. */
function toV3(schema: Schema): Schema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/definitions/', '"#/components/schemas/')) as Schema;
}

/** The names of every definition `roots` reach through `$ref`s. */
function reachable(definitions: Record<string, Schema>, roots: string[]): string[] {
  const seen = new Set<string>();
  const stack = [...roots];
  while (stack.length) {
    const name = stack.pop()!;
    if (seen.has(name) || !definitions[name]) continue;
    seen.add(name);
    const text = JSON.stringify(definitions[name]);
    for (const m of text.matchAll(/"\$ref":"#\/definitions\/([^"]+)"/g)) stack.push(m[1]!);
  }
  return [...seen].sort();
}

function resourceOperations(info: ResourceInfo, definition: string | undefined): Record<string, unknown> {
  const prefix = info.group === '' ? `/api/${info.version}` : `/apis/${info.group}/${info.version}`;
  const scope = info.namespaced ? '/namespaces/{namespace}' : '';
  const gvk = { group: info.group, version: info.version, kind: info.kind };
  const queryParameter = (name: string, description: string) => ({ name, in: 'query', description, schema: { type: 'string', uniqueItems: true } });
  const writeParameters = [
    queryParameter('dryRun', 'When present, indicates that modifications should not be persisted.'),
    queryParameter('fieldManager', 'fieldManager is a name associated with the actor or entity that is making these changes.'),
    queryParameter('fieldValidation', 'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.'),
  ];
  const content = definition ? { 'application/json': { schema: { $ref: `#/components/schemas/${definition}` } } } : undefined;
  const operation = (verb: string, action: string, withBody: boolean) => ({
    operationId: `${verb}${info.kind}`,
    parameters: withBody ? writeParameters : [],
    ...(withBody && content ? { requestBody: { content, required: true } } : {}),
    responses: { '200': { description: 'OK', ...(content ? { content } : {}) } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
  });
  // Custom resources take no strategic merge patch: kubectl apply reads this list to choose its patch type.
  const patchTypes = ['application/json-patch+json', 'application/merge-patch+json', ...(info.custom ? [] : ['application/strategic-merge-patch+json']), 'application/apply-patch+yaml'];
  const patchBody = { content: Object.fromEntries(patchTypes.map((t) => [t, { schema: { type: 'object' } }])), required: true };
  return {
    [`${prefix}${scope}/${info.plural}`]: { get: operation('list', 'list', false), post: operation('create', 'post', true) },
    [`${prefix}${scope}/${info.plural}/{name}`]: {
      get: operation('read', 'get', false),
      put: operation('replace', 'put', true),
      patch: { ...operation('patch', 'patch', true), requestBody: patchBody },
      delete: operation('delete', 'delete', false),
    },
  };
}

/** The OpenAPI v3 document of one served group version, or undefined if it is not served. */
export function openApiV3Document(registry: ResourceRegistry, schemas: SchemaRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const gv = registry.groupVersions().find((g) => g.group === group && g.version === version);
  if (!gv) return undefined;
  const { definitions, byGvk } = allDefinitions(schemas);
  const paths: Record<string, unknown> = {};
  const roots: string[] = [];
  for (const info of gv.resources) {
    const definition = byGvk.get(gvkKey(info.group, info.version, info.kind));
    if (definition) roots.push(definition);
    Object.assign(paths, resourceOperations(info, definition));
  }
  const components: Record<string, Schema> = {};
  for (const name of reachable(definitions, roots)) components[name] = toV3(definitions[name]!);
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: groupVersionOf({ group, version }) },
    paths,
    components: { schemas: components },
  };
}

/** The swagger 2.0 document: every definition (the built-ins of the active name set and custom kinds). */
export function openApiV2Document(schemas: SchemaRegistry): Record<string, unknown> {
  const all = allDefinitions(schemas).definitions;
  // Custom kinds in Swagger 2.0 form: no nullable, anyOf/oneOf/allOf/not, or int-or-string types (src/api/structural/openapi.ts).
  const custom = new Set(schemas.customKinds().map((k) => customDefinitionName(k.group, k.version, k.kind)));
  const definitions = Object.fromEntries(Object.entries(all).map(([name, d]) => [name, custom.has(name) ? swagger2Schema(d) : d]));
  return { swagger: '2.0', info: { title: 'Kubernetes', version: 'v2' }, paths: {}, definitions };
}
