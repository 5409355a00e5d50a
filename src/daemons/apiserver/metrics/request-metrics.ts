/**
 * Upstream's request metrics of the API server (apiserver/pkg/endpoints/metrics): every request
 * counted and timed by verb, dry run, group, version, resource, subresource, scope, component and
 * code; long-running requests (watches, exec, logs, ...) as a gauge while they last; the in-flight
 * requests by kind. Recorded by a filter when the response closes, so the code and duration are the
 * client's.
 */
import type {Filter} from '../filters/index.js';
import {isLongRunning, requestInfoOf, requestQuery, type RequestInfo, type RequestLike} from '../filters/index.js';
import type {MetricsRegistry} from '../../shared/metrics/index.js';

/** Upstream's buckets for apiserver_request_duration_seconds (and etcd_request_duration_seconds). */
export const REQUEST_DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

const COMPONENT = 'apiserver';
const REQUEST_LABELS = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;

export interface RequestMetricsOptions {
  /** The in-flight counts of the max-in-flight filter, read at each scrape. */
  inFlight?: () => {readOnly: number; mutating: number};
  /** Milliseconds, fractional; injected for tests. */
  now?: () => number;
}

type Labels = Record<(typeof REQUEST_LABELS)[number], string>;

export class RequestMetrics {
  private readonly total;
  private readonly duration;
  private readonly longRunning;
  private readonly now: () => number;

  constructor(registry: MetricsRegistry, options: RequestMetricsOptions = {}) {
    this.now = options.now ?? (() => performance.now());
    this.total = registry.counter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      labelNames: [...REQUEST_LABELS, 'code'],
      stabilityLevel: 'STABLE',
    });
    this.duration = registry.histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      labelNames: [...REQUEST_LABELS],
      buckets: REQUEST_DURATION_BUCKETS,
      stabilityLevel: 'STABLE',
    });
    this.longRunning = registry.gauge({
      name: 'apiserver_longrunning_requests',
      help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
      stabilityLevel: 'STABLE',
    });
    const inFlight = options.inFlight;
    const gauge = registry.gauge({
      name: 'apiserver_current_inflight_requests',
      help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      labelNames: ['request_kind'],
      stabilityLevel: 'STABLE',
      collect: inFlight
        ? () => {
            const now = inFlight();
            gauge.set({request_kind: 'readOnly'}, now.readOnly);
            gauge.set({request_kind: 'mutating'}, now.mutating);
          }
        : undefined,
    });
  }

  readonly filter: Filter = (req, res, next) => {
    const start = this.now();
    const info = requestInfoOf(req);
    const labels = requestLabels(req, info);
    const long = isLongRunning(info);
    const {dry_run: _dryRun, ...longLabels} = labels;
    if (long) this.longRunning.inc(longLabels);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      if (long) this.longRunning.dec(longLabels);
      const code = String((res as {statusCode?: number}).statusCode ?? 0);
      this.total.inc({...labels, code});
      this.duration.observe(labels, (this.now() - start) / 1000);
    };
    res.on('close', finish);
    res.on('finish', finish);
    next();
  };
}

const VALID_VERBS = new Set(['APPLY', 'CONNECT', 'CREATE', 'DELETE', 'DELETECOLLECTION', 'GET', 'LIST', 'PATCH', 'POST', 'PROXY', 'PUT', 'UPDATE', 'WATCH', 'WATCHLIST']);

/**
 * The request's labels as upstream reports them: the verb is the HTTP method made canonical (a GET
 * of a collection is LIST; creates stay POST, updates PUT), WATCH for watches, APPLY for server-side
 * apply, other methods "other"; the scope is "resource" for a named object or a create.
 */
export function requestLabels(req: RequestLike, info: RequestInfo): Labels {
  const scope = info.name !== '' || info.verb === 'create' ? 'resource' : info.namespace ? 'namespace' : info.isResourceRequest ? 'cluster' : '';
  const method = (req.method ?? 'GET').toUpperCase();
  let verb = (method === 'GET' || method === 'HEAD') && scope !== 'resource' && scope !== '' ? 'LIST' : method === 'HEAD' ? 'GET' : method;
  if (info.verb === 'watch') verb = 'WATCH';
  if (verb === 'PATCH' && headerOf(req, 'content-type')?.split(';')[0]?.trim() === 'application/apply-patch+yaml') verb = 'APPLY';
  if (!VALID_VERBS.has(verb)) verb = 'other';
  if (info.isResourceRequest) {
    return {
      verb,
      dry_run: cleanDryRun(requestQuery(req).getAll('dryRun')),
      group: info.apiGroup,
      version: info.apiVersion,
      resource: info.resource,
      subresource: info.subresource,
      scope,
      component: COMPONENT,
    };
  }
  // Non-resource requests carry the path as the subresource, as upstream.
  return {verb, dry_run: '', group: '', version: '', resource: '', subresource: (req.url ?? '/').split('?')[0] ?? '/', scope, component: COMPONENT};
}

/** Upstream's cleanDryRun: the known values, sorted and comma-joined. */
function cleanDryRun(values: string[]): string {
  return values.filter((v) => v === 'All').sort().join(',');
}

function headerOf(req: RequestLike, name: string): string | undefined {
  const value = (req as {headers?: Record<string, string | string[] | undefined>}).headers?.[name];
  return Array.isArray(value) ? value[0] : value;
}
