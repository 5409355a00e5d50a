/**
 * API failures as the informer machinery classifies them. The checks read `code`/`reason` (or a
 * `status` object holding them) structurally, so they accept this module's StatusError and the REST
 * client's ApiStatusError alike.
 */
import type { StatusObject } from './types.js';

/** An API failure with its Status (from an error response or a watch ERROR event). */
export class StatusError extends Error {
  override name = 'StatusError';
  readonly code: number;
  readonly reason: string;

  constructor(readonly status: StatusObject) {
    super(status.message || status.reason || `HTTP ${status.code ?? 0}`);
    this.code = status.code ?? 0;
    this.reason = status.reason ?? '';
  }
}

interface StatusLike {
  code?: unknown;
  reason?: unknown;
  status?: StatusObject;
  details?: StatusObject['details'];
  refused?: unknown;
  cause?: unknown;
}

function codeOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as StatusLike;
  if (typeof e.code === 'number') return e.code;
  return typeof e.status?.code === 'number' ? e.status.code : undefined;
}

function reasonOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as StatusLike;
  if (typeof e.reason === 'string') return e.reason;
  return e.status?.reason;
}

/** 410: the resourceVersion (or continue token) is compacted away; the caller must relist. */
export function isExpired(error: unknown): boolean {
  return codeOf(error) === 410 || reasonOf(error) === 'Expired' || reasonOf(error) === 'Gone';
}

export function isTooManyRequests(error: unknown): boolean {
  return codeOf(error) === 429 || reasonOf(error) === 'TooManyRequests';
}

/** The 504 a server answers for a resourceVersion newer than it has (api-conventions §4). */
export function isResourceVersionTooLarge(error: unknown): boolean {
  if (codeOf(error) !== 504 || typeof error !== 'object' || error === null) return false;
  const e = error as StatusLike;
  const causes = (e.details ?? e.status?.details)?.causes ?? [];
  return causes.some((c) => c.reason === 'ResourceVersionTooLarge');
}

/** A refused TCP connection (the API server is restarting): retry the watch, keep the cache. */
export function isConnectionRefused(error: unknown): boolean {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as StatusLike).cause, depth++) {
    if ((e as StatusLike).refused === true || (e as { code?: unknown }).code === 'ECONNREFUSED') return true;
  }
  return false;
}
