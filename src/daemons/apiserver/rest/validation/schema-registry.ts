/**
 * Where the API server finds an object's schema, per group/version/kind: the built-in definitions
 * (src/api/schema, upstream's OpenAPI), and schemas that custom resources register at run time.
 *
 * The custom-resource hook, for the CRD controller: `setCustom(owner, kinds)` when a CRD is
 * established or changes (one entry per served version, with its structural `openAPIV3Schema` and
 * its resource names), `removeCustom(owner)` when it goes. Validation then checks those kinds'
 * objects against the schema (unknown fields, types, required), and `/openapi/v2` and `/openapi/v3`
 * publish it (kubectl explain, client-side validation). `revision` changes with every change, so
 * the documents' caches and hashes follow.
 */
import { builtinSchemas, gvkKey, type Schema } from '../../../../api/schema/definitions.js';
import type { ObjectSchema } from '../../../../api/schema/validate.js';

export interface CustomKindSchema {
  group: string;
  version: string;
  kind: string;
  /** The plural resource name and scope, for the documents' paths. */
  plural: string;
  namespaced: boolean;
  /** The version's `openAPIV3Schema` (structural; no `$ref`s). */
  schema: Schema;
}

/** A source of schemas per kind (the built-ins; a test's own). */
export interface SchemaProvider {
  schemaFor(group: string, version: string, kind: string): ObjectSchema | undefined;
}

/** The built-in definitions, for the active name set. */
export const builtinSchemaProvider: SchemaProvider = {
  schemaFor(group, version, kind) {
    const builtins = builtinSchemas();
    const name = builtins.byGvk.get(gvkKey(group, version, kind));
    if (!name) return undefined;
    let perSet = objectSchemas.get(builtins);
    if (!perSet) {
      const memo = new Map();
      const resolve = (ref: string) => builtins.definitions[ref];
      perSet = { memo, resolve, byName: new Map() };
      objectSchemas.set(builtins, perSet);
    }
    let found = perSet.byName.get(name);
    if (!found) {
      found = { root: builtins.definitions[name]!, rootName: name, resolve: perSet.resolve, memo: perSet.memo };
      perSet.byName.set(name, found);
    }
    return found;
  },
};

/** One ObjectSchema per definition and one `$ref` memo per definition set (validation runs on every write). */
const objectSchemas = new WeakMap<object, { memo: NonNullable<ObjectSchema['memo']>; resolve: (ref: string) => Schema | undefined; byName: Map<string, ObjectSchema> }>();

export class SchemaRegistry implements SchemaProvider {
  private readonly custom = new Map<string, CustomKindSchema[]>();
  private readonly customByGvk = new Map<string, CustomKindSchema>();
  private changes = 0;
  private readonly customObjectSchemas = new WeakMap<CustomKindSchema, ObjectSchema>();

  constructor(private readonly builtin: SchemaProvider | undefined = builtinSchemaProvider) {}

  private source?: () => { key: string; kinds: () => CustomKindSchema[] };
  private sourceKey = '';

  /** Increments with every custom change (documents are rebuilt and re-hashed). */
  get revision(): number {
    this.pull();
    return this.changes;
  }

  /**
   * A pulled alternative to setCustom: `source()` answers a cheap key of its current state (e.g. the
   * CRDs' names and resourceVersions) and, when the key changed, its kinds are taken (owner `source`).
   */
  setCustomSource(source: () => { key: string; kinds: () => CustomKindSchema[] }): void {
    this.source = source;
    this.sourceKey = '';
  }

  private pull(): void {
    if (!this.source) return;
    const { key, kinds } = this.source();
    if (key === this.sourceKey) return;
    this.sourceKey = key;
    const list = kinds();
    if (list.length) this.setCustom('source', list);
    else this.removeCustom('source');
  }

  /** Registers (or replaces) the kinds of one owner (a CRD's name). */
  setCustom(owner: string, kinds: CustomKindSchema[]): void {
    this.removeCustom(owner, false);
    this.custom.set(owner, kinds);
    for (const k of kinds) this.customByGvk.set(gvkKey(k.group, k.version, k.kind), k);
    this.changes++;
  }

  removeCustom(owner: string, count = true): void {
    const kinds = this.custom.get(owner);
    if (!kinds) return;
    for (const k of kinds) this.customByGvk.delete(gvkKey(k.group, k.version, k.kind));
    this.custom.delete(owner);
    if (count) this.changes++;
  }

  /** Every registered custom kind. */
  customKinds(): CustomKindSchema[] {
    this.pull();
    return [...this.custom.values()].flat();
  }

  schemaFor(group: string, version: string, kind: string): ObjectSchema | undefined {
    this.pull();
    const custom = this.customByGvk.get(gvkKey(group, version, kind));
    if (custom) {
      let found = this.customObjectSchemas.get(custom);
      if (!found) {
        found = { root: withObjectMeta(custom.schema), resolve: (ref) => builtinSchemas().definitions[ref], memo: new Map() };
        this.customObjectSchemas.set(custom, found);
      }
      return found;
    }
    return this.builtin?.schemaFor(group, version, kind);
  }
}

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** A custom resource's schema with apiVersion, kind and ObjectMeta as upstream adds them. */
function withObjectMeta(schema: Schema): Schema {
  return {
    ...schema,
    type: 'object',
    properties: {
      ...schema.properties,
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { $ref: `#/definitions/${OBJECT_META}` },
    },
  };
}
