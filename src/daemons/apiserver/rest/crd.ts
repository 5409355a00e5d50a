/**
 * CustomResourceDefinitions: their validation and status (NamesAccepted, Established, set at
 * once since names are checked synchronously here), the resources they serve, and an informer
 * that keeps the resource registry in step with the stored CRDs (so every API server behind one
 * store serves the same custom resources, also after a restart).
 */
import { ALL_VERBS, scaleSub, statusSub, type ResourceInfo, type ResourceRegistry } from '../../../api/resources.js';
import { field, type FieldError } from '../../../api/status.js';
import { nameProblems } from '../../../api/validation.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../patch/types.js';
import type { Store, WatchHandle } from '../storage/store.js';
import { rfc3339, stringAt, valueAt } from './objects.js';
import type { Strategy } from './strategies.js';

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

/** The resources a CRD serves: one per served version. */
export function crdResources(crd: JsonObject): ResourceInfo[] {
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

/** The status a CRD gets once its names are checked: accepted and established. */
export function establishedStatus(crd: JsonObject, previous: JsonValue | undefined, now: Date): JsonObject {
  const time = rfc3339(now);
  const old = isJsonObject(previous) ? previous : {};
  const oldConditions = Array.isArray(old.conditions) ? old.conditions.filter(isJsonObject) : [];
  const condition = (type: string, reason: string, message: string): JsonObject => {
    const existing = oldConditions.find((c) => c.type === type && c.status === 'True');
    return { type, status: 'True', lastTransitionTime: typeof existing?.lastTransitionTime === 'string' ? existing.lastTransitionTime : time, reason, message };
  };
  const storage = versionsOf(crd).find((v) => v.storage)?.name;
  const stored = new Set([...(stringList(old.storedVersions) ?? []), ...(storage ? [storage] : [])]);
  return {
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
    ],
    acceptedNames: structuredClone(valueAt(crd, 'spec', 'names') ?? {}) as JsonObject,
    storedVersions: [...stored],
  };
}

/** The CRD strategy: the generic one plus CRD validation, name defaults and the established status. */
export function crdStrategy(base: Strategy, clock: { now(): Date }): Strategy {
  return {
    ...base,
    prepareForCreate(object) {
      base.prepareForCreate(object);
      defaultNames(object);
      object.status = establishedStatus(object, undefined, clock.now());
    },
    prepareForUpdate(object, previous) {
      base.prepareForUpdate(object, previous);
      defaultNames(object);
      object.status = establishedStatus(object, previous.status, clock.now());
    },
    validate: (object) => [...base.validate(object), ...validateCrd(object)],
    validateUpdate: (object, previous) => [...base.validateUpdate(object, previous), ...validateCrd(object)],
  };
}

/** Keeps the registry's custom resources in step with the CRDs in the store. */
export class CrdInformer {
  private synced = false;
  private handle?: WatchHandle;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;

  constructor(
    private readonly store: Store,
    private readonly registry: ResourceRegistry,
    /** The key prefix of CRDs (`/registry/apiextensions.orch.io/customresourcedefinitions/`). */
    private readonly prefix: string,
    private readonly retryMs = 1000,
  ) {}

  hasSynced(): boolean {
    return this.synced;
  }

  /** Serves (or stops serving) a CRD's resources, from a stored object or at once after a write. */
  apply(crd: JsonObject): void {
    const name = stringAt(crd, 'metadata', 'name') ?? '';
    const infos = crdResources(crd);
    if (infos.length === 0) this.registry.removeCustom(name);
    else this.registry.setCustom(name, infos, versionsOf(crd).filter((v) => v.served).map((v) => v.name));
  }

  remove(name: string): void {
    this.registry.removeCustom(name);
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
