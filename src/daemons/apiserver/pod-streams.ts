/**
 * pods/exec, pods/attach and pods/portforward (`kubectl exec`, `attach`, `cp`, `port-forward`),
 * as upstream's ExecLocation/AttachLocation/PortForwardLocation and its UpgradeAwareHandler do
 * them: the API server finds the agent of the pod's node, dials it with its agent client
 * certificate, sends the upgrade request on to the agent's /exec, /attach or /portForward path
 * and then copies bytes both ways. The API server does not read the streams, so both of kubectl's
 * protocols (SPDY/3.1 and WebSocket, including SPDY tunnelled in WebSocket for port-forward) pass
 * through unchanged; whatever the agent answers to a refused upgrade reaches kubectl as it is.
 */
import type {IncomingMessage, ServerResponse} from 'node:http';
import type {Duplex} from 'node:stream';
import tls from 'node:tls';
import {writeStatusObject} from './filters/index.js';
import {agentEndpoint, chooseContainer, type AgentTls, type PodLike} from './pod-logs.js';
import type {Store} from './storage/store.js';
import {TLS_READ_BUFFERS, relay, relayEnd, relayReads} from '../shared/serving/relay.js';
import {ByteRate} from '../shared/serving/byte-rate.js';

export const POD_STREAM_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|attach|portforward)$/;

/** The raw connection of an upgrade request, which the server hands to the request chain. */
export interface UpgradeConnection {
  socket: Duplex;
  head: Buffer;
}

const upgrades = new WeakMap<IncomingMessage, UpgradeConnection>();

export function markUpgrade(req: IncomingMessage, connection: UpgradeConnection): void {
  upgrades.set(req, connection);
}

/** How long dialing the agent may take without --agent-timeout (upstream's dial timeout is 30 s). */
const DIAL_TIMEOUT_MS = 30_000;

/** Headers that stay here: the client's credentials for the API server, and the hop to it. */
const DROPPED = /^(authorization|impersonate-.*|host|proxy-.*|content-length|transfer-encoding|keep-alive)$/i;

function fail(res: ServerResponse, code: number, reason: string, message: string, name?: string): void {
  writeStatusObject(res, {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details: name ? {name, kind: 'pods'} : {}, code});
}

const truthy = (v: string | null) => v === '1' || v === 'true';

/** The agent's query: upstream's streamParams for exec and attach ("1" for set flags, every command word). */
export function agentQuery(subresource: string, query: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams();
  if (subresource === 'portforward') {
    for (const port of query.getAll('ports')) out.append('port', port);
    return out;
  }
  for (const flag of ['stdin', 'stdout', 'stderr', 'tty']) if (truthy(query.get(flag))) out.set(flag, '1');
  if (subresource === 'exec') for (const word of query.getAll('command')) out.append('command', word);
  return out;
}

/**
 * The connect options of an exec, attach or port-forward request, as admission sees them
 * (upstream's PodExecOptions, PodAttachOptions, PodPortForwardOptions decoded from the query).
 */
export function connectOptions(subresource: string, query: URLSearchParams): {[key: string]: string | boolean | string[] | number[]} {
  if (subresource === 'portforward') {
    const ports = query.getAll('ports').flatMap((p) => p.split(',')).map(Number).filter((n) => Number.isInteger(n));
    return {kind: 'PodPortForwardOptions', apiVersion: 'v1', ...(ports.length ? {ports} : {})};
  }
  const options: {[key: string]: string | boolean | string[]} = {kind: subresource === 'exec' ? 'PodExecOptions' : 'PodAttachOptions', apiVersion: 'v1'};
  for (const flag of ['stdin', 'stdout', 'stderr', 'tty']) if (truthy(query.get(flag))) options[flag] = true;
  const container = query.get('container');
  if (container) options.container = container;
  if (subresource === 'exec') options.command = query.getAll('command');
  return options;
}

export async function servePodStream(
  req: IncomingMessage,
  res: ServerResponse,
  match: RegExpExecArray,
  store: Store,
  keyPrefix: string,
  agentTls: AgentTls,
  /** --max-connection-bytes-per-sec (0: no limit). */
  bytesPerSec = 0,
): Promise<void> {
  const [, namespace, name, subresource] = match as unknown as [string, string, string, 'exec' | 'attach' | 'portforward'];
  const upgrade = upgrades.get(req);
  if (!upgrade) return fail(res, 400, 'BadRequest', 'Upgrade request required');
  const url = new URL(req.url ?? '/', 'https://local');
  const podKv = await store.get(`${keyPrefix}/pods/${namespace}/${name}`);
  if (!podKv) return fail(res, 404, 'NotFound', `pods "${name}" not found`, name);
  const pod = JSON.parse(podKv.value) as PodLike;
  let path = `/portForward/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
  if (subresource !== 'portforward') {
    const chosen = chooseContainer(name, pod, url.searchParams.get('container'));
    if (chosen.error) return fail(res, 400, 'BadRequest', chosen.error);
    path = `/${subresource}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/${encodeURIComponent(chosen.container!)}`;
  }
  const agent = await agentEndpoint(store, keyPrefix, name, pod, agentTls.addressTypes);
  if ('message' in agent) return fail(res, agent.code, agent.reason, agent.message);
  const query = agentQuery(subresource, url.searchParams);
  const target = `${path}${query.size ? `?${query}` : ''}`;
  const location = `${agent.address.includes(':') ? `[${agent.address}]` : agent.address}:${agent.port}`;

  const client = upgrade.socket;
  const backend = tls.connect({
    host: agent.address,
    port: agent.port,
    ca: agentTls.ca,
    cert: agentTls.cert,
    key: agentTls.key,
    rejectUnauthorized: Boolean(agentTls.ca),
    // The upgrade is an HTTP/1.1 mechanism.
    ALPNProtocols: ['http/1.1'],
    servername: /^[\d.:]+$/.test(agent.address) ? undefined : agent.address,
    // The agent's answer and everything after it go to the client as read (the bulk direction of
    // port-forward and exec output), through reused buffers. (tls.connect takes net's `onread`;
    // @types/node does not list it.) A byte rate needs the stream's pause instead.
    ...(bytesPerSec > 0 ? {} : {onread: relayReads(() => client, TLS_READ_BUFFERS)}),
  } as tls.ConnectionOptions);
  await new Promise<void>((resolve) => {
    let connected = false;
    const timer = setTimeout(() => backend.destroy(new Error('i/o timeout')), agentTls.timeoutMs ?? DIAL_TIMEOUT_MS);
    backend.once('secureConnect', () => {
      connected = true;
      clearTimeout(timer);
      const lines = [`${req.method ?? 'GET'} ${target} HTTP/1.1`, `Host: ${location}`];
      const raw = req.rawHeaders;
      for (let i = 0; i < raw.length; i += 2) if (!DROPPED.test(raw[i])) lines.push(`${raw[i]}: ${raw[i + 1]}`);
      backend.write(lines.join('\r\n') + '\r\n\r\n');
      if (upgrade.head.length) backend.write(upgrade.head);
      // From here on the API server only copies bytes; either side closing ends both. With
      // --max-connection-bytes-per-sec each direction keeps to the rate, as upstream's flowrate copies.
      if (bytesPerSec > 0) relay(backend, client, undefined, new ByteRate(bytesPerSec));
      else relayEnd(backend, client);
      relay(client, backend, undefined, bytesPerSec > 0 ? new ByteRate(bytesPerSec) : undefined);
      client.on('error', () => backend.destroy());
      client.once('close', () => {
        backend.destroy();
        resolve();
      });
      backend.once('close', () => {
        client.destroy();
        resolve();
      });
    });
    backend.on('error', (error) => {
      clearTimeout(timer);
      if (!connected) {
        const code = (error as NodeJS.ErrnoException).code;
        const why = code === 'ECONNREFUSED' ? 'connect: connection refused' : code === 'ETIMEDOUT' ? 'i/o timeout' : error.message;
        fail(res, 500, 'InternalError', `error dialing backend: dial tcp ${location}: ${why}`);
        resolve();
      } else client.destroy();
    });
  });
}
