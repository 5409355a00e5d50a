/**
 * `/openapi/v2` in protobuf, which kubectl asks for (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`):
 * gnostic's `openapi.v2.Document` (google/gnostic openapiv2/OpenAPIv2.proto). The messages below are
 * the subset the document uses, with gnostic's field numbers; protobufjs encodes them. Vendor
 * extensions travel as `NamedAny{name, Any{yaml}}` with the value in YAML (JSON is YAML), as
 * kube-openapi writes them and kubectl reads them.
 */
import protobuf from 'protobufjs/light.js';
import type { Schema } from '../../../../api/schema/definitions.js';

const named = (valueType: string) => ({ fields: { name: { type: 'string', id: 1 }, value: { type: valueType, id: 2 } } });

const ROOT = protobuf.Root.fromJSON({
  nested: {
    openapi: {
      nested: {
        v2: {
          nested: {
            Document: {
              fields: {
                swagger: { type: 'string', id: 1 },
                info: { type: 'Info', id: 2 },
                paths: { type: 'Paths', id: 8 },
                definitions: { type: 'Definitions', id: 9 },
              },
            },
            Info: { fields: { title: { type: 'string', id: 1 }, version: { type: 'string', id: 2 } } },
            Paths: { fields: { vendorExtension: { rule: 'repeated', type: 'NamedAny', id: 1 } } },
            Definitions: { fields: { additionalProperties: { rule: 'repeated', type: 'NamedSchema', id: 1 } } },
            NamedSchema: named('Schema'),
            NamedAny: named('Any'),
            Any: { fields: { yaml: { type: 'string', id: 2 } } },
            Properties: { fields: { additionalProperties: { rule: 'repeated', type: 'NamedSchema', id: 1 } } },
            ItemsItem: { fields: { schema: { rule: 'repeated', type: 'Schema', id: 1 } } },
            TypeItem: { fields: { value: { rule: 'repeated', type: 'string', id: 1 } } },
            AdditionalPropertiesItem: {
              oneofs: { oneof: { oneof: ['schema', 'boolean'] } },
              fields: { schema: { type: 'Schema', id: 1 }, boolean: { type: 'bool', id: 2 } },
            },
            Schema: {
              fields: {
                _ref: { type: 'string', id: 1 },
                format: { type: 'string', id: 2 },
                description: { type: 'string', id: 4 },
                required: { rule: 'repeated', type: 'string', id: 19 },
                enum: { rule: 'repeated', type: 'Any', id: 20 },
                additionalProperties: { type: 'AdditionalPropertiesItem', id: 21 },
                type: { type: 'TypeItem', id: 22 },
                items: { type: 'ItemsItem', id: 23 },
                allOf: { rule: 'repeated', type: 'Schema', id: 24 },
                properties: { type: 'Properties', id: 25 },
                vendorExtension: { rule: 'repeated', type: 'NamedAny', id: 31 },
              },
            },
          },
        },
      },
    },
  },
});

const DocumentType = ROOT.lookupType('openapi.v2.Document');

function yamlAny(value: unknown): { yaml: string } {
  return { yaml: `${JSON.stringify(value)}\n` };
}

function toMessage(schema: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (schema.$ref) out._ref = schema.$ref;
  if (schema.format) out.format = schema.format;
  if (schema.description) out.description = schema.description;
  if (schema.required?.length) out.required = schema.required;
  if (schema.enum?.length) out.enum = schema.enum.map(yamlAny);
  if (schema.type) out.type = { value: [schema.type] };
  if (schema.items) out.items = { schema: [toMessage(schema.items)] };
  if (schema.allOf) out.allOf = schema.allOf.map(toMessage);
  if (schema.additionalProperties !== undefined) {
    out.additionalProperties = typeof schema.additionalProperties === 'boolean'
      ? { boolean: schema.additionalProperties }
      : { schema: toMessage(schema.additionalProperties) };
  }
  if (schema.properties) {
    out.properties = { additionalProperties: Object.entries(schema.properties).map(([name, value]) => ({ name, value: toMessage(value) })) };
  }
  const extensions = Object.entries(schema).filter(([key]) => key.startsWith('x-'));
  if (extensions.length) out.vendorExtension = extensions.map(([name, value]) => ({ name, value: yamlAny(value) }));
  return out;
}

/** Encodes a swagger 2.0 document (definitions and info; paths are left empty). */
export function encodeOpenApiV2(document: { swagger: string; info: { title: string; version: string }; definitions: Record<string, Schema> }): Buffer {
  const message = DocumentType.fromObject({
    swagger: document.swagger,
    info: document.info,
    paths: {},
    definitions: { additionalProperties: Object.entries(document.definitions).map(([name, value]) => ({ name, value: toMessage(value) })) },
  });
  return Buffer.from(DocumentType.encode(message).finish());
}

/** Decodes what encodeOpenApiV2 wrote (tests). */
export function decodeOpenApiV2(bytes: Uint8Array): Record<string, unknown> {
  return DocumentType.toObject(DocumentType.decode(bytes), { defaults: false }) as Record<string, unknown>;
}
