/**
 * The aggregator's place in the request path (upstream's aggregator sits in front of the API
 * server): `/apis` merged with the aggregated groups, `/apis/<group>` of a group only APIServices
 * serve, and every request under a non-local APIService's group version, authorized as the API
 * server authorizes its own requests, then proxied. Anything else is the local handler's.
 */
import {ApiError, forbidden} from '../../../api/status.js';
import {apiGroupList} from '../rest/discovery.js';
import {writeError, writeJson} from '../rest/http-io.js';
import {parseRequestInfo, type ResourceRequest} from '../rest/request-info.js';
import type {ApiRequest, ApiResponse, RequestContext} from '../rest/types.js';
import type {ResourceRegistry} from '../../../api/resources.js';
import type {Aggregator} from './aggregator.js';

export async function serveAggregated(aggregator: Aggregator, registry: ResourceRegistry, req: ApiRequest, res: ApiResponse, ctx: RequestContext): Promise<boolean> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname.replace(/\/+$/, '') || '/';
  const method = (req.method ?? 'GET').toUpperCase();
  const pretty = url.searchParams.get('pretty') === 'true';
  try {
    if (path === '/apis' && method === 'GET') {
      await allowPath(ctx, path);
      writeJson(res, 200, aggregator.groupList(apiGroupList(registry)), {pretty});
      return true;
    }
    const group = /^\/apis\/([^/]+)$/.exec(path)?.[1];
    if (group !== undefined && method === 'GET' && !registry.hasGroup(group)) {
      const doc = aggregator.group(group);
      if (!doc) return false;
      await allowPath(ctx, path);
      writeJson(res, 200, doc, {pretty});
      return true;
    }
    const view = aggregator.lookup(path);
    if (!view) return false;
    const info = parseRequestInfo(method, url.pathname, url.searchParams);
    if (info.type === 'resource') await authorizeResourceRequest(ctx, info);
    else await allowPath(ctx, path, method === 'GET' ? 'get' : method.toLowerCase());
    await aggregator.proxy(req, res, view, ctx.user);
    return true;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (res.headersSent) res.end();
    else writeError(res, error, pretty);
    return true;
  }
}

/**
 * Authorizes a resource request the local handler will not see (it is proxied: to an extension
 * server here, to a peer API server in ../peers/), as upstream's authorization filter does before
 * any proxying; throws upstream's 403 when it is not allowed.
 */
export async function authorizeResourceRequest(ctx: RequestContext, info: ResourceRequest): Promise<void> {
  const decision = await ctx.authorize({
    user: ctx.user, verb: info.verb, resourceRequest: true, apiGroup: info.apiGroup, apiVersion: info.apiVersion,
    resource: info.resource, subresource: info.subresource, namespace: info.namespace, name: info.name, path: '',
  });
  if (!decision.allowed) {
    const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
    const scope = info.namespace ? `in the namespace "${info.namespace}"` : 'at the cluster scope';
    throw forbidden({group: info.apiGroup, resource}, info.name, `User "${ctx.user.name}" cannot ${info.verb} resource "${resource}" in API group "${info.apiGroup}" ${scope}${decision.reason ? `: ${decision.reason}` : ''}`);
  }
}

async function allowPath(ctx: RequestContext, path: string, verb = 'get'): Promise<void> {
  const decision = await ctx.authorize({
    user: ctx.user, verb, resourceRequest: false, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '', path,
  });
  if (!decision.allowed) throw forbiddenError(`forbidden: User "${ctx.user.name}" cannot ${verb} path "${path}"${decision.reason ? `: ${decision.reason}` : ''}`);
}

function forbiddenError(message: string): ApiError {
  return new ApiError({kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Forbidden', details: {}, code: 403});
}
