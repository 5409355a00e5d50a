/**
 * GET /api/v1/namespaces/<ns>/pods/<name>/log (`kubectl logs`): the API server finds the pod's
 * node and proxies to that node's agent (`/containerLogs/<ns>/<pod>/<container>` on the port the
 * node reports in status.daemonEndpoints), as upstream's log subresource does. Without
 * --agent-certificate-authority the agent's serving certificate is not verified, as upstream does
 * without a kubelet CA; --agent-client-certificate/--agent-client-key authenticate to it.
 */
import {request as httpsRequest} from 'node:https';
import type {IncomingMessage, ServerResponse} from 'node:http';
import type {Store} from './storage/store.js';
import {writeStatusObject} from './filters/index.js';

export const POD_LOG_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/;

export interface AgentTls {
  ca?: string;
  cert?: string;
  key?: string;
  /** --agent-preferred-address-types. */
  addressTypes?: string[];
  /**
   * --agent-timeout: how long connecting to an agent and getting its response headers may take
   * (logs, nodes/proxy, metrics, and the dial of exec, attach and port-forward); a stream that has
   * started is not cut by it.
   */
  timeoutMs?: number;
}

export const DEFAULT_ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];

const QUERY_FORWARDED = ['tailLines', 'limitBytes', 'follow', 'previous', 'sinceSeconds', 'sinceTime', 'timestamps'];

function fail(res: ServerResponse, code: number, reason: string, message: string): void {
  writeStatusObject(res, {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details: {}, code});
}

export interface PodLike {
  spec?: {nodeName?: string; containers?: {name: string}[]; initContainers?: {name: string}[]; ephemeralContainers?: {name: string}[]};
}
export interface NodeLike {
  status?: {addresses?: {type: string; address: string}[]; daemonEndpoints?: {kubeletEndpoint?: {Port?: number}}};
}

/**
 * A node's agent address, the first address of the first preferred type (upstream's
 * GetPreferredNodeAddress), and the agent port in status.daemonEndpoints; either may be missing.
 */
export function nodeAgentAddress(node: NodeLike | undefined, addressTypes: readonly string[] = DEFAULT_ADDRESS_TYPES): {address?: string; port?: number} {
  const addresses = node?.status?.addresses ?? [];
  return {address: addressTypes.map((type) => addresses.find((a) => a.type === type)?.address).find(Boolean), port: node?.status?.daemonEndpoints?.kubeletEndpoint?.Port};
}

/** Which container to read: the one asked for, or the only one; upstream's messages otherwise. */
export function chooseContainer(podName: string, pod: PodLike, asked: string | null): {container?: string; error?: string} {
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  if (asked) {
    // Init and ephemeral containers are valid targets too, as upstream's validateContainer says.
    const all = [...names, ...[...(pod.spec?.initContainers ?? []), ...(pod.spec?.ephemeralContainers ?? [])].map((c) => c.name)];
    return all.includes(asked) ? {container: asked} : {error: `container ${asked} is not valid for pod ${podName}`};
  }
  if (names.length === 1) return {container: names[0]};
  return {error: `a container name must be specified for pod ${podName}, choose one of: [${names.join(' ')}]`};
}

/**
 * Where the agent of a pod's node listens: its preferred address (--agent-preferred-address-types) and the port in
 * status.daemonEndpoints; or the Status fields of why it cannot be reached.
 */
export async function agentEndpoint(
  store: Store,
  keyPrefix: string,
  podName: string,
  pod: PodLike,
  addressTypes: readonly string[] = DEFAULT_ADDRESS_TYPES,
): Promise<{address: string; port: number} | {code: number; reason: string; message: string}> {
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) return {code: 400, reason: 'BadRequest', message: `pod ${podName} does not have a host assigned`};
  const nodeKv = await store.get(`${keyPrefix}/minions/${nodeName}`);
  const node = nodeKv ? (JSON.parse(nodeKv.value) as NodeLike) : undefined;
  const {address, port} = nodeAgentAddress(node, addressTypes);
  if (!address || !port) return {code: 500, reason: 'InternalError', message: `node ${nodeName} reports no address of the types ${addressTypes.join(',')} or no agent port`};
  return {address, port};
}

export async function servePodLog(
  req: IncomingMessage,
  res: ServerResponse,
  match: RegExpExecArray,
  store: Store,
  keyPrefix: string,
  tls: AgentTls,
): Promise<void> {
  const [, namespace, name] = match;
  const url = new URL(req.url ?? '/', 'https://local');
  const podKv = await store.get(`${keyPrefix}/pods/${namespace}/${name}`);
  if (!podKv) return fail(res, 404, 'NotFound', `pods "${name}" not found`);
  const pod = JSON.parse(podKv.value) as PodLike;
  const chosen = chooseContainer(name, pod, url.searchParams.get('container'));
  if (chosen.error) return fail(res, 400, 'BadRequest', chosen.error);
  const agent = await agentEndpoint(store, keyPrefix, name, pod, tls.addressTypes);
  if ('message' in agent) return fail(res, agent.code, agent.reason, agent.message);
  const {address, port} = agent;

  const query = new URLSearchParams();
  for (const key of QUERY_FORWARDED) {
    const value = url.searchParams.get(key);
    if (value !== null) query.set(key, value);
  }
  const host = address.includes(':') ? `[${address}]` : address;
  const target = `https://${host}:${port}/containerLogs/${namespace}/${name}/${chosen.container}${query.size ? `?${query}` : ''}`;
  await new Promise<void>((resolve) => {
    const timeoutMs = tls.timeoutMs ?? 30_000;
    const timer = setTimeout(() => upstream.destroy(new Error(`timeout awaiting response headers after ${timeoutMs / 1000}s`)), timeoutMs);
    const upstream = httpsRequest(target, {ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: Boolean(tls.ca)}, (reply: IncomingMessage) => {
      clearTimeout(timer);
      res.writeHead(reply.statusCode ?? 502, {'Content-Type': reply.headers['content-type'] ?? 'text/plain'});
      reply.pipe(res);
      reply.on('end', resolve);
      reply.on('error', resolve);
    });
    upstream.on('error', (error) => {
      clearTimeout(timer);
      if (!res.headersSent) fail(res, 500, 'InternalError', `Get "${target}": ${error.message}`);
      else res.end();
      resolve();
    });
    res.on('close', () => upstream.destroy());
    upstream.end();
  });
}
