/**
 * Keep-alive connection pools to webhooks for callers on the request path (admission webhooks),
 * the same POST as `postJson` (webhook-post.ts: caBundle trusted, client credentials, whole-call
 * deadline, a Service's endpoint dialled while the certificate is checked for the service's name)
 * made with undici: an undici Pool per endpoint and TLS identity costs about 0.6x the CPU per call
 * of node:https with a keep-alive agent (bench/webhook-client.mjs), and each admission webhook
 * call is on every matching write. Errors are the ones postJson gives (socket and TLS errors as
 * Node raises them, the deadline as `context deadline exceeded`), so callers word them alike.
 */
import {Pool, type Dispatcher} from 'undici';
import {withTraceHeaders} from './tracing/propagation.js';
import {DEADLINE_EXCEEDED, type WebhookPostOptions, type WebhookPostResponse} from './webhook-post.js';

/**
 * Idle connections close before the usual 5 s keep-alive of servers (Node's and Go's defaults), so
 * a request never goes out on a socket the webhook is closing.
 */
const IDLE_SOCKET_MS = 4000;

/** Pools kept at most; endpoints come and go with services and configurations. */
const MAX_POOLS = 256;

/**
 * Longer than any webhook's deadline (timeoutSeconds is at most 30): the call's own deadline is
 * what ends a slow connect, with its own wording, not undici's 10 s connect timeout.
 */
const CONNECT_TIMEOUT_MS = 60_000;

/** Made only when the deadline passes: capturing a stack on every call cost a tenth of the call's CPU. */
const deadlineExceeded = () => Object.assign(new Error(DEADLINE_EXCEEDED), {code: 'ETIMEDOUT'});

export class WebhookPools {
  private readonly pools = new Map<string, Pool>();

  post(url: URL, body: string, options: WebhookPostOptions): Promise<WebhookPostResponse> {
    const pool = this.pool(url, options);
    return new Promise((resolve, reject) => {
      let abort: ((reason: Error) => void) | undefined;
      let late = false;
      let status = 0;
      const chunks: Buffer[] = [];
      // Go's context deadline: the whole call, from waiting for a connection to the answer's last byte.
      const timer = setTimeout(() => {
        late = true;
        const error = deadlineExceeded();
        reject(error);
        abort?.(error);
      }, options.timeoutMs);
      // undici's handler interface rather than pool.request(): no stream per answer, no parsed
      // header object, no AbortSignal; together most of what request() costs per call.
      // Every value is a string (ours and the W3C trace context's).
      const headers = withTraceHeaders({'Content-Type': 'application/json', Accept: 'application/json', ...options.headers}) as Record<string, string>;
      pool.dispatch(
        {path: url.pathname + url.search, method: 'POST', headers, body},
        {
          onConnect(abortRequest: (reason: Error) => void) {
            abort = abortRequest;
            if (late) abortRequest(deadlineExceeded());
          },
          onHeaders(statusCode: number) {
            status = statusCode;
            return true;
          },
          onData(chunk: Buffer) {
            chunks.push(chunk);
            return true;
          },
          onComplete() {
            clearTimeout(timer);
            resolve({status, text: Buffer.concat(chunks).toString('utf8')});
          },
          onError(error: Error) {
            clearTimeout(timer);
            reject(error);
          },
        } as unknown as Dispatcher.DispatchHandler,
      );
    });
  }

  /** The pool for where the call connects and with which TLS identity (trusted CA, client certificate, server name). */
  private pool(url: URL, options: WebhookPostOptions): Pool {
    const {connectTo, ca, cert, key} = options;
    const host = connectTo ? (connectTo.host.includes(':') ? `[${connectTo.host}]` : connectTo.host) : url.hostname;
    const port = connectTo ? connectTo.port : Number(url.port || 443);
    const origin = `https://${host}:${port}`;
    // Dialling a service's endpoint: the certificate is checked against the service's host name.
    const servername = connectTo ? url.hostname : undefined;
    const id = `${origin}\n${servername ?? ''}\n${ca ?? ''}\n${cert ?? ''}\n${key ?? ''}`;
    const known = this.pools.get(id);
    if (known) return known;
    if (this.pools.size >= MAX_POOLS) {
      // The oldest first; close() lets its calls in flight finish.
      const [oldestId, oldest] = this.pools.entries().next().value as [string, Pool];
      this.pools.delete(oldestId);
      void oldest.close().catch(() => undefined);
    }
    const pool = new Pool(origin, {
      connect: {ca, cert, key, ...(servername ? {servername} : {})},
      connectTimeout: CONNECT_TIMEOUT_MS,
      keepAliveTimeout: IDLE_SOCKET_MS,
      keepAliveMaxTimeout: IDLE_SOCKET_MS,
    });
    this.pools.set(id, pool);
    return pool;
  }

  /** Closes every connection at once (calls in flight fail). */
  close(): void {
    for (const pool of this.pools.values()) void pool.destroy().catch(() => undefined);
    this.pools.clear();
  }
}
