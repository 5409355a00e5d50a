/**
 * Turns a request path and method into what is asked, as upstream's RequestInfoFactory does
 * (apiserver/pkg/endpoints/request/requestinfo.go). Pure.
 */

export type RequestInfo =
  | { type: 'coreVersions' } // /api
  | { type: 'coreResources' } // /api/v1
  | { type: 'groups' } // /apis
  | { type: 'group'; group: string } // /apis/<g>
  | { type: 'groupResources'; group: string; version: string } // /apis/<g>/<v>
  | { type: 'version' } // /version
  | { type: 'openapi' } // /openapi/v2, /openapi/v3...
  | ResourceRequest
  | { type: 'unknownUnderApi'; group: string } // a path under /api or /apis that names nothing
  | { type: 'none' };

export interface ResourceRequest {
  type: 'resource';
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  name: string;
  subresource: string;
  verb: string;
  /** Came through the deprecated `/watch/` path prefix. */
  legacyWatch: boolean;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function isTrue(value: string | null): boolean {
  return value === '1' || value === 'true' || value === 'True';
}

export function parseRequestInfo(method: string, pathname: string, query: URLSearchParams): RequestInfo {
  const parts = pathname.split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p));
  if (parts[0] === 'version' && parts.length === 1) return { type: 'version' };
  if (parts[0] === 'openapi') return { type: 'openapi' };
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api') {
    if (parts.length === 1) return { type: 'coreVersions' };
    if (parts[1] !== 'v1') return { type: 'unknownUnderApi', group: '' };
    if (parts.length === 2) return { type: 'coreResources' };
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    if (parts.length === 1) return { type: 'groups' };
    if (parts.length === 2) return { type: 'group', group: parts[1]! };
    if (parts.length === 3) return { type: 'groupResources', group: parts[1]!, version: parts[2]! };
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else {
    return { type: 'none' };
  }

  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    rest = rest.slice(1);
  }
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1]!;
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  }
  // A proxy subresource carries the proxied path after it (`nodes/<name>/proxy/<path...>`).
  if (rest.length > 3 && rest[2] === 'proxy') rest = rest.slice(0, 3);
  if (rest.length === 0 || rest.length > 3) return { type: 'unknownUnderApi', group };
  const [resource = '', name = '', subresource = ''] = rest;

  let verb: string;
  switch (method) {
    case 'GET':
    case 'HEAD':
      verb = legacyWatch || (!name && isTrue(query.get('watch'))) ? 'watch' : name ? 'get' : 'list';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name ? 'delete' : 'deletecollection';
      break;
    default:
      verb = method.toLowerCase();
  }
  return { type: 'resource', apiGroup: group, apiVersion: version, namespace, resource, name, subresource, verb, legacyWatch };
}
