/**
 * The REST client of orch's client programs (patch now; the agent and the controller manager's
 * informers later): HTTP/1.1 with keep-alive over node:http/node:https, built from a resolved
 * ClientConfig (src/client/orchconfig.ts). It authenticates as client-go does (client
 * certificate, bearer token or basic auth, impersonation headers), rate-limits every request with a
 * token bucket, turns error responses into ApiStatusError, reports `Warning` headers, retries a
 * 429/5xx that carries Retry-After (as client-go does, at most 10 times), and streams watches.
 *
 * Node's own agents suffice: the API server speaks HTTP/1.1 to us and a CLI makes few requests,
 * so undici's extra speed would not be felt and would cost a dependency and start-up time.
 */
import {Agent as HttpAgent, request as httpRequest, type IncomingMessage, type IncomingHttpHeaders, type OutgoingHttpHeaders} from 'node:http';
import {Agent as HttpsAgent, request as httpsRequest} from 'node:https';
import {StringDecoder} from 'node:string_decoder';
import {ORCH_VERSION} from '../lib/version.js';
import type {ClientConfig} from './orchconfig.js';
import {ApiConnectionError, ApiStatusError, errorFromResponse, type RequestContext} from './errors.js';
import {createRateLimiter, type LimiterClock, type RateLimiter} from './rate-limiter.js';
import {parseWarningHeaders, type WarningHandler, type WarningHeader} from './warnings.js';
import {discoverResources} from './discovery.js';
import {ResourceMapper} from './resource-mapper.js';

/** The connection and identity parts of a ClientConfig. */
export type ConnectionConfig = Pick<
  ClientConfig,
  'server' | 'caPem' | 'certPem' | 'keyPem' | 'insecure' | 'tlsServerName' | 'token' | 'username' | 'password' | 'impersonate'
>;

export interface RestClientOptions {
  config: ConnectionConfig;
  /** Whole-request timeout in milliseconds (`--request-timeout`); 0 or absent for none. */
  timeoutMs?: number;
  /** Go's text of the timeout, sent as the `timeout` query parameter as kubectl does (`5s`). */
  timeoutText?: string;
  /** Requests per second; 0 or less for no limit. */
  qps?: number;
  burst?: number;
  limiterClock?: LimiterClock;
  /** Overrides the `orch/<version> (<os>/<arch>)` User-Agent. */
  userAgent?: string;
  /**
   * Connections to the server at most (watches included); further requests wait for a free one.
   * Unset: no limit. A client with thousands of concurrent callers (orch fleet) sets it, else each
   * caller opens its own TLS connection when the server is slow.
   */
  maxSockets?: number;
  /** Receives every `Warning` header of every response. */
  warnings?: WarningHandler;
  /** Retries of a 429/5xx response that carries Retry-After (client-go: 10). */
  maxRetries?: number;
  /** How the client waits for Retry-After; tests pass a fake. */
  sleep?: (ms: number) => Promise<void>;
}

export interface RequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Absolute API path (`/api/v1/namespaces/default/pods/web`); the server URL's own path is prefixed. */
  path: string;
  query?: Record<string, string | undefined>;
  /** Serialized as JSON unless already a string. */
  body?: unknown;
  contentType?: string;
  accept?: string;
  /** What the request is about, for the message of an error response that is not a Status. */
  context?: Omit<RequestContext, 'method'>;
  signal?: AbortSignal;
}

export interface RestResponse<T> {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: T;
  warnings: WarningHeader[];
}

/** One event of a watch stream (api-conventions §4). */
export interface WatchEvent<T = Record<string, unknown>> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** Go's GOOS/GOARCH names for Node's platform and architecture. */
function goPlatform(): string {
  const arch: Record<string, string> = {x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x'};
  return `${process.platform}/${arch[process.arch] ?? process.arch}`;
}

export const DEFAULT_USER_AGENT = `orch/v${ORCH_VERSION} (${goPlatform()})`;

/** Header-name bytes allowed unescaped in `Impersonate-Extra-<key>` (RFC 7230 tchar, minus `%`). */
const TCHAR = /^[!#$&'*+\-.^_`|~0-9A-Za-z]$/;

/** client-go's escaping of an extra key: bytes that are not token characters become `%XX`. */
export function escapeExtraKey(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += byte < 0x80 && TCHAR.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The identity headers of every request: credentials, then impersonation (reference kubeconfig §6). */
export function authHeaders(config: ConnectionConfig): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  if (config.token) headers.authorization = `Bearer ${config.token}`;
  else if (config.username || config.password) {
    headers.authorization = `Basic ${Buffer.from(`${config.username ?? ''}:${config.password ?? ''}`).toString('base64')}`;
  }
  const imp = config.impersonate;
  if (imp) {
    headers['Impersonate-User'] = imp.user;
    if (imp.uid) headers['Impersonate-Uid'] = imp.uid;
    if (imp.groups.length > 0) headers['Impersonate-Group'] = [...imp.groups];
    for (const [key, values] of Object.entries(imp.extra)) {
      if (values.length > 0) headers[`Impersonate-Extra-${escapeExtraKey(key)}`] = [...values];
    }
  }
  return headers;
}

/** The raw values of a repeated response header (Node joins them in `headers`, not in `rawHeaders`). */
function rawHeaderValues(response: IncomingMessage, name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < response.rawHeaders.length; i += 2) {
    if (response.rawHeaders[i].toLowerCase() === name) values.push(response.rawHeaders[i + 1]);
  }
  return values;
}

function retryAfterSeconds(response: IncomingMessage): number {
  const value = Number(response.headers['retry-after']);
  return Number.isInteger(value) && value > 0 ? value : 0;
}

async function readBody(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** What an aborted request fails with: Node's own AbortError, its cause the signal's reason. */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', {cause: signal.reason}), {name: 'AbortError', code: 'ABORT_ERR'});
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class RestClient {
  private readonly base: URL;
  private readonly agent: HttpAgent;
  private readonly secure: boolean;
  private readonly limiter: RateLimiter;
  private readonly identity: OutgoingHttpHeaders;
  private readonly userAgent: string;
  private mapper?: Promise<ResourceMapper>;

  constructor(private readonly options: RestClientOptions) {
    const {config} = options;
    this.base = new URL(config.server);
    this.secure = this.base.protocol === 'https:';
    this.agent = this.secure
      ? new HttpsAgent({
          keepAlive: true,
          ...(options.maxSockets ? {maxSockets: options.maxSockets} : {}),
          ca: config.caPem,
          cert: config.certPem,
          key: config.keyPem,
          rejectUnauthorized: !config.insecure,
          servername: config.tlsServerName,
        })
      : new HttpAgent({keepAlive: true, ...(options.maxSockets ? {maxSockets: options.maxSockets} : {})});
    this.limiter = createRateLimiter({qps: options.qps ?? 0, burst: options.burst ?? 1, clock: options.limiterClock});
    this.identity = authHeaders(config);
    this.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  }

  /** The URL of an API path: the server's own path prefix kept, query and fragment of the server dropped. */
  url(path: string, query: Record<string, string | undefined> = {}): URL {
    const url = new URL(this.base.origin);
    url.pathname = this.base.pathname.replace(/\/$/, '') + path;
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, value);
    if (this.options.timeoutMs && this.options.timeoutText && !url.searchParams.has('timeout')) url.searchParams.set('timeout', this.options.timeoutText);
    return url;
  }

  /** Sends one request (after the rate limiter lets it go) and returns the raw response, unread. */
  private async send(o: RequestOptions, url: URL, signal: AbortSignal | undefined): Promise<IncomingMessage> {
    await this.limiter.acquire();
    const payload = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    const headers: OutgoingHttpHeaders = {
      ...this.identity,
      accept: o.accept ?? 'application/json',
      'user-agent': this.userAgent,
    };
    if (payload !== undefined) {
      headers['content-type'] = o.contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(payload);
    }
    const request = this.secure ? httpsRequest : httpRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      // Aborted by hand rather than through http.request's `signal`: an abort that comes once the
      // response is complete (a watch closed after its last event, as a reflector does on an ERROR
      // event) found the socket already handed back to the keep-alive agent, without the request's
      // error listener, and its 'error' killed the process (the fleet, after an API server restart).
      // A complete response has nothing left to abort: its socket is no longer this request's.
      if (signal?.aborted) return reject(this.connectionError(o.method, url, abortError(signal), signal));
      let response: IncomingMessage | undefined;
      const req = request(url, {method: o.method, headers, agent: this.agent}, (res) => resolve((response = res)));
      const onAbort = () => {
        if (!response?.complete) req.destroy(abortError(signal!));
      };
      signal?.addEventListener('abort', onAbort, {once: true});
      req.once('close', () => signal?.removeEventListener('abort', onAbort));
      req.on('error', (error) => reject(this.connectionError(o.method, url, error, signal)));
      req.end(payload);
    });
  }

  private connectionError(method: string, url: URL, error: Error, signal: AbortSignal | undefined): Error {
    if (error instanceof ApiConnectionError || error instanceof ApiStatusError) return error;
    if (signal?.aborted && signal.reason instanceof ApiConnectionError) return signal.reason;
    if (error.name === 'AbortError' && signal?.aborted) return signal.reason instanceof Error ? signal.reason : error;
    return new ApiConnectionError(method, url.toString(), error);
  }

  /** A signal that fires on the caller's signal or on the request timeout. */
  private deadline(o: RequestOptions, url: URL, timeoutMs: number): {signal?: AbortSignal; clear(): void} {
    if (!timeoutMs && !o.signal) return {clear: () => undefined};
    const controller = new AbortController();
    const onAbort = () => controller.abort(o.signal?.reason);
    o.signal?.addEventListener('abort', onAbort, {once: true});
    const timer = timeoutMs
      ? setTimeout(() => {
          // Go's http.Client wording, which kubectl shows after "Unable to connect to the server: ".
          const cause = Object.assign(new Error('net/http: request canceled (Client.Timeout exceeded while awaiting headers)'), {code: 'ETIMEDOUT'});
          controller.abort(new ApiConnectionError(o.method, url.toString(), cause));
        }, timeoutMs)
      : undefined;
    return {
      signal: controller.signal,
      clear: () => {
        if (timer) clearTimeout(timer);
        o.signal?.removeEventListener('abort', onAbort);
      },
    };
  }

  private reportWarnings(response: IncomingMessage): WarningHeader[] {
    const {warnings} = parseWarningHeaders(rawHeaderValues(response, 'warning'));
    for (const warning of warnings) this.options.warnings?.handleWarning(warning);
    return warnings;
  }

  /** Sends a request and reads its JSON response; rejects with ApiStatusError or ApiConnectionError. */
  async request<T = unknown>(o: RequestOptions): Promise<RestResponse<T>> {
    const url = this.url(o.path, o.query);
    const maxRetries = this.options.maxRetries ?? 10;
    for (let attempt = 0; ; attempt++) {
      const deadline = this.deadline(o, url, this.options.timeoutMs ?? 0);
      let response: IncomingMessage;
      let text: string;
      try {
        response = await this.send(o, url, deadline.signal);
        text = await readBody(response);
      } catch (error) {
        throw this.connectionError(o.method, url, error as Error, deadline.signal);
      } finally {
        deadline.clear();
      }
      const warnings = this.reportWarnings(response);
      const statusCode = response.statusCode ?? 0;
      const body = parseJson(text);
      if (statusCode >= 200 && statusCode < 300) return {statusCode, headers: response.headers, body: body as T, warnings};
      const wait = retryAfterSeconds(response);
      if ((statusCode === 429 || statusCode >= 500) && wait > 0 && attempt < maxRetries) {
        await (this.options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(wait * 1000);
        continue;
      }
      throw errorFromResponse(statusCode, body, text, {method: o.method, ...o.context}, wait);
    }
  }

  async get<T = unknown>(path: string, query?: Record<string, string | undefined>, context?: RequestOptions['context']): Promise<T> {
    return (await this.request<T>({method: 'GET', path, query, context})).body;
  }

  /** A PATCH with the patch type's content type (`application/merge-patch+json`...). */
  async patch<T = unknown>(path: string, contentType: string, patch: unknown, query?: Record<string, string | undefined>, context?: RequestOptions['context']): Promise<T> {
    return (await this.request<T>({method: 'PATCH', path, query, body: patch, contentType, context})).body;
  }

  /**
   * Opens a watch (`watch=true` is added) and yields its events as they arrive, until the server
   * ends the stream, `signal` aborts, or the consumer stops iterating. An error status before the
   * stream starts rejects with ApiStatusError; an `ERROR` event is yielded like any other.
   */
  async *watch<T = Record<string, unknown>>(path: string, query: Record<string, string | undefined> = {}, signal?: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    const o: RequestOptions = {method: 'GET', path, query: {...query, watch: 'true'}, signal};
    const url = this.url(o.path, o.query);
    const deadline = this.deadline(o, url, this.options.timeoutMs ?? 0);
    let response: IncomingMessage | undefined;
    try {
      try {
        response = await this.send(o, url, deadline.signal);
      } catch (error) {
        throw this.connectionError('GET', url, error as Error, deadline.signal);
      }
      this.reportWarnings(response);
      const statusCode = response.statusCode ?? 0;
      if (statusCode < 200 || statusCode >= 300) {
        const text = await readBody(response);
        throw errorFromResponse(statusCode, parseJson(text), text, {method: 'GET'});
      }
      const decoder = new StringDecoder('utf8');
      let buffer = '';
      try {
        for await (const chunk of response) {
          buffer += decoder.write(chunk as Buffer);
          let newline: number;
          while ((newline = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, newline).trim();
            buffer = buffer.slice(newline + 1);
            if (line !== '') yield JSON.parse(line) as WatchEvent<T>;
          }
        }
      } catch (error) {
        // The caller's abort or a server that went away ends the stream quietly, as a timeout would.
        if (!deadline.signal?.aborted && (error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error;
      }
      const rest = (buffer + decoder.end()).trim();
      if (rest !== '') yield JSON.parse(rest) as WatchEvent<T>;
    } finally {
      deadline.clear();
      response?.destroy();
    }
  }

  /**
   * The server's resources (from /api/v1 and every /apis group version) as a ResourceMapper;
   * fetched once per client, so every TYPE argument of one command costs one discovery.
   */
  discover(): Promise<ResourceMapper> {
    this.mapper ??= discoverResources((path) => this.get(path, undefined)).then((lists) => new ResourceMapper(lists));
    // A failed discovery is not cached: the next call asks again.
    this.mapper.catch(() => (this.mapper = undefined));
    return this.mapper;
  }

  /** Closes idle keep-alive connections so the process can exit. */
  close(): void {
    this.agent.destroy();
  }
}
