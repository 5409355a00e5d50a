/**
 * `Status` objects and the API errors that carry them, with upstream's exact message forms
 * (apimachinery/pkg/api/errors/errors.go, util/validation/field/errors.go).
 */

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** A request failure answered with a Status body. */
export class ApiError extends Error {
  constructor(readonly status: Status) {
    super(status.message ?? status.reason ?? `HTTP ${status.code}`);
    this.name = 'ApiError';
  }

  get code(): number {
    return this.status.code;
  }

  get reason(): string | undefined {
    return this.status.reason;
  }
}

/** Builds a Status keeping upstream's field order (kind, apiVersion, metadata, status, message, reason, details, code). */
export function failureStatus(code: number, reason: string | undefined, message: string, details?: StatusDetails): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message } as Status;
  if (reason) status.reason = reason;
  if (details) status.details = compactDetails(details);
  status.code = code;
  return status;
}

export function successStatus(code: number, details?: StatusDetails): Status {
  const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' } as Status;
  if (details) status.details = compactDetails(details);
  status.code = code;
  return status;
}

/** Drops empty members, as Go's omitempty does. */
function compactDetails(details: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  if (details.name) out.name = details.name;
  if (details.group) out.group = details.group;
  if (details.kind) out.kind = details.kind;
  if (details.uid) out.uid = details.uid;
  if (details.causes?.length) out.causes = details.causes;
  if (details.retryAfterSeconds) out.retryAfterSeconds = details.retryAfterSeconds;
  return out;
}

/** A group and resource, printed `resource` or `resource.group` as upstream's GroupResource.String(). */
export interface GroupResource {
  group: string;
  resource: string;
}

export function qualifiedResource(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

const err = (code: number, reason: string | undefined, message: string, details?: StatusDetails) =>
  new ApiError(failureStatus(code, reason, message, details));

export function notFound(gr: GroupResource, name: string): ApiError {
  return err(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, { name, group: gr.group, kind: gr.resource });
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return err(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, { name, group: gr.group, kind: gr.resource });
}

export function conflict(gr: GroupResource, name: string, cause: string): ApiError {
  return err(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${cause}`, {
    name, group: gr.group, kind: gr.resource,
  });
}

export const OBJECT_MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';

export function staleConflict(gr: GroupResource, name: string): ApiError {
  return conflict(gr, name, OBJECT_MODIFIED);
}

export function badRequest(message: string): ApiError {
  return err(400, 'BadRequest', message);
}

export function forbidden(gr: GroupResource, name: string, reason: string): ApiError {
  const subject = name ? `${qualifiedResource(gr)} "${name}"` : qualifiedResource(gr);
  return err(403, 'Forbidden', `${subject} is forbidden: ${reason}`, { name, group: gr.group, kind: gr.resource });
}

export function methodNotAllowed(gr: GroupResource, verb: string): ApiError {
  return err(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${qualifiedResource(gr)}"`, {
    group: gr.group, kind: gr.resource,
  });
}

export function notAcceptable(accepted: string[]): ApiError {
  return err(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);
}

export function unsupportedMediaType(accepted: string[]): ApiError {
  return err(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
}

export function expired(message: string): ApiError {
  return err(410, 'Expired', message);
}

export function gone(message: string): ApiError {
  return err(410, 'Gone', message);
}

export function requestEntityTooLarge(message: string): ApiError {
  return err(413, 'RequestEntityTooLarge', `Request entity too large: ${message}`);
}

export function internalError(error: unknown): ApiError {
  const text = error instanceof Error ? error.message : String(error);
  return err(500, 'InternalError', `Internal error occurred: ${text}`, { causes: [{ message: text }] });
}

/** A 500 without reason, as upstream answers unexpected patch engine errors. */
export function plainServerError(message: string): ApiError {
  return err(500, undefined, message);
}

export function tooLargeResourceVersion(requested: number, current: number): ApiError {
  return err(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: `Too large resource version` }],
    retryAfterSeconds: 1,
  });
}

export function serviceUnavailable(message: string): ApiError {
  return err(503, 'ServiceUnavailable', message);
}

/** Upstream's NewTooManyRequestsError: 429, "Too many requests: <message>". */
export function tooManyRequests(message: string): ApiError {
  return err(429, 'TooManyRequests', `Too many requests: ${message}`);
}

// ---------------------------------------------------------------------------------------------
// Field errors (field.Error) and 422 Invalid.

export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueDuplicate'
  | 'FieldValueNotFound'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  /** The offending value, when the error type shows one. */
  value?: unknown;
  detail?: string;
  /** For NotSupported: the accepted values. */
  supported?: string[];
}

/** A Go-like rendering of a value in an error: strings quoted (%q), numbers and bools bare, others as JSON. */
export function goValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === undefined || value === null) return 'null';
  return JSON.stringify(value);
}

/** The body of a field error (the text after `<field>: `). */
export function fieldErrorBody(error: FieldError): string {
  const withDetail = (head: string) => (error.detail ? `${head}: ${error.detail}` : head);
  switch (error.type) {
    case 'FieldValueRequired':
      return withDetail('Required value');
    case 'FieldValueInvalid':
      return withDetail(`Invalid value: ${goValue(error.value)}`);
    case 'FieldValueNotSupported': {
      const head = `Unsupported value: ${goValue(error.value)}`;
      return error.supported?.length ? `${head}: supported values: ${error.supported.map((s) => JSON.stringify(s)).join(', ')}` : head;
    }
    case 'FieldValueForbidden':
      return withDetail('Forbidden');
    case 'FieldValueDuplicate':
      return `Duplicate value: ${goValue(error.value)}`;
    case 'FieldValueNotFound':
      return `Not found: ${goValue(error.value)}`;
    case 'FieldValueTooLong':
      return withDetail('Too long');
    case 'FieldValueTooMany':
      return withDetail(error.value !== undefined ? `Too many: ${goValue(error.value)}` : 'Too many');
  }
}

export function fieldErrorText(error: FieldError): string {
  return error.field ? `${error.field}: ${fieldErrorBody(error)}` : fieldErrorBody(error);
}

/** 422 Invalid: `<Kind[.group]> "<name>" is invalid: <errors>`, one cause per field error. */
export function invalid(kind: { group: string; kind: string }, name: string, errors: FieldError[]): ApiError {
  const texts = [...new Set(errors.map(fieldErrorText))];
  const joined = texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
  const qualifiedKind = kind.group ? `${kind.kind}.${kind.group}` : kind.kind;
  const causes = errors.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }));
  return err(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${joined}`, { name, group: kind.group, kind: kind.kind, causes });
}

/** The generic 422 upstream returns when a JSON patch cannot be applied (the cause is not returned). */
export function patchRejected(): ApiError {
  return new ApiError(failureStatus(422, 'Invalid', 'the server rejected our request due to an error in our request', {}));
}

export const field = {
  required: (path: string, detail?: string): FieldError => ({ type: 'FieldValueRequired', field: path, detail }),
  invalid: (path: string, value: unknown, detail?: string): FieldError => ({ type: 'FieldValueInvalid', field: path, value, detail }),
  notSupported: (path: string, value: unknown, supported: string[]): FieldError => ({
    type: 'FieldValueNotSupported', field: path, value, supported,
  }),
  forbidden: (path: string, detail?: string): FieldError => ({ type: 'FieldValueForbidden', field: path, detail }),
  duplicate: (path: string, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field: path, value }),
  tooLong: (path: string, detail?: string): FieldError => ({ type: 'FieldValueTooLong', field: path, detail }),
  tooMany: (path: string, actual: number, max: number): FieldError => ({ type: 'FieldValueTooMany', field: path, value: actual, detail: `must have at most ${max} items` }),
};
