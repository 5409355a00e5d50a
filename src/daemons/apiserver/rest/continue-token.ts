/**
 * List continuation tokens, shaped like upstream's (storage/continue.go): base64url without
 * padding of `{"v":"<meta group>/v1","rv":<revision>,"start":"<key after the list prefix>"}`.
 * Opaque to clients; the revision pins every page to one consistent snapshot.
 */
import { names } from '../../../api/names.js';
import { badRequest } from '../../../api/status.js';

export interface ContinueToken {
  revision: number;
  /** The last key returned, relative to the list's key prefix; the next page starts after it. */
  startAfter: string;
}

/** `meta.orch.io/v1` with orch's names, `meta.k8s.io/v1` (as upstream) with upstream's. */
const version = () => `${names().groups.meta}/v1`;

export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: version(), rv: token.revision, start: token.startAfter })).toString('base64url');
}

export function decodeContinue(text: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('continue key is not valid: illegal base64 data or json');
  }
  const record = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  const wrongVersion = () => badRequest(`continue key is not valid: incorrect encoded start resourceVersion (version ${version()})`);
  if (record?.v !== version()) throw wrongVersion();
  if (typeof record.rv !== 'number' || !Number.isInteger(record.rv) || record.rv <= 0) {
    throw wrongVersion();
  }
  if (typeof record.start !== 'string' || record.start.startsWith('/') || record.start.split('/').includes('..')) {
    throw badRequest('continue key is not valid: invalid start key');
  }
  return { revision: record.rv, startAfter: record.start };
}
