/**
 * The REST API handler: discovery, `/version`, and every verb on every served resource and
 * subresource, over a Store. Framework-free: `(req, res, ctx) => Promise<boolean>`, answering
 * false for paths that are not the API's so the server can route them elsewhere.
 */
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
import { AdmissionChain, NamespaceLifecycle, type AdmissionPlugin } from './admission.js';
import { CrdInformer, crdStrategy } from './crd.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, type ServerAddress } from './discovery.js';
import { checkDepth, MAX_REQUEST_BODY_BYTES, readBody, writeError, writeJson, writePlainNotFound } from './http-io.js';
import { parseListParams, parseWriteParams, type ListParams } from './list-options.js';
import { decodeBody, negotiate, patchTypeOf, representationContentType, type Representation } from './negotiation.js';
import { deepCopy, stringAt } from './objects.js';
import { OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_ACCEPT, openApiDocument, openApiRoot, openApiV2Document, openApiV2Protobuf } from './openapi.js';
import { applyServerPatch, serverSideApplyUnsupported } from './patch.js';
import { parseRequestInfo, type ResourceRequest } from './request-info.js';
import { RegistryStore, statusOnly, type DeleteOptions, type WriteContext } from './registry-store.js';
import { strategyFor } from './strategies.js';
import { applyScale, bindPod, finalizeNamespace, toScale } from './subresources.js';
import { systemClock, type ApiRequest, type ApiResponse, type Clock, type RequestContext, type ServerVersion } from './types.js';
import { serveWatch, type ActiveWatch } from './watch.js';

export interface ApiHandlerOptions {
  store: Store;
  clock?: Clock;
  /** The kvstore key prefix (`--kvstore-prefix`, default `/registry`). */
  keyPrefix?: string;
  /** What `/version` answers. */
  version: ServerVersion;
  /** `serverAddressByClientCIDRs` of `/api` (default: none... upstream always lists at least one). */
  serverAddresses?: ServerAddress[];
  /** Admission plugins after NamespaceLifecycle, in order. */
  admissionPlugins?: AdmissionPlugin[];
  /** `--min-request-timeout` in seconds: watches without timeoutSeconds last 1-2x this. */
  minRequestTimeoutSeconds?: number;
  bookmarkIntervalMs?: number;
  maxRequestBodyBytes?: number;
  /** A shared resource registry (tests, or a server that serves it elsewhere too). */
  registry?: ResourceRegistry;
}

export interface ApiHandler {
  (req: ApiRequest, res: ApiResponse, ctx: RequestContext): Promise<boolean>;
  /** The served resources (built-ins and established CRDs). */
  readonly registry: ResourceRegistry;
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

  const registries = new Map<ResourceInfo, RegistryStore>();
  const namespaceInfo = registry.lookup('', 'v1', 'namespaces')!;
  const crdInfo = registry.lookup(names().groups.apiextensions, 'v1', 'customresourcedefinitions')!;

  // Admission needs to read namespaces; it goes through the same registry as the API.
  const getNamespace = async (name: string) => {
    const kv = await store.get(registryFor(namespaceInfo).key('', name));
    return kv ? (JSON.parse(kv.value) as JsonObject) : undefined;
  };
  const admission = new AdmissionChain([new NamespaceLifecycle(getNamespace), ...(options.admissionPlugins ?? [])]);

  function registryFor(info: ResourceInfo): RegistryStore {
    let found = registries.get(info);
    if (!found) {
      const base = strategyFor(info);
      // Custom resources: their CRD's schema, conversion and printing (custom-resources.ts).
      const runtime = info.custom ? informer.runtime(info.group, info.plural) : undefined;
      const strategy = info === crdInfo ? crdStrategy(base, clock, () => informer.all()) : runtime ? runtime.strategyFor(base, info) : base;
      found = new RegistryStore(info, { store, clock, keyPrefix, admission, hooks: runtime?.hooks(info.version) }, strategy);
      registries.set(info, found);
    }
    return found;
  }

  const crdPrefix = `${keyPrefix}/${crdInfo.storagePrefix}/`;
  const informer = new CrdInformer(store, registry, crdPrefix);
  const synced = informer.start();

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
    return { user: ctx.user, dryRun: params.dryRun, fieldManager: params.fieldManager, subresource };
  }

  async function readJsonBody(req: ApiRequest): Promise<unknown> {
    const body = await readBody(req, maxBody);
    const contentType = req.headers['content-type'];
    const value = decodeBody(Array.isArray(contentType) ? contentType[0] : contentType, body);
    checkDepth(value);
    return value;
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
    const store = registryFor(info);
    const name = request.name;
    // Deprecated custom resource versions warn on every request (upstream's deprecation warning).
    const warning = store.hooks?.warning;
    const setHeader = (res as { setHeader?: (name: string, value: string) => void }).setHeader;
    if (warning && setHeader) setHeader.call(res, 'Warning', `299 - ${JSON.stringify(warning)}`);
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
        const listed = await store.list(namespace, params);
        const metadata: JsonObject = { resourceVersion: listed.resourceVersion };
        if (listed.continue) metadata.continue = listed.continue;
        if (rep.kind === 'table') {
          const table = tableOf(store, listed.items, metadata, rep);
          return writeJson(res, 200, table, { pretty, contentType: representationContentType(rep) });
        }
        return writeJson(res, 200, { kind: listKindOf(info), apiVersion: groupVersionOf(info), metadata, items: listed.items }, { pretty });
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
          const body = await readJsonBody(req);
          const wctx = writeContext(req, ctx, query, 'CreateOptions', 'binding');
          await store.update(namespace, name, wctx, (pod) => bindPod(pod, body, name, clock.now()));
          return writeJson(res, 201, successStatus(201), { pretty });
        }
        const body = await readJsonBody(req);
        const wctx = writeContext(req, ctx, query, 'CreateOptions', '');
        const created = await store.create(namespace, body, wctx);
        if (info === crdInfo && !wctx.dryRun) informer.apply(created);
        return writeJson(res, 201, created, { pretty });
      }
      case 'update': {
        const body = await readJsonBody(req);
        const wctx = writeContext(req, ctx, query, 'UpdateOptions', sub?.name ?? '');
        if (sub?.name === 'scale') {
          const { object } = await store.update(namespace, name, wctx, (current) => preconditioned(store, name, current, scaleInto(current, body)));
          return writeJson(res, 200, scaleOf(object), { pretty });
        }
        if (sub?.name === 'finalize') {
          const { object } = await store.update(namespace, name, wctx, (current) => preconditioned(store, name, current, finalizeNamespace(current, body)));
          return writeJson(res, 200, object, { pretty });
        }
        const { object, created } = await store.replace(namespace, name, body, wctx);
        if (info === crdInfo && !wctx.dryRun) informer.apply(object);
        return writeJson(res, created ? 201 : 200, object, { pretty });
      }
      case 'patch': {
        const contentType = req.headers['content-type'];
        const patchType = patchTypeOf(Array.isArray(contentType) ? contentType[0] : contentType, info.custom === true);
        if (patchType === 'apply') throw serverSideApplyUnsupported();
        const body = await readBody(req, maxBody);
        const wctx = writeContext(req, ctx, query, 'PatchOptions', sub?.name ?? '');
        const { object } = await store.update(namespace, name, wctx, (current) => {
          if (sub?.name === 'scale') {
            const patched = applyServerPatch(scaleOf(deepCopy(current)), body, patchType);
            return preconditioned(store, name, current, scaleInto(current, patched));
          }
          const patched = applyServerPatch(current, body, patchType);
          checkDepth(patched);
          const checked = preconditioned(store, name, current, patched);
          return sub?.name === 'status' ? statusOnly(checked, current) : checked;
        });
        if (info === crdInfo && !wctx.dryRun) informer.apply(object);
        if (sub?.name === 'scale') return writeJson(res, 200, scaleOf(object), { pretty });
        return writeJson(res, 200, object, { pretty });
      }
      case 'delete': {
        const body = await readOptionalBody(req);
        const { options: deleteOptions, dryRun } = toDeleteOptions(query, body);
        const wctx = writeContext(req, ctx, query, 'DeleteOptions', '', dryRun);
        if (info === crdInfo) return deleteCrd(res, name, deleteOptions, wctx, pretty);
        const result = await store.delete(namespace, name, deleteOptions, wctx);
        return writeJson(res, result.code, result.body, { pretty });
      }
      case 'deletecollection': {
        const body = await readOptionalBody(req);
        const { options: deleteOptions, dryRun } = toDeleteOptions(query, body);
        const wctx = writeContext(req, ctx, query, 'DeleteOptions', '', dryRun);
        const params = parseListParams(query, false);
        checkFieldSelector(store, params);
        const deleted = await store.deleteCollection(namespace, params, deleteOptions, wctx);
        return writeJson(res, 200, { kind: listKindOf(info), apiVersion: groupVersionOf(info), metadata: {}, items: deleted }, { pretty });
      }
      default:
        throw methodNotAllowed();
    }
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
    }
    writeJson(res, result.code, result.body, { pretty });
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

  /** `/openapi/v3` and its group-version documents (`/openapi/v2` is answered in the handler). */
  function serveOpenApi(pathname: string): JsonObject | undefined {
    const parts = pathname.split('/').filter(Boolean);
    if (parts[1] !== 'v3') return undefined;
    // Custom resources' schemas come from their CRDs (custom-resources.ts, crdOpenApi).
    const schemasOf = (group: string, version: string) => informer.openApiSchemas(group, version);
    if (parts.length === 2) return openApiRoot(registry, schemasOf);
    if (parts[2] === 'api' && parts.length === 4) return openApiDocument(registry, '', parts[3]!, schemasOf);
    if (parts[2] === 'apis' && parts.length === 5) return openApiDocument(registry, parts[3]!, parts[4]!, schemasOf);
    return undefined;
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
          if (url.pathname.replace(/\/+$/, '') === '/openapi/v2') {
            const accept = acceptOf(req) ?? '';
            if (accept.includes(OPENAPI_V2_PROTOBUF_ACCEPT) || accept.includes(OPENAPI_V2_PROTOBUF)) {
              const body = openApiV2Protobuf();
              res.writeHead(200, { 'Content-Type': OPENAPI_V2_PROTOBUF, 'Content-Length': body.length });
              res.end(body);
            } else writeJson(res, 200, openApiV2Document(), { pretty });
            return true;
          }
          const doc = serveOpenApi(url.pathname);
          if (!doc) writePlainNotFound(res);
          else writeJson(res, 200, doc, { pretty });
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
          await serveResource(req, res, ctx, info, url.searchParams);
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
  return api;
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


