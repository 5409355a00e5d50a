/**
 * The audit stage of the request path (upstream's WithAuditInit and WithAudit filters with the
 * auditResponseWriter): runs after authentication, evaluates the policy for the authenticated user,
 * answers every request with an `Audit-ID` header, and emits the stages a request goes through:
 * RequestReceived, ResponseStarted (long-running requests, when their headers go out),
 * ResponseComplete (when the response ends; in blocking modes the end waits for the write, so a
 * client that has its answer finds the event in the log) and Panic (an unhandled error).
 * Request and response bodies are captured only at the levels that log them.
 */
import {randomUUID} from 'node:crypto';
import {parse as parseYaml} from 'yaml';
import {decodeBody} from '../rest/negotiation.js';
import {names} from '../../../api/names.js';
import {isLongRunning, requestInfoOf, requestPath, type RequestLike, type ResponseLike} from '../filters/index.js';
import type {UserInfo} from '../../shared/authentication/user.js';
import type {AuthorizationResult} from '../../shared/authorization/attributes.js';
import {evaluatePolicy, type Level, type Policy, type RequestAuditConfig, type Stage} from './policy.js';
import {microTime, truncateEvent, type AuditEvent, type AuditUser, type ResponseStatus} from './event.js';
import type {AuditBackend} from './backend.js';

const ok = () => true;
const LEVEL_ORDER: Record<Level, number> = {None: 0, Metadata: 1, Request: 2, RequestResponse: 3};
/** Bodies larger than this are not kept in memory for the event (the truncation limit would drop them anyway). */
const MAX_CAPTURE_BYTES = 16 * 1024 * 1024;
/** Enough of an error response to read its Status. */
const MAX_STATUS_CAPTURE_BYTES = 64 * 1024;

export interface AuditorOptions {
  policy: Policy;
  backends: AuditBackend[];
  /** `--audit-*-truncate-max-event-size` when truncation is on (applied before handing events over). */
  truncateMaxEventBytes?: number;
  log: (message: string, ...kv: unknown[]) => void;
  /** Milliseconds since the epoch, fractional (microseconds in the fraction). */
  now?: () => number;
  /** Counts events handed to the backends and backend failures (apiserver_audit_event_total, apiserver_audit_error_total). */
  metrics?: AuditMetrics;
}

export interface AuditMetrics {
  event(): void;
  error(plugin: string, events: number): void;
}

type Req = RequestLike & {socket?: {remoteAddress?: string}; emit?: (event: string | symbol, ...args: unknown[]) => boolean};
type Res = ResponseLike & {writeHead?: (...args: unknown[]) => unknown};

const preciseNow = () => performance.timeOrigin + performance.now();
const stamp = (t: number) => microTime(Math.floor(t), (t % 1) * 1000);

function auditUser(user: UserInfo): AuditUser {
  return {
    username: user.name,
    ...(user.uid ? {uid: user.uid} : {}),
    ...(user.groups.length ? {groups: user.groups} : {}),
    ...(user.extra && Object.keys(user.extra).length ? {extra: user.extra} : {}),
  };
}

/** Upstream's utilnet.SourceIPs: X-Forwarded-For, then X-Real-Ip, then the peer, without repeats. */
export function sourceIPs(req: Req): string[] {
  const ips: string[] = [];
  const header = (name: string) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(',') : v;
  };
  for (const ip of (header('x-forwarded-for') ?? '').split(',').map((s) => s.trim()).filter(Boolean)) ips.push(ip);
  const real = header('x-real-ip')?.trim();
  if (real && !ips.includes(real)) ips.push(real);
  const peer = req.socket?.remoteAddress?.replace(/^::ffff:/, '');
  if (peer && !ips.includes(peer)) ips.push(peer);
  return ips;
}

function stripManagedFields(obj: unknown): unknown {
  if (!obj || typeof obj !== 'object') return obj;
  const o = obj as {metadata?: Record<string, unknown>; items?: unknown[]};
  let out: Record<string, unknown> = o as Record<string, unknown>;
  if (o.metadata && 'managedFields' in o.metadata) {
    const {managedFields: _omit, ...metadata} = o.metadata;
    out = {...out, metadata};
  }
  if (Array.isArray(o.items)) out = {...out, items: o.items.map(stripManagedFields)};
  return out;
}

/**
 * A body as the object upstream logs: JSON, YAML or protobuf (kubectl's typed clients) decoded as
 * the REST layer decodes it; patches (JSON or apply YAML) as they were sent. Undecodable: undefined.
 */
function decodeObject(contentType: string | undefined, buf: Buffer): unknown {
  try {
    const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
    if (type.endsWith('patch+yaml')) return parseYaml(buf.toString('utf8'));
    if (type.includes('patch')) return JSON.parse(buf.toString('utf8'));
    return decodeBody(contentType, buf);
  } catch {
    return undefined;
  }
}

export class Auditor {
  private readonly now: () => number;
  /** A blocking-strict backend: a request waits for its RequestReceived event to be stored. */
  private readonly strict: boolean;
  /** Whether a blocking backend makes responses wait for their ResponseComplete event. */
  readonly holdsResponses: boolean;
  constructor(private readonly options: AuditorOptions) {
    this.now = options.now ?? preciseNow;
    this.strict = options.backends.some((b) => b.mode === 'blocking-strict');
    this.holdsResponses = options.backends.some((b) => b.mode !== 'batch');
  }

  /**
   * Starts the audit of an authenticated request. Returns the request's audit, or `false` when a
   * blocking-strict backend could not store the RequestReceived event (the caller answers 500).
   */
  async begin(req: RequestLike, response: ResponseLike, user: UserInfo, receivedAt?: number): Promise<RequestAudit | undefined | false> {
    const res = response as Res;
    const auditID = headerOf(req, 'audit-id') || randomUUID();
    res.setHeader('Audit-ID', auditID);
    const info = requestInfoOf(req);
    const path = requestPath(req);
    const config = evaluatePolicy(this.options.policy, {
      user,
      verb: info.verb,
      isResourceRequest: info.isResourceRequest,
      apiGroup: info.apiGroup,
      resource: info.resource,
      subresource: info.subresource,
      namespace: info.namespace,
      name: info.name,
      path,
    });
    if (config.level === 'None') return undefined;
    const event = this.newEvent(req, user, config, auditID, receivedAt);
    const audit = new RequestAudit(this, event, config, isLongRunning(requestInfoOf(req)));
    // Only blocking-strict refuses a request whose first event is not stored, so only it waits here;
    // blocking modes still hold the response until its last event is written (writes keep their order).
    if (this.strict) {
      if (!(await audit.emit('RequestReceived'))) return false;
    } else void audit.emit('RequestReceived');
    audit.attach(req as Req, res);
    return audit;
  }

  /**
   * A request whose credentials were refused (upstream's WithFailedAuthenticationAudit): one
   * ResponseStarted event with the 401 and the methods tried, if the policy audits it (no user).
   */
  async failedAuthentication(req: RequestLike, response: ResponseLike, attempted: string[]): Promise<void> {
    const auditID = headerOf(req, 'audit-id') || randomUUID();
    response.setHeader('Audit-ID', auditID);
    const info = requestInfoOf(req);
    const user: UserInfo = {name: '', groups: []};
    const config = evaluatePolicy(this.options.policy, {
      user, verb: info.verb, isResourceRequest: info.isResourceRequest, apiGroup: info.apiGroup, resource: info.resource,
      subresource: info.subresource, namespace: info.namespace, name: info.name, path: requestPath(req),
    });
    if (config.level === 'None' || config.omitStages.includes('ResponseStarted')) return;
    const event = this.newEvent(req, user, config, auditID);
    event.stage = 'ResponseStarted';
    event.responseStatus = {metadata: {}, message: `Authentication failed, attempted: ${attempted.join(', ') || 'none'}`, code: 401};
    event.stageTimestamp = this.timestamp();
    await this.process(event);
  }

  private newEvent(req: RequestLike, user: UserInfo, config: RequestAuditConfig, auditID: string, receivedAt?: number): AuditEvent {
    const info = requestInfoOf(req);
    const t = receivedAt ?? this.now();
    const event: AuditEvent = {
      kind: 'Event',
      apiVersion: `${names().groups.audit}/v1`,
      level: config.level,
      auditID,
      stage: 'RequestReceived',
      requestURI: req.url ?? '/',
      verb: info.verb,
      user: auditUser(user),
      sourceIPs: sourceIPs(req as Req),
      ...(headerOf(req, 'user-agent') ? {userAgent: headerOf(req, 'user-agent')} : {}),
      ...(info.isResourceRequest
        ? {
            objectRef: {
              resource: info.resource,
              ...(info.namespace ? {namespace: info.namespace} : {}),
              ...(info.name ? {name: info.name} : {}),
              apiGroup: info.apiGroup,
              apiVersion: info.apiVersion,
              ...(info.subresource ? {subresource: info.subresource} : {}),
            },
          }
        : {}),
      requestReceivedTimestamp: stamp(t),
      stageTimestamp: stamp(t),
    };
    return event;
  }

  /** Hands one event to every backend; false when a blocking-strict backend failed. */
  async process(event: AuditEvent): Promise<boolean> {
    const truncated = this.options.truncateMaxEventBytes ? truncateEvent(event, this.options.truncateMaxEventBytes, `${names().groups.audit}/truncated`) : event;
    if (!truncated) {
      this.options.log('Audit event dropped: larger than the truncation limit', 'auditID', event.auditID);
      return true;
    }
    this.options.metrics?.event();
    const {backends} = this.options;
    const batch = [truncated];
    // One backend (the usual case) without the array of promises and Promise.all: this runs twice a request.
    if (backends.length === 1) return backends[0]!.process(batch).then(ok, (error) => this.failed(backends[0]!, event, error));
    const results = await Promise.all(backends.map((b) => b.process(batch).then(ok, (error) => this.failed(b, event, error))));
    return results.every(Boolean);
  }

  /** A backend could not take an event: counted and logged; false when that fails the request (blocking-strict). */
  private failed(backend: AuditBackend, event: AuditEvent, error: unknown): boolean {
    this.options.metrics?.error(backend.name, 1);
    this.options.log('Unable to write an audit event', 'backend', backend.name, 'auditID', event.auditID, 'err', error);
    return backend.mode !== 'blocking-strict';
  }

  timestamp(): string {
    return stamp(this.now());
  }

  /** Flushes every backend (the server's stop()). */
  async shutdown(): Promise<void> {
    await Promise.all(this.options.backends.map((b) => b.shutdown().catch((error) => this.options.log('Unable to flush the audit backend', 'backend', b.name, 'err', error))));
  }
}

function headerOf(req: RequestLike, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Upstream's LogRequestObject: a create names its object only in the body. */
function fillObjectRef(event: AuditEvent, request: unknown): void {
  const meta = (request as {metadata?: {name?: string; namespace?: string; uid?: string; resourceVersion?: string}} | undefined)?.metadata;
  const ref = event.objectRef;
  if (!ref || !meta || typeof meta !== 'object') return;
  if (!ref.namespace && meta.namespace) ref.namespace = meta.namespace;
  if (!ref.name && meta.name && typeof meta.name === 'string') ref.name = meta.name;
  if (!ref.uid && meta.uid) ref.uid = meta.uid;
  if (!ref.resourceVersion && meta.resourceVersion) ref.resourceVersion = meta.resourceVersion;
}

export class RequestAudit {
  private decided = false;
  private requestChunks: Buffer[] = [];
  private requestBytes = 0;
  private responseChunks: Buffer[] = [];
  private responseBytes = 0;
  private responseCapture = 0;
  private started = false;
  private requestContentType?: string;
  private responseContentType = (): string | undefined => undefined;
  private completed = false;

  constructor(private readonly auditor: Auditor, readonly event: AuditEvent, readonly config: RequestAuditConfig, private readonly longRunning: boolean) {}

  get level(): Level {
    return this.config.level;
  }

  setImpersonatedUser(user: UserInfo): void {
    this.event.impersonatedUser = auditUser(user);
  }

  /** The authorization filter's decision, as upstream's annotations (the first decision on the request). */
  recordDecision(result: AuthorizationResult): void {
    if (this.decided) return;
    this.decided = true;
    const group = names().groups.authorization;
    this.event.annotations = {
      ...this.event.annotations,
      [`${group}/decision`]: result.decision === 'Allow' ? 'allow' : 'forbid',
      [`${group}/reason`]: result.reason ?? '',
    };
  }

  /** `level`: the least audit level that records the annotation (upstream's AddAnnotationWithLevel; a webhook's patch needs Request). */
  addAnnotation(key: string, value: string, level: Level = 'Metadata'): void {
    if (LEVEL_ORDER[this.level] < LEVEL_ORDER[level]) return;
    this.event.annotations = {...this.event.annotations, [key]: value};
  }

  /** Emits the event at a stage unless the policy omits it; false when a blocking-strict backend failed. */
  async emit(stage: Stage): Promise<boolean> {
    if (this.config.omitStages.includes(stage)) return true;
    const snapshot: AuditEvent = {...this.event, stage, stageTimestamp: this.auditor.timestamp()};
    if (this.event.annotations) snapshot.annotations = {...this.event.annotations};
    return this.auditor.process(snapshot);
  }

  /** Watches the request body (Request level and up) and the response (headers, status, body). */
  attach(req: Req, res: Res): void {
    // Metadata needs a create's body too: its object is named only there (upstream's LogRequestObject).
    const wantsRequest = LEVEL_ORDER[this.level] >= LEVEL_ORDER.Request || !this.event.objectRef?.name;
    this.requestContentType = headerOf(req, 'content-type');
    if (wantsRequest && typeof req.emit === 'function') {
      // Both 'data' listeners and read() emit 'data', so this sees the body however the handler reads it.
      const emit = req.emit.bind(req);
      req.emit = (name: string | symbol, ...args: unknown[]) => {
        if (name === 'data' && this.requestBytes < MAX_CAPTURE_BYTES) {
          const chunk = Buffer.isBuffer(args[0]) ? args[0] : Buffer.from(String(args[0]));
          this.requestChunks.push(chunk);
          this.requestBytes += chunk.length;
        }
        return emit(name, ...args);
      };
    }
    this.responseContentType = () => {
      const v = res.getHeader?.('content-type');
      return typeof v === 'string' ? v : undefined;
    };
    this.responseCapture = this.longRunning ? 0 : this.level === 'RequestResponse' ? MAX_CAPTURE_BYTES : MAX_STATUS_CAPTURE_BYTES;
    const capture = (chunk: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function' || this.responseBytes >= this.responseCapture) return;
      // Below RequestResponse only an error's Status is read: successful bodies are not copied.
      if (this.level !== 'RequestResponse' && res.statusCode < 300) return;
      const buf = Buffer.isBuffer(chunk) ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk) : Buffer.from(String(chunk));
      this.responseChunks.push(buf);
      this.responseBytes += buf.length;
    };
    // Only long-running requests emit ResponseStarted: other responses keep their own writeHead
    // (each method replaced on a response is work on every request, in V8's shapes too).
    if (res.writeHead && this.longRunning) {
      const writeHead = res.writeHead.bind(res);
      res.writeHead = (...args: unknown[]) => {
        const out = writeHead(...args);
        if (!this.started) {
          this.started = true;
          this.event.responseStatus = {metadata: {}, code: Number(args[0]) || res.statusCode};
          void this.emit('ResponseStarted');
        }
        return out;
      };
    }
    if (res.write) {
      const write = res.write.bind(res);
      res.write = (chunk: string | Uint8Array, ...rest: unknown[]) => {
        capture(chunk);
        return write(chunk, ...rest);
      };
    }
    const end = res.end.bind(res);
    res.end = (...args: unknown[]) => {
      if (this.completed) return end(...(args as []));
      if (typeof args[0] !== 'function') capture(args[0]);
      this.complete(res);
      const done = this.emit('ResponseComplete');
      // Blocking backends hold the response until its event is written, as upstream's do.
      if (this.auditor.holdsResponses) {
        void done.finally(() => end(...(args as [])));
      } else end(...(args as []));
      return res;
    };
    // A response that never ends (a torn-down watch or stream) completes when it closes.
    res.on('close', () => {
      if (this.completed) return;
      this.complete(res);
      void this.emit('ResponseComplete');
    });
  }

  /** Panic: an unhandled error in the handler (upstream's WithPanicRecovery audit). */
  async panic(error: Error): Promise<void> {
    if (this.completed) return;
    this.completed = true;
    this.event.responseStatus = {metadata: {}, status: 'Failure', message: `Internal error occurred: ${error.message}`, reason: 'InternalError', code: 500};
    await this.emit('Panic');
  }

  private complete(res: Res): void {
    this.completed = true;
    const code = res.statusCode;
    const body = this.responseChunks.length ? Buffer.concat(this.responseChunks) : undefined;
    // Below RequestResponse the body matters only for an error's Status: decoding every success would be wasted work.
    const wantsBody = this.level === 'RequestResponse' || code >= 300;
    const response = wantsBody && body && this.responseBytes < this.responseCapture ? decodeObject(this.responseContentType(), body) : undefined;
    const status: ResponseStatus = {metadata: {}, code};
    if (response && typeof response === 'object' && (response as {kind?: string}).kind === 'Status') {
      const s = response as Partial<ResponseStatus>;
      if (s.status) status.status = s.status;
      if (s.message) status.message = s.message;
      if (s.reason) status.reason = s.reason;
      if (s.details) status.details = s.details;
    }
    this.event.responseStatus = status;
    if (this.requestChunks.length && this.requestBytes < MAX_CAPTURE_BYTES) {
      const request = decodeObject(this.requestContentType, Buffer.concat(this.requestChunks));
      this.requestChunks = [];
      if (request !== undefined && LEVEL_ORDER[this.level] >= LEVEL_ORDER.Request) this.event.requestObject = this.config.omitManagedFields ? stripManagedFields(request) : request;
      fillObjectRef(this.event, request);
    }
    if (this.level === 'RequestResponse' && response !== undefined) {
      this.event.responseObject = this.config.omitManagedFields ? stripManagedFields(response) : response;
    }
  }
}
