/**
 * Serving custom resources the way upstream's apiextensions-apiserver does, one CRD at a time:
 * per version its structural schema (pruning, defaulting on write and on read, validation, CEL
 * rules), printer columns, selectable fields, status and scale subresources and deprecation
 * warning; across versions the conversion (`None`: the apiVersion is rewritten; `Webhook`: a
 * ConversionReview to the CRD's webhook). The registry store calls in through ResourceHooks.
 */
import { compileValidator, type CompiledValidator } from '../../../api/cel/rules.js';
import type { ResourceInfo } from '../../../api/resources.js';
import { badRequest, field, internalError, invalid, type FieldError } from '../../../api/status.js';
import { applyDefaults } from '../../../api/structural/defaults.js';
import { prune } from '../../../api/structural/prune.js';
import { asSchema, type Schema } from '../../../api/structural/schema.js';
import { validateAgainstSchema } from '../../../api/structural/validate.js';
import { humanDuration, type TableOptions } from '../../../api/table.js';
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../../../patch/types.js';
import { JsonPath } from '../../../printers/jsonpath.js';
import { convertWithWebhook, type ServiceResolver, type WebhookClientConfig } from './crd-conversion.js';
import { deepCopy, metadataOf, stringAt, valueAt } from './objects.js';
import type { Strategy } from './strategies.js';

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface ScaleSpec {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface CustomVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated: boolean;
  deprecationWarning?: string;
  schema?: Schema;
  validator?: CompiledValidator;
  columns: PrinterColumn[];
  selectableFields: string[];
  status: boolean;
  scale?: ScaleSpec;
}

/** What the generic registry store asks of a resource beyond its strategy (custom resources answer). */
export interface ResourceHooks {
  /** Work on each object as read from storage, synchronous (None conversion, defaults). */
  decode(object: JsonObject): JsonObject;
  /** Objects as read, into the served version, when that needs I/O (conversion webhooks); undefined otherwise. */
  fromStorage?(objects: JsonObject[]): Promise<JsonObject[]>;
  /** An object about to be written, into the storage version. */
  toStorage(object: JsonObject): Promise<JsonObject>;
  /** The Table of objects (printer columns). */
  table(objects: JsonObject[], listMetadata: JsonObject, options: TableOptions): JsonObject;
  /** The scale subresource's mapping, when the version has one. */
  toScale?(object: JsonObject): JsonObject;
  applyScale?(object: JsonObject, scale: unknown, name: string): JsonObject;
  /** The Warning a request to this version carries (deprecated versions). */
  warning?: string;
}

const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

function list<T>(value: JsonValue | undefined, map: (v: JsonObject) => T): T[] {
  return Array.isArray(value) ? value.filter(isJsonObject).map(map) : [];
}

/** Kubernetes' version priority (v1 > v1beta2 > v1beta1 > v1alpha1 > anything else), as upstream sorts versions. */
export function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number, string] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0, v];
    return [1, Number(m[1]), m[2] === 'alpha' ? 1 : m[2] === 'beta' ? 2 : 3, m[3] ?? ''];
  };
  const [x, y] = [rank(a), rank(b)];
  if (x[0] !== y[0]) return x[0] - y[0];
  if (x[0] === 0) return b.localeCompare(a);
  if (x[2] !== y[2]) return x[2] - y[2];
  if (x[1] !== y[1]) return x[1] - y[1];
  return Number(x[3] || 0) - Number(y[3] || 0);
}

/** A JSONPath of a CRD (`.spec.replicas`) as upstream evaluates it: `{.spec.replicas}`, missing keys allowed. */
function jsonPathOf(path: string): JsonPath | undefined {
  try {
    return new JsonPath(`{${path}}`).setAllowMissingKeys(true);
  } catch {
    return undefined;
  }
}

function firstResult(path: JsonPath | undefined, object: JsonObject): unknown {
  if (!path) return undefined;
  try {
    const results = path.findAll(object);
    return results[0]?.[0];
  } catch {
    return undefined;
  }
}

/** The simple dotted paths of scale subresources (`.spec.replicas`) as key lists. */
function dotted(path: string): string[] {
  return path.replace(/^\./, '').split('.').filter(Boolean);
}

function setAt(object: JsonObject, keys: string[], value: JsonValue): void {
  let node = object;
  for (const key of keys.slice(0, -1)) {
    if (!isJsonObject(node[key])) node[key] = {};
    node = node[key] as JsonObject;
  }
  node[keys.at(-1)!] = value;
}

/** One CRD, compiled for serving. */
export class CustomResourceRuntime {
  readonly group: string;
  readonly plural: string;
  readonly kind: string;
  readonly versions = new Map<string, CustomVersion>();
  readonly storageVersion: string;
  readonly strategy: 'None' | 'Webhook';
  readonly webhook?: { clientConfig: WebhookClientConfig; reviewVersions: string[] };
  /** Problems found compiling the CRD (reported by CRD validation, with CRD field paths). */
  readonly problems: FieldError[] = [];

  constructor(readonly crd: JsonObject, private readonly resolveService?: ServiceResolver) {
    this.group = stringAt(crd, 'spec', 'group') ?? '';
    this.plural = stringAt(crd, 'spec', 'names', 'plural') ?? '';
    this.kind = stringAt(crd, 'spec', 'names', 'kind') ?? '';
    const versions = valueAt(crd, 'spec', 'versions');
    const topColumns = list(valueAt(crd, 'spec', 'additionalPrinterColumns'), (c) => c);
    (Array.isArray(versions) ? versions : []).forEach((raw, i) => {
      if (!isJsonObject(raw)) return;
      const name = typeof raw.name === 'string' ? raw.name : '';
      const schema = asSchema(valueAt(raw, 'schema', 'openAPIV3Schema'));
      let validator: CompiledValidator | undefined;
      if (schema) {
        try {
          validator = compileValidator(schema, `spec.versions[${i}].schema.openAPIV3Schema`);
          this.problems.push(...validator.errors);
        } catch (error) {
          this.problems.push(field.invalid(`spec.versions[${i}].schema.openAPIV3Schema`, '', `compilation failed: ${(error as Error).message}`));
        }
      }
      const columnsRaw = Array.isArray(raw.additionalPrinterColumns) ? raw.additionalPrinterColumns.filter(isJsonObject) : topColumns;
      const columns = columnsRaw.map((c) => ({
        name: String(c.name ?? ''), type: String(c.type ?? 'string'), format: typeof c.format === 'string' ? c.format : undefined,
        description: typeof c.description === 'string' ? c.description : undefined, priority: typeof c.priority === 'number' ? c.priority : 0,
        jsonPath: String(c.jsonPath ?? c.JSONPath ?? ''),
      }));
      const scale = valueAt(raw, 'subresources', 'scale');
      this.versions.set(name, {
        name,
        served: raw.served === true,
        storage: raw.storage === true,
        deprecated: raw.deprecated === true,
        deprecationWarning: typeof raw.deprecationWarning === 'string' ? raw.deprecationWarning : undefined,
        schema,
        validator,
        columns: Array.isArray(raw.additionalPrinterColumns) || topColumns.length ? columns : [AGE_COLUMN],
        selectableFields: list(raw.selectableFields, (f) => String(f.jsonPath ?? '')).filter(Boolean),
        status: valueAt(raw, 'subresources', 'status') !== undefined,
        scale: isJsonObject(scale)
          ? {
            specReplicasPath: String(scale.specReplicasPath ?? ''),
            statusReplicasPath: String(scale.statusReplicasPath ?? ''),
            labelSelectorPath: typeof scale.labelSelectorPath === 'string' ? scale.labelSelectorPath : undefined,
          }
          : undefined,
      });
    });
    this.storageVersion = [...this.versions.values()].find((v) => v.storage)?.name ?? '';
    this.strategy = stringAt(crd, 'spec', 'conversion', 'strategy') === 'Webhook' ? 'Webhook' : 'None';
    const webhook = valueAt(crd, 'spec', 'conversion', 'webhook');
    if (this.strategy === 'Webhook' && isJsonObject(webhook) && isJsonObject(webhook.clientConfig)) {
      this.webhook = {
        clientConfig: webhook.clientConfig as unknown as WebhookClientConfig,
        reviewVersions: Array.isArray(webhook.conversionReviewVersions) ? webhook.conversionReviewVersions.filter((s): s is string => typeof s === 'string') : ['v1'],
      };
    }
  }

  apiVersion(version: string): string {
    return `${this.group}/${version}`;
  }

  /** Go's GroupVersionKind String(), as conversion errors name it. */
  gvk(version: string): string {
    return `${this.group}/${version}, Kind=${this.kind}`;
  }

  /** Upstream's default deprecation warning, or the CRD's own. */
  warningFor(version: string): string | undefined {
    const v = this.versions.get(version);
    if (!v?.deprecated) return undefined;
    if (v.deprecationWarning) return v.deprecationWarning;
    let message = `${this.group}/${version} ${this.kind} is deprecated`;
    const newer = [...this.versions.values()]
      .filter((o) => o.served && !o.deprecated && compareKubeVersions(version, o.name) < 0)
      .map((o) => o.name)
      .sort((a, b) => compareKubeVersions(b, a));
    if (newer[0]) message += `; use ${this.group}/${newer[0]} ${this.kind}`;
    return message;
  }

  /** Prunes and defaults an object of a version in place (upstream's decoding of a request body). */
  normalize(object: JsonObject, version: string): JsonObject {
    const schema = this.versions.get(version)?.schema;
    if (!schema) return object;
    prune(object, schema);
    applyDefaults(object, schema);
    return object;
  }

  /** Converts objects to a version: None rewrites apiVersion, Webhook asks the webhook for those in another version. */
  async convert(objects: JsonObject[], version: string): Promise<JsonObject[]> {
    const target = this.apiVersion(version);
    const pending = objects.filter((o) => o.apiVersion !== target);
    if (pending.length === 0) return objects;
    if (this.strategy === 'None') return objects.map((o) => (o.apiVersion === target ? o : { ...o, apiVersion: target }));
    const from = String(pending[0]!.apiVersion ?? '').split('/')[1] ?? '';
    if (!this.webhook) throw internalError(new Error(`conversion webhook for ${this.gvk(from)} failed: no webhook client configuration`));
    const converted = await convertWithWebhook(this.webhook.clientConfig, pending, target, this.gvk(from), undefined, this.resolveService);
    let next = 0;
    return objects.map((o) => (o.apiVersion === target ? o : converted[next++]!));
  }

  hooks(version: string): ResourceHooks {
    const v = this.versions.get(version);
    const schema = v?.schema;
    const target = this.apiVersion(version);
    const hooks: ResourceHooks = {
      decode: (object) => {
        if (this.strategy === 'None' || object.apiVersion === target) {
          object.apiVersion = target;
          if (schema) applyDefaults(object, schema);
        }
        return object;
      },
      toStorage: async (object) => {
        const [stored] = await this.convert([object], this.storageVersion);
        return stored!;
      },
      table: (objects, listMetadata, options) => customTable(v?.columns ?? [AGE_COLUMN], objects, listMetadata, options),
      warning: this.warningFor(version),
    };
    if (this.strategy === 'Webhook') {
      hooks.fromStorage = async (objects) => {
        const converted = await this.convert(objects, version);
        if (schema) for (const o of converted) applyDefaults(o, schema);
        return converted;
      };
    }
    if (v?.scale) {
      const scale = v.scale;
      hooks.toScale = (object) => customScale(object, scale);
      hooks.applyScale = (object, body, name) => applyCustomScale(object, body, name, scale);
    }
    return hooks;
  }

  /** The strategy of one version: the generic one plus pruning, defaulting, schema validation and CEL rules. */
  strategyFor(base: Strategy, info: ResourceInfo): Strategy {
    const v = this.versions.get(info.version);
    const schema = v?.schema;
    const selectable = (v?.selectableFields ?? []).map((path) => ({ name: path.replace(/^\./, ''), path: jsonPathOf(path) }));
    const check = (object: JsonObject, old?: JsonObject): FieldError[] => {
      if (!schema) return [];
      // Normalizing here too covers status writes, which skip prepareForUpdate (it is idempotent).
      prune(object, schema);
      applyDefaults(object, schema);
      // Validation ratcheting (upstream's CRDValidationRatcheting, on by default): an update may
      // keep a value that was already invalid; only what it changes must be valid.
      const ratchet = (errors: FieldError[]) => (old ? errors.filter((e) => !unchangedAt(e, object, old)) : errors);
      const errors = ratchet(validateAgainstSchema(object, schema));
      // CEL rules see well-typed values only: they run once the schema holds.
      if (errors.length === 0 && v?.validator?.hasRules) errors.push(...ratchet(v.validator.validate(object, old)));
      return errors;
    };
    return {
      ...base,
      prepareForCreate: (object) => {
        base.prepareForCreate(object);
        this.normalize(object, info.version);
      },
      prepareForUpdate: (object, previous) => {
        base.prepareForUpdate(object, previous);
        this.normalize(object, info.version);
      },
      validate: (object) => [...base.validate(object), ...check(object)],
      validateUpdate: (object, previous) => [...base.validateUpdate(object, previous), ...check(object, previous)],
      fields: (object) => {
        const fields = base.fields(object);
        for (const s of selectable) {
          const value = firstResult(s.path, object);
          fields[s.name] = value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
        }
        return fields;
      },
    };
  }
}

/** The value at a field error's path (`spec.items[1].name`); `parent` steps back one for Required errors. */
function valueAtPath(object: JsonValue | undefined, path: string, parent: boolean): JsonValue | undefined {
  const steps = path.match(/[^.[\]]+|\[\d+\]/g) ?? [];
  const walk = parent ? steps.slice(0, -1) : steps;
  let node: JsonValue | undefined = object;
  for (const step of walk) {
    if (step.startsWith('[')) node = Array.isArray(node) ? node[Number(step.slice(1, -1))] : undefined;
    else node = isJsonObject(node) ? node[step] : undefined;
  }
  return node;
}

/** Whether an update left the value an error is about as it was (so the error is not the update's). */
function unchangedAt(error: FieldError, object: JsonObject, old: JsonObject): boolean {
  if (!error.field) return jsonEqual(object, old);
  const parent = error.type === 'FieldValueRequired';
  const now = valueAtPath(object, error.field, parent);
  const before = valueAtPath(old, error.field, parent);
  return now !== undefined && jsonEqual(now, before);
}

/** The Table of custom objects: Name, then the version's printer columns (upstream's tableconvertor). */
export function customTable(columns: PrinterColumn[], objects: JsonObject[], listMetadata: JsonObject, options: TableOptions): JsonObject {
  const paths = columns.map((c) => jsonPathOf(c.jsonPath));
  const table: JsonObject = { kind: 'Table', apiVersion: options.apiVersion, metadata: listMetadata };
  if (!options.omitColumns) {
    table.columnDefinitions = [
      {
        name: 'Name', type: 'string', format: 'name', priority: 0,
        description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.',
      },
      ...columns.map((c) => ({
        name: c.name, type: c.type, format: c.format ?? '', priority: c.priority ?? 0,
        description: c.description ?? `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
      })),
    ];
  }
  table.rows = objects.map((object) => {
    const cells: JsonValue[] = [stringAt(object, 'metadata', 'name') ?? ''];
    columns.forEach((c, i) => {
      const value = firstResult(paths[i], object);
      cells.push(cellFor(c.type, value, paths[i], options.now));
    });
    const row: JsonObject = { cells };
    if (options.includeObject === 'Object') row.object = object;
    else if (options.includeObject !== 'None') row.object = { kind: 'PartialObjectMetadata', apiVersion: options.apiVersion, metadata: metadataOf(object) };
    return row;
  });
  return table;
}

function cellFor(type: string, value: unknown, path: JsonPath | undefined, now: Date): JsonValue {
  if (value === undefined || value === null) return null;
  switch (type) {
    case 'string':
      try {
        return path!.printValue(value);
      } catch {
        return null;
      }
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date': {
      if (typeof value !== 'string') return null;
      const at = Date.parse(value);
      return Number.isNaN(at) ? '<invalid>' : humanDuration(now.getTime() - at);
    }
    default:
      return null;
  }
}

/** The Scale of a custom object (upstream's scale subresource over the CRD's paths). */
export function customScale(object: JsonObject, scale: ScaleSpec): JsonObject {
  const meta = metadataOf(object);
  const scaleMeta: JsonObject = {};
  for (const key of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp']) if (meta[key] !== undefined) scaleMeta[key] = meta[key]!;
  const replicas = valueAt(object, ...dotted(scale.specReplicasPath));
  const statusReplicas = valueAt(object, ...dotted(scale.statusReplicasPath));
  const status: JsonObject = { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0 };
  if (scale.labelSelectorPath) {
    const selector = valueAt(object, ...dotted(scale.labelSelectorPath));
    if (typeof selector === 'string' && selector) status.selector = selector;
  }
  return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: scaleMeta, spec: { replicas: typeof replicas === 'number' ? replicas : 0 }, status };
}

/** Writes a Scale's replicas at the CRD's specReplicasPath. */
export function applyCustomScale(object: JsonObject, body: unknown, name: string, scale: ScaleSpec): JsonObject {
  if (!isJsonObject(body)) throw badRequest('the body of the request must be a Scale object');
  const scaleName = stringAt(body, 'metadata', 'name');
  if (scaleName && scaleName !== name) throw badRequest(`the name of the object (${scaleName}) does not match the name on the URL (${name})`);
  const replicas = valueAt(body, 'spec', 'replicas') ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw invalid({ group: 'autoscaling', kind: 'Scale' }, name, [field.invalid('spec.replicas', replicas, 'must be greater than or equal to 0')]);
  }
  const next = deepCopy(object);
  setAt(next, dotted(scale.specReplicasPath), replicas);
  const rv = stringAt(body, 'metadata', 'resourceVersion');
  if (rv) metadataOf(next).resourceVersion = rv;
  return next;
}
