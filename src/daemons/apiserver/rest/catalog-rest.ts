/**
 * The catalog's REST behaviour beyond the generic registry, one place the handler asks before its
 * generic verbs: reviews (create-only, not stored), componentstatuses (computed), pods/eviction,
 * serviceaccounts/token (TokenRequest: ./token-request.ts), CSR create (the requester recorded in
 * the spec, as upstream's strategy does), core bindings, and the proxy subresources.
 */
import type {ResourceInfo, SubresourceInfo} from '../../../api/resources.js';
import {ApiError, badRequest, failureStatus, successStatus} from '../../../api/status.js';
import {toTable} from '../../../api/table.js';
import {isJsonObject, type JsonObject} from '../../../patch/types.js';
import type {Store} from '../storage/store.js';
import {getComponentStatus, listComponentStatuses, type ComponentProbe} from './component-status.js';
import {evict} from './eviction.js';
import {writeJson} from './http-io.js';
import {negotiate, representationContentType} from './negotiation.js';
import {metadataOf, stringAt} from './objects.js';
import {bindPod} from './subresources.js';
import {forward, proxiedPath, proxyOptions, proxyTarget, type AgentTls} from './proxy.js';
import type {RegistryStore, WriteContext} from './registry-store.js';
import type {ResourceRequest} from './request-info.js';
import {requestToken, type TokenServices} from './token-request.js';
import {review, type RulesResolver} from './reviews.js';
import type {ApiRequest, ApiResponse, Clock, RequestContext} from './types.js';

export interface CatalogRestContext {
  req: ApiRequest;
  res: ApiResponse;
  ctx: RequestContext;
  request: ResourceRequest;
  query: URLSearchParams;
  info: ResourceInfo;
  sub?: SubresourceInfo;
  namespace: string;
  pretty: boolean;
  clock: Clock;
  store: Store;
  registryFor(info: ResourceInfo): RegistryStore;
  lookup(group: string, version: string, plural: string): ResourceInfo | undefined;
  readJsonBody(): Promise<unknown>;
  writeContext(subresource: string): WriteContext;
  agentTls?: AgentTls;
  rulesFor?: RulesResolver;
  probes: ComponentProbe[];
  tokens?: TokenServices;
  /** Admission of a Binding (CREATE of this resource with the Binding as the object); answers the admitted Binding. */
  admitBinding(wctx: WriteContext, name: string, body: unknown): Promise<JsonObject>;
  /** CONNECT admission of the request with its connect options (proxy subresources); throws when refused. */
  admitConnect(options: JsonObject): Promise<void>;
  /**
   * CREATE admission of a subresource's body that is not stored as such (an Eviction, a TokenRequest),
   * as upstream's create handler runs it; throws when refused.
   */
  admitCreate(object: JsonObject): Promise<void>;
}

/** serviceaccounts/token on a server without a token issuer: 501 naming what is missing (never 404: the subresource exists). */
export function tokenRequestUnavailable(name: string): ApiError {
  return new ApiError(failureStatus(501, 'NotImplemented',
    `serviceaccounts "${name}" token: this server has no service account token issuer; nothing was created`,
    {name, kind: 'serviceaccounts'}));
}

function acceptOf(req: ApiRequest): string | undefined {
  const accept = req.headers.accept;
  return Array.isArray(accept) ? accept.join(',') : accept;
}

function respond(c: CatalogRestContext, code: number, items: JsonObject[], single: boolean): void {
  const rep = negotiate(acceptOf(c.req), true, c.query.get('includeObject') ?? 'Metadata');
  if (rep.kind === 'table') {
    const table = toTable(c.info.kind, items, {}, {apiVersion: `${rep.group}/${rep.version}`, includeObject: rep.includeObject, now: c.clock.now()});
    writeJson(c.res, code, table, {pretty: c.pretty, contentType: representationContentType(rep)});
    return;
  }
  const apiVersion = c.info.group ? `${c.info.group}/${c.info.version}` : c.info.version;
  writeJson(c.res, code, single ? items[0] : {kind: `${c.info.kind}List`, apiVersion, metadata: {}, items}, {pretty: c.pretty});
}

/** Serves the request when the catalog has its own behaviour for it; false for the generic registry. */
export async function serveCatalogRest(c: CatalogRestContext): Promise<boolean> {
  const {info, sub, request} = c;
  if (info.group === '' && info.plural === 'bindings') {
    const body = await c.readJsonBody();
    const name = isJsonObject(body) ? stringAt(body, 'metadata', 'name') : undefined;
    if (!name) throw badRequest('a Binding needs metadata.name: the name of the pod to bind');
    const wctx = c.writeContext('binding');
    const binding = await c.admitBinding(wctx, name, body);
    await c.registryFor(c.lookup('', 'v1', 'pods')!).update(c.namespace, name, {...wctx, admitted: true}, (pod) => bindPod(pod, binding, name, c.clock.now()));
    writeJson(c.res, 201, successStatus(201), {pretty: c.pretty});
    return true;
  }
  if (info.rest === 'review') {
    const created = await review(await c.readJsonBody(), {info, namespace: c.namespace, ctx: c.ctx, rulesFor: c.rulesFor, tokens: c.tokens});
    writeJson(c.res, 201, created, {pretty: c.pretty});
    return true;
  }
  if (info.rest === 'computed') {
    if (request.name) respond(c, 200, [await getComponentStatus(c.probes, request.name)], true);
    else respond(c, 200, await listComponentStatuses(c.probes), false);
    return true;
  }
  if (info.group === '' && sub?.name === 'proxy') {
    const deps = {
      nodes: c.registryFor(c.lookup('', 'v1', 'nodes')!), pods: c.registryFor(c.lookup('', 'v1', 'pods')!),
      endpoints: c.registryFor(c.lookup('', 'v1', 'endpoints')!), services: c.registryFor(c.lookup('', 'v1', 'services')!), agentTls: c.agentTls,
    };
    const path = proxiedPath(c.req.url ?? '/', info.plural, request.name);
    await c.admitConnect(proxyOptions(info.plural, path.split('?')[0]));
    const target = await proxyTarget(deps, info.plural, c.namespace, request.name);
    await forward(c.req, c.res, target, path, info.plural === 'nodes' ? c.agentTls : undefined);
    return true;
  }
  if (info.group === '' && info.plural === 'pods' && sub?.name === 'eviction') {
    const policyInfo = c.lookup('policy', 'v1', 'poddisruptionbudgets')!;
    const body = await c.readJsonBody();
    if (isJsonObject(body)) await c.admitCreate(body);
    const status = await evict(
      {pods: c.registryFor(info), budgets: c.registryFor(policyInfo), now: () => c.clock.now()},
      c.namespace, request.name, body, c.writeContext('eviction'),
    );
    writeJson(c.res, 201, status, {pretty: c.pretty});
    return true;
  }
  if (info.group === '' && info.plural === 'serviceaccounts' && sub?.name === 'token') {
    if (!c.tokens?.issuer) {
      await c.registryFor(info).get(c.namespace, request.name);
      throw tokenRequestUnavailable(request.name);
    }
    const get = (plural: 'serviceaccounts' | 'pods' | 'secrets', name: string) => c.registryFor(c.lookup('', 'v1', plural)!).get(c.namespace, name);
    const body = await c.readJsonBody();
    if (isJsonObject(body)) await c.admitCreate(body);
    const {object, warnings} = await requestToken(body, c.namespace, request.name, c.tokens.issuer, get, c.clock.now());
    writeJson(c.res, 201, object, {pretty: c.pretty, warnings});
    return true;
  }
  if (info.kind === 'CertificateSigningRequest' && request.verb === 'create' && !sub) {
    const body = await c.readJsonBody();
    if (!isJsonObject(body)) throw badRequest('the body of the request must be a CertificateSigningRequest object');
    recordRequester(body, c.ctx);
    const created = await c.registryFor(info).create('', body, c.writeContext(''));
    writeJson(c.res, 201, created, {pretty: c.pretty});
    return true;
  }
  return false;
}

/** Upstream's csr strategy: the requesting user's identity is the CSR's, whatever the body says. */
function recordRequester(csr: JsonObject, ctx: RequestContext): void {
  metadataOf(csr);
  const spec = isJsonObject(csr.spec) ? csr.spec : (csr.spec = {});
  spec.username = ctx.user.name;
  if (ctx.user.uid) spec.uid = ctx.user.uid;
  else delete spec.uid;
  if (ctx.user.groups.length) spec.groups = [...ctx.user.groups];
  else delete spec.groups;
  if (ctx.user.extra && Object.keys(ctx.user.extra).length) spec.extra = ctx.user.extra as unknown as JsonObject;
  else delete spec.extra;
}
