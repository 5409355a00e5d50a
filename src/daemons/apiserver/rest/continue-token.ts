/**
 * List continuation tokens, shaped like upstream's (storage/continue.go): base64url without
 * padding of `{"v":"meta.orch.io/v1","rv":<revision>,"start":"<key after the list prefix>"}`.
 * Opaque to clients; the revision pins every page to one consistent snapshot.
 */
import { badRequest } from '../../../api/status.js';

export interface ContinueToken {
  revision: number;
  /** The last key returned, relative to the list's key prefix; the next page starts after it. */
  startAfter: string;
}

const VERSION = 'meta.orch.io/v1';

export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: VERSION, rv: token.revision, start: token.startAfter })).toString('base64url');
}

export function decodeContinue(text: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('continue key is not valid: illegal base64 data or json');
  }
  const record = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (record?.v !== VERSION) throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.orch.io/v1)');
  if (typeof record.rv !== 'number' || !Number.isInteger(record.rv) || record.rv <= 0) {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.orch.io/v1)');
  }
  if (typeof record.start !== 'string' || record.start.startsWith('/') || record.start.split('/').includes('..')) {
    throw badRequest('continue key is not valid: invalid start key');
  }
  return { revision: record.rv, startAfter: record.start };
}
