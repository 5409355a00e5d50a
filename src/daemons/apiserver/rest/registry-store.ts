/**
 * The generic registry of one resource (upstream's registry/generic/registry.Store): objects as
 * JSON under `<prefix>/<storagePrefix>/[<namespace>/]<name>`, resourceVersion = the store's
 * modRevision, optimistic concurrency, server-set metadata, admission, dry run, managedFields,
 * graceful deletion and finalizers, and consistent paged lists.
 */
import { withResourceVersion } from './stored-json.js';
import { isStale } from '../encryption/stale.js';
import { randomUUID } from 'node:crypto';
import type { ResourceInfo } from '../../../api/resources.js';
import { groupVersionOf } from '../../../api/resources.js';
import {
  alreadyExists, badRequest, conflict, expired, field, invalid, notFound, staleConflict, successStatus, tooLargeResourceVersion,
  type GroupResource, type FieldError,
} from '../../../api/status.js';
import { updateManagedFields } from '../../../api/managed-fields.js';
import { applyTypeOf, hasStatusSubresource } from './apply.js';
import { matchesFields, matchesLabels, type FieldRequirement, type LabelRequirement } from '../../../api/selectors.js';
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../../../patch/types.js';
import { StoreCompactedError, StoreConflictError, type KeyValue, type Store, type StoreEvent, type WatchHandle } from '../storage/store.js';
import type { AdmissionAttributes, AdmissionOperation, AdmissionStage } from '../admission/chain.js';
import type { ResourceHooks } from './custom-resources.js';
import { decodeContinue, encodeContinue } from './continue-token.js';
import { CHUNK_BYTES, nextTurn, type LazyItems } from './list-stream.js';
import { fromStorage, toStorage } from './conversion.js';
import { subresourceWrite } from './partial-writes.js';
import type { ListParams } from './list-options.js';
import { deepCopy, finalizersOf, generatedName, labelsOf, metadataOf, rfc3339, stringAt, valueAt } from './objects.js';
import { strategyFor, type Strategy } from './strategies.js';
import type { Clock, RequestContext, UserInfo } from './types.js';
import type { WriteGuard } from './write-guard.js';

export interface RegistryDeps {
  store: Store;
  clock: Clock;
  /** The kvstore key prefix (`/registry`). */
  keyPrefix: string;
  admission: AdmissionStage;
  /** Conversion, defaulting on read and printing of custom resources (src/daemons/apiserver/rest/custom-resources.ts). */
  hooks?: ResourceHooks;
  /** The registry's own check of who may write (RBAC's escalation prevention), before admission. */
  guard?: WriteGuard;
  /** Errors the cluster's policy adds to the kind's validation on create and update (--allow-privileged=false). */
  policy?: (object: JsonObject) => FieldError[];
  /** --delete-collection-workers: objects of a DELETE collection deleted in parallel (default 1). */
  deleteCollectionWorkers?: number;
  /**
   * --enable-garbage-collector (default true). Off, as upstream's EnableGarbageCollection=false, a
   * delete's propagationPolicy and orphanDependents add or remove no garbage collector finalizer.
   */
  garbageCollection?: boolean;
  /** What writes of this resource take from allocators (a Service's cluster IPs and node ports). */
  allocation?: WriteAllocation;
}

/** What one write took: given back when the write fails, finished (what it gave up released) once stored. */
export interface AllocationResult {
  revert(): Promise<void>;
  commit(): Promise<void>;
}

/**
 * Upstream's BeginCreate/BeginUpdate and AfterDelete for resources that hold shared ranges: runs
 * after defaulting and before validation, may set fields (the allocated values).
 */
export interface WriteAllocation {
  beforeCreate(object: JsonObject, dryRun: boolean): Promise<AllocationResult>;
  beforeUpdate(object: JsonObject, current: JsonObject, dryRun: boolean): Promise<AllocationResult>;
  /** After the object is gone from the store. */
  afterDelete(object: JsonObject): Promise<void>;
}

export interface WriteContext {
  user: UserInfo;
  dryRun: boolean;
  fieldManager: string;
  /** `status`, `scale`, `finalize`... or empty for the main resource. */
  subresource?: string;
  /** The written object carries its managedFields already (server-side apply computed them). */
  managedFieldsComputed?: boolean;
  /** The request's authorizer, for registries that check more than the request itself (RBAC's escalate and bind). */
  authorize?: RequestContext['authorize'];
  /**
   * Field errors the schema-validation stage found (required fields; validation/index.ts), reported
   * with the kind's own validation errors in one 422 as upstream does. Set by the handler per write.
   */
  schemaErrors?: FieldError[];
  /** The request's options object admission sees (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions). */
  operationOptions?: JsonObject;
  /** Admission's warnings for the response's Warning header. */
  addWarning?(text: string): void;
  /** Admission's annotations for the request's audit event (recorded at `level` or above). */
  addAuditAnnotation?(key: string, value: string, level?: 'Metadata' | 'Request' | 'RequestResponse'): void;
  /**
   * Admission already ran on the request's own object (a Binding): the pod write that follows is
   * the registry's own and is not admitted again, as upstream's binding storage writes the pod directly.
   */
  admitted?: boolean;
}

/** The attributes admission sees for a write made with `ctx` (upstream's admission.NewAttributesRecord). */
export function admissionAttributes(
  ctx: WriteContext, operation: AdmissionOperation, resource: ResourceInfo, namespace: string, name: string, object?: JsonObject, oldObject?: JsonObject,
): AdmissionAttributes {
  const authorize = ctx.authorize;
  return {
    operation, resource, subresource: ctx.subresource ?? '', namespace, name, object, oldObject, user: ctx.user, dryRun: ctx.dryRun,
    operationOptions: ctx.operationOptions,
    addWarning: ctx.addWarning,
    addAnnotation: ctx.addAuditAnnotation,
    authorize: authorize && (async (a) => {
      const decision = await authorize({
        user: a.user ?? ctx.user, verb: a.verb, resourceRequest: a.resourceRequest, apiGroup: a.apiGroup ?? '', apiVersion: a.apiVersion ?? '',
        resource: a.resource ?? '', subresource: a.subresource ?? '', namespace: a.namespace ?? '', name: a.name ?? '', path: a.path ?? '',
      });
      return {allowed: decision.allowed, reason: decision.reason};
    }),
  };
}

/** The kind's own errors, then the schema's on fields the kind did not already report. */
function withSchemaErrors(own: FieldError[], schema: FieldError[] | undefined): FieldError[] {
  if (!schema?.length) return own;
  const seen = new Set(own.map((e) => e.field));
  return [...own, ...schema.filter((e) => !seen.has(e.field))];
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface DeleteResult {
  code: number;
  body: JsonObject;
}

export interface ListResult {
  items: JsonObject[];
  resourceVersion: string;
  continue?: string;
}

/** A list whose items are decoded on demand (RegistryStore.listLazily). */
export interface LazyListResult {
  items: LazyItems;
  resourceVersion: string;
  continue?: string;
}

/** Metadata a client cannot set: copied from storage on update, set by the server on create. */
const SERVER_METADATA = ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation', 'selfLink'];

const MAX_UPDATE_ATTEMPTS = 20;

export class RegistryStore {
  readonly strategy: Strategy;
  readonly gr: GroupResource;

  constructor(
    readonly info: ResourceInfo,
    private readonly deps: RegistryDeps,
    strategy?: Strategy,
  ) {
    this.strategy = strategy ?? strategyFor(info);
    this.gr = { group: info.group, resource: info.plural };
  }

  get apiVersion(): string {
    return groupVersionOf(this.info);
  }

  // ---------------------------------------------------------------------------------------------
  // Keys and encoding.

  /** The key prefix of a collection (all namespaces when `namespace` is empty). */
  collectionPrefix(namespace: string): string {
    const base = `${this.deps.keyPrefix}/${this.info.storagePrefix}/`;
    return this.info.namespaced && namespace ? `${base}${namespace}/` : base;
  }

  key(namespace: string, name: string): string {
    return this.info.namespaced ? `${this.collectionPrefix(namespace)}${name}` : `${this.collectionPrefix('')}${name}`;
  }

  /** The stored JSON as served: resourceVersion from the revision, apiVersion of this version (custom resources keep one storage copy for all versions). */
  decode(value: string, revision: number): JsonObject {
    const object = fromStorage(this.info, JSON.parse(value) as JsonObject);
    metadataOf(object).resourceVersion = String(revision);
    if (this.deps.hooks) return this.deps.hooks.decode(object);
    if (this.info.custom) object.apiVersion = this.apiVersion;
    return object;
  }

  /** The hooks of a custom resource's version, if any. */
  get hooks(): ResourceHooks | undefined {
    return this.deps.hooks;
  }

  /** Decoded objects in the served version, when that takes I/O (conversion webhooks). */
  async served(objects: JsonObject[]): Promise<JsonObject[]> {
    const convert = this.deps.hooks?.fromStorage;
    return convert && objects.length ? convert(objects) : objects;
  }

  /** Whether decoded objects still need `served` (watch streams convert event by event then). */
  convertsOnRead(): boolean {
    return this.deps.hooks?.fromStorage !== undefined;
  }

  /** The JSON to store for an object: in the storage version for custom resources. */
  private async encodeForStorage(object: JsonObject): Promise<string> {
    const hooks = this.deps.hooks;
    return this.encode(hooks ? await hooks.toStorage(object) : object);
  }

  private encode(served: JsonObject): string {
    // Built-ins served under several versions store one (conversion.ts); custom resources convert in encodeForStorage.
    const object = toStorage(this.info, served);
    const copy: JsonObject = { ...object, metadata: { ...metadataOf(object) } };
    delete (copy.metadata as JsonObject).resourceVersion;
    return JSON.stringify(copy);
  }

  private async read(namespace: string, name: string): Promise<{ kv: KeyValue; object: JsonObject } | undefined> {
    const kv = await this.deps.store.get(this.key(namespace, name));
    if (!kv) return undefined;
    const [object] = await this.served([this.decode(kv.value, kv.modRevision)]);
    return { kv, object: object! };
  }

  // ---------------------------------------------------------------------------------------------
  // Reads.

  /** The store's watch on this resource's keys (a watch cache, when the store is one). */
  watchStore(prefix: string, afterRevision: number, onEvent: (event: StoreEvent) => void, onError: (error: Error) => void, onProgress?: (revision: number) => void): WatchHandle {
    return this.deps.store.watch(prefix, afterRevision, onEvent, onError, onProgress);
  }

  async get(namespace: string, name: string, resourceVersion?: string): Promise<JsonObject> {
    if (resourceVersion !== undefined && resourceVersion !== '0') await this.requireNotNewerThanStore(resourceVersion);
    const found = await this.read(namespace, name);
    if (!found) throw notFound(this.gr, name);
    return found.object;
  }

  private async requireNotNewerThanStore(resourceVersion: string): Promise<number> {
    if (!/^\d+$/.test(resourceVersion)) throw badRequest(`invalid resource version: ${JSON.stringify(resourceVersion)}`);
    const requested = Number(resourceVersion);
    const current = await this.deps.store.currentRevision();
    if (requested > current) throw tooLargeResourceVersion(requested, current);
    return requested;
  }

  matches(object: JsonObject, labels: LabelRequirement[], fields: FieldRequirement[]): boolean {
    return matchesLabels(labels, labelsOf(object)) && (fields.length === 0 || matchesFields(fields, this.strategy.fields(object)));
  }

  async list(namespace: string, params: ListParams): Promise<ListResult> {
    const page = await this.collect(namespace, params, false);
    const result: ListResult = { items: await this.served(page.objects), resourceVersion: page.resourceVersion };
    if (page.continue) result.continue = page.continue;
    return result;
  }

  /**
   * A list whose items are decoded only when asked for, one at a time: a big LIST is written item by
   * item (list-stream.ts), so holding every decoded item at once (3 to 5 times the JSON they came
   * from; 30,000 pods: hundreds of MB) bought nothing. The item bytes are the eager list's: the same
   * decode, then JSON.stringify. Undefined when reads convert through hooks (custom resources with
   * several versions): those lists stay eager.
   */
  async listLazily(namespace: string, params: ListParams): Promise<LazyListResult | undefined> {
    if (this.deps.hooks) return undefined;
    const page = await this.collect(namespace, params, true);
    const kvs = page.entries;
    // Built-ins stored in the version they are served in: an item's JSON is its stored JSON with the
    // resourceVersion spliced in (stored-json.ts), not decoded and encoded again.
    const verbatim = !this.info.storageVersion && !this.info.custom;
    const result: LazyListResult = {
      items: {
        length: kvs.length,
        item: (i: number) => this.decode(kvs[i]!.value, kvs[i]!.modRevision),
        ...(verbatim ? { json: (i: number) => withResourceVersion(kvs[i]!.value, String(kvs[i]!.modRevision)) } : {}),
      },
      resourceVersion: page.resourceVersion,
    };
    if (page.continue) result.continue = page.continue;
    return result;
  }

  /**
   * The stored entries a list selects, page by page from the store, with its revision and continue
   * token. `lazily`: only the entries are kept (selectors are checked on a decode that is dropped);
   * otherwise the decoded objects.
   */
  private async collect(namespace: string, params: ListParams, lazily: boolean): Promise<{ objects: JsonObject[]; entries: KeyValue[]; resourceVersion: string; continue?: string }> {
    const prefix = this.collectionPrefix(namespace);
    let revision: number | undefined;
    let startAfter: string | undefined;
    let tooOldMessage = 'The resourceVersion for the provided list is too old.';
    if (params.continueToken) {
      const token = decodeContinue(params.continueToken);
      revision = token.revision;
      startAfter = prefix + token.startAfter;
      tooOldMessage =
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.';
    } else if (params.resourceVersion !== undefined && params.resourceVersion !== '0') {
      const requested = await this.requireNotNewerThanStore(params.resourceVersion);
      // Exact, or the legacy meaning of a resourceVersion with a limit and no match: that exact snapshot.
      if (params.resourceVersionMatch === 'Exact' || (params.resourceVersionMatch === undefined && params.limit > 0)) revision = requested;
    }

    const objects: JsonObject[] = [];
    const entries: KeyValue[] = [];
    const selects = params.labelSelector.length > 0 || params.fieldSelector.length > 0;
    let kept = 0;
    let lastKey: string | undefined;
    let more = false;
    let decodedBytes = 0;
    const pageSize = params.limit > 0 ? Math.max(params.limit, 50) : undefined;
    for (;;) {
      let page;
      try {
        page = await this.deps.store.list(prefix, { limit: pageSize, startAfter, revision });
      } catch (error) {
        if (error instanceof StoreCompactedError) throw expired(tooOldMessage);
        throw error;
      }
      revision = page.revision;
      let consumed = 0;
      for (const kv of page.items) {
        consumed++;
        if (lazily && !selects) {
          entries.push(kv);
          kept++;
        } else {
          // Decoding a big list (30,000 pods: ~69 MB of JSON.parse) in one task held every other
          // request; a turn of the event loop every ~1 MB decoded lets them through (list-stream.ts).
          decodedBytes += kv.value.length;
          if (decodedBytes >= CHUNK_BYTES) {
            decodedBytes = 0;
            await nextTurn();
          }
          const object = this.decode(kv.value, kv.modRevision);
          if (!this.matches(object, params.labelSelector, params.fieldSelector)) continue;
          if (lazily) entries.push(kv);
          else objects.push(object);
          kept++;
        }
        lastKey = kv.key;
        if (params.limit > 0 && kept >= params.limit) break;
      }
      const pageHasMore = consumed < page.items.length || page.more;
      if (params.limit > 0 && kept >= params.limit) {
        more = pageHasMore;
        break;
      }
      if (!page.more || page.items.length === 0) break;
      startAfter = page.items.at(-1)!.key;
      lastKey = startAfter;
    }
    const result: { objects: JsonObject[]; entries: KeyValue[]; resourceVersion: string; continue?: string } = { objects, entries, resourceVersion: String(revision) };
    if (more && lastKey) result.continue = encodeContinue({ revision: revision!, startAfter: lastKey.slice(prefix.length) });
    return result;
  }

  // ---------------------------------------------------------------------------------------------
  // Writes.

  private checkTypeMeta(object: JsonObject): void {
    const expectedKind = this.info.kind;
    if (object.apiVersion === undefined || object.apiVersion === '') object.apiVersion = this.apiVersion;
    if (object.kind === undefined || object.kind === '') object.kind = expectedKind;
    if (object.apiVersion !== this.apiVersion) {
      throw badRequest(`the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${this.apiVersion})`);
    }
    if (object.kind !== expectedKind) throw badRequest(`the kind in the data (${String(object.kind)}) does not match the expected kind (${expectedKind})`);
  }

  private checkNamespace(object: JsonObject, namespace: string): void {
    const meta = metadataOf(object);
    if (!this.info.namespaced) {
      delete meta.namespace;
      return;
    }
    if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = namespace;
  }

  private invalid(object: JsonObject, errors: FieldError[]): never {
    throw invalid({ group: this.info.group, kind: this.info.kind }, stringAt(object, 'metadata', 'name') ?? '', errors);
  }

  private now(): string {
    return rfc3339(this.deps.clock.now());
  }

  private async admit(operation: AdmissionOperation, ctx: WriteContext, namespace: string, name: string, object?: JsonObject, oldObject?: JsonObject): Promise<void> {
    await this.deps.admission.admit(admissionAttributes(ctx, operation, this.info, namespace, name, object, oldObject));
  }

  private async validateAdmission(operation: AdmissionOperation, ctx: WriteContext, namespace: string, name: string, object?: JsonObject, oldObject?: JsonObject): Promise<void> {
    await this.deps.admission.validate(admissionAttributes(ctx, operation, this.info, namespace, name, object, oldObject));
  }

  /** POST: a new object. */
  async create(namespace: string, body: unknown, ctx: WriteContext): Promise<JsonObject> {
    if (!isJsonObject(body)) throw badRequest(`Object 'Kind' is missing in '${JSON.stringify(body)}'`);
    const object = deepCopy(body);
    this.checkTypeMeta(object);
    this.checkNamespace(object, namespace);
    const meta = metadataOf(object);
    if ((meta.name === undefined || meta.name === '') && typeof meta.generateName === 'string' && meta.generateName !== '') {
      // Validate the prefix before generating, so the error names generateName as upstream does.
      const prefixErrors = this.strategy.validate({ ...object, metadata: { ...meta, name: undefined as unknown as JsonValue } }).filter((e) => e.field === 'metadata.generateName');
      if (prefixErrors.length) this.invalid(object, prefixErrors);
      meta.name = generatedName(meta.generateName);
    }
    for (const key of SERVER_METADATA) delete meta[key];
    delete meta.resourceVersion;
    meta.uid = randomUUID();
    meta.creationTimestamp = this.now();
    if (this.strategy.tracksGeneration) meta.generation = 1;
    const name = typeof meta.name === 'string' ? meta.name : '';

    await this.deps.guard?.checkCreate(ctx, namespace, object);
    // Upstream's create handler records the writer's fields on the request as decoded and
    // defaulted, before mutating admission: what admission adds (a pod's token volume, its default
    // tolerations, a webhook's label) belongs to no manager. The request is kept for that.
    const requested = ctx.managedFieldsComputed ? undefined : deepCopy(object);
    await this.admit('CREATE', ctx, namespace, name, object);
    this.strategy.prepareForCreate(object);
    const allocation = await this.deps.allocation?.beforeCreate(object, ctx.dryRun);
    try {
      const errors = withSchemaErrors([...this.strategy.validate(object), ...(this.deps.policy?.(object) ?? [])], ctx.schemaErrors);
      if (errors.length) this.invalid(object, errors);
      await this.validateAdmission('CREATE', ctx, namespace, name, object);
      if (requested) {
        this.strategy.prepareForCreate(requested);
        this.setManagedFields(requested, undefined, ctx);
        const managed = metadataOf(requested).managedFields;
        if (managed !== undefined) metadataOf(object).managedFields = managed;
        else delete metadataOf(object).managedFields;
      }
      const encoded = await this.encodeForStorage(object);
      if (ctx.dryRun) {
        if (await this.deps.store.get(this.key(namespace, name))) throw alreadyExists(this.gr, name);
        return object;
      }
      try {
        const revision = await this.deps.store.create(this.key(namespace, name), encoded);
        meta.resourceVersion = String(revision);
      } catch (error) {
        if (error instanceof StoreConflictError) throw alreadyExists(this.gr, name);
        throw error;
      }
    } catch (error) {
      await allocation?.revert();
      throw error;
    }
    await allocation?.commit();
    return object;
  }

  private setManagedFields(next: JsonObject, previous: JsonObject | undefined, ctx: WriteContext): void {
    const entries = updateManagedFields({
      previous, next, manager: ctx.fieldManager, apiVersion: this.apiVersion, subresource: ctx.subresource || undefined, time: this.now(),
      type: applyTypeOf(this.info), hasStatus: hasStatusSubresource(this.info),
    });
    const meta = metadataOf(next);
    if (entries.length) meta.managedFields = entries as unknown as JsonValue;
    else delete meta.managedFields;
  }

  /**
   * The read-modify-write loop of every update (upstream's GuaranteedUpdate): `mutate` gets the
   * current object and returns the desired one; conflicts with concurrent writers retry, while a
   * resourceVersion precondition inside `mutate` turns them into 409.
   */
  async update(
    namespace: string,
    name: string,
    ctx: WriteContext,
    mutate: (current: JsonObject) => JsonObject | Promise<JsonObject>,
    options: { createIfMissing?: () => unknown } = {},
  ): Promise<{ object: JsonObject; created: boolean }> {
    for (let attempt = 0; ; attempt++) {
      const found = await this.read(namespace, name);
      if (!found) {
        if (options.createIfMissing) return { object: await this.create(namespace, options.createIfMissing(), ctx), created: true };
        throw notFound(this.gr, name);
      }
      const current = found.object;
      const desired = await mutate(deepCopy(current));
      const held: { allocation?: AllocationResult } = {};
      let outcome: { object: JsonObject; created: boolean } | 'retry';
      try {
        outcome = await this.writeUpdate(namespace, name, desired, current, found.kv, ctx, attempt, held);
      } catch (error) {
        await held.allocation?.revert();
        throw error;
      }
      if (outcome === 'retry') {
        await held.allocation?.revert();
        continue;
      }
      await held.allocation?.commit();
      return outcome;
    }
  }

  /** One attempt of `update`: 'retry' when another writer changed the object meanwhile. */
  private async writeUpdate(
    namespace: string, name: string, desired: JsonObject, current: JsonObject, kv: KeyValue, ctx: WriteContext, attempt: number,
    held: { allocation?: AllocationResult },
  ): Promise<{ object: JsonObject; created: boolean } | 'retry'> {
    const next = await this.prepareUpdate(namespace, name, desired, current, ctx, held);
    // A no-op still writes when the stored value was encrypted with a key that no longer writes
    // (upstream's stale read), so rewriting every object re-encrypts with the new first key.
    if (next === current && !isStale(this.key(namespace, name))) return { object: current, created: false };
    if (this.shouldDeleteDuringUpdate(next, current)) {
      if (ctx.dryRun) return { object: next, created: false };
      try {
        const revision = await this.deps.store.delete(this.key(namespace, name), kv.modRevision);
        if (revision !== undefined) metadataOf(next).resourceVersion = String(revision);
        await this.afterDelete(next);
        return { object: next, created: false };
      } catch (error) {
        if (error instanceof StoreConflictError && attempt < MAX_UPDATE_ATTEMPTS) return 'retry';
        throw error;
      }
    }
    const encoded = await this.encodeForStorage(next);
    if (ctx.dryRun) {
      metadataOf(next).resourceVersion = String(kv.modRevision);
      return { object: next, created: false };
    }
    try {
      const revision = await this.deps.store.update(this.key(namespace, name), encoded, kv.modRevision);
      metadataOf(next).resourceVersion = String(revision);
      return { object: next, created: false };
    } catch (error) {
      if (error instanceof StoreConflictError && attempt < MAX_UPDATE_ATTEMPTS) return 'retry';
      if (error instanceof StoreConflictError) throw staleConflict(this.gr, name);
      throw error;
    }
  }

  /** Gives back what a deleted object held (its allocations); a failure leaves a leak, never a failed delete. */
  private async afterDelete(object: JsonObject): Promise<void> {
    try {
      await this.deps.allocation?.afterDelete(object);
    } catch {
      // The object is gone; what it held stays marked until the next release attempt.
    }
  }

  /** Upstream's BeforeUpdate plus admission: the object that would be stored, or `current` itself for a no-op. */
  private async prepareUpdate(
    namespace: string, name: string, desired: JsonObject, current: JsonObject, ctx: WriteContext, held: { allocation?: AllocationResult } = {},
  ): Promise<JsonObject> {
    const object = desired;
    this.checkTypeMeta(object);
    const meta = metadataOf(object);
    if (meta.name !== undefined && meta.name !== name) {
      throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
    }
    meta.name = name;
    this.checkNamespace(object, namespace);
    const currentMeta = metadataOf(current);
    const errors: FieldError[] = [];
    if (meta.uid !== undefined && meta.uid !== '' && meta.uid !== currentMeta.uid) errors.push(field.invalid('metadata.uid', meta.uid, 'field is immutable'));
    for (const key of SERVER_METADATA) {
      if (currentMeta[key] === undefined) delete meta[key];
      else meta[key] = currentMeta[key]!;
    }
    if (meta.managedFields === undefined && currentMeta.managedFields !== undefined) meta.managedFields = currentMeta.managedFields;
    // Finalizers cannot be added once deletion started (upstream: "Forbidden: no new finalizers...").
    if (currentMeta.deletionTimestamp !== undefined) {
      const added = finalizersOf(object).filter((f) => !finalizersOf(current).includes(f));
      if (added.length) errors.push(field.forbidden('metadata.finalizers', `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`));
    }
    if (errors.length) this.invalid(object, errors);

    if (!ctx.subresource) await this.deps.guard?.checkUpdate(ctx, namespace, object, current);
    if (!ctx.admitted) await this.admit('UPDATE', ctx, namespace, name, object, current);
    // Scale writes are spec writes; status, finalize and binding writes carry their own rules.
    if (!ctx.subresource || ctx.subresource === 'scale') {
      this.strategy.prepareForUpdate(object, current);
      if (this.strategy.tracksGeneration && this.strategy.generationChanged(object, current)) {
        meta.generation = (typeof currentMeta.generation === 'number' ? currentMeta.generation : 0) + 1;
      }
      if (!ctx.subresource && this.deps.allocation) held.allocation = await this.deps.allocation.beforeUpdate(object, current, ctx.dryRun);
    }
    const validation = withSchemaErrors([...this.strategy.validateUpdate(object, current), ...(this.deps.policy?.(object) ?? [])], ctx.schemaErrors);
    if (validation.length) this.invalid(object, validation);
    if (!ctx.admitted) await this.validateAdmission('UPDATE', ctx, namespace, name, object, current);

    // A write that changes nothing (resourceVersion aside) is a no-op: no new revision. managedFields
    // count: an apply that changes only ownership, or a client writing managedFields (kubectl's
    // client-side to server-side apply upgrade), is a write.
    const comparable = (o: JsonObject) => ({ ...o, metadata: { ...metadataOf(o), resourceVersion: null } });
    if (jsonEqual(comparable(object), comparable(current))) return current;
    if (!ctx.managedFieldsComputed) this.setManagedFields(object, current, ctx);
    delete meta.resourceVersion;
    return object;
  }

  /** An object being deleted whose last finalizer was removed (and whose grace period is over) goes away. */
  /**
   * Upstream's ShouldDeleteDuringUpdate: an object being deleted goes once its last finalizer is
   * removed, unless a graceful deletion is still running (the existing object's grace period is
   * set and non-zero, as for a pod its agent has not stopped yet). A namespace also waits for its
   * spec.finalizers (the namespace controller's `orch`) to be emptied.
   */
  private shouldDeleteDuringUpdate(next: JsonObject, current: JsonObject): boolean {
    if (valueAt(current, 'metadata', 'deletionTimestamp') === undefined) return false;
    if (finalizersOf(next).length > 0) return false;
    if (this.info.kind === 'Namespace') {
      const specFinalizers = valueAt(next, 'spec', 'finalizers');
      if (Array.isArray(specFinalizers) && specFinalizers.length > 0) return false;
    }
    const grace = valueAt(current, 'metadata', 'deletionGracePeriodSeconds');
    return grace === undefined || grace === null || grace === 0;
  }

  /** PUT: replaces the object; the body's resourceVersion, when given, must be current. */
  async replace(namespace: string, name: string, body: unknown, ctx: WriteContext): Promise<{ object: JsonObject; created: boolean }> {
    if (!isJsonObject(body)) throw badRequest(`Object 'Kind' is missing in '${JSON.stringify(body)}'`);
    const bodyName = stringAt(body, 'metadata', 'name');
    if (bodyName !== undefined && bodyName !== '' && bodyName !== name) {
      throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
    }
    const requestedVersion = stringAt(body, 'metadata', 'resourceVersion');
    if (!requestedVersion && !this.strategy.allowUnconditionalUpdate) {
      throw invalid({ group: this.info.group, kind: this.info.plural }, name, [
        field.invalid('metadata.resourceVersion', 0, 'must be specified for an update'),
      ]);
    }
    return this.update(
      namespace,
      name,
      ctx,
      (current) => {
        if (requestedVersion && requestedVersion !== stringAt(current, 'metadata', 'resourceVersion')) throw staleConflict(this.gr, name);
        return subresourceWrite(ctx.subresource, deepCopy(body), current, this.deps.clock.now());
      },
      {
        createIfMissing: this.strategy.allowCreateOnUpdate && !ctx.subresource
          ? () => {
            const copy = deepCopy(body);
            delete metadataOf(copy).resourceVersion;
            metadataOf(copy).name = name;
            return copy;
          }
          : undefined,
      },
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Deletion.

  private preconditionConflict(name: string, key: string, what: 'UID' | 'ResourceVersion', expected: string, actual: string): never {
    throw conflict(
      this.gr,
      name,
      `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: ${what} in precondition: ${expected}, ${what} in object meta: ${actual}`,
    );
  }

  private checkPreconditions(object: JsonObject, name: string, options: DeleteOptions): void {
    const key = this.key(stringAt(object, 'metadata', 'namespace') ?? '', name);
    const uid = options.preconditions?.uid;
    if (uid && uid !== stringAt(object, 'metadata', 'uid')) this.preconditionConflict(name, key, 'UID', uid, stringAt(object, 'metadata', 'uid') ?? '');
    const rv = options.preconditions?.resourceVersion;
    if (rv && rv !== stringAt(object, 'metadata', 'resourceVersion')) {
      this.preconditionConflict(name, key, 'ResourceVersion', rv, stringAt(object, 'metadata', 'resourceVersion') ?? '');
    }
  }

  /** The garbage-collection finalizers a propagation policy asks for (upstream's deletionFinalizersForGarbageCollection). */
  private finalizersForPolicy(object: JsonObject, options: DeleteOptions): string[] {
    const finalizers = finalizersOf(object);
    if (this.deps.garbageCollection === false) return finalizers;
    let policy = options.propagationPolicy;
    if (!policy && options.orphanDependents !== undefined) policy = options.orphanDependents ? 'Orphan' : 'Background';
    if (!policy) return finalizers;
    const rest = finalizers.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion');
    if (policy === 'Orphan') return [...rest, 'orphan'];
    if (policy === 'Foreground') return [...rest, 'foregroundDeletion'];
    return rest;
  }

  private deletedResponse(object: JsonObject): DeleteResult {
    if (this.strategy.returnDeletedObject) return { code: 200, body: object };
    return {
      code: 200,
      body: successStatus(200, {
        name: stringAt(object, 'metadata', 'name'), group: this.info.group, kind: this.info.plural, uid: stringAt(object, 'metadata', 'uid'),
      }) as unknown as JsonObject,
    };
  }

  /** DELETE of one object: at once, or deferred by a grace period or finalizers (deletionTimestamp set). */
  async delete(namespace: string, name: string, options: DeleteOptions, ctx: WriteContext): Promise<DeleteResult> {
    for (let attempt = 0; ; attempt++) {
      const found = await this.read(namespace, name);
      if (!found) throw notFound(this.gr, name);
      const current = found.object;
      this.checkPreconditions(current, name, options);
      await this.admit('DELETE', ctx, namespace, name, undefined, current);
      await this.validateAdmission('DELETE', ctx, namespace, name, undefined, current);

      const deferred = this.deferredDeletion(current, options);
      try {
        if (deferred) {
          if (deferred === current) return { code: 200, body: current };
          if (ctx.dryRun) return { code: 200, body: deferred };
          const revision = await this.deps.store.update(this.key(namespace, name), await this.encodeForStorage(deferred), found.kv.modRevision);
          metadataOf(deferred).resourceVersion = String(revision);
          // 202 only when the deprecated orphanDependents=false was given explicitly.
          return { code: options.orphanDependents === false ? 202 : 200, body: deferred };
        }
        if (!ctx.dryRun) {
          const revision = await this.deps.store.delete(this.key(namespace, name), found.kv.modRevision);
          if (revision !== undefined) metadataOf(current).resourceVersion = String(revision);
          await this.afterDelete(current);
        }
        return this.deletedResponse(current);
      } catch (error) {
        if (error instanceof StoreConflictError && attempt < MAX_UPDATE_ATTEMPTS) continue;
        throw error;
      }
    }
  }

  /**
   * The object to store instead of deleting it, or undefined to delete now. Returns `current`
   * itself when nothing changes (deletion already pending, grace not shortened).
   */
  deferredDeletion(current: JsonObject, options: DeleteOptions): JsonObject | undefined {
    const finalizers = this.finalizersForPolicy(current, options);
    const finalizersChanged = !jsonEqual(finalizers, finalizersOf(current));
    const currentMeta = metadataOf(current);
    const now = this.deps.clock.now();
    const isNamespace = this.info.kind === 'Namespace' && this.info.group === '';
    const withDeletion = (fields: { timestamp?: Date; grace?: number; phase?: string }): JsonObject => {
      const next = deepCopy(current);
      const meta = metadataOf(next);
      if (fields.timestamp) meta.deletionTimestamp = rfc3339(fields.timestamp);
      if (fields.grace !== undefined) meta.deletionGracePeriodSeconds = fields.grace;
      if (finalizers.length) meta.finalizers = finalizers;
      else delete meta.finalizers;
      if (currentMeta.deletionTimestamp === undefined && typeof meta.generation === 'number' && meta.generation > 0) meta.generation += 1;
      if (fields.phase) next.status = { ...(isJsonObject(next.status) ? next.status : {}), phase: fields.phase };
      delete meta.resourceVersion;
      return next;
    };

    if (currentMeta.deletionTimestamp === undefined) {
      // Namespaces always go through Terminating first: the namespace controller empties them
      // and removes the `orch` finalizer, then deletes again (upstream's namespace REST).
      if (isNamespace) return withDeletion({ timestamp: now, phase: 'Terminating' });
      const grace = this.strategy.gracePeriod ? this.strategy.gracePeriod(current, options.gracePeriodSeconds) : 0;
      if (grace === 0 && finalizers.length === 0) return undefined;
      return withDeletion({ timestamp: new Date(now.getTime() + grace * 1000), grace });
    }

    if (isNamespace && Array.isArray(valueAt(current, 'spec', 'finalizers')) && (valueAt(current, 'spec', 'finalizers') as JsonValue[]).length > 0) {
      return current;
    }
    const currentGrace = typeof currentMeta.deletionGracePeriodSeconds === 'number' ? currentMeta.deletionGracePeriodSeconds : 0;
    let grace = currentGrace;
    if (this.strategy.gracePeriod && options.gracePeriodSeconds !== undefined) {
      // A pending graceful deletion may only be shortened.
      grace = Math.min(currentGrace, this.strategy.gracePeriod(current, options.gracePeriodSeconds));
    }
    if (grace === 0 && finalizers.length === 0) return undefined;
    if (grace < currentGrace) return withDeletion({ timestamp: new Date(now.getTime() + grace * 1000), grace });
    return finalizersChanged ? withDeletion({}) : current;
  }

  /** DELETE of a collection: every object matching the selectors, each through `delete`. */
  async deleteCollection(namespace: string, params: ListParams, options: DeleteOptions, ctx: WriteContext): Promise<JsonObject[]> {
    const listed = await this.list(namespace, { ...params, limit: 0, continueToken: undefined });
    // Upstream's DeleteCollection: workers take the items in turn; the answer keeps the list's order.
    const results: (JsonObject | undefined)[] = new Array(listed.items.length);
    let next = 0;
    const work = async () => {
      while (next < listed.items.length) {
        const index = next++;
        const object = listed.items[index]!;
        try {
          const result = await this.delete(stringAt(object, 'metadata', 'namespace') ?? '', stringAt(object, 'metadata', 'name') ?? '', options, ctx);
          results[index] = result.body.kind === 'Status' ? object : result.body;
        } catch (error) {
          if ((error as { code?: number }).code !== 404) throw error;
        }
      }
    };
    const workers = Math.max(1, Math.min(this.deps.deleteCollectionWorkers ?? 1, listed.items.length));
    await Promise.all(Array.from({ length: workers }, work));
    return results.filter((o): o is JsonObject => o !== undefined);
  }
}

/** A status-subresource write (kept here for its importers; the rules live in partial-writes.ts). */
export { statusOnly } from './partial-writes.js';
