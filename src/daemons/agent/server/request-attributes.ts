/**
 * What a request to the agent's secure port asks for, as upstream's kubelet (pkg/kubelet/server/
 * auth.go) words it for the authorizer: the HTTP method as a verb, on the `nodes` resource named
 * after this node, with the subresource of the path (`stats`, `metrics`, `log`, `spec`, `pods`,
 * `healthz`, `configz`, `checkpoint`), or `proxy` for everything else (exec, attach, portForward,
 * run, containerLogs...). Pure.
 */
import type {AuthorizationAttributes} from '../../shared/authorization/attributes.js';
import type {UserInfo} from '../../shared/authentication/user.js';

const VERBS: Record<string, string> = {POST: 'create', GET: 'get', HEAD: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete'};

const SUBRESOURCES: ReadonlyArray<[string, string]> = [
  ['/stats', 'stats'],
  ['/metrics', 'metrics'],
  ['/logs', 'log'],
  ['/spec', 'spec'],
  ['/checkpoint', 'checkpoint'],
  ['/pods', 'pods'],
  ['/healthz', 'healthz'],
  ['/configz', 'configz'],
];

/** Upstream's isSubpath: the path itself or below it. */
function isSubpath(path: string, root: string): boolean {
  const trimmed = path.replace(/\/$/, '');
  return trimmed === root || path.startsWith(`${root}/`);
}

export function agentRequestAttributes(user: UserInfo, method: string, path: string, nodeName: string): AuthorizationAttributes {
  const subresource = SUBRESOURCES.find(([root]) => isSubpath(path, root))?.[1] ?? 'proxy';
  return {user, verb: VERBS[method.toUpperCase()] ?? '', resourceRequest: true, apiGroup: '', apiVersion: 'v1', resource: 'nodes', subresource, name: nodeName, path};
}

/** The kubelet's plain-text 403. */
export function agentForbiddenText(a: AuthorizationAttributes): string {
  return `Forbidden (user=${a.user.name}, verb=${a.verb}, resource=${a.resource}, subresource=${a.subresource})`;
}
