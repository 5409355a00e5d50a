/**
 * The two error body shapes of the API server:
 * - `Status` objects (api-conventions.md §5): `{"kind":"Status","apiVersion":"v1","metadata":{},
 *   "status":"Failure","message":...,"reason":...,"details":...,"code":...}` + `\n`, served as
 *   `application/json` (what upstream's ErrorNegotiated writes for JSON clients);
 * - Go's `http.Error` plain text, used by the health endpoints, the max-in-flight 429 and the
 *   shutdown 429.
 */
import type {ResponseLike} from './http-types.js';

import type {StatusCause, StatusDetails} from '../../../api/status.js';

export type {StatusCause, StatusDetails};

export interface StatusObject {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** Builds a Failure Status with upstream's field order; empty message/reason are omitted. */
export function failureStatus(code: number, reason: string, message: string, details?: StatusDetails): StatusObject {
  // Spread in upstream's key order: kind, apiVersion, metadata, status, message, reason, details, code.
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    ...(message ? {message} : {}),
    ...(reason ? {reason} : {}),
    ...(details ? {details: compactDetails(details)} : {}),
    code,
  };
}

function compactDetails(details: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  if (details.name) out.name = details.name;
  if (details.group) out.group = details.group;
  if (details.kind) out.kind = details.kind;
  if (details.uid) out.uid = details.uid;
  if (details.causes && details.causes.length > 0) out.causes = details.causes;
  if (details.retryAfterSeconds) out.retryAfterSeconds = details.retryAfterSeconds;
  return out;
}

/** The JSON text of a Status as the server sends it (with the encoder's trailing newline). */
export function statusJson(status: StatusObject): string {
  return JSON.stringify(status) + '\n';
}

/**
 * Writes a Failure Status response: `code`, `Content-Type: application/json`,
 * `X-Content-Type-Options: nosniff`. `details` given as `{}` is kept as `"details":{}` (as for
 * Timeout errors upstream); leave it undefined to omit the field.
 */
export function writeStatus(
  res: ResponseLike,
  code: number,
  reason: string,
  message: string,
  details?: StatusDetails,
): void {
  writeStatusObject(res, failureStatus(code, reason, message, details));
}

export function writeStatusObject(res: ResponseLike, status: StatusObject): void {
  res.statusCode = status.code;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(statusJson(status));
}

/**
 * Go's http.Error: drops any Content-Length, sets `Content-Type: text/plain; charset=utf-8` and
 * `X-Content-Type-Options: nosniff`, writes `code` and `text` followed by a newline.
 */
export function writeHttpError(res: ResponseLike, code: number, text: string): void {
  res.removeHeader?.('Content-Length');
  res.statusCode = code;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(text + '\n');
}
