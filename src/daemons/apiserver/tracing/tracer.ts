/**
 * The API server's tracing (upstream's WithTracing filter and its storage spans): a span per
 * authenticated request named as upstream names it (`GET /api/v1/namespaces/{:namespace}/pods/{:name}`,
 * the method alone for non-resource paths), child spans for each store request, and the W3C trace
 * context sent on to admission and conversion webhooks. A client's `traceparent` is the parent of the
 * request span only for system:masters and system:monitoring (upstream's notSystemPrivilegedGroup);
 * anyone else's trace is linked, not joined. Sampling: parent-based, else samplingRatePerMillion.
 * Spans leave in batches over OTLP/gRPC to the configured endpoint.
 * Built only when --tracing-config-file is given: without it nothing here runs.
 */
import {context, propagation, trace, SpanKind, SpanStatusCode, type Context, type Link, type Span, type Tracer} from '@opentelemetry/api';
import {W3CTraceContextPropagator} from '@opentelemetry/core';
import {BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type SpanExporter} from '@opentelemetry/sdk-trace';
import {resourceFromAttributes} from '@opentelemetry/resources';
import {OTLPTraceExporter} from '@opentelemetry/exporter-trace-otlp-grpc';
import {credentials} from '@grpc/grpc-js';
import {hostname} from 'node:os';
import type {IncomingMessage, ServerResponse} from 'node:http';
import {AsyncLocalStorageContextManager} from './context-manager.js';
import type {TracingConfiguration} from './config.js';
import type {RequestInfo} from '../filters/index.js';
import type {Store} from '../storage/store.js';

const PRIVILEGED_GROUPS = new Set(['system:masters', 'system:monitoring']);
const propagator = new W3CTraceContextPropagator();

let manager: AsyncLocalStorageContextManager | undefined;

/** The process-wide context manager and propagator (the OpenTelemetry API's globals), once. */
function installGlobals(): AsyncLocalStorageContextManager {
  if (manager) return manager;
  manager = new AsyncLocalStorageContextManager();
  context.setGlobalContextManager(manager);
  propagation.setGlobalPropagator(propagator);
  return manager;
}

/** Upstream's span name: the method, and for resource requests the path with placeholders. */
export function spanName(method: string, info: RequestInfo, prefix: string): string {
  if (!info.isResourceRequest) return method;
  let name = `/${prefix}`;
  if (info.apiGroup) name += `/${info.apiGroup}`;
  name += `/${info.apiVersion}`;
  if (info.namespace) name += '/namespaces/{:namespace}';
  name += `/${info.resource}`;
  if (info.name) name += '/{:name}';
  if (info.subresource) name += `/${info.subresource}`;
  return `${method} ${name}`;
}

export class ApiServerTracing {
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;
  private readonly contexts: AsyncLocalStorageContextManager;

  constructor(config: TracingConfiguration, options: {serviceName?: string; exporter?: SpanExporter} = {}) {
    this.contexts = installGlobals();
    const url = config.endpoint.includes('://') ? config.endpoint : `http://${config.endpoint}`;
    const exporter = options.exporter ?? new OTLPTraceExporter({url, credentials: url.startsWith('https://') ? credentials.createSsl() : credentials.createInsecure()});
    this.provider = new TracerProvider({
      sampler: new ParentBasedSampler({root: new TraceIdRatioBasedSampler(config.samplingRatePerMillion / 1_000_000)}),
      resource: resourceFromAttributes({'service.name': options.serviceName ?? 'apiserver', 'host.name': hostname()}),
      spanProcessors: [new BatchSpanProcessor({exporter, scheduledDelayMillis: 500})],
    });
    this.tracer = this.provider.getTracer('orch.apiserver');
  }

  /**
   * Starts the request's span (ended when the response closes) and makes it active for the rest of
   * the calling async function (call it after an await). `groups`: the authenticated user's,
   * deciding whether the caller's trace context is trusted.
   */
  enterRequest(req: IncomingMessage, res: ServerResponse, info: RequestInfo, groups: readonly string[]): void {
    const incoming = propagator.extract(context.active(), req.headers, {
      get: (carrier, key) => carrier[key] as string | string[] | undefined,
      keys: (carrier) => Object.keys(carrier),
    });
    const remote = trace.getSpanContext(incoming);
    const trusted = groups.some((g) => PRIVILEGED_GROUPS.has(g));
    const parent: Context = trusted ? incoming : context.active();
    const links: Link[] = !trusted && remote && trace.isSpanContextValid(remote) ? [{context: remote}] : [];
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const prefix = path.startsWith('/apis/') ? 'apis' : 'api';
    const span = this.tracer.startSpan(
      spanName(req.method ?? 'GET', info, prefix),
      {kind: SpanKind.SERVER, links, attributes: {'http.request.method': req.method ?? 'GET', 'http.target': req.url ?? '/', 'url.path': path}},
      trusted ? parent : trace.deleteSpan(parent),
    );
    const auditId = res.getHeader('Audit-ID');
    if (auditId) span.setAttribute('audit-id', String(auditId));
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({code: SpanStatusCode.ERROR});
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    this.contexts.enter(trace.setSpan(parent, span));
  }

  /** Wraps an engine: each store request is a child span of the request that made it (upstream's "Create etcd3" etc.). */
  instrument(engine: Store, resolve: (key: string) => {group: string; resource: string} | undefined): Store {
    const traced = <T>(name: string, key: string, call: () => Promise<T>): Promise<T> => {
      const parent = context.active();
      // Store requests outside any traced request (informers, controllers) make no spans.
      if (!trace.getSpan(parent)) return call();
      const r = resolve(key);
      const span = this.tracer.startSpan(name, {attributes: {key, resource: r ? (r.group ? `${r.resource}.${r.group}` : r.resource) : ''}}, parent);
      return call().then(
        (value) => {
          span.end();
          return value;
        },
        (error: unknown) => {
          span.recordException(error as Error);
          span.setStatus({code: SpanStatusCode.ERROR});
          span.end();
          throw error;
        },
      );
    };
    const ops: Partial<Store> = {
      get: (key) => traced('Get etcd3', key, () => engine.get(key)),
      list: (prefix, options) => traced('List etcd3', prefix, () => engine.list(prefix, options)),
      create: (key, value) => traced('Create etcd3', key, () => engine.create(key, value)),
      update: (key, value, rev) => traced('GuaranteedUpdate etcd3', key, () => engine.update(key, value, rev)),
      delete: (key, rev) => traced('Delete etcd3', key, () => engine.delete(key, rev)),
    };
    return new Proxy(engine, {
      get(target, prop, receiver) {
        if (typeof prop === 'string' && prop in ops) return ops[prop as keyof Store];
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** Sends what is buffered and stops (the server's stop()). */
  async shutdown(): Promise<void> {
    await this.provider.shutdown().catch(() => undefined);
  }
}

export type {Span};
