/**
 * The proxy subresources (upstream's ResourceLocation + UpgradeAwareHandler, without upgrades):
 * - nodes/<name>/proxy/<path>: to the node's agent, over HTTPS on the port the node reports
 *   (status.daemonEndpoints), with the API server's agent client certificate;
 * - services/<[scheme:]name[:port]>/proxy/<path>: to a ready endpoint address of the service's
 *   Endpoints (the port by name or number, else the first);
 * - pods/<[scheme:]name[:port]>/proxy/<path>: to the pod's IP.
 * Pods here are local processes, so endpoints are reachable on loopback. The method, query, body
 * and end-to-end headers are forwarded; the client's credentials are not.
 */
import {request as httpRequest, type IncomingMessage} from 'node:http';
import {request as httpsRequest} from 'node:https';
import {ApiError, badRequest, failureStatus, notFound} from '../../../api/status.js';
import {isJsonObject, type JsonObject, type JsonValue} from '../../../patch/types.js';
import type {RegistryStore} from './registry-store.js';
import {stringAt, valueAt} from './objects.js';
import type {ApiRequest, ApiResponse} from './types.js';
import {sendContinue} from '../../shared/serving/http1-requests.js';
import type {AgentTls} from '../pod-logs.js';

/** The API server's credentials and --agent-timeout for the agents (one type for every agent call). */
export type {AgentTls} from '../pod-logs.js';

export interface ProxyDeps {
  nodes: RegistryStore;
  pods: RegistryStore;
  endpoints: RegistryStore;
  services: RegistryStore;
  agentTls?: AgentTls;
}

export interface Target {
  scheme: 'http' | 'https';
  host: string;
  port: number;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'authorization', 'host']);

/** `[scheme:]name[:port]`, upstream's SplitSchemeNamePort. */
export function splitSchemeNamePort(id: string): {scheme: string; name: string; port: string} {
  const parts = id.split(':');
  if (parts.length === 1) return {scheme: '', name: parts[0]!, port: ''};
  if (parts.length === 2) return {scheme: '', name: parts[0]!, port: parts[1]!};
  if (parts.length === 3 && (parts[0] === 'http' || parts[0] === 'https')) return {scheme: parts[0], name: parts[1]!, port: parts[2]!};
  throw badRequest(`invalid service request ${JSON.stringify(id)}`);
}

const list = (v: JsonValue | undefined): JsonObject[] => (Array.isArray(v) ? (v.filter(isJsonObject) as JsonObject[]) : []);

function unavailable(message: string): ApiError {
  return new ApiError(failureStatus(503, 'ServiceUnavailable', message, {}));
}

async function nodeTarget(deps: ProxyDeps, name: string): Promise<Target> {
  const {name: nodeName, port} = splitSchemeNamePort(name);
  const node = await deps.nodes.get('', nodeName);
  const addresses = list(valueAt(node, 'status', 'addresses'));
  const address = stringAt(addresses.find((a) => a.type === 'InternalIP'), 'address') ?? stringAt(addresses[0], 'address');
  const agentPort = Number(port || valueAt(node, 'status', 'daemonEndpoints', 'kubeletEndpoint', 'Port'));
  if (!address || !agentPort) throw unavailable(`node ${JSON.stringify(nodeName)} reports no address or agent port`);
  return {scheme: 'https', host: address, port: agentPort};
}

async function podTarget(deps: ProxyDeps, namespace: string, id: string): Promise<Target> {
  const {scheme, name, port} = splitSchemeNamePort(id);
  const pod = await deps.pods.get(namespace, name);
  const ip = stringAt(pod, 'status', 'podIP');
  if (!ip) throw badRequest(`address not allocated yet for pod ${JSON.stringify(name)}`);
  let number = Number(port);
  if (port && !Number.isInteger(number)) {
    const named = list(valueAt(pod, 'spec', 'containers')).flatMap((c) => list(c.ports)).find((p) => p.name === port);
    number = typeof named?.containerPort === 'number' ? named.containerPort : NaN;
  }
  if (!port) number = 80;
  if (!Number.isInteger(number) || number <= 0) throw badRequest(`pod ${JSON.stringify(name)} has no port ${JSON.stringify(port)}`);
  return {scheme: scheme === 'https' ? 'https' : 'http', host: ip, port: number};
}

async function serviceTarget(deps: ProxyDeps, namespace: string, id: string): Promise<Target> {
  const {scheme, name, port} = splitSchemeNamePort(id);
  const service = await deps.services.get(namespace, name);
  const servicePorts = list(valueAt(service, 'spec', 'ports'));
  const servicePort = port ? servicePorts.find((p) => p.name === port || String(p.port) === port) : servicePorts[0];
  if (port && !servicePort) throw unavailable(`no service port ${JSON.stringify(port)} found for service ${JSON.stringify(name)}`);
  let endpoints: JsonObject;
  try {
    endpoints = await deps.endpoints.get(namespace, name);
  } catch (error) {
    if ((error as ApiError).status?.code === 404) throw unavailable(`no endpoints available for service ${JSON.stringify(name)}`);
    throw error;
  }
  for (const subset of list(endpoints.subsets)) {
    const addresses = list(subset.addresses);
    if (addresses.length === 0) continue;
    const ports = list(subset.ports);
    const chosen = servicePort?.name !== undefined ? ports.find((p) => p.name === servicePort.name) ?? ports[0] : ports[0];
    const number = typeof chosen?.port === 'number' ? chosen.port : NaN;
    const ip = stringAt(addresses[0], 'ip');
    if (ip && Number.isInteger(number)) return {scheme: scheme === 'https' ? 'https' : 'http', host: ip, port: number};
  }
  throw unavailable(`no endpoints available for service ${JSON.stringify(name)}`);
}

export async function proxyTarget(deps: ProxyDeps, resource: string, namespace: string, name: string): Promise<Target> {
  if (resource === 'nodes') return nodeTarget(deps, name);
  if (resource === 'pods') return podTarget(deps, namespace, name);
  if (resource === 'services') return serviceTarget(deps, namespace, name);
  throw notFound({group: '', resource}, name);
}

/** The path after `/<resource>/<name>/proxy` in the request URL (with its query), `/` at least. */
export function proxiedPath(url: string, resource: string, name: string): string {
  const parsed = new URL(url, 'http://local');
  const marker = `/${resource}/${encodeURIComponent(name).replace(/%3A/gi, ':')}/proxy`;
  const at = parsed.pathname.indexOf(marker);
  const rest = at >= 0 ? parsed.pathname.slice(at + marker.length) : '/';
  return `${rest.startsWith('/') ? rest : `/${rest}`}${parsed.search}`;
}

/** The connect options admission sees for a proxy request (upstream's PodProxyOptions, NodeProxyOptions, ServiceProxyOptions). */
export function proxyOptions(resource: string, path: string): {kind: string; apiVersion: string; path?: string} {
  const kind = resource === 'nodes' ? 'NodeProxyOptions' : resource === 'services' ? 'ServiceProxyOptions' : 'PodProxyOptions';
  return {kind, apiVersion: 'v1', ...(path ? {path} : {})};
}

/** What the aggregator adds to a forward (aggregator/proxy.ts): its own headers, TLS and redirect rule. */
export interface ForwardOptions {
  /** The headers to send instead of the request's end-to-end ones. */
  headers?: Record<string, string | string[]>;
  /** TLS settings for an https target (CA, client certificate, server name, verification). */
  tls?: import('node:tls').ConnectionOptions;
  /** upstream's RejectForwardingRedirects: a 3xx with a Location becomes a 502. */
  rejectRedirects?: boolean;
  /** Opens the connection (an egress tunnel) instead of dialing the target directly. */
  createConnection?: () => import('node:net').Socket;
  /** The wait for response headers; 0 for none. Default: the agent TLS's, else 30s. */
  timeoutMs?: number;
  /** A target that cannot be reached is a plain-text 503 with the error (Go's http.Error, as upstream's peer proxy answers), not a Status. */
  plainTextErrors?: boolean;
}

export const REDIRECT_REJECTED = 'the backend attempted to redirect this request, which is not permitted';

/** Forwards the request to the target and streams the answer back. */
export function forward(req: ApiRequest, res: ApiResponse, target: Target, path: string, tls?: AgentTls, more: ForwardOptions = {}): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  // (HTTP/2 pseudo-headers such as `:authority` are the connection's, not the request's.)
  for (const [key, value] of Object.entries(req.headers)) if (value !== undefined && !key.startsWith(':') && !HOP_BY_HOP.has(key.toLowerCase())) headers[key] = value;
  if (more.headers) {
    for (const key of Object.keys(headers)) delete headers[key];
    for (const [key, value] of Object.entries(more.headers)) if (!key.startsWith(':')) headers[key] = value;
  }
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  const url = `${target.scheme}://${host}:${target.port}${path}`;
  return new Promise((resolve) => {
    const onReply = (reply: IncomingMessage) => {
      // The timeout bounds the wait for response headers (Go's ResponseHeaderTimeout), not a quiet stream.
      upstream.setTimeout(0);
      const code = reply.statusCode ?? 502;
      if (more.rejectRedirects && code >= 300 && code <= 399 && reply.headers.location) {
        reply.resume();
        res.writeHead(502, {'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(REDIRECT_REJECTED)});
        res.end(REDIRECT_REJECTED);
        resolve();
        return;
      }
      const out: Record<string, string> = {};
      for (const [key, value] of Object.entries(reply.headers)) {
        if (value === undefined || HOP_BY_HOP.has(key)) continue;
        out[key] = Array.isArray(value) ? value.join(', ') : value;
      }
      res.writeHead(reply.statusCode ?? 502, out);
      reply.on('data', (chunk: Buffer) => res.write(chunk));
      reply.on('end', () => {
        res.end();
        resolve();
      });
      reply.on('error', () => {
        res.end();
        resolve();
      });
    };
    const timeout = more.timeoutMs ?? tls?.timeoutMs ?? 30_000;
    const options = {method: req.method ?? 'GET', headers, timeout, ...(more.createConnection ? {createConnection: more.createConnection, agent: false as const} : {})};
    const upstream = target.scheme === 'https'
      ? httpsRequest(url, more.tls ? {...options, ...more.tls} : {...options, ca: tls?.ca, cert: tls?.cert, key: tls?.key, rejectUnauthorized: Boolean(tls?.ca)}, onReply)
      : httpRequest(url, options, onReply);
    if (timeout > 0) upstream.on('timeout', () => upstream.destroy(new Error('timeout awaiting response headers')));
    upstream.on('error', (error) => {
      if (!res.headersSent && more.plainTextErrors) {
        const text = `${error.message}\n`;
        res.writeHead(503, {'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Content-Length': Buffer.byteLength(text)});
        res.end(text);
      } else if (!res.headersSent) {
        const status = failureStatus(503, 'ServiceUnavailable', `error trying to reach service: ${error.message}`, {});
        const text = JSON.stringify(status);
        res.writeHead(503, {'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text)});
        res.end(text);
      } else res.end();
      resolve();
    });
    res.on('close', () => upstream.destroy());
    (async () => {
      try {
        sendContinue(req); // a client that sent Expect: 100-continue waits for this before its body
        for await (const chunk of req) upstream.write(chunk);
        upstream.end();
      } catch {
        upstream.destroy();
      }
    })();
  });
}
