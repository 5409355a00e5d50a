/**
 * Errors of the REST client: the API server's `Status` failures as a typed ApiStatusError (with
 * client-go's synthesized Status when the body is not one, e.g. a plain-text 429), and transport
 * failures (refused connection, TLS, timeout) as ApiConnectionError, which remembers the URL as Go's
 * url.Error does so messages can name the server.
 */

import type {StatusCause, StatusDetails} from '../api/status.js';

export type {StatusCause, StatusDetails};

/** The `Status` object of api-conventions §5. */
export interface Status {
  kind?: 'Status';
  apiVersion?: string;
  metadata?: Record<string, unknown>;
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

export class ApiStatusError extends Error {
  override name = 'ApiStatusError';
  readonly code: number;
  readonly reason: string;
  readonly details?: StatusDetails;

  constructor(readonly status: Status) {
    super(status.message ?? '');
    this.code = status.code ?? 0;
    this.reason = status.reason ?? '';
    this.details = status.details;
  }
}

export function isStatus(body: unknown): body is Status {
  return typeof body === 'object' && body !== null && (body as Status).kind === 'Status' && typeof (body as Status).status === 'string';
}

/** What the client knows of the request, for messages about a response without a Status body. */
export interface RequestContext {
  method: string;
  /** `pods`, or `deployments.apps`. */
  resource?: string;
  group?: string;
  name?: string;
}

const GENERIC: Record<number, [reason: string, message: string | ((server: string) => string)]> = {
  400: ['BadRequest', 'the server rejected our request for an unknown reason'],
  401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
  403: ['Forbidden', (server) => server],
  404: ['NotFound', 'the server could not find the requested resource'],
  405: ['MethodNotAllowed', 'the server does not allow this method on the requested resource'],
  406: ['NotAcceptable', (server) => (server === '' || server === 'unknown' ? 'the server was unable to respond with a content type that the client supports' : server)],
  415: ['UnsupportedMediaType', (server) => server],
  422: ['Invalid', 'the server rejected our request due to an error in our request'],
  429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
  503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
  504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
};

/**
 * client-go's NewGenericServerResponse: the Status a client makes up for an error response whose
 * body is not a Status (plain text from a filter, an HTML page from a proxy...).
 */
export function genericServerError(code: number, serverText: string, request: RequestContext, retryAfterSeconds = 0): ApiStatusError {
  const serverMessage = serverText.trim() || 'unknown';
  let reason = 'Unknown';
  let message = `the server responded with the status code ${code} but did not return more information`;
  const known = GENERIC[code];
  if (code === 409) {
    reason = request.method === 'POST' ? 'AlreadyExists' : 'Conflict';
    message = 'the server reported a conflict';
  } else if (known) {
    reason = known[0];
    message = typeof known[1] === 'string' ? known[1] : known[1](serverMessage);
  } else if (code >= 500) {
    reason = 'InternalError';
    message = `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`;
  }
  if (request.resource) {
    const verb = request.method.toLowerCase();
    message += request.name ? ` (${verb} ${request.resource} ${request.name})` : ` (${verb} ${request.resource})`;
  }
  return new ApiStatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    details: {
      name: request.name,
      group: request.group,
      kind: request.resource?.split('.')[0],
      causes: [{reason: 'UnexpectedServerResponse', message: serverMessage}],
      ...(retryAfterSeconds > 0 ? {retryAfterSeconds} : {}),
    },
    code,
  });
}

/** The error for a response with status >= 400 (or a 2xx Status body saying Failure). */
export function errorFromResponse(code: number, body: unknown, text: string, request: RequestContext, retryAfterSeconds = 0): ApiStatusError {
  if (isStatus(body) && body.status === 'Failure') {
    return new ApiStatusError({...body, code: body.code || code});
  }
  return genericServerError(code, text, request, retryAfterSeconds);
}

/** A request that got no HTTP response: refused, reset, TLS failure, DNS, or the client's timeout. */
export class ApiConnectionError extends Error {
  override name = 'ApiConnectionError';
  constructor(
    readonly method: string,
    readonly url: string,
    readonly cause: Error & {code?: string},
  ) {
    super(`${method[0]}${method.slice(1).toLowerCase()} "${url}": ${cause.message}`);
  }

  get refused(): boolean {
    return this.cause.code === 'ECONNREFUSED';
  }
}
