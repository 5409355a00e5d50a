/**
 * The secure serving options the API server and the controller manager share (upstream's
 * SecureServingOptions): --tls-min-version, --tls-cipher-suites, --tls-sni-cert-key,
 * --disable-http2-serving and --http2-max-streams-per-connection, read from a command line's
 * typed values, and the HTTPS server they describe (HTTP/2 with HTTP/1.1 fallback unless HTTP/2 is
 * turned off).
 */
import type {IncomingMessage, ServerResponse} from 'node:http';
import type {Server as NetServer, Socket} from 'node:net';
import type {TLSSocket} from 'node:tls';
import {DEFAULT_CIPHERS, type TlsOptions} from 'node:tls';
import {NODE_TLS_VERSION, defaultServingCiphers, toOpenSslCipherList} from '../../../options/types.js';
import {toEcdhCurve} from '../../../options/value-tls.js';
import {deferContinue, oneRequestAtATime} from './http1-requests.js';
import {applyConnectionTimeouts, tlsHandshakeTimeout, UPSTREAM_CONNECTION_TIMEOUTS, type ConnectionTimeouts} from './connection-timeouts.js';

export interface SecureServingOptions {
  /** Node's minVersion, e.g. 'TLSv1.2'. */
  tlsMinVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  /** OpenSSL cipher list for Node's `ciphers`. */
  ciphers?: string;
  /** --tls-sni-cert-key entries: `certfile,keyfile[:domain,...]`. */
  sniCertKeys?: string[];
  disableHttp2: boolean;
  http2MaxStreamsPerConnection: number;
  /** --tls-curve-preferences as Node's `ecdhCurve` (OpenSSL group names, colon-separated). */
  ecdhCurve?: string;
  /** Idle and read-header timeouts of connections (upstream's 90 s and 32 s; no flag, tests shorten them). */
  connectionTimeouts?: ConnectionTimeouts;
}

/** Upstream's MaxConcurrentStreams when --http2-max-streams-per-connection is 0 (golang.org/x/net's client default). */
export const DEFAULT_HTTP2_MAX_STREAMS = 100;

const list = (v: unknown): string[] | undefined => (Array.isArray(v) && v.length > 0 ? (v as string[]) : undefined);

export function secureServingOptions(values: Record<string, unknown>): SecureServingOptions {
  const tlsMin = typeof values['tls-min-version'] === 'string' && values['tls-min-version'] !== '' ? values['tls-min-version'] : undefined;
  const cipherSuites = list(values['tls-cipher-suites']);
  return {
    tlsMinVersion: tlsMin ? NODE_TLS_VERSION[tlsMin as keyof typeof NODE_TLS_VERSION] : undefined,
    ciphers: cipherSuites ? toOpenSslCipherList(cipherSuites) : undefined,
    sniCertKeys: list(values['tls-sni-cert-key']),
    disableHttp2: values['disable-http2-serving'] === true,
    http2MaxStreamsPerConnection: (values['http2-max-streams-per-connection'] as number) ?? 0,
    ecdhCurve: toEcdhCurve(values['tls-curve-preferences'] as number[] | undefined),
  };
}

/** The TLS part: the default certificate, the SNI certificates, the minimum version and ciphers. */
export async function tlsServingOptions(o: SecureServingOptions, key: string, cert: string): Promise<TlsOptions> {
  const sni = o.sniCertKeys?.length ? await import('../../apiserver/sni.js') : undefined;
  const candidates = sni && o.sniCertKeys ? await sni.loadSniCandidates(o.sniCertKeys.map(sni.parseSniEntry)) : [];
  return {
    key,
    cert,
    ...(sni && candidates.length ? {SNICallback: sni.sniCallback(candidates)} : {}),
    ...(o.tlsMinVersion ? {minVersion: o.tlsMinVersion} : {}),
    ciphers: o.ciphers ?? defaultServingCiphers(DEFAULT_CIPHERS),
    ...(o.ecdhCurve ? {ecdhCurve: o.ecdhCurve} : {}),
  };
}

export type SecureServer = NetServer & {close(cb?: (err?: Error) => void): void};

/** An HTTPS server (HTTP/2 with HTTP/1.1 fallback unless --disable-http2-serving) for `handler`. */
export async function createSecureServer(
  o: SecureServingOptions,
  tls: TlsOptions,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<SecureServer> {
  const timeouts = o.connectionTimeouts ?? UPSTREAM_CONNECTION_TIMEOUTS;
  const withTimeouts = {...tls, ...tlsHandshakeTimeout(timeouts)};
  // Go's HTTP/1 semantics: one request of a connection at a time, 100 Continue when the body is read.
  // (On HTTP/2, Node resets a stream whose body is unread when its response ends, RST_STREAM
  // NO_ERROR as Go does; what one session may hold stays at Node's 10 MB: unread request data is
  // held back by flow control and a response written ahead sits in its stream, so neither counts.)
  const sequenced = oneRequestAtATime(handler);
  let server: SecureServer;
  if (o.disableHttp2) {
    const https = await import('node:https');
    server = https.createServer(withTimeouts, sequenced) as SecureServer;
  } else {
    const http2 = await import('node:http2');
    const maxConcurrentStreams = o.http2MaxStreamsPerConnection > 0 ? o.http2MaxStreamsPerConnection : DEFAULT_HTTP2_MAX_STREAMS;
    server = http2.createSecureServer({...withTimeouts, allowHTTP1: true, settings: {maxConcurrentStreams}}, sequenced as never) as unknown as SecureServer;
  }
  return applyConnectionTimeouts(deferContinue(parseHttp1FromStream(server), sequenced), timeouts);
}

const ignoreData = (): void => undefined;

/**
 * Makes every HTTP/1.x connection of a TLS server feed its HTTP parser through the socket's stream
 * instead of straight from the TLS handle. Call it on any node:https server, or HTTP/2 server with
 * allowHTTP1, right after creating it (before the first connection).
 *
 * Why (issue 18, HTTP/1.1 writes over 16 KB reset): Node's HTTP/1 server lets its llhttp parser
 * `consume()` the TLS handle, so decrypted bytes go from C++ to the parser without the JS stream.
 * When a request's head arrives while the previous response on that keep-alive connection has not
 * drained yet (any response over the socket's 16 KiB high-water mark whose 'drain' has not fired:
 * the client has the bytes and already sent its next request), the server pauses the parser
 * (`parserOnIncoming`: `ws.needDrain` → socket.pause(), then parser.pause()). A pause cannot stop
 * TLSWrap::ClearOut, which hands every decrypted 16 KiB chunk of the same read to the consumer in
 * one loop without looking at the read state; the next chunk of that request's body reaches the
 * paused parser, llhttp answers HPE_PAUSED ("Parse Error: Paused"), Node treats it as a client
 * parse error and destroys the socket with the body unread: the client sees ECONNRESET (Node) or
 * RemoteDisconnected (Python), and its write was never applied. Bodies within one TLS record
 * (≤16 KiB) never reach a second chunk, which is why only larger writes failed. Node 20 to 24 all
 * loop this way.
 *
 * A 'data' listener on the socket makes Node's HTTP server unconsume the parser (its documented
 * listener wrapper does so, so that user code listening to the socket still sees the bytes); from
 * then on bytes arrive through the Readable stream, where pause() holds them in the stream's
 * buffer until the server resumes, as backpressure should. The listener itself does nothing.
 * HTTP/2 sessions (ALPN h2) keep their own consumer and flow control and are left alone.
 */
export function parseHttp1FromStream<S extends NetServer>(server: S): S {
  server.on('secureConnection', (socket: TLSSocket & {parser?: unknown}) => {
    // Node's HTTP/1 connection listener ran first (it is the listener the server was created
    // with), so the parser is in place and the wrapper that unconsumes it is installed.
    if (socket.alpnProtocol === 'h2' || !socket.parser) return;
    socket.on('data', ignoreData);
  });
  return server;
}

/** Tracks a server's TLS connections, so that a stop can close them (http2 servers have no closeAllConnections). */
export function trackConnections(server: SecureServer): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('secureConnection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return sockets;
}
