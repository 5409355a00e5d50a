/**
 * One JSON POST to a webhook over HTTPS, as the API server makes it for conversion and admission
 * webhooks: the configuration's CA bundle trusted, optional client credentials (certificate or
 * bearer token from the admission plugin's kubeconfig), a whole-call deadline (Go's context
 * timeout, not an idle timer: a server that trickles bytes still times out), and a Service
 * reference dialled at one of its endpoints while the certificate is checked for
 * `<name>.<namespace>.svc`. Failures are Errors worded as Go's HTTP client words them.
 */
import {withTraceHeaders} from './tracing/propagation.js';
import {request as httpsRequest} from 'node:https';

export interface WebhookPostOptions {
  /** PEM bundle to trust (the configuration's caBundle, decoded); the system's roots without it. */
  ca?: string;
  /** Client certificate and key (PEM), for webhooks that authenticate the API server. */
  cert?: string;
  key?: string;
  headers?: Record<string, string>;
  timeoutMs: number;
  /** Where to connect when the URL's host is a service name (an endpoint of the service). */
  connectTo?: {host: string; port: number};
}

export interface WebhookPostResponse {
  status: number;
  text: string;
}

/** The error of a call that ran out of time (Go's `context deadline exceeded`). */
export const DEADLINE_EXCEEDED = 'context deadline exceeded';

/** Node's socket errors in Go's words (`dial tcp 127.0.0.1:1: connect: connection refused`). */
export function dialError(error: NodeJS.ErrnoException & {address?: string; port?: number}): string {
  const where = error.address !== undefined ? `${error.address}:${error.port}` : '';
  switch (error.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${where}: connect: connection refused`;
    case 'ENOTFOUND':
      return `dial tcp: lookup ${(error as {hostname?: string}).hostname ?? ''}: no such host`;
    case 'UND_ERR_SOCKET':
      // undici's `other side closed` (webhook-pools.ts): the webhook closed the connection without
      // an answer, which Go's client reports as the EOF it read.
      return 'EOF';
    case 'ETIMEDOUT':
      return error.message === DEADLINE_EXCEEDED ? DEADLINE_EXCEEDED : `dial tcp ${where}: i/o timeout`;
    default:
      return error.message;
  }
}

export function postJson(url: URL, body: string, options: WebhookPostOptions): Promise<WebhookPostResponse> {
  return new Promise((resolve, reject) => {
    const {connectTo} = options;
    const req = httpsRequest(
      url,
      {
        method: 'POST',
        headers: withTraceHeaders({'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(body), ...options.headers}),
        ca: options.ca,
        cert: options.cert,
        key: options.key,
        // A fresh connection per call; callers on the request path keep theirs (webhook-pools.ts).
        agent: false,
        ...(connectTo ? {hostname: connectTo.host, host: connectTo.host, port: connectTo.port, servername: url.hostname} : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(timer);
          resolve({status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8')});
        });
        res.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
      },
    );
    const timer = setTimeout(() => {
      const error = Object.assign(new Error(DEADLINE_EXCEEDED), {code: 'ETIMEDOUT'});
      // Settles even when the response had started (its stream may end without an error event).
      reject(error);
      req.destroy(error);
    }, options.timeoutMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(body);
  });
}
