/**
 * The REST API handler: discovery, `/version`, and every verb on every served resource and
 * subresource, over a Store. Framework-free: `(req, res, ctx) => Promise<boolean>`, answering
 * false for paths that are not the API's so the server can route them elsewhere.
 */
import { privilegedContainerErrors } from './privileged.js';
import type {TokenServices} from './token-request.js';
import { names } from '../../../api/names.js';
import { groupVersionOf, ResourceRegistry, type ResourceInfo } from '../../../api/resources.js';
import {
  ApiError, badRequest, failureStatus, field, forbidden, internalError, invalid, qualifiedResource, serviceUnavailable, successStatus,
  type FieldError,
} from '../../../api/status.js';
import { managerFromUserAgent } from '../../../api/managed-fields.js';
import { toTable } from '../../../api/table.js';
import { isJsonObject, type JsonObject } from '../../../patch/types.js';
import { StoreUnavailableError, type Store } from '../storage/store.js';
import { AdmissionChain, NamespaceLifecycle, type AdmissionPlugin, type AdmissionStage } from '../admission/chain.js';
import type { AdmissionObjects } from '../admission/interfaces.js';
import { registryObjects } from '../admission/objects.js';
import { CrdInformer, crdStrategy } from './crd.js';
import { resolveServiceEndpoint } from './service-resolver.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, type ServerAddress } from './discovery.js';
import { addResponseWarning, checkDepth, MAX_REQUEST_BODY_BYTES, readBody, writeError, writeJson, writeJsonList, writePlainNotFound } from './http-io.js';
import { parseListParams, parseWriteParams, type ListParams } from './list-options.js';
import { decodeBody, negotiate, parseMediaType, patchTypeOf, representationContentType, type Representation } from './negotiation.js';
import { deepCopy, rfc3339, stringAt, valueAt } from './objects.js';
import { OpenApiService } from './openapi/index.js';
import { builtinSchemas } from '../../../api/schema/definitions.js';
import { applyServerPatch, serverSideApplyUnsupported } from './patch.js';
import { applyToObject, parseApplyBody, type ApplyRequest } from './apply.js';
import { parseRequestInfo, type ResourceRequest } from './request-info.js';
import { admissionAttributes, RegistryStore, type DeleteOptions, type WriteContext, type WriteAllocation } from './registry-store.js';
import { subresourceWrite } from './partial-writes.js';
import { serveCatalogRest } from './catalog-rest.js';
import { defaultProbes, type ComponentProbe } from './component-status.js';
import type { AgentTls } from './proxy.js';
import type { RulesResolver } from './reviews.js';
import type { WriteGuard } from './write-guard.js';
import { strategyFor } from './strategies.js';
import { applyScale, bindPod, finalizeNamespace, toScale } from './subresources.js';
import { systemClock, type ApiRequest, type ApiResponse, type Clock, type RequestContext, type ServerVersion } from './types.js';
import { serveWatch, type ActiveWatch } from './watch.js';
import { parseFieldValidation, SchemaRegistry, validateWrite, type FieldValidation } from './validation/index.js';
import { crdKindSchemas } from './validation/crd-schemas.js';

export interface ApiHandlerOptions {
  store: Store;
  clock?: Clock;
  /** The kvstore key prefix (`--kvstore-prefix`, default `/registry`). */
  keyPrefix?: string;
  /** What `/version` answers. */
  version: ServerVersion;
  /** `serverAddressByClientCIDRs` of `/api` (default: none... upstream always lists at least one). */
  serverAddresses?: ServerAddress[];
  /**
   * Admission plugins after NamespaceLifecycle, in order, until the server puts its chain in place
   * (setAdmission; the server builds it from the admission options at start).
   */
  admissionPlugins?: AdmissionPlugin[];
  /** `--min-request-timeout` in seconds: watches without timeoutSeconds last 1-2x this. */
  minRequestTimeoutSeconds?: number;
  bookmarkIntervalMs?: number;
  maxRequestBodyBytes?: number;
  /** A shared resource registry (tests, or a server that serves it elsewhere too). */
  registry?: ResourceRegistry;
  /** Schemas per kind: the built-ins, plus what custom resources register (see validation/schema-registry.ts). */
  schemas?: SchemaRegistry;
  /**
   * Schema validation of writes (default on). Off only for bench/apiserver.mjs, which measures its
   * cost; the process-level switch is the internal environment variable ORCH_INTERNAL_SCHEMA_VALIDATION=off.
   */
  schemaValidation?: boolean;
  /** Registries' own write checks by resource (RBAC's escalation prevention). */
  writeGuards?: (info: ResourceInfo) => WriteGuard | undefined;
  /** What writes of a resource take from allocators (services: cluster IPs and node ports; ../services/). */
  allocations?: (info: ResourceInfo) => WriteAllocation | undefined;
  /** The API server's client credentials for the agents (nodes/proxy). */
  agentTls?: AgentTls;
  /** The rules a user holds (SelfSubjectRulesReview); without it the review answers `incomplete`. */
  rulesFor?: RulesResolver;
  /** Service account tokens and TokenReview (without it: 501 naming what is missing). */
  tokens?: TokenServices;
  /** What componentstatuses probe (default: the controller manager's port and the store). */
  componentProbes?: ComponentProbe[];
  /** --allow-privileged (default false, as the seed): privileged containers are invalid without it. */
  allowPrivileged?: boolean;
  /** --delete-collection-workers. */
  deleteCollectionWorkers?: number;
  /** --enable-garbage-collector (default true). */
  garbageCollection?: boolean;
}

export interface ApiHandler {
  (req: ApiRequest, res: ApiResponse, ctx: RequestContext): Promise<boolean>;
  /** The served resources (built-ins and established CRDs). */
  readonly registry: ResourceRegistry;
  /** Schemas per kind; custom resources register theirs here (validation and /openapi documents). */
  readonly schemas: SchemaRegistry;
  /** The `crd-informer-synced` check: the stored CRDs have been loaded once. */
  crdInformerSynced(): boolean;
  /** Resolves once the CRD informer has synced (it starts with the handler and retries while the store is down). */
  whenSynced(): Promise<void>;
  /** Open watch streams. */
  activeWatches(): number;
  /** Ends every open watch stream cleanly (shutdown). */
  closeWatches(): void;
  /** Stops the CRD informer and ends the watches. */
  stop(): void;
  /** What admission plugins read and write: this handler's registries. */
  readonly admissionObjects: AdmissionObjects;
  /** Puts the admission chain in effect for every write from now on. */
  setAdmission(chain: AdmissionStage): void;
  /**
   * CONNECT admission of a request served outside the handler (pods/exec, attach, portforward):
   * throws the plugins' ApiError when refused. `options` is the connect options object.
   */
  admitConnect(ctx: RequestContext, request: ConnectRequest, options: JsonObject): Promise<void>;
}

/** A CONNECT request: the resource and subresource (`exec`, `attach`, `portforward`, `proxy`) of one object. */
export interface ConnectRequest {
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}


function toDeleteOptions(query: URLSearchParams, body: unknown): { options: DeleteOptions; dryRun: string[] } {
  const errors: FieldError[] = [];
  const source = isJsonObject(body) ? body : {};
  const options: DeleteOptions = {};
  const grace = query.get('gracePeriodSeconds') ?? (typeof source.gracePeriodSeconds === 'number' ? String(source.gracePeriodSeconds) : null);
  if (grace !== null && grace !== '') {
    if (!/^-?\d+$/.test(grace)) throw badRequest(`invalid gracePeriodSeconds: ${JSON.stringify(grace)}`);
    options.gracePeriodSeconds = Number(grace) < 0 ? 1 : Number(grace);
  }
  const policy = query.get('propagationPolicy') ?? (typeof source.propagationPolicy === 'string' ? source.propagationPolicy : null);
  if (policy !== null && policy !== '') {
    if (policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
      errors.push(field.notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan']));
    } else options.propagationPolicy = policy;
  }
  const orphan = query.get('orphanDependents') ?? (typeof source.orphanDependents === 'boolean' ? String(source.orphanDependents) : null);
  if (orphan !== null && orphan !== '') {
    options.orphanDependents = orphan === 'true' || orphan === '1';
    if (options.propagationPolicy) errors.push(field.invalid('propagationPolicy', options.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  const preconditions = source.preconditions;
  if (isJsonObject(preconditions)) {
    options.preconditions = {
      uid: typeof preconditions.uid === 'string' ? preconditions.uid : undefined,
      resourceVersion: typeof preconditions.resourceVersion === 'string' ? preconditions.resourceVersion : undefined,
    };
  }
  if (errors.length) throw invalid({ group: names().groups.meta, kind: 'DeleteOptions' }, '', errors);
  const dryRun = Array.isArray(source.dryRun) ? source.dryRun.filter((s): s is string => typeof s === 'string') : [];
  return { options, dryRun };
}

function listKindOf(info: ResourceInfo): string {
  return `${info.kind}List`;
}

function notFoundResource(): ApiError {
  return new ApiError(failureStatus(404, 'NotFound', 'the server could not find the requested resource', {}));
}

function methodNotAllowed(): ApiError {
  return new ApiError(failureStatus(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}));
}

export function createApiHandler(options: ApiHandlerOptions): ApiHandler {
  const store = options.store;
  const clock = options.clock ?? systemClock;
  const keyPrefix = (options.keyPrefix ?? '/registry').replace(/\/+$/, '');
  const registry = options.registry ?? new ResourceRegistry();
  const minRequestTimeout = options.minRequestTimeoutSeconds ?? 1800;
  const bookmarkIntervalMs = options.bookmarkIntervalMs ?? 60_000;
  const maxBody = options.maxRequestBodyBytes ?? MAX_REQUEST_BODY_BYTES;
  const watches = new Set<ActiveWatch>();
  const schemas = options.schemas ?? new SchemaRegistry();
  const openApi = new OpenApiService(registry, schemas);
  // The built-in definitions load once per process (~3 MB of JSON): at start, not on the first write.
  builtinSchemas();
  const schemaValidation = options.schemaValidation ?? process.env.ORCH_INTERNAL_SCHEMA_VALIDATION !== 'off';
  const componentProbes = options.componentProbes ?? defaultProbes(store);

  const registries = new Map<ResourceInfo, RegistryStore>();
  const namespaceInfo = registry.lookup('', 'v1', 'namespaces')!;
  const crdInfo = registry.lookup(names().groups.apiextensions, 'v1', 'customresourcedefinitions')!;

  // Admission needs to read namespaces; it goes through the same registry as the API.
  const getNamespace = async (name: string) => {
    const kv = await store.get(registryFor(namespaceInfo).key('', name));
    return kv ? (JSON.parse(kv.value) as JsonObject) : undefined;
  };
  let chain: AdmissionStage = new AdmissionChain([new NamespaceLifecycle(getNamespace), ...(options.admissionPlugins ?? [])]);
  // The registries keep this stage; the chain behind it is the one in effect.
  const admission: AdmissionStage = { admit: (a) => chain.admit(a), validate: (a) => chain.validate(a) };

  function registryFor(info: ResourceInfo): RegistryStore {
    let found = registries.get(info);
    if (!found) {
      const base = strategyFor(info);
      // Custom resources: their CRD's schema, conversion and printing (custom-resources.ts).
      const runtime = info.custom ? informer.runtime(info.group, info.plural) : undefined;
      const strategy = info === crdInfo ? crdStrategy(base, clock, () => informer.all()) : runtime ? runtime.strategyFor(base, info) : base;
      found = new RegistryStore(info, {
        store, clock, keyPrefix, admission, hooks: runtime?.hooks(info.version), guard: options.writeGuards?.(info),
        policy: options.allowPrivileged || info.custom ? undefined : (o) => privilegedContainerErrors(info.kind, o),
        deleteCollectionWorkers: options.deleteCollectionWorkers, garbageCollection: options.garbageCollection, allocation: options.allocations?.(info),
      }, strategy);
      // A changed CRD serves new ResourceInfos: forget the stores of the ones it replaced.
      if (info.custom) {
        for (const old of registries.keys()) if (old.custom && registry.lookup(old.group, old.version, old.plural) !== old) registries.delete(old);
      }
      registries.set(info, found);
    }
    return found;
  }

  const crdPrefix = `${keyPrefix}/${crdInfo.storagePrefix}/`;
  // Conversion webhooks named by a Service go to one of its endpoints (service-resolver.ts).
  const readObject = async (resource: string, namespace: string, name: string) => {
    const info = registry.lookup('', 'v1', resource);
    const kv = info && (await store.get(registryFor(info).key(namespace, name)));
    return kv ? (JSON.parse(kv.value) as JsonObject) : undefined;
  };
  const resolveService = async (namespace: string, name: string, port: number) =>
    resolveServiceEndpoint(namespace, name, port, await readObject('services', namespace, name), await readObject('endpoints', namespace, name));
  const informer = new CrdInformer(store, registry, crdPrefix, 1000, schemas, resolveService);
  const synced = informer.start();
  // The CRDs' schemas join validation (unknown and duplicate fields) and the /openapi documents.
  schemas.setCustomSource(() => {
    const crds = informer.all();
    return {
      key: crds.map((c) => `${stringAt(c, 'metadata', 'name')}@${stringAt(c, 'metadata', 'resourceVersion')}@${stringAt(c, 'metadata', 'generation')}`).join(','),
      kinds: () => crds.flatMap(crdKindSchemas),
    };
  });

  // -------------------------------------------------------------------------------------------

  async function authorize(ctx: RequestContext, request: ResourceRequest | { path: string; verb: string }): Promise<void> {
    if ('path' in request) {
      const decision = await ctx.authorize({
        user: ctx.user, verb: request.verb, resourceRequest: false, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '', path: request.path,
      });
      if (!decision.allowed) {
        const reason = decision.reason ? `: ${decision.reason}` : '';
        throw new ApiError(failureStatus(403, 'Forbidden', decision.message ?? `forbidden: User "${ctx.user.name}" cannot ${request.verb} path "${request.path}"${reason}`, {}));
      }
      return;
    }
    const decision = await ctx.authorize({
      user: ctx.user, verb: request.verb, resourceRequest: true, apiGroup: request.apiGroup, apiVersion: request.apiVersion,
      resource: request.resource, subresource: request.subresource, namespace: request.namespace, name: request.name, path: '',
    });
    if (decision.allowed) return;
    const resource = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
    const scope = request.namespace ? `in the namespace "${request.namespace}"` : 'at the cluster scope';
    const reason = decision.message ??
      `User "${ctx.user.name}" cannot ${request.verb} resource "${resource}" in API group "${request.apiGroup}" ${scope}${decision.reason ? `: ${decision.reason}` : ''}`;
    const error = forbidden({ group: request.apiGroup, resource }, request.name, reason);
    if (decision.message) error.status.message = decision.message;
    throw error;
  }

  function writeContext(req: ApiRequest, ctx: RequestContext, query: URLSearchParams, optionsKind: string, subresource: string, dryRunFromBody: string[] = []): WriteContext {
    const userAgent = req.headers['user-agent'];
    const params = parseWriteParams(query, optionsKind, managerFromUserAgent(Array.isArray(userAgent) ? userAgent[0] : userAgent), dryRunFromBody);
    return {
      user: ctx.user, dryRun: params.dryRun, fieldManager: params.fieldManager, subresource, authorize: (a) => ctx.authorize(a),
      operationOptions: operationOptions(optionsKind, query, params.dryRun), addWarning: ctx.addWarning, addAuditAnnotation: ctx.addAuditAnnotation,
    };
  }

  /**
   * A Binding's admission: CREATE of `info` (pods/binding, or the bindings resource) with the Binding
   * as the object, as upstream; the pod write that follows is not admitted again (WriteContext.admitted).
   */
  async function admitBinding(wctx: WriteContext, info: ResourceInfo, namespace: string, name: string, body: unknown): Promise<JsonObject> {
    if (!isJsonObject(body)) throw badRequest('the body of the request must be a Binding object');
    const binding: JsonObject = { ...body, apiVersion: 'v1', kind: 'Binding', metadata: { ...(isJsonObject(body.metadata) ? body.metadata : {}), name, namespace } };
    const attributes = admissionAttributes(wctx, 'CREATE', info, namespace, name, binding);
    await admission.admit(attributes);
    await admission.validate(attributes);
    return binding;
  }

  /** CONNECT admission (upstream's connect handler: the plugins' Admit, then Validate, before connecting). */
  async function admitConnect(ctx: RequestContext, request: ConnectRequest, connectOptions: JsonObject): Promise<void> {
    const info = registry.lookup(request.group, request.version, request.resource);
    if (!info) throw notFoundResource();
    const wctx: WriteContext = {
      user: ctx.user, dryRun: false, fieldManager: '', subresource: request.subresource, authorize: (a) => ctx.authorize(a),
      operationOptions: connectOptions, addWarning: ctx.addWarning, addAuditAnnotation: ctx.addAuditAnnotation,
    };
    // Upstream passes the connect options as the object of a CONNECT.
    const attributes = admissionAttributes(wctx, 'CONNECT', info, request.namespace, request.name, connectOptions);
    await admission.admit(attributes);
    await admission.validate(attributes);
  }

  async function readJsonBody(req: ApiRequest): Promise<unknown> {
    return (await readDecodedBody(req)).value;
  }

  /** The decoded body and, for JSON and YAML, its text (the validation stage reads duplicate keys there). */
  async function readDecodedBody(req: ApiRequest): Promise<{ value: unknown; text?: { text: string; yaml: boolean } }> {
    const body = await readBody(req, maxBody);
    const header = req.headers['content-type'];
    const contentType = Array.isArray(header) ? header[0] : header;
    const value = decodeBody(contentType, body);
    checkDepth(value);
    const type = parseMediaType(contentType ?? 'application/json').type || 'application/json';
    const yaml = type.endsWith('yaml');
    if (!yaml && type !== 'application/json' && type !== '*/*') return { value };
    return { value, text: { text: body.toString('utf8'), yaml } };
  }

  /**
   * The validation stage for a write of `object` as `info`'s kind; answers the warnings to send and
   * leaves required-field errors in `wctx` for the registry to report with the kind's own (one 422).
   */
  function validate(info: ResourceInfo, object: unknown, mode: FieldValidation, operation: 'create' | 'update' | 'patch' | 'apply', name: string,
    body: { text: string; yaml: boolean } | undefined, wctx: WriteContext | undefined): string[] {
    if (!schemaValidation || !isJsonObject(object)) return [];
    const result = validateWrite(schemas, {
      group: info.group, version: info.version, kind: info.kind, name: name || stringAt(object, 'metadata', 'name') || '',
      // A custom resource's types and required fields are its CRD validator's (custom-resources.ts).
      object, mode, operation, body, checkRequired: !info.custom && operation !== 'apply', checkTypes: !info.custom, deferRequired: true,
    });
    if (wctx) wctx.schemaErrors = result.required;
    return result.warnings;
  }

  /** The required fields an applied object lacks (server-side apply builds whole objects from partial configurations). */
  function appliedRequired(info: ResourceInfo, object: JsonObject, wctx: WriteContext): void {
    if (!schemaValidation || info.custom) return;
    wctx.schemaErrors = validateWrite(schemas, {
      group: info.group, version: info.version, kind: info.kind, name: stringAt(object, 'metadata', 'name') ?? '',
      object, mode: 'Ignore', operation: 'update', checkTypes: false, deferRequired: true,
    }).required;
  }

  /** A Table of objects: the custom resource's printer columns, or the built-in kind's. */
  function tableOf(store: RegistryStore, objects: JsonObject[], metadata: JsonObject, rep: Extract<Representation, { kind: 'table' }>): JsonObject {
    const options = { apiVersion: `${rep.group}/${rep.version}`, includeObject: rep.includeObject, now: clock.now() };
    return store.hooks ? store.hooks.table(objects, metadata, options) : toTable(store.info.kind, objects, metadata, options);
  }

  function respondObject(res: ApiResponse, code: number, object: JsonObject, rep: Representation, pretty: boolean, info: ResourceInfo): void {
    if (rep.kind === 'table' && object.kind !== 'Status') {
      const table = tableOf(registryFor(info), [object], { resourceVersion: stringAt(object, 'metadata', 'resourceVersion') ?? '' }, rep);
      writeJson(res, code, table, { pretty, contentType: representationContentType(rep) });
      return;
    }
    writeJson(res, code, object, { pretty });
  }

  // -------------------------------------------------------------------------------------------

  async function serveResource(req: ApiRequest, res: ApiResponse, ctx: RequestContext, request: ResourceRequest, query: URLSearchParams): Promise<void> {
    const info = registry.lookup(request.apiGroup, request.apiVersion, request.resource);
    if (!info) throw notFoundResource();
    const sub = request.subresource ? info.subresources.find((s) => s.name === request.subresource) : undefined;
    if (request.subresource && !sub) throw notFoundResource();
    // Namespaced resources need a namespace except for collection reads across all namespaces.
    const namespace = info.namespaced ? request.namespace : '';
    if (info.namespaced && !request.namespace && !(['list', 'watch'].includes(request.verb) && !request.name)) throw notFoundResource();
    if (!info.namespaced && request.namespace && info !== namespaceInfo) throw notFoundResource();
    const verbs: readonly string[] = sub ? sub.verbs : info.verbs;
    if (!verbs.includes(request.verb)) throw methodNotAllowed();
    // Collections take POST; objects take PUT and PATCH (subresources have their own names).
    if (!sub && ((request.verb === 'create' && request.name) || (['update', 'patch'].includes(request.verb) && !request.name))) throw methodNotAllowed();

    await authorize(ctx, request);
    const pretty = query.get('pretty') === 'true' || query.get('pretty') === '1';
    if (await serveCatalogRest({
      req, res, ctx, request, query, info, sub, namespace, pretty, clock, store: options.store, registryFor,
      lookup: (group, version, plural) => registry.lookup(group, version, plural),
      readJsonBody: () => readJsonBody(req),
      writeContext: (subresource) => writeContext(req, ctx, query, 'CreateOptions', subresource),
      agentTls: options.agentTls, rulesFor: options.rulesFor, probes: componentProbes, tokens: options.tokens,
      admitBinding: (wctx, name, body) => admitBinding(wctx, info, namespace, name, body),
      admitConnect: (connectOptions) => admitConnect(ctx, {
        group: info.group, version: info.version, resource: info.plural, subresource: sub?.name ?? '', namespace, name: request.name,
      }, connectOptions),
      admitCreate: async (object) => {
        const attributes = admissionAttributes(writeContext(req, ctx, query, 'CreateOptions', sub?.name ?? ''), 'CREATE', info, namespace, request.name, object);
        await admission.admit(attributes);
        await admission.validate(attributes);
      },
    })) return;
    const store = registryFor(info);
    const name = request.name;
    // Deprecated custom resource versions warn on every request (upstream's deprecation warning).
    const warning = store.hooks?.warning;
    if (warning) addResponseWarning(res, warning);
    const scaleOf = (object: JsonObject) => (store.hooks?.toScale ? store.hooks.toScale(object) : toScale(object, info.kind));
    const scaleInto = (object: JsonObject, body: unknown) => (store.hooks?.applyScale ? store.hooks.applyScale(object, body, name) : applyScale(object, body, name));

    switch (request.verb) {
      case 'get': {
        const rep = negotiate(acceptOf(req), !sub || sub.name === 'status', query.get('includeObject') ?? 'Metadata');
        const object = await store.get(namespace, name, query.get('resourceVersion') ?? undefined);
        if (sub?.name === 'scale') return writeJson(res, 200, scaleOf(object), { pretty });
        return respondObject(res, 200, object, rep, pretty, info);
      }
      case 'list': {
        const rep = negotiate(acceptOf(req), true, query.get('includeObject') ?? 'Metadata');
        const params = parseListParams(query, false);
        checkFieldSelector(store, params);
        const listMetadata = (listed: { resourceVersion: string; continue?: string }): JsonObject =>
          listed.continue ? { resourceVersion: listed.resourceVersion, continue: listed.continue } : { resourceVersion: listed.resourceVersion };
        if (rep.kind === 'table') {
          const listed = await store.list(namespace, params);
          const table = tableOf(store, listed.items, listMetadata(listed), rep);
          return writeJson(res, 200, table, { pretty, contentType: representationContentType(rep) });
        }
        // A JSON list is written item by item: its items are decoded as they are written.
        const listed = (await store.listLazily(namespace, params)) ?? (await store.list(namespace, params));
        const metadata = listMetadata(listed);
        return writeJsonList(res, 200, { kind: listKindOf(info), apiVersion: groupVersionOf(info), metadata, items: listed.items }, { pretty });
      }
      case 'watch': {
        const rep = negotiate(acceptOf(req), true, query.get('includeObject') ?? 'Metadata');
        const params = parseListParams(query, true);
        if (name) params.fieldSelector = [...params.fieldSelector, { field: 'metadata.name', operator: '=', value: name }];
        checkFieldSelector(store, params);
        let active: ActiveWatch | undefined;
        active = await serveWatch({
          registry: store, namespace, params, representation: rep, res, clock, bookmarkIntervalMs,
          defaultTimeoutSeconds: () => Math.floor(minRequestTimeout * (1 + Math.random())),
          onEnd: () => void (active && watches.delete(active)),
        });
        if (!active.ended()) watches.add(active);
        return;
      }
      case 'create': {
        if (sub?.name === 'binding') {
          const wctx = writeContext(req, ctx, query, 'CreateOptions', 'binding');
          const binding = await admitBinding(wctx, info, namespace, name, await readJsonBody(req));
          await store.update(namespace, name, { ...wctx, admitted: true }, (pod) => bindPod(pod, binding, name, clock.now()));
          return writeJson(res, 201, successStatus(201), { pretty });
        }
        const decoded = await readDecodedBody(req);
        const wctx = writeContext(req, ctx, query, 'CreateOptions', '');
        const warnings = validate(info, decoded.value, parseFieldValidation(query, 'CreateOptions'), 'create', '', decoded.text, wctx);
        const created = await store.create(namespace, decoded.value, wctx);
        if (info === crdInfo && !wctx.dryRun) informer.apply(created);
        return writeJson(res, 201, created, { pretty, warnings });
      }
      case 'update': {
        const { value: body, text: bodyText } = await readDecodedBody(req);
        const wctx = writeContext(req, ctx, query, 'UpdateOptions', sub?.name ?? '');
        if (sub?.name === 'scale') {
          const { object } = await store.update(namespace, name, wctx, (current) => preconditioned(store, name, current, scaleInto(current, body)));
          return writeJson(res, 200, scaleOf(object), { pretty });
        }
        if (sub?.name === 'finalize') {
          const { object } = await store.update(namespace, name, wctx, (current) => preconditioned(store, name, current, finalizeNamespace(current, body)));
          return writeJson(res, 200, object, { pretty });
        }
        const warnings = validate(info, body, parseFieldValidation(query, 'UpdateOptions'), 'update', name, bodyText, wctx);
        const { object, created } = await store.replace(namespace, name, body, wctx);
        if (info === crdInfo && !wctx.dryRun) informer.apply(object);
        return writeJson(res, created ? 201 : 200, object, { pretty, warnings });
      }
      case 'patch': {
        const contentType = req.headers['content-type'];
        const patchType = patchTypeOf(Array.isArray(contentType) ? contentType[0] : contentType, info.custom === true);
        if (patchType === 'apply') return serveApply(req, res, ctx, query, info, store, namespace, name, sub?.name, pretty);
        const body = await readBody(req, maxBody);
        const wctx = writeContext(req, ctx, query, 'PatchOptions', sub?.name ?? '');
        const mode = parseFieldValidation(query, 'PatchOptions');
        let warnings: string[] = [];
        const { object } = await store.update(namespace, name, wctx, (current) => {
          if (sub?.name === 'scale') {
            const patched = applyServerPatch(scaleOf(deepCopy(current)), body, patchType);
            return preconditioned(store, name, current, scaleInto(current, patched));
          }
          const patched = applyServerPatch(current, body, patchType);
          checkDepth(patched);
          warnings = validate(info, patched, mode, 'patch', name, patchType === 'json' ? undefined : { text: body.toString('utf8'), yaml: false }, wctx);
          const checked = preconditioned(store, name, current, patched);
          return subresourceWrite(sub?.name, checked, current, clock.now());
        });
        if (info === crdInfo && !wctx.dryRun) informer.apply(object);
        if (sub?.name === 'scale') return writeJson(res, 200, scaleOf(object), { pretty });
        return writeJson(res, 200, object, { pretty, warnings });
      }
      case 'delete': {
        const body = await readOptionalBody(req);
        const { options: deleteOptions, dryRun } = toDeleteOptions(query, body);
        const wctx = writeContext(req, ctx, query, 'DeleteOptions', '', dryRun);
        wctx.operationOptions = { ...wctx.operationOptions, ...deleteOptionsObject(deleteOptions) };
        if (info === crdInfo) return deleteCrd(res, name, deleteOptions, wctx, pretty);
        const result = await store.delete(namespace, name, deleteOptions, wctx);
        return writeJson(res, result.code, result.body, { pretty });
      }
      case 'deletecollection': {
        const body = await readOptionalBody(req);
        const { options: deleteOptions, dryRun } = toDeleteOptions(query, body);
        const wctx = writeContext(req, ctx, query, 'DeleteOptions', '', dryRun);
        wctx.operationOptions = { ...wctx.operationOptions, ...deleteOptionsObject(deleteOptions) };
        const params = parseListParams(query, false);
        checkFieldSelector(store, params);
        const deleted = await store.deleteCollection(namespace, params, deleteOptions, wctx);
        return writeJson(res, 200, { kind: listKindOf(info), apiVersion: groupVersionOf(info), metadata: {}, items: deleted }, { pretty });
      }
      default:
        throw methodNotAllowed();
    }
  }

  /**
   * PATCH with application/apply-patch+yaml: server-side apply of the main resource or its status;
   * creates the object when it does not exist (upstream's applyPatcher with createIfNotFound).
   */
  async function serveApply(
    req: ApiRequest, res: ApiResponse, ctx: RequestContext, query: URLSearchParams, info: ResourceInfo, store: RegistryStore,
    namespace: string, name: string, subresource: string | undefined, pretty: boolean,
  ): Promise<void> {
    if (subresource && subresource !== 'status') throw serverSideApplyUnsupported();
    const userAgent = req.headers['user-agent'];
    const params = parseWriteParams(query, 'PatchOptions', managerFromUserAgent(Array.isArray(userAgent) ? userAgent[0] : userAgent), [], true);
    const raw = await readBody(req, maxBody);
    const config = parseApplyBody(raw);
    const warnings = validate(info, config, parseFieldValidation(query, 'PatchOptions'), 'apply', name, { text: raw.toString('utf8'), yaml: true }, undefined);
    const configName = stringAt(config, 'metadata', 'name');
    if (configName !== undefined && configName !== '' && configName !== name) {
      throw badRequest(`the name of the object (${configName}) does not match the name on the URL (${name})`);
    }
    const wctx: WriteContext = {
      user: ctx.user, dryRun: params.dryRun, fieldManager: params.fieldManager, subresource: subresource ?? '', managedFieldsComputed: true,
      authorize: (a) => ctx.authorize(a), operationOptions: operationOptions('PatchOptions', query, params.dryRun),
      addWarning: ctx.addWarning, addAuditAnnotation: ctx.addAuditAnnotation,
    };
    const request: ApplyRequest = {
      info, namespace, name, config, manager: params.fieldManager, force: params.force, subresource, time: rfc3339(clock.now()),
    };
    const { object, created } = await store.update(namespace, name, wctx, (current) => {
      const applied = applyToObject(current, request);
      checkDepth(applied);
      appliedRequired(info, applied, wctx);
      const checked = preconditioned(store, name, current, applied);
      return subresourceWrite(subresource, checked, current, clock.now());
    }, { createIfMissing: subresource ? undefined : () => {
      const created = applyToObject(undefined, request);
      appliedRequired(info, created, wctx);
      return created;
    } });
    if (info === crdInfo && !wctx.dryRun) informer.apply(object);
    return writeJson(res, created ? 201 : 200, object, { pretty, warnings });
  }

  /** Deleting a CRD removes its custom objects first (upstream's customresourcecleanup finalizer, done inline). */
  async function deleteCrd(res: ApiResponse, name: string, deleteOptions: DeleteOptions, wctx: WriteContext, pretty: boolean): Promise<void> {
    const crds = registryFor(crdInfo);
    const crd = await crds.get('', name);
    const group = stringAt(crd, 'spec', 'group') ?? '';
    const plural = stringAt(crd, 'spec', 'names', 'plural') ?? '';
    const result = await crds.delete('', name, deleteOptions, wctx);
    if (!wctx.dryRun && result.body.kind === 'Status') {
      informer.remove(name);
      const prefix = `${keyPrefix}/${group}/${plural}/`;
      const listed = await store.list(prefix);
      for (const kv of listed.items) await store.delete(kv.key);
      await reconsiderNames(group, wctx);
    }
    writeJson(res, result.code, result.body, { pretty });
  }

  /**
   * A deleted CRD frees its names: CRDs of its group refused for a conflict are checked again
   * (upstream's naming controller requeues them), and become served if nothing conflicts now.
   */
  async function reconsiderNames(group: string, wctx: WriteContext): Promise<void> {
    const crds = registryFor(crdInfo);
    for (const other of informer.all()) {
      if (stringAt(other, 'spec', 'group') !== group) continue;
      const conditions = valueAt(other, 'status', 'conditions');
      const refused = Array.isArray(conditions) && conditions.some((c) => isJsonObject(c) && c.type === 'NamesAccepted' && c.status === 'False');
      if (!refused) continue;
      const name = stringAt(other, 'metadata', 'name') ?? '';
      try {
        // An update that changes nothing but the status the strategy computes again.
        const { object } = await crds.update('', name, { ...wctx, subresource: '' }, (current) => current);
        informer.apply(object);
      } catch {
        // It went away meanwhile, or the store is busy: the next write of that CRD decides.
      }
    }
  }

  async function readOptionalBody(req: ApiRequest): Promise<unknown> {
    const body = await readBody(req, maxBody);
    if (body.length === 0) return undefined;
    try {
      return JSON.parse(body.toString('utf8'));
    } catch (error) {
      throw badRequest(`json: ${(error as Error).message}`);
    }
  }

  function acceptOf(req: ApiRequest): string | undefined {
    const accept = req.headers.accept;
    return Array.isArray(accept) ? accept.join(',') : accept;
  }

  // -------------------------------------------------------------------------------------------

  const handler = async (req: ApiRequest, res: ApiResponse, ctx: RequestContext): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = (req.method ?? 'GET').toUpperCase();
    let info;
    try {
      info = parseRequestInfo(method, url.pathname, url.searchParams);
    } catch {
      info = { type: 'unknownUnderApi' as const, group: '' };
    }
    if (info.type === 'none') return false;
    const pretty = url.searchParams.get('pretty') === 'true';
    try {
      switch (info.type) {
        case 'version':
          await authorize(ctx, { path: url.pathname, verb: 'get' });
          writeJson(res, 200, options.version, { pretty });
          return true;
        case 'openapi': {
          await authorize(ctx, { path: url.pathname, verb: 'get' });
          openApi.serve(req, res, url);
          return true;
        }
        case 'coreVersions':
          await authorize(ctx, { path: url.pathname, verb: 'get' });
          writeJson(res, 200, apiVersions(options.serverAddresses ?? []), { pretty });
          return true;
        case 'coreResources':
          await authorize(ctx, { path: url.pathname, verb: 'get' });
          writeJson(res, 200, apiResourceList(registry, '', 'v1'), { pretty });
          return true;
        case 'groups':
          await authorize(ctx, { path: url.pathname, verb: 'get' });
          writeJson(res, 200, apiGroupList(registry), { pretty });
          return true;
        case 'group': {
          await authorize(ctx, { path: url.pathname, verb: 'get' });
          const doc = apiGroup(registry, info.group);
          if (!doc) writePlainNotFound(res);
          else writeJson(res, 200, doc, { pretty });
          return true;
        }
        case 'groupResources': {
          await authorize(ctx, { path: url.pathname, verb: 'get' });
          const doc = apiResourceList(registry, info.group, info.version);
          if (!doc) writePlainNotFound(res);
          else writeJson(res, 200, doc, { pretty });
          return true;
        }
        case 'unknownUnderApi':
          if (info.group !== '' && !registry.hasGroup(info.group)) writePlainNotFound(res);
          else writeError(res, notFoundResource(), pretty);
          return true;
        case 'resource':
          if (info.apiGroup !== '' && !registry.hasGroup(info.apiGroup)) {
            writePlainNotFound(res);
            return true;
          }
          // Admission's warnings go out with the response, whether it succeeds or not.
          await serveResource(req, res, { ...ctx, addWarning: (text) => addResponseWarning(res, text) }, info, url.searchParams);
          return true;
      }
    } catch (error) {
      if (res.headersSent) {
        res.end();
        return true;
      }
      writeError(res, toApiError(error), pretty);
      return true;
    }
    return true;
  };

  const api = handler as ApiHandler;
  Object.defineProperty(api, 'registry', { value: registry });
  Object.defineProperty(api, 'schemas', { value: schemas });
  api.crdInformerSynced = () => informer.hasSynced();
  api.whenSynced = () => synced;
  api.activeWatches = () => watches.size;
  api.closeWatches = () => {
    for (const watch of [...watches]) watch.close();
  };
  api.stop = () => {
    informer.stop();
    api.closeWatches();
  };
  Object.defineProperty(api, 'admissionObjects', { value: registryObjects(registry, registryFor, store) });
  api.setAdmission = (next) => {
    chain = next;
  };
  api.admitConnect = admitConnect;
  return api;
}

/**
 * The options object of a write as admission sees it (upstream decodes CreateOptions, UpdateOptions
 * or PatchOptions from the query): what the client set, nothing defaulted.
 */
function operationOptions(kind: string, query: URLSearchParams, dryRun: boolean): JsonObject {
  const options: JsonObject = { kind, apiVersion: `${names().groups.meta}/v1` };
  if (dryRun) options.dryRun = ['All'];
  const fieldManager = query.get('fieldManager');
  if (fieldManager) options.fieldManager = fieldManager;
  const fieldValidation = query.get('fieldValidation');
  if (fieldValidation) options.fieldValidation = fieldValidation;
  if (kind === 'PatchOptions' && query.get('force') !== null) options.force = query.get('force') === 'true';
  return options;
}

function deleteOptionsObject(options: DeleteOptions): JsonObject {
  const out: JsonObject = {};
  if (options.gracePeriodSeconds !== undefined) out.gracePeriodSeconds = options.gracePeriodSeconds;
  if (options.propagationPolicy) out.propagationPolicy = options.propagationPolicy;
  if (options.orphanDependents !== undefined) out.orphanDependents = options.orphanDependents;
  if (options.preconditions) {
    const preconditions: JsonObject = {};
    if (options.preconditions.uid) preconditions.uid = options.preconditions.uid;
    if (options.preconditions.resourceVersion) preconditions.resourceVersion = options.preconditions.resourceVersion;
    out.preconditions = preconditions;
  }
  return out;
}

/** A resourceVersion left in the written object (from the body or a patch) must be the current one. */
function preconditioned(store: RegistryStore, name: string, current: JsonObject, next: JsonObject): JsonObject {
  const wanted = stringAt(next, 'metadata', 'resourceVersion');
  if (wanted !== undefined && wanted !== '' && wanted !== stringAt(current, 'metadata', 'resourceVersion')) {
    throw new ApiError(failureStatus(409, 'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource(store.gr)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      { name, group: store.gr.group, kind: store.gr.resource }));
  }
  return next;
}

function checkFieldSelector(store: RegistryStore, params: ListParams): void {
  if (params.fieldSelector.length === 0) return;
  const known = new Set(Object.keys(store.strategy.fields({ metadata: {} } as JsonObject)));
  for (const requirement of params.fieldSelector) {
    if (!known.has(requirement.field)) throw badRequest(`field label not supported: ${requirement.field}`);
  }
}

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof StoreUnavailableError) return serviceUnavailable(error.message || 'the storage is unavailable');
  return internalError(error);
}


