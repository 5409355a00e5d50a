/**
 * `metadata.managedFields` of Update operations (create, PUT, non-apply PATCH): the writer gains the
 * fields it added or changed, other managers lose them, removed fields leave every manager. The field
 * sets and their typing are those of server-side apply (./apply/), so both kinds of writers share one
 * notion of ownership, as upstream's fieldmanager does.
 */
import { isJsonObject, type JsonObject } from '../patch/types.js';
import type { TypeNode } from './apply/schema.js';
import { builtinTypes } from './apply/types.js';
import { decodeManagers, encodeManagers, ignoredFields, recordUpdate, type ManagedFieldsEntry } from './apply/updater.js';

export type { ManagedFieldsEntry } from './apply/updater.js';

export interface ManagedFieldsUpdate {
  previous: JsonObject | undefined;
  next: JsonObject;
  manager: string;
  apiVersion: string;
  subresource?: string;
  time: string;
  /** The object's type; built-in kinds are looked up when not given. */
  type?: TypeNode;
  /** Whether the resource has a status subresource (then the main resource does not own status). Default true. */
  hasStatus?: boolean;
}

/**
 * The managedFields list after a write by `manager` (operation Update). Managed fields the writer
 * sends replace the stored ones first, as upstream (kubectl rewrites them when it moves a client-side
 * applier to server-side apply); none sent, or an empty list, keeps the stored ones.
 */
export function updateManagedFields(input: ManagedFieldsUpdate): ManagedFieldsEntry[] {
  const meta = input.previous?.metadata;
  const sent = isJsonObject(input.next.metadata) ? input.next.metadata.managedFields : undefined;
  const managers = Array.isArray(sent) && sent.length ? decodeManagers(sent) : decodeManagers(isJsonObject(meta) ? meta.managedFields : undefined);
  const type = input.type ?? builtinTypes.root(String(input.next.apiVersion ?? ''), String(input.next.kind ?? ''));
  return encodeManagers(recordUpdate({
    live: input.previous, next: input.next, managers, manager: input.manager, apiVersion: input.apiVersion, subresource: input.subresource,
    type, ignored: ignoredFields(input.subresource, input.hasStatus ?? true), time: input.time,
  }));
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The field manager name when the request gives none: the User-Agent up to the first `/`,
 * printable characters only, at most 128 bytes (upstream's prefixFromUserAgent).
 */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const head = (userAgent ?? '').split('/')[0] ?? '';
  // Every write asks; the usual answer (short printable ASCII, like `kubectl`) needs no per-character work.
  if (head.length <= 128 && PRINTABLE_ASCII.test(head)) return head;
  // eslint-disable-next-line no-control-regex
  const printable = head.replace(/[^\x20-\x7e\u00a0-\uffff]/g, '');
  let out = '';
  for (const ch of printable) {
    if (Buffer.byteLength(out + ch) > 128) break;
    out += ch;
  }
  return out;
}
