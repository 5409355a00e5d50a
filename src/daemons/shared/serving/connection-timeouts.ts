/**
 * How long a secure server keeps a connection that is not serving a request: upstream's
 * SecureServingInfo.Serve gives its http.Server `IdleTimeout: 90s` (HTTP/1 keep-alive and HTTP/2
 * alike) and `ReadHeaderTimeout: 32s`, which Go also applies to the TLS handshake and to a new
 * connection's first request. Node has no single setting for either, so this module maps them:
 *
 * | upstream                                   | Node                                                     |
 * |--------------------------------------------|----------------------------------------------------------|
 * | TLS handshake within ReadHeaderTimeout     | tls `handshakeTimeout` (see tlsHandshakeTimeout)         |
 * | first request within ReadHeaderTimeout     | a socket timeout from the handshake to the first byte     |
 * | request headers within ReadHeaderTimeout   | http `headersTimeout`, checked by the connections list   |
 * | HTTP/1 idle between requests: IdleTimeout  | http `keepAliveTimeout`                                  |
 * | HTTP/2 no open stream for IdleTimeout      | a per-session timer while no stream is open; GOAWAY       |
 *
 * Long-running requests (watches, logs) are never cut by these: HTTP/1 has no socket timeout while
 * a response is in progress, and an HTTP/2 session's timer only runs while it has no stream.
 */
import type {Server as NetServer} from 'node:net';
import type {TLSSocket} from 'node:tls';
import type {Http2Session, ServerHttp2Stream} from 'node:http2';

export interface ConnectionTimeouts {
  /** Upstream's IdleTimeout (90 s). */
  idleTimeoutMs: number;
  /** Upstream's ReadHeaderTimeout (32 s). */
  readHeaderTimeoutMs: number;
}

export const UPSTREAM_CONNECTION_TIMEOUTS: ConnectionTimeouts = {idleTimeoutMs: 90_000, readHeaderTimeoutMs: 32_000};

/** The TLS option bounding the handshake (Go bounds it by the read-header timeout). */
export function tlsHandshakeTimeout(t: ConnectionTimeouts): {handshakeTimeout: number} {
  return {handshakeTimeout: t.readHeaderTimeoutMs};
}

type HttpTimeoutFields = {
  keepAliveTimeout?: number;
  headersTimeout?: number;
  requestTimeout?: number;
  connectionsCheckingInterval?: number;
};

/**
 * Applies the timeouts to an https server or an HTTP/2 server with allowHTTP1. Call before listen():
 * Node reads connectionsCheckingInterval when the server starts listening.
 */
export function applyConnectionTimeouts<S extends NetServer>(server: S, t: ConnectionTimeouts): S {
  const http = server as unknown as HttpTimeoutFields;
  http.keepAliveTimeout = t.idleTimeoutMs;
  // Node refuses a headersTimeout above requestTimeout (the whole request, 5 min by default); both
  // stay as they are when the read-header timeout would exceed it.
  if (!http.requestTimeout || t.readHeaderTimeoutMs <= http.requestTimeout) http.headersTimeout = t.readHeaderTimeoutMs;
  // The connections list is scanned this often for expired headers; a quarter of the timeout keeps
  // the cut within 25% of it (Node's 30 s default would double a 32 s timeout).
  http.connectionsCheckingInterval = Math.max(250, Math.min(30_000, Math.floor(t.readHeaderTimeoutMs / 4)));

  server.on('secureConnection', (socket: TLSSocket) => {
    if (socket.alpnProtocol === 'h2') return; // the session timer below
    // Until the first byte of the first request; Node's own timers take over from there.
    socket.setTimeout(t.readHeaderTimeoutMs);
    socket.once('data', () => socket.setTimeout(0));
  });
  server.on('session', (session: Http2Session) => closeIdleSession(session, t.idleTimeoutMs));
  return server;
}

/** Closes (GOAWAY, then the connection) an HTTP/2 session that has had no open stream for idleMs. */
function closeIdleSession(session: Http2Session, idleMs: number): void {
  let open = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => {
      if (open === 0 && !session.closed && !session.destroyed) session.close();
    }, idleMs);
    timer.unref();
  };
  arm();
  session.on('stream', (stream: ServerHttp2Stream) => {
    open++;
    if (timer) clearTimeout(timer);
    timer = undefined;
    stream.once('close', () => {
      if (--open === 0 && !session.closed && !session.destroyed) arm();
    });
  });
  session.once('close', () => {
    if (timer) clearTimeout(timer);
  });
}
