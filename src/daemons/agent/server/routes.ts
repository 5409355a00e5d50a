/**
 * Which handler a request reaches on the main and the read-only server, as upstream's
 * pkg/kubelet/server/server.go installs them. Without debugging handlers (and always on the
 * read-only server) the debugging paths answer 405 "Debug endpoints are disabled." rather than
 * 404, so that a client learns why. Pure.
 */

export type Route =
  | {kind: 'healthz'}
  | {kind: 'pods'}
  | {kind: 'runningPods'}
  | {kind: 'containerLogs'; namespace: string; pod: string; container: string}
  | {kind: 'exec' | 'attach'; namespace: string; pod: string; container: string}
  | {kind: 'portForward'; namespace: string; pod: string}
  | {kind: 'run'; namespace: string; pod: string; container: string}
  | {kind: 'metrics'}
  | {kind: 'metricsResource'}
  | {kind: 'statsSummary'}
  | {kind: 'debuggingDisabled'}
  | {kind: 'methodNotAllowed'; allow: string}
  | {kind: 'notFound'};

export interface RouteOptions {
  /** --enable-debugging-handlers on the main server; false on the read-only server. */
  debuggingHandlers: boolean;
}

/** Upstream's InstallDebuggingDisabledHandlers paths (Go ServeMux subtree patterns). */
export const DEBUGGING_PATHS = ['/run/', '/exec/', '/attach/', '/portForward/', '/containerLogs/', '/runningpods/', '/debug/pprof/', '/logs/'];

function underSubtree(path: string, pattern: string): boolean {
  return path === pattern.slice(0, -1) || path.startsWith(pattern);
}

/** Upstream's GETOnlyRestfulFilter and restful's method matching. */
function allowing(method: string, allowed: readonly string[], route: Route): Route {
  return allowed.includes(method) ? route : {kind: 'methodNotAllowed', allow: allowed.join(', ')};
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function containerLogsRoute(path: string): Route {
  const segments = path.slice('/containerLogs/'.length).split('/').map(decodeSegment);
  if (segments.length !== 3 || segments.some((s) => !s)) return {kind: 'notFound'};
  const [namespace, pod, container] = segments as string[];
  return {kind: 'containerLogs', namespace, pod, container};
}

/**
 * /exec, /attach and /run take `<namespace>/<pod>/<container>` or `<namespace>/<pod>/<uid>/<container>`;
 * /portForward `<namespace>/<pod>` or `<namespace>/<pod>/<uid>` (upstream's paths).
 */
function streamingRoute(path: string): Route | undefined {
  const match = /^\/(exec|attach|run|portForward)\/(.*)$/.exec(path);
  if (!match) return undefined;
  const kind = match[1] as 'exec' | 'attach' | 'run' | 'portForward';
  const segments = match[2].split('/').map(decodeSegment);
  if (segments.some((s) => !s)) return {kind: 'notFound'};
  const [namespace, pod, ...rest] = segments as string[];
  if (kind === 'portForward') return rest.length <= 1 ? {kind, namespace, pod} : {kind: 'notFound'};
  if (rest.length < 1 || rest.length > 2) return {kind: 'notFound'};
  return {kind, namespace, pod, container: rest[rest.length - 1]};
}

export function routeRequest(method: string, path: string, options: RouteOptions): Route {
  if (path === '/healthz' || path.startsWith('/healthz/')) return {kind: 'healthz'};
  if (path === '/pods' || path === '/pods/') return allowing(method, ['GET'], {kind: 'pods'});
  if (path === '/metrics') return {kind: 'metrics'};
  if (path === '/metrics/resource') return allowing(method, ['GET'], {kind: 'metricsResource'});
  if (path === '/stats/summary') return allowing(method, ['GET', 'POST'], {kind: 'statsSummary'});
  if (!options.debuggingHandlers) {
    return DEBUGGING_PATHS.some((pattern) => underSubtree(path, pattern)) ? {kind: 'debuggingDisabled'} : {kind: 'notFound'};
  }
  if (path === '/runningpods' || path === '/runningpods/') return allowing(method, ['GET'], {kind: 'runningPods'});
  const streaming = streamingRoute(path);
  if (streaming) return streaming.kind === 'notFound' ? streaming : allowing(method, streaming.kind === 'run' ? ['POST'] : ['GET', 'POST'], streaming);
  if (path.startsWith('/containerLogs/')) {
    const route = containerLogsRoute(path);
    return route.kind === 'notFound' ? route : allowing(method, ['GET'], route);
  }
  return {kind: 'notFound'};
}
