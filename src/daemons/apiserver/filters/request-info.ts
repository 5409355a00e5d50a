/**
 * What the filters need to know about a request before any REST routing: its verb (get, list,
 * watch, create, ... or the lower-case HTTP method for non-resource paths) and whether it is
 * long-running. Follows upstream's RequestInfoFactory (apiserver/pkg/endpoints/request) with the
 * API prefixes `/api` (groupless) and `/apis`, and kube-apiserver's long-running rule: the verbs
 * watch and proxy, and the subresources attach, exec, proxy, log and portforward.
 */
import {requestPath, requestQuery, type RequestLike} from '../../shared/http/http-types.js';

export interface RequestInfo {
  isResourceRequest: boolean;
  verb: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

const SPECIAL_VERBS = new Set(['proxy', 'watch']);
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);
const METHOD_VERBS: Record<string, string> = {POST: 'create', GET: 'get', HEAD: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete'};
/** Verbs that only read; everything else counts against the mutating in-flight limit. */
const NON_MUTATING_VERBS = new Set(['get', 'list', 'watch']);

/**
 * Each request's info, computed once: the stats, timeout, in-flight and shutdown filters all ask for
 * it, and parsing the path (decodeURIComponent, splits) on every ask was a visible share of a request.
 * Keyed on the request and its URL, so a rewritten URL is parsed again.
 */
const infos = new WeakMap<RequestLike, {url: string | undefined; method: string | undefined; info: RequestInfo}>();

export function requestInfoOf(req: RequestLike): RequestInfo {
  const cached = infos.get(req);
  if (cached && cached.url === req.url && cached.method === req.method) return cached.info;
  const info = parseRequestInfo(req);
  infos.set(req, {url: req.url, method: req.method, info});
  return info;
}

function parseRequestInfo(req: RequestLike): RequestInfo {
  const method = (req.method ?? 'GET').toUpperCase();
  const info: RequestInfo = {
    isResourceRequest: false,
    verb: method.toLowerCase(),
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
  let parts = requestPath(req).split('/').filter((p) => p !== '');
  if (parts.length < 3 || (parts[0] !== 'api' && parts[0] !== 'apis')) return info;
  const groupless = parts[0] === 'api';
  parts = parts.slice(1);
  if (!groupless) {
    if (parts.length < 3) return info;
    info.apiGroup = parts[0]!;
    parts = parts.slice(1);
  }
  info.isResourceRequest = true;
  info.apiVersion = parts[0]!;
  parts = parts.slice(1);

  if (SPECIAL_VERBS.has(parts[0]!) && parts.length >= 2) {
    info.verb = parts[0]!;
    parts = parts.slice(1);
  } else {
    info.verb = METHOD_VERBS[method] ?? '';
  }

  if (parts[0] === 'namespaces' && parts.length > 1) {
    info.namespace = parts[1]!;
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
  }
  if (parts.length >= 3 && info.verb !== 'proxy') info.subresource = parts[2]!;
  if (parts.length >= 2) info.name = parts[1]!;
  if (parts.length >= 1) info.resource = parts[0]!;

  if (info.name === '' && info.verb === 'get') info.verb = isWatchQuery(requestQuery(req)) ? 'watch' : 'list';
  if (info.name === '' && info.verb === 'delete') info.verb = 'deletecollection';
  return info;
}

/** `?watch=` turns a list into a watch unless it says false (Go's ParseBool, lenient on case). */
function isWatchQuery(query: URLSearchParams): boolean {
  const value = query.get('watch');
  if (value === null) return false;
  return !['0', 'f', 'false'].includes(value.toLowerCase());
}

export function isLongRunning(info: RequestInfo): boolean {
  return LONG_RUNNING_VERBS.has(info.verb) || LONG_RUNNING_SUBRESOURCES.has(info.subresource);
}

export function isMutating(info: RequestInfo): boolean {
  return !NON_MUTATING_VERBS.has(info.verb);
}

/** The default long-running check of the filters and the shutdown sequence. */
export function isLongRunningRequest(req: RequestLike): boolean {
  return isLongRunning(requestInfoOf(req));
}
