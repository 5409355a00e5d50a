/**
 * The OpenAPI of a custom resource (upstream's apiextensions-apiserver/pkg/controller/openapi
 * builder): a CRD version's structural schema as the definitions `kubectl explain` and
 * client-side validation read, in the v3 form (components.schemas) and the v2 form
 * (definitions, without what Swagger 2.0 cannot say: nullable, anyOf/oneOf/allOf/not, and the
 * type of int-or-string fields), each with apiVersion, kind, metadata and the
 * x-kubernetes-group-version-kind extension, plus the list kind. Pure.
 */
import { isJsonObject, type JsonObject, type JsonValue } from '../../patch/types.js';

export interface CrdOpenApi {
  /** Definition names (`com.example.v1.Widget`) to schemas, OpenAPI v3 form. */
  v3: Record<string, JsonObject>;
  /** The same in Swagger 2.0 form. */
  v2: Record<string, JsonObject>;
}

export interface CrdOpenApiOptions {
  /** References to ObjectMeta and ListMeta definitions, when the document has them; inline stubs otherwise. */
  objectMetaRef?: { v2: string; v3: string };
  listMetaRef?: { v2: string; v3: string };
}

/** Upstream's definition naming: the group reversed, then version and kind (`example.com/v1 Widget` -> `com.example.v1.Widget`). */
export function definitionName(group: string, version: string, kind: string): string {
  return [...group.split('.').reverse(), version, kind].join('.');
}

const API_VERSION_DOC = 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DOC = 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const METADATA_DOC = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DOC = 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#lists-and-simple-lists';

/** A custom resource's schema without what Swagger 2.0 cannot express (upstream's v2 conversion), for /openapi/v2. */
export function swagger2Schema<T>(schema: T): T {
  return toV2(schema as unknown as JsonValue) as unknown as T;
}

function toV2(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(toV2);
  if (!isJsonObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    if (['anyOf', 'oneOf', 'allOf', 'not', 'nullable', 'x-kubernetes-validations'].includes(key)) continue;
    if (key === 'properties' && isJsonObject(child)) {
      out.properties = Object.fromEntries(Object.entries(child).map(([k, v]) => [k, toV2(v)]));
      continue;
    }
    out[key] = key === 'default' || key === 'enum' || key === 'example' ? child : toV2(child);
  }
  // Untyped in v2: int-or-string and nullable values (kubectl's validation would refuse the other type or null).
  if (value['x-kubernetes-int-or-string'] === true || value.nullable === true) delete out.type;
  return out;
}

/** The definitions of one version of a CRD; undefined when the version has no schema. */
export function crdOpenApi(crd: JsonObject, version: string, options: CrdOpenApiOptions = {}): CrdOpenApi | undefined {
  const spec = isJsonObject(crd.spec) ? crd.spec : {};
  const names = isJsonObject(spec.names) ? spec.names : {};
  const group = typeof spec.group === 'string' ? spec.group : '';
  const kind = typeof names.kind === 'string' ? names.kind : '';
  const listKind = typeof names.listKind === 'string' ? names.listKind : `${kind}List`;
  const v = (Array.isArray(spec.versions) ? spec.versions : []).find((x) => isJsonObject(x) && x.name === version);
  const schema = isJsonObject(v) && isJsonObject(v.schema) && isJsonObject(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : undefined;
  if (!schema) return undefined;
  const name = definitionName(group, version, kind);
  const listName = definitionName(group, version, listKind);
  const gvk = (k: string): JsonValue => [{ group, kind: k, version }];

  const build = (form: 'v2' | 'v3'): Record<string, JsonObject> => {
    const ref = (target: string) => (form === 'v3' ? `#/components/schemas/${target}` : `#/definitions/${target}`);
    const metaRef = options.objectMetaRef?.[form];
    const listMetaRef = options.listMetaRef?.[form];
    const metadata: JsonObject = metaRef
      ? (form === 'v3' ? { allOf: [{ $ref: metaRef }], default: {}, description: METADATA_DOC } : { $ref: metaRef, description: METADATA_DOC })
      : { type: 'object', description: METADATA_DOC };
    const body = structuredClone(schema);
    const properties = isJsonObject(body.properties) ? body.properties : {};
    const object: JsonObject = {
      ...body,
      type: 'object',
      properties: {
        apiVersion: { type: 'string', description: API_VERSION_DOC },
        kind: { type: 'string', description: KIND_DOC },
        metadata,
        ...Object.fromEntries(Object.entries(properties).filter(([k]) => !['apiVersion', 'kind', 'metadata'].includes(k))),
      },
      'x-kubernetes-group-version-kind': gvk(kind),
    };
    const list: JsonObject = {
      description: `${listKind} is a list of ${kind}`,
      type: 'object',
      required: ['items'],
      properties: {
        apiVersion: { type: 'string', description: API_VERSION_DOC },
        items: { type: 'array', description: `List of ${(names.plural as string) ?? ''}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`, items: { $ref: ref(name) } },
        kind: { type: 'string', description: KIND_DOC },
        metadata: listMetaRef ? { $ref: listMetaRef, description: LIST_METADATA_DOC } : { type: 'object', description: LIST_METADATA_DOC },
      },
      'x-kubernetes-group-version-kind': gvk(listKind),
    };
    return form === 'v3' ? { [name]: object, [listName]: list } : { [name]: toV2(object) as JsonObject, [listName]: list };
  };
  return { v3: build('v3'), v2: build('v2') };
}
