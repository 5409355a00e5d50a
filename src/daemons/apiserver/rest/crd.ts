/**
 * CustomResourceDefinitions: their validation and status (NamesAccepted, Established, set at
 * once since names are checked synchronously here), the resources they serve, and an informer
 * that keeps the resource registry in step with the stored CRDs (so every API server behind one
 * store serves the same custom resources, also after a restart).
 */
import { ALL_VERBS, scaleSub, statusSub, type ResourceInfo, type ResourceRegistry } from '../../../api/resources.js';
import { field, type FieldError } from '../../../api/status.js';
import { nameProblems } from '../../../api/validation.js';
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../../../patch/types.js';
import type { Store, WatchHandle } from '../storage/store.js';
import { rfc3339, stringAt, valueAt } from './objects.js';
import type { Strategy } from './strategies.js';
import { CustomResourceRuntime } from './custom-resources.js';
import type { ServiceResolver } from './crd-conversion.js';
import { structuralProblems, type Schema } from '../../../api/structural/schema.js';
import { validateValueAt } from '../../../api/structural/validate.js';
import { JsonPath } from '../../../printers/jsonpath.js';
import type { SchemaRegistry } from './validation/index.js';
import type { Schema as DefinitionSchema } from '../../../api/schema/definitions.js';

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: { status?: unknown; scale?: unknown };
  openAPIV3Schema?: JsonObject;
}

function versionsOf(crd: JsonObject): CrdVersion[] {
  const versions = valueAt(crd, 'spec', 'versions');
  return (Array.isArray(versions) ? versions : []).filter(isJsonObject).map((v) => ({
    name: typeof v.name === 'string' ? v.name : '',
    served: v.served === true,
    storage: v.storage === true,
    subresources: isJsonObject(v.subresources) ? (v.subresources as CrdVersion['subresources']) : undefined,
    openAPIV3Schema: isJsonObject(v.schema) && isJsonObject(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : undefined,
  }));
}

function stringList(value: JsonValue | undefined): string[] | undefined {
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === 'string') : undefined;
}

/** Whether a CRD's names were accepted (a CRD whose names conflict is not served). */
function namesAccepted(crd: JsonObject): boolean {
  const conditions = valueAt(crd, 'status', 'conditions');
  const accepted = Array.isArray(conditions) ? conditions.find((c) => isJsonObject(c) && c.type === 'NamesAccepted') : undefined;
  return !isJsonObject(accepted) || accepted.status !== 'False';
}

/** The resources a CRD serves: one per served version. */
export function crdResources(crd: JsonObject): ResourceInfo[] {
  if (!namesAccepted(crd)) return [];
  const group = stringAt(crd, 'spec', 'group') ?? '';
  const plural = stringAt(crd, 'spec', 'names', 'plural') ?? '';
  const kind = stringAt(crd, 'spec', 'names', 'kind') ?? '';
  const singular = stringAt(crd, 'spec', 'names', 'singular') || kind.toLowerCase();
  const namespaced = stringAt(crd, 'spec', 'scope') !== 'Cluster';
  return versionsOf(crd)
    .filter((v) => v.served)
    .map((v) => ({
      group,
      version: v.name,
      kind,
      plural,
      singular,
      namespaced,
      verbs: [...ALL_VERBS],
      shortNames: stringList(valueAt(crd, 'spec', 'names', 'shortNames')),
      categories: stringList(valueAt(crd, 'spec', 'names', 'categories')),
      subresources: [...(v.subresources?.status !== undefined ? [statusSub(kind)] : []), ...(v.subresources?.scale !== undefined ? [scaleSub()] : [])],
      storagePrefix: `${group}/${plural}`,
      custom: true,
      ...(v.openAPIV3Schema ? { openAPIV3Schema: v.openAPIV3Schema } : {}),
    }));
}

/** Validation of a CRD's names and versions (the rules clients hit; no OpenAPI schema checks). */
export function validateCrd(crd: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const group = stringAt(crd, 'spec', 'group') ?? '';
  const plural = stringAt(crd, 'spec', 'names', 'plural') ?? '';
  const kind = stringAt(crd, 'spec', 'names', 'kind') ?? '';
  const name = stringAt(crd, 'metadata', 'name') ?? '';
  if (name !== `${plural}.${group}`) errors.push(field.invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  if (!group) errors.push(field.required('spec.group'));
  else if (!group.includes('.')) errors.push(field.invalid('spec.group', group, 'should be a domain with at least one dot'));
  else for (const p of nameProblems(group, 'subdomain')) errors.push(field.invalid('spec.group', group, p));
  if (!plural) errors.push(field.required('spec.names.plural'));
  else for (const p of nameProblems(plural, 'label')) errors.push(field.invalid('spec.names.plural', plural, p));
  if (!kind) errors.push(field.required('spec.names.kind'));
  const scope = stringAt(crd, 'spec', 'scope');
  if (scope !== 'Namespaced' && scope !== 'Cluster') {
    errors.push(scope ? field.notSupported('spec.scope', scope, ['Cluster', 'Namespaced']) : field.required('spec.scope'));
  }
  const versions = versionsOf(crd);
  if (versions.length === 0) errors.push(field.invalid('spec.versions', [], 'must have exactly one version marked as storage version'));
  else {
    versions.forEach((v, i) => {
      if (!v.name) errors.push(field.required(`spec.versions[${i}].name`));
      else for (const p of nameProblems(v.name, 'label')) errors.push(field.invalid(`spec.versions[${i}].name`, v.name, p));
    });
    const storage = versions.filter((v) => v.storage).length;
    if (storage !== 1) {
      errors.push(field.invalid('spec.versions', valueAt(crd, 'spec', 'versions'), 'must have exactly one version marked as storage version'));
    }
    if (!versions.some((v) => v.served)) errors.push(field.invalid('spec.versions', valueAt(crd, 'spec', 'versions'), 'must have at least one served version'));
    versions.forEach((v, i) => {
      if (v.name && versions.findIndex((o) => o.name === v.name) < i) errors.push(field.duplicate(`spec.versions[${i}].name`, v.name));
    });
  }
  if (valueAt(crd, 'spec', 'preserveUnknownFields') === true) {
    errors.push(field.invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }
  errors.push(...validateVersions(crd), ...validateConversion(crd));
  return errors;
}

const COLUMN_TYPES = ['integer', 'number', 'string', 'boolean', 'date'];

/** Per version: the schema (structural, valid defaults, compiling CEL rules), printer columns, subresources, selectable fields. */
function validateVersions(crd: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const versions = valueAt(crd, 'spec', 'versions');
  (Array.isArray(versions) ? versions : []).forEach((raw, i) => {
    if (!isJsonObject(raw)) return;
    const at = `spec.versions[${i}]`;
    const schema = valueAt(raw, 'schema', 'openAPIV3Schema');
    if (!isJsonObject(schema)) errors.push(field.required(`${at}.schema.openAPIV3Schema`, 'schemas are required'));
    else {
      const structural = structuralProblems(schema as unknown as Schema, `${at}.schema.openAPIV3Schema`);
      errors.push(...structural);
      if (structural.length === 0) errors.push(...defaultProblems(schema as unknown as Schema, `${at}.schema.openAPIV3Schema`));
    }
    const columns = Array.isArray(raw.additionalPrinterColumns) ? raw.additionalPrinterColumns : [];
    columns.forEach((c, j) => {
      const cat = `${at}.additionalPrinterColumns[${j}]`;
      if (!isJsonObject(c)) return;
      if (!c.name) errors.push(field.required(`${cat}.name`));
      if (!c.type) errors.push(field.required(`${cat}.type`));
      else if (!COLUMN_TYPES.includes(String(c.type))) errors.push(field.notSupported(`${cat}.type`, c.type, COLUMN_TYPES));
      if (!c.jsonPath) errors.push(field.required(`${cat}.jsonPath`));
      else if (!jsonPathValid(String(c.jsonPath))) errors.push(field.invalid(`${cat}.jsonPath`, c.jsonPath, 'must be a simple json path'));
    });
    const scale = valueAt(raw, 'subresources', 'scale');
    if (isJsonObject(scale)) {
      const sat = `${at}.subresources.scale`;
      const spec = scale.specReplicasPath;
      if (typeof spec !== 'string' || !spec) errors.push(field.required(`${sat}.specReplicasPath`));
      else if (!spec.startsWith('.spec.')) errors.push(field.invalid(`${sat}.specReplicasPath`, spec, 'should be a json path under .spec'));
      const status = scale.statusReplicasPath;
      if (typeof status !== 'string' || !status) errors.push(field.required(`${sat}.statusReplicasPath`));
      else if (!status.startsWith('.status.')) errors.push(field.invalid(`${sat}.statusReplicasPath`, status, 'should be a json path under .status'));
      const selector = scale.labelSelectorPath;
      if (typeof selector === 'string' && selector && !selector.startsWith('.spec.') && !selector.startsWith('.status.')) {
        errors.push(field.invalid(`${sat}.labelSelectorPath`, selector, 'should be a json path under either .spec or .status'));
      }
    }
    const selectable = Array.isArray(raw.selectableFields) ? raw.selectableFields : [];
    selectable.forEach((f, j) => {
      const path = isJsonObject(f) ? f.jsonPath : undefined;
      if (typeof path !== 'string' || !path) errors.push(field.required(`${at}.selectableFields[${j}].jsonPath`));
      else if (!jsonPathValid(path)) errors.push(field.invalid(`${at}.selectableFields[${j}].jsonPath`, path, 'must be a valid JSONPath'));
    });
    if (selectable.length > 8) errors.push({ type: 'FieldValueTooMany', field: `${at}.selectableFields`, value: selectable.length, detail: 'must have at most 8 items' });
  });
  if (errors.length === 0) errors.push(...new CustomResourceRuntime(crd).problems);
  return errors;
}

function jsonPathValid(path: string): boolean {
  if (!path.startsWith('.')) return false;
  try {
    new JsonPath(`{${path}}`);
    return true;
  } catch {
    return false;
  }
}

/** Every default must be valid against its own schema (upstream validates them at CRD creation). */
function defaultProblems(schema: Schema, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const walk = (s: Schema, p: string): void => {
    if (s.default !== undefined) {
      for (const e of validateValueAt(s.default, s, `${p}.default`)) errors.push(e);
    }
    for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${p}.properties[${k}]`);
    if (s.items) walk(s.items, `${p}.items`);
    if (typeof s.additionalProperties === 'object') walk(s.additionalProperties, `${p}.additionalProperties`);
  };
  walk(schema, path);
  return errors;
}

function validateConversion(crd: JsonObject): FieldError[] {
  const conversion = valueAt(crd, 'spec', 'conversion');
  if (!isJsonObject(conversion)) return [];
  const strategy = conversion.strategy;
  if (strategy !== 'None' && strategy !== 'Webhook') return [field.notSupported('spec.conversion.strategy', strategy ?? '', ['None', 'Webhook'])];
  if (strategy === 'None') {
    return conversion.webhook !== undefined ? [field.forbidden('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook')] : [];
  }
  const errors: FieldError[] = [];
  const webhook = conversion.webhook;
  if (!isJsonObject(webhook) || !isJsonObject(webhook.clientConfig)) return [field.required('spec.conversion.webhook', 'required when strategy is set to Webhook')];
  const config = webhook.clientConfig;
  if (config.url === undefined && config.service === undefined) {
    errors.push(field.required('spec.conversion.webhook.clientConfig', 'exactly one of url or service is required'));
  } else if (config.url !== undefined && config.service !== undefined) {
    errors.push(field.required('spec.conversion.webhook.clientConfig', 'exactly one of url or service is required'));
  } else if (typeof config.url === 'string') {
    let url: URL | undefined;
    try {
      url = new URL(config.url);
    } catch {
      errors.push(field.invalid('spec.conversion.webhook.clientConfig.url', config.url, 'host must be specified'));
    }
    if (url && url.protocol !== 'https:') errors.push(field.invalid('spec.conversion.webhook.clientConfig.url', config.url, "'https' is the only allowed URL scheme"));
  }
  const reviews = Array.isArray(webhook.conversionReviewVersions) ? webhook.conversionReviewVersions : [];
  if (reviews.length === 0) errors.push(field.required('spec.conversion.webhook.conversionReviewVersions', 'must contain at least one of v1, v1beta1'));
  else if (!reviews.includes('v1')) {
    errors.push(field.invalid('spec.conversion.webhook.conversionReviewVersions', reviews, 'must include at least one of v1 (orch sends ConversionReview v1)'));
  }
  return errors;
}

/** Defaults upstream fills in: singular and listKind names. */
function defaultNames(crd: JsonObject): void {
  const names = valueAt(crd, 'spec', 'names');
  if (!isJsonObject(names)) return;
  if (!names.singular && typeof names.kind === 'string') names.singular = names.kind.toLowerCase();
  if (!names.listKind && typeof names.kind === 'string') names.listKind = `${names.kind}List`;
}

/**
 * Names a CRD may not take because another CRD of its group has them (upstream's naming
 * controller): plural and singular, kind and listKind, short names. An empty list: no conflict.
 */
export function nameConflicts(crd: JsonObject, others: JsonObject[]): string[] {
  const group = stringAt(crd, 'spec', 'group');
  const name = stringAt(crd, 'metadata', 'name');
  const usedNames = new Set<string>();
  const usedShort = new Set<string>();
  const usedKinds = new Set<string>();
  for (const other of others) {
    if (stringAt(other, 'spec', 'group') !== group || stringAt(other, 'metadata', 'name') === name) continue;
    const accepted = valueAt(other, 'status', 'acceptedNames');
    if (!isJsonObject(accepted)) continue;
    for (const key of ['plural', 'singular']) if (typeof accepted[key] === 'string') usedNames.add(accepted[key] as string);
    for (const key of ['kind', 'listKind']) if (typeof accepted[key] === 'string') usedKinds.add(accepted[key] as string);
    for (const s of stringList(accepted.shortNames) ?? []) usedShort.add(s);
  }
  const names = valueAt(crd, 'spec', 'names');
  if (!isJsonObject(names)) return [];
  const conflicts: string[] = [];
  for (const key of ['plural', 'singular']) {
    const v = names[key];
    if (typeof v === 'string' && usedNames.has(v)) conflicts.push(`${JSON.stringify(v)} is already in use`);
  }
  for (const s of stringList(names.shortNames) ?? []) if (usedShort.has(s)) conflicts.push(`${JSON.stringify(s)} is already in use`);
  for (const key of ['kind', 'listKind']) {
    const v = names[key];
    if (typeof v === 'string' && usedKinds.has(v)) conflicts.push(`${JSON.stringify(v)} is already in use`);
  }
  return conflicts;
}

/** The status a CRD gets once its names are checked: accepted and established, or refused for conflicts. */
export function establishedStatus(crd: JsonObject, previous: JsonValue | undefined, now: Date, conflicts: string[] = []): JsonObject {
  const time = rfc3339(now);
  const old = isJsonObject(previous) ? previous : {};
  const oldConditions = Array.isArray(old.conditions) ? old.conditions.filter(isJsonObject) : [];
  const condition = (type: string, reason: string, message: string, status = 'True'): JsonObject => {
    const existing = oldConditions.find((c) => c.type === type && c.status === status);
    return { type, status, lastTransitionTime: typeof existing?.lastTransitionTime === 'string' ? existing.lastTransitionTime : time, reason, message };
  };
  const storage = versionsOf(crd).find((v) => v.storage)?.name;
  const stored = new Set([...(stringList(old.storedVersions) ?? []), ...(storage ? [storage] : [])]);
  if (conflicts.length) {
    return {
      conditions: [
        condition('NamesAccepted', 'NameConflict', conflicts.join(', '), 'False'),
        condition('Established', 'NotAccepted', 'not all names are accepted', 'False'),
      ],
      acceptedNames: isJsonObject(old.acceptedNames) ? old.acceptedNames : { plural: '', kind: '' },
      storedVersions: [...stored],
    };
  }
  return {
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
    ],
    acceptedNames: structuredClone(valueAt(crd, 'spec', 'names') ?? {}) as JsonObject,
    storedVersions: [...stored],
  };
}

/** What a CRD update may not change: group and scope, and versions still stored. */
function validateCrdUpdate(crd: JsonObject, previous: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  for (const key of ['group', 'scope']) {
    const now = stringAt(crd, 'spec', key);
    if (now !== stringAt(previous, 'spec', key)) errors.push(field.invalid(`spec.${key}`, now ?? '', 'field is immutable'));
  }
  const versions = new Set(versionsOf(crd).map((v) => v.name));
  (stringList(valueAt(crd, 'status', 'storedVersions')) ?? []).forEach((stored, i) => {
    if (!versions.has(stored)) errors.push(field.invalid(`status.storedVersions[${i}]`, stored, 'must appear in spec.versions'));
  });
  return errors;
}

/** The CRD strategy: the generic one plus CRD validation, name defaults and the established status. */
export function crdStrategy(base: Strategy, clock: { now(): Date }, others: () => JsonObject[] = () => []): Strategy {
  return {
    ...base,
    prepareForCreate(object) {
      base.prepareForCreate(object);
      defaultNames(object);
      object.status = establishedStatus(object, undefined, clock.now(), nameConflicts(object, others()));
    },
    prepareForUpdate(object, previous) {
      base.prepareForUpdate(object, previous);
      defaultNames(object);
      object.status = establishedStatus(object, previous.status, clock.now(), nameConflicts(object, others()));
    },
    validate: (object) => [...base.validate(object), ...validateCrd(object)],
    validateUpdate: (object, previous) => [...base.validateUpdate(object, previous), ...validateCrd(object), ...validateCrdUpdate(object, previous)],
  };
}

/** Keeps the registry's custom resources in step with the CRDs in the store. */
export class CrdInformer {
  private synced = false;
  private handle?: WatchHandle;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  private readonly crds = new Map<string, JsonObject>();
  private readonly runtimes = new Map<string, CustomResourceRuntime>();

  constructor(
    private readonly store: Store,
    private readonly registry: ResourceRegistry,
    /** The key prefix of CRDs (`/registry/apiextensions.orch.io/customresourcedefinitions/`). */
    private readonly prefix: string,
    private readonly retryMs = 1000,
    /** Where the served versions' schemas are published (field validation, /openapi, kubectl explain). */
    private readonly schemas?: SchemaRegistry,
    /** Finds a Service's endpoint, for conversion webhooks named by a service reference. */
    private readonly resolveService?: ServiceResolver,
  ) {}

  hasSynced(): boolean {
    return this.synced;
  }

  /** Serves (or stops serving) a CRD's resources, from a stored object or at once after a write. */
  apply(crd: JsonObject): void {
    const name = stringAt(crd, 'metadata', 'name') ?? '';
    this.crds.set(name, crd);
    // Compiling CEL rules is the costly part: a CRD whose spec did not change keeps its runtime.
    const key = `${stringAt(crd, 'spec', 'group')}/${stringAt(crd, 'spec', 'names', 'plural')}`;
    const existing = this.runtimes.get(key);
    const runtime = existing && jsonEqual(existing.crd.spec, crd.spec) ? existing : new CustomResourceRuntime(crd, this.resolveService);
    this.runtimes.set(key, runtime);
    const infos = crdResources(crd);
    const kinds = infos.flatMap((info) => {
      const schema = runtime.versions.get(info.version)?.schema;
      return schema ? [{ group: info.group, version: info.version, kind: info.kind, plural: info.plural, namespaced: info.namespaced, schema: schema as unknown as DefinitionSchema }] : [];
    });
    if (kinds.length) this.schemas?.setCustom(name, kinds);
    else this.schemas?.removeCustom(name);
    if (infos.length === 0) this.registry.removeCustom(name);
    else this.registry.setCustom(name, infos, versionsOf(crd).filter((v) => v.served).map((v) => v.name));
  }

  remove(name: string): void {
    const crd = this.crds.get(name);
    if (crd) this.runtimes.delete(`${stringAt(crd, 'spec', 'group')}/${stringAt(crd, 'spec', 'names', 'plural')}`);
    this.crds.delete(name);
    this.schemas?.removeCustom(name);
    this.registry.removeCustom(name);
  }

  /** The known CRDs (for name conflicts). */
  all(): JsonObject[] {
    return [...this.crds.values()];
  }

  /** The compiled CRD serving a custom resource. */
  runtime(group: string, plural: string): CustomResourceRuntime | undefined {
    return this.runtimes.get(`${group}/${plural}`);
  }

  /** Lists the CRDs, then follows the store's watch; retries while the store is unreachable. */
  async start(): Promise<void> {
    this.stopped = false;
    for (;;) {
      try {
        const listed = await this.store.list(this.prefix);
        for (const kv of listed.items) this.apply(JSON.parse(kv.value) as JsonObject);
        this.synced = true;
        this.follow(listed.revision);
        return;
      } catch (error) {
        if (this.stopped) return;
        await new Promise((resolve) => (this.retryTimer = setTimeout(resolve, this.retryMs)));
        if (this.stopped) return;
      }
    }
  }

  private follow(revision: number): void {
    this.handle = this.store.watch(
      this.prefix,
      revision,
      (event) => {
        if (event.type === 'PUT' && event.value) this.apply(JSON.parse(event.value) as JsonObject);
        else if (event.type === 'DELETE') this.remove(event.key.slice(this.prefix.length));
      },
      () => {
        // The watch broke (compaction, store restart): list again from scratch.
        this.handle?.close();
        if (!this.stopped) void this.start();
      },
    );
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.handle?.close();
  }
}
