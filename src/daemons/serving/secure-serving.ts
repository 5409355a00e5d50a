/**
 * The secure serving options the API server and the controller manager share (upstream's
 * SecureServingOptions): --tls-min-version, --tls-cipher-suites, --tls-sni-cert-key,
 * --disable-http2-serving and --http2-max-streams-per-connection, read from a command line's
 * typed values, and the HTTPS server they describe (HTTP/2 with HTTP/1.1 fallback unless HTTP/2 is
 * turned off).
 */
import type {IncomingMessage, ServerResponse} from 'node:http';
import type {Server as NetServer, Socket} from 'node:net';
import type {TlsOptions} from 'node:tls';
import {NODE_TLS_VERSION, toOpenSslCipherList} from '../../options/types.js';

export interface SecureServingOptions {
  /** Node's minVersion, e.g. 'TLSv1.2'. */
  tlsMinVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  /** OpenSSL cipher list for Node's `ciphers`. */
  ciphers?: string;
  /** --tls-sni-cert-key entries: `certfile,keyfile[:domain,...]`. */
  sniCertKeys?: string[];
  disableHttp2: boolean;
  http2MaxStreamsPerConnection: number;
}

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
  };
}

/** The TLS part: the default certificate, the SNI certificates, the minimum version and ciphers. */
export async function tlsServingOptions(o: SecureServingOptions, key: string, cert: string): Promise<TlsOptions> {
  const sni = o.sniCertKeys?.length ? await import('../apiserver/sni.js') : undefined;
  const candidates = sni && o.sniCertKeys ? await sni.loadSniCandidates(o.sniCertKeys.map(sni.parseSniEntry)) : [];
  return {
    key,
    cert,
    ...(sni && candidates.length ? {SNICallback: sni.sniCallback(candidates)} : {}),
    ...(o.tlsMinVersion ? {minVersion: o.tlsMinVersion} : {}),
    ...(o.ciphers ? {ciphers: o.ciphers} : {}),
  };
}

export type SecureServer = NetServer & {close(cb?: (err?: Error) => void): void};

/** An HTTPS server (HTTP/2 with HTTP/1.1 fallback unless --disable-http2-serving) for `handler`. */
export async function createSecureServer(
  o: SecureServingOptions,
  tls: TlsOptions,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<SecureServer> {
  if (o.disableHttp2) {
    const https = await import('node:https');
    return https.createServer(tls, handler) as SecureServer;
  }
  const http2 = await import('node:http2');
  return http2.createSecureServer(
    {...tls, allowHTTP1: true, settings: o.http2MaxStreamsPerConnection > 0 ? {maxConcurrentStreams: o.http2MaxStreamsPerConnection} : undefined},
    handler as never,
  ) as unknown as SecureServer;
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
