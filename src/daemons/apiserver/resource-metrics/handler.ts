/**
 * The resource metrics API (`metrics.<domain>/v1beta1`: nodes and pods), served by the API server
 * itself rather than an aggregated metrics-server: on each request it reads the summaries of the
 * agents concerned and answers with metrics-server's objects and errors. `kubectl top` and the
 * horizontal pod autoscaler read it. Get and list only; label and field selectors as metrics-server.
 */
import type {IncomingMessage, ServerResponse} from 'node:http';
import {names} from '../../../api/names.js';
import {failureStatus} from '../../../api/status.js';
import {matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector} from '../../../api/selectors.js';
import type {Summary} from '../../agent/server/summary.js';
import type {Store} from '../storage/store.js';
import {writeStatusObject, type StatusObject} from '../filters/index.js';
import {METRICS_VERSION, metricsList, nodeMetrics, podMetrics} from './objects.js';
import type {NodeLike} from './scraper.js';

export interface MetricsRequest {
  resource: 'nodes' | 'pods';
  namespace?: string;
  name?: string;
}

/** The metrics request a path asks for; undefined for any other path (discovery included). */
export function parseMetricsPath(path: string): MetricsRequest | undefined {
  const prefix = `/apis/${names().groups.metrics}/${METRICS_VERSION}/`;
  if (!path.startsWith(prefix)) return undefined;
  const parts = path.slice(prefix.length).split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'nodes' && parts.length <= 2) return {resource: 'nodes', name: parts[1]};
  if (parts[0] === 'pods' && parts.length === 1) return {resource: 'pods'};
  if (parts[0] === 'namespaces' && parts[2] === 'pods' && parts.length >= 3 && parts.length <= 4) return {resource: 'pods', namespace: parts[1], name: parts[3]};
  return undefined;
}

export interface ResourceMetricsDeps {
  store: Store;
  keyPrefix: string;
  /** The summary of a node's agent (./scraper.ts fetchSummary with the server's credentials). */
  summary: (node: NodeLike) => Promise<Summary>;
  now?: () => Date;
  /** Nodes whose agent could not be read (logged, as metrics-server logs failed scrapes). */
  onScrapeError?: (node: string, error: Error) => void;
}

interface PodLike {
  metadata?: {name?: string; namespace?: string; labels?: Record<string, string>};
  spec?: {nodeName?: string};
}

function fail(res: ServerResponse, status: StatusObject): void {
  writeStatusObject(res, status);
}

function notFound(resource: 'nodes' | 'pods', name: string): StatusObject {
  const kind = resource === 'nodes' ? 'nodemetrics' : 'podmetrics';
  const group = names().groups.metrics;
  return failureStatus(404, 'NotFound', `${kind}.${group} "${name}" not found`, {name, group, kind}) as StatusObject;
}

async function listValues<T>(store: Store, prefix: string): Promise<T[]> {
  return (await store.list(prefix)).items.map((kv) => JSON.parse(kv.value) as T);
}

/** Answers one metrics request (already authorized). */
export async function serveResourceMetrics(req: IncomingMessage, res: ServerResponse, request: MetricsRequest, deps: ResourceMetricsDeps): Promise<void> {
  if ((req.method ?? 'GET') !== 'GET') {
    return fail(res, failureStatus(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}) as StatusObject);
  }
  const query = new URL(req.url ?? '/', 'https://local').searchParams;
  if (query.get('watch') === 'true' || query.get('watch') === '1') {
    return fail(res, failureStatus(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}) as StatusObject);
  }
  let labels, fields;
  try {
    labels = parseLabelSelector(query.get('labelSelector') ?? '');
    fields = parseFieldSelector(query.get('fieldSelector') ?? '');
  } catch (error) {
    return fail(res, failureStatus(400, 'BadRequest', (error as Error).message) as StatusObject);
  }
  const now = (deps.now ?? (() => new Date()))();
  const nodes = await listValues<NodeLike>(deps.store, `${deps.keyPrefix}/minions/`);
  const summaries = async (wanted: Set<string> | undefined) => {
    const out = new Map<string, Summary>();
    await Promise.all(
      nodes
        .filter((n) => !wanted || wanted.has(n.metadata?.name ?? ''))
        .map(async (node) => {
          const name = node.metadata?.name ?? '';
          try {
            out.set(name, await deps.summary(node));
          } catch (error) {
            deps.onScrapeError?.(name, error as Error);
          }
        }),
    );
    return out;
  };

  const respond = (items: Record<string, unknown>[], kind: 'NodeMetricsList' | 'PodMetricsList', notFoundName: string) => {
    if (request.name === undefined) return writeJson(res, metricsList(kind, items));
    if (items[0]) return writeJson(res, items[0]);
    return fail(res, notFound(request.resource, notFoundName));
  };

  if (request.resource === 'nodes') {
    const chosen = nodes.filter((n) => {
      const name = n.metadata?.name ?? '';
      return (request.name === undefined || name === request.name) && matchesLabels(labels, n.metadata?.labels) && matchesFields(fields, {'metadata.name': name});
    });
    const read = await summaries(new Set(chosen.map((n) => n.metadata?.name ?? '')));
    const items = chosen.flatMap((n) => {
      const summary = read.get(n.metadata?.name ?? '');
      const item = summary && nodeMetrics({name: n.metadata?.name ?? '', labels: n.metadata?.labels}, summary.node, now);
      return item ? [item] : [];
    });
    return respond(items, 'NodeMetricsList', request.name ?? '');
  }

  const prefix = `${deps.keyPrefix}/pods/${request.namespace ? `${request.namespace}/` : ''}`;
  const pods = (await listValues<PodLike>(deps.store, prefix)).filter((p) => {
    const m = p.metadata ?? {};
    return (
      (request.name === undefined || m.name === request.name) &&
      p.spec?.nodeName &&
      matchesLabels(labels, m.labels) &&
      matchesFields(fields, {'metadata.name': m.name ?? '', 'metadata.namespace': m.namespace ?? ''})
    );
  });
  const read = await summaries(new Set(pods.map((p) => p.spec!.nodeName!)));
  const items = pods.flatMap((p) => {
    const stats = read.get(p.spec!.nodeName!)?.pods.find((s) => s.podRef.namespace === p.metadata?.namespace && s.podRef.name === p.metadata?.name);
    const item = stats && podMetrics({name: p.metadata?.name ?? '', namespace: p.metadata?.namespace, labels: p.metadata?.labels}, stats, now);
    return item ? [item] : [];
  });
  return respond(items, 'PodMetricsList', `${request.namespace}/${request.name}`);
}

function writeJson(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, {'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text)});
  res.end(text);
}
