/**
 * Minimal OpenAPI v3 documents. kubectl (create, apply, replace with the default
 * `--validate=strict`) asks `/openapi/v3` whether the server supports the `fieldValidation` query
 * parameter for a kind's PATCH operation; when it cannot find out it tries client-side schema
 * validation, which fails without documents ("failed to download openapi"). So each group
 * version's document lists, per resource, a PATCH operation tagged with its
 * `x-kubernetes-group-version-kind` and a `fieldValidation` query parameter. Schemas are left out
 * (kubectl explain has nothing to show yet). Pure.
 */
import { createHash } from 'node:crypto';
import { groupVersionOf, type ResourceInfo, type ResourceRegistry } from '../../../api/resources.js';
import type { JsonObject } from '../../../patch/types.js';

/** The path of a group version's document below `/openapi/v3/`: `api/v1` or `apis/<group>/<version>`. */
export function openApiPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

function operations(info: ResourceInfo): Record<string, JsonObject> {
  const prefix = info.group === '' ? `/api/${info.version}` : `/apis/${info.group}/${info.version}`;
  const scope = info.namespaced ? '/namespaces/{namespace}' : '';
  const gvk = { group: info.group, version: info.version, kind: info.kind };
  const parameters = [
    { name: 'dryRun', in: 'query', schema: { type: 'string' } },
    { name: 'fieldManager', in: 'query', schema: { type: 'string' } },
    { name: 'fieldValidation', in: 'query', schema: { type: 'string' } },
  ];
  const operation = (verb: string) => ({
    operationId: `${verb}${info.kind}`,
    parameters,
    responses: { '200': { description: 'OK' } },
    'x-kubernetes-action': verb,
    'x-kubernetes-group-version-kind': gvk,
  });
  return {
    [`${prefix}${scope}/${info.plural}`]: { post: operation('post') },
    [`${prefix}${scope}/${info.plural}/{name}`]: { put: operation('put'), patch: operation('patch') },
  };
}

/** Schemas to add to a group version's document (custom resources' schemas, from their CRDs). */
export type SchemasOf = (group: string, version: string) => Record<string, JsonObject>;

export function openApiDocument(registry: ResourceRegistry, group: string, version: string, schemasOf?: SchemasOf): JsonObject | undefined {
  const gv = registry.groupVersions().find((g) => g.group === group && g.version === version);
  if (!gv) return undefined;
  const paths: Record<string, JsonObject> = {};
  for (const info of gv.resources) Object.assign(paths, operations(info));
  const schemas = schemasOf?.(group, version) ?? {};
  return { openapi: '3.0.0', info: { title: 'orch', version: groupVersionOf({ group, version }) }, paths, components: Object.keys(schemas).length ? { schemas } : {} };
}

/** The root index: each group version's document with a content hash, as upstream's `/openapi/v3`. */
export function openApiRoot(registry: ResourceRegistry, schemasOf?: SchemasOf): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const gv of registry.groupVersions()) {
    const path = openApiPath(gv.group, gv.version);
    const hash = createHash('sha512').update(JSON.stringify(openApiDocument(registry, gv.group, gv.version, schemasOf))).digest('hex').slice(0, 128).toUpperCase();
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
  }
  return { paths };
}

/**
 * `/openapi/v2`, nearly empty: kubectl reads it only to validate a `kind: List` file on the client
 * (for Lists it does not ask /openapi/v3). A document without definitions makes kubectl skip that
 * check for each item, which the server then validates itself, as for any other object.
 */
/** What kubectl sends in Accept; Go's mime parser refuses its `@`, so the answer's Content-Type is kube-openapi's other spelling. */
export const OPENAPI_V2_PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

export function openApiV2Document(): JsonObject {
  return { swagger: '2.0', info: { title: 'orch', version: 'v2' }, paths: {}, definitions: {} };
}

/**
 * The document in protobuf, which is what kubectl asks for: gnostic's openapi_v2.Document with only
 * its `swagger` field (number 1) set. Hand-encoded: one string field does not call for a protobuf
 * library.
 */
export function openApiV2Protobuf(): Buffer {
  const swagger = Buffer.from('2.0');
  return Buffer.concat([Buffer.from([(1 << 3) | 2]), varint(swagger.length), swagger]);
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let v = value;
  while (v > 0x7f) {
    bytes.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  bytes.push(v);
  return Buffer.from(bytes);
}

