/** The seams between the REST layer and the server around it (authentication, authorization, clocks). */

/** What the handler uses of a request: node:http's IncomingMessage and http2's compat request both fit. */
export interface ApiRequest extends AsyncIterable<Buffer | string> {
  readonly method?: string;
  readonly url?: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** What the handler uses of a response: node:http's ServerResponse and http2's compat response both fit. */
export interface ApiResponse {
  writeHead(statusCode: number, headers?: Record<string, string | number>): unknown;
  write(chunk: string | Buffer): boolean;
  end(chunk?: string | Buffer): unknown;
  on(event: 'close', listener: () => void): unknown;
  readonly headersSent: boolean;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** What the authorizer is asked, as upstream's authorizer.Attributes. */
export interface AuthorizationAttributes {
  user: UserInfo;
  /** get, list, watch, create, update, patch, delete, deletecollection (resource requests); get, post, ... (non-resource). */
  verb: string;
  resourceRequest: boolean;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** For non-resource requests: the URL path. */
  path: string;
}

export interface AuthorizationDecision {
  allowed: boolean;
  /** Why it was denied; appended to upstream's forbidden message as `: <reason>`. */
  reason?: string;
  /** A complete message to answer with instead of the one built from the attributes. */
  message?: string;
}

export interface RequestContext {
  user: UserInfo;
  authorize(attributes: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision>;
  /** Adds a warning to the response's Warning header (admission's warnings; the handler sets one per request). */
  addWarning?(text: string): void;
  /** Adds an annotation to the request's audit event (when the request is audited at `level` or above; default Metadata). */
  addAuditAnnotation?(key: string, value: string, level?: 'Metadata' | 'Request' | 'RequestResponse'): void;
}

/** What `/version` answers (upstream's version.Info fields). */
export interface ServerVersion {
  major: string;
  minor: string;
  gitVersion: string;
  /** The release emulated and the oldest the server stays compatible with (upstream 1.33+ fields). */
  emulationMajor?: string;
  emulationMinor?: string;
  minCompatibilityMajor?: string;
  minCompatibilityMinor?: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}
