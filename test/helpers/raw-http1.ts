/**
 * HTTP/1.1 over TLS at the byte level, for what no ordinary client sends: pipelined requests, bodies
 * dribbled over seconds, `Expect: 100-continue`, chunked bodies, a disconnect mid-body. Responses are
 * parsed as they arrive (status line, headers, Content-Length or chunked body), so a test sees every
 * interim `100 Continue`, every final response, and whether and how the connection ended.
 */
import {connect, type TLSSocket} from 'node:tls';
import type {AdminCredentials} from './apiserver.js';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The body parsed as JSON, when it is JSON. */
  json?: any;
}

export interface RawConnection {
  socket: TLSSocket;
  /** Every complete response so far, interim ones (1xx) included, in order. */
  readonly responses: RawResponse[];
  /** How the connection ended: undefined while open, 'end' (FIN, clean) or the error code (e.g. ECONNRESET). */
  readonly ended: string | undefined;
  write(data: string | Buffer): Promise<void>;
  /** Resolves when `count` responses (interim included) have arrived, or rejects after timeoutMs. */
  waitResponses(count: number, timeoutMs?: number): Promise<RawResponse[]>;
  /** Resolves once the connection has ended, with how ('end' or an error code). */
  waitEnded(timeoutMs?: number): Promise<string>;
  close(): void;
}

/** Opens a TLS connection (ALPN http/1.1) with the admin client certificate. */
export function rawConnect(creds: AdminCredentials): Promise<RawConnection> {
  const url = new URL(creds.server);
  return new Promise((resolve, reject) => {
    const socket = connect({host: url.hostname, port: Number(url.port), ca: creds.caPem, cert: creds.certPem, key: creds.keyPem, ALPNProtocols: ['http/1.1']}, () => {
      resolve(connection);
    });
    socket.once('error', reject);
    let buffer = Buffer.alloc(0);
    const responses: RawResponse[] = [];
    let ended: string | undefined;
    const waiters = new Set<() => void>();
    const notify = () => waiters.forEach((w) => w());
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const parsed = parseOne(buffer);
        if (!parsed) break;
        responses.push(parsed.response);
        buffer = buffer.subarray(parsed.consumed);
      }
      notify();
    });
    socket.on('end', () => {
      ended ??= 'end';
      notify();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      ended ??= error.code ?? error.message;
      notify();
    });
    socket.on('close', () => {
      ended ??= 'close';
      notify();
    });
    const wait = <T>(ready: () => T | undefined, what: string, timeoutMs: number): Promise<T> =>
      new Promise((res, rej) => {
        // A condition that throws (the connection ended first) rejects the wait, from whichever
        // event checked it.
        const check = () => {
          let value: T | undefined;
          try {
            value = ready();
          } catch (error) {
            done();
            rej(error as Error);
            return;
          }
          if (value !== undefined) {
            done();
            res(value);
          }
        };
        const timer = setTimeout(() => {
          done();
          rej(new Error(`${what} within ${timeoutMs}ms; have ${responses.length} responses (${responses.map((r) => r.status).join(',')}), ended=${ended}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    const connection: RawConnection = {
      socket,
      responses,
      get ended() {
        return ended;
      },
      write: (data) => new Promise((res, rej) => socket.write(data, (error) => (error ? rej(error) : res()))),
      waitResponses: (count, timeoutMs = 20_000) =>
        wait(() => (responses.length >= count ? responses.slice(0, count) : ended !== undefined ? (() => {
          throw new Error(`connection ended (${ended}) after ${responses.length} of ${count} responses`);
        })() : undefined), `${count} responses`, timeoutMs),
      waitEnded: (timeoutMs = 20_000) => wait(() => ended, 'the end of the connection', timeoutMs),
      close: () => socket.destroy(),
    };
  });
}

/** One complete response at the start of `buffer`, or undefined when more bytes are needed. */
function parseOne(buffer: Buffer): {response: RawResponse; consumed: number} | undefined {
  const headEnd = buffer.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const lines = buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(lines[0]!.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let at = headEnd + 4;
  let body: Buffer;
  if (status >= 100 && status < 200) {
    body = Buffer.alloc(0);
  } else if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = buffer.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = parseInt(buffer.subarray(at, lineEnd).toString('latin1'), 16);
      if (buffer.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
      if (size === 0) break;
    }
    body = Buffer.concat(parts);
  } else {
    const length = Number(headers['content-length'] ?? 0);
    if (buffer.length < at + length) return undefined;
    body = buffer.subarray(at, at + length);
    at += length;
  }
  let json: any;
  try {
    json = body.length ? JSON.parse(body.toString('utf8')) : undefined;
  } catch {
    json = undefined;
  }
  return {response: {status, headers, body: Buffer.from(body), json}, consumed: at};
}

/** A request head (and body) as bytes; `Host` and `Content-Length` are added unless given. */
export function rawRequest(method: string, path: string, options: {headers?: Record<string, string>; body?: string | Buffer; host?: string} = {}): Buffer {
  const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body);
  const headers: Record<string, string> = {host: options.host ?? 'localhost', ...options.headers};
  const names = Object.keys(headers).map((n) => n.toLowerCase());
  if (body && !names.includes('content-length') && !names.includes('transfer-encoding')) headers['content-length'] = String(body.length);
  const head = `${method} ${path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
  return body ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : Buffer.from(head, 'latin1');
}

/** `data` in the chunked transfer coding, in chunks of `chunkSize`. */
export function chunked(data: Buffer, chunkSize: number): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < data.length; at += chunkSize) {
    const piece = data.subarray(at, at + chunkSize);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}
