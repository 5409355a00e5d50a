/**
 * The agent's streaming endpoints after the HTTP upgrade (the kubelet's /exec, /attach and
 * /portForward): the request's transport is chosen from its Upgrade header, WebSocket (the ws
 * library; channel subprotocols for exec and attach, SPDY tunnelled in binary messages for
 * port-forward) or SPDY/3.1 (./spdy-session.ts), and handed to the exec, attach or port-forward
 * handler. A request that cannot be served gets an HTTP error before the upgrade, in the kubelet's
 * words, so that kubectl prints it (`error: unable to upgrade connection: pod does not exist`).
 * --streaming-connection-idle-timeout closes a connection without traffic either way.
 */
import type {IncomingMessage} from 'node:http';
import type {Duplex} from 'node:stream';
import {WebSocketServer, createWebSocketStream, type WebSocket} from 'ws';
import type {AttachTarget} from '../runtime/runtime.js';
import type {ExecProcess, ExecRequest} from '../runtime/exec.js';
import {CHANNEL_PROTOCOLS, SPDY_TUNNEL_PROTOCOL, chooseProtocol} from './channels.js';
import {runAttach, runExec} from './command.js';
import {PORT_FORWARD_PROTOCOL, servePortForward, type PortForwardTarget} from './port-forward.js';
import {SPDY_COMMAND_PROTOCOLS, spdyCommandStreams, streamOptions, webSocketCommandStreams, type CommandStreams, type StreamOptions} from './remote-command.js';
import {SpdySession} from './spdy-session.js';

export type StreamingRoute =
  | {kind: 'exec' | 'attach'; namespace: string; pod: string; container: string}
  | {kind: 'portForward'; namespace: string; pod: string};

export interface StreamingProviders {
  /** The pod's port-forward identity, or why there is none (`pod does not exist`). */
  pod(namespace: string, pod: string): PortForwardTarget | {error: string; code: number};
  exec(namespace: string, pod: string, container: string, request: ExecRequest): ExecProcess | {error: string};
  attach(namespace: string, pod: string, container: string): AttachTarget | {error: string};
  /** Checks that the container runs, before the upgrade. */
  containerRunning(namespace: string, pod: string, container: string): {error: string} | undefined;
}

export interface StreamingOptions {
  /** --streaming-connection-idle-timeout in ms; 0 never. */
  idleTimeoutMs: number;
  /** Tracks the upgraded connections (a stop closes them; tests count them). */
  onConnection?: (socket: Duplex, change: 1 | -1) => void;
}

/** The subprotocol each upgrade negotiated, for the server's handleProtocols. */
const negotiated = new WeakMap<IncomingMessage, string>();

/**
 * The protocol is chosen before the handshake (./channels.ts) and handed to ws as a placeholder
 * token: ws refuses subprotocol names with '/', and kubectl's port-forward tunnel protocol is
 * `SPDY/3.1+portforward.k8s.io` (gorilla/websocket, which upstream uses, accepts any text).
 */
const wss = new WebSocketServer({
  noServer: true,
  perMessageDeflate: false,
  maxPayload: 64 * 1024 * 1024,
  handleProtocols: (_offered, req) => negotiated.get(req) ?? false,
});

function rejectUpgrade(socket: Duplex, code: number, message: string): void {
  const reason = {400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 500: 'Internal Server Error'}[code] ?? 'Error';
  const body = Buffer.from(message);
  socket.end(`HTTP/1.1 ${code} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${message}`);
}

function headerValues(req: IncomingMessage, name: string): string[] {
  const raw = req.headers[name];
  const values = Array.isArray(raw) ? raw : raw ? [raw] : [];
  return values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
}

function isWebSocket(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

function isSpdy(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase().startsWith('spdy/3');
}

/** `unable to upgrade: ...` for a request to a streaming path without upgrade headers. */
export const MISSING_UPGRADE = 'unable to upgrade: missing upgrade headers in request';

export function serveStreamingUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  route: StreamingRoute,
  providers: StreamingProviders,
  options: StreamingOptions,
): void {
  socket.on('error', () => {});
  if (!isWebSocket(req) && !isSpdy(req)) return rejectUpgrade(socket, 400, MISSING_UPGRADE);
  const pod = providers.pod(route.namespace, route.pod);
  if ('error' in pod) return rejectUpgrade(socket, pod.code, pod.error);
  const query = new URL(req.url ?? '/', 'http://agent').searchParams;

  let stream: StreamOptions | undefined;
  let command: string[] = [];
  if (route.kind !== 'portForward') {
    const parsed = streamOptions(query);
    if ('error' in parsed) return rejectUpgrade(socket, 400, parsed.error);
    stream = parsed;
    command = query.getAll('command');
    if (route.kind === 'exec' && command.length === 0) return rejectUpgrade(socket, 400, 'you must specify a command');
    const notRunning = providers.containerRunning(route.namespace, route.pod, route.container);
    if (notRunning) return rejectUpgrade(socket, 500, notRunning.error);
  }
  // Node's socket timeout is an idle timer over both directions, as upstream's read and write
  // deadlines. Armed once the upgrade is done (ws clears a socket's timeout when it takes it over).
  const armIdleTimeout = () => {
    if (options.idleTimeoutMs <= 0) return;
    // After the current 'data' dispatch: the secure server's first-request timer clears the
    // socket's timeout from a 'data' listener that runs after the upgrade (connection-timeouts.ts).
    setImmediate(() => {
      if (!socket.destroyed) (socket as Duplex & {setTimeout: (ms: number, cb: () => void) => void}).setTimeout(options.idleTimeoutMs, () => socket.destroy());
    });
  };

  options.onConnection?.(socket, 1);
  socket.once('close', () => options.onConnection?.(socket, -1));

  const start = (streams: CommandStreams) => {
    const r = route as Extract<StreamingRoute, {kind: 'exec' | 'attach'}>;
    if (r.kind === 'exec') {
      const proc = providers.exec(r.namespace, r.pod, r.container, {command, tty: stream!.tty, stdin: stream!.stdin});
      if ('error' in proc) return void streams.finish({kind: 'error', message: `error executing command in container: ${proc.error}`});
      return void runExec(proc, streams, command);
    }
    const target = providers.attach(r.namespace, r.pod, r.container);
    if ('error' in target) return void streams.finish({kind: 'error', message: `error attaching to container: ${target.error}`});
    return void runAttach(target, streams);
  };

  if (isWebSocket(req)) {
    const supported = route.kind === 'portForward' ? [SPDY_TUNNEL_PROTOCOL] : [...CHANNEL_PROTOCOLS];
    const protocol = chooseProtocol(headerValues(req, 'sec-websocket-protocol'), supported);
    if (protocol === undefined || (route.kind === 'portForward' && protocol === '')) {
      return rejectUpgrade(socket, 400, `requested protocol(s) are not supported: [${headerValues(req, 'sec-websocket-protocol').join(' ')}]; supports [${supported.join(' ')}]`);
    }
    if (protocol) {
      negotiated.set(req, protocol);
      req.headers['sec-websocket-protocol'] = 'negotiated';
    } else delete req.headers['sec-websocket-protocol'];
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      armIdleTimeout();
      if (route.kind === 'portForward') {
        const tunnel = createWebSocketStream(ws);
        tunnel.on('error', () => {});
        servePortForward(new SpdySession(tunnel, {idleTimeoutMs: options.idleTimeoutMs}), pod);
        return;
      }
      start(webSocketCommandStreams(ws, protocol, stream!));
    });
    return;
  }

  // SPDY/3.1: negotiate the stream protocol (X-Stream-Protocol-Version), answer 101, then frames.
  const supported = route.kind === 'portForward' ? [PORT_FORWARD_PROTOCOL] : SPDY_COMMAND_PROTOCOLS;
  const offered = headerValues(req, 'x-stream-protocol-version');
  const protocol = chooseProtocol(offered, supported);
  if (protocol === undefined) {
    return rejectUpgrade(socket, 403, `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server supports [${supported.join(' ')}]`);
  }
  socket.write(
    'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n' +
      (protocol ? `X-Stream-Protocol-Version: ${protocol}\r\n` : '') +
      '\r\n',
  );
  armIdleTimeout();
  const session = new SpdySession(socket, {idleTimeoutMs: options.idleTimeoutMs});
  if (head.length) socket.unshift(head);
  if (route.kind === 'portForward') return servePortForward(session, pod);
  spdyCommandStreams(session, protocol, stream!).then(start, () => session.destroy());
}
