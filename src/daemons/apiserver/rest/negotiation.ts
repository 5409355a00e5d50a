/**
 * Content negotiation: which representation an `Accept` header asks for (plain JSON, or a
 * meta/v1 Table for kubectl's human output), and the media type of request bodies. Pure.
 */
import { nameSet, perNameSet } from '../../../api/names.js';
import { badRequest, notAcceptable, unsupportedMediaType } from '../../../api/status.js';
import { parse as parseYaml } from 'yaml';
import { decodeProtobufBody, isProtobufBody } from '../../../api/protobuf/index.js';

export interface MediaType {
  type: string;
  params: Record<string, string>;
}

export function parseMediaType(text: string): MediaType {
  const [head = '', ...rest] = text.split(';');
  const params: Record<string, string> = {};
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq > 0) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
  }
  return { type: head.trim().toLowerCase(), params };
}

export function parseAccept(header: string | undefined): MediaType[] {
  if (!header || header.trim() === '') return [{ type: 'application/json', params: {} }];
  return header.split(',').map(parseMediaType).filter((m) => m.type !== '');
}

export type Representation =
  | { kind: 'json' }
  /** A meta/v1 Table, answered in the group the client named (`meta.k8s.io` for kubectl). */
  | { kind: 'table'; group: string; version: string; includeObject: string };

/** kubectl asks for upstream's meta group whatever the server's names; the active set's is accepted too. */
const tableGroups = perNameSet((n) => new Set([nameSet('kubernetes').groups.meta, n.groups.meta]));
const JSON_TYPES = new Set(['application/json', 'application/*', '*/*']);

/**
 * The first entry of Accept that we can produce. Tables only where `tableAllowed` (get, list,
 * watch of resources); other `as=` conversions (aggregated discovery, PartialObjectMetadata) are
 * skipped so the client falls back to its next choice, as upstream's negotiation does.
 */
export function negotiate(accept: string | undefined, tableAllowed: boolean, includeObject = 'Metadata'): Representation {
  for (const media of parseAccept(accept)) {
    if (!JSON_TYPES.has(media.type)) continue;
    const as = media.params.as;
    if (!as) return { kind: 'json' };
    if (as === 'Table' && tableAllowed && tableGroups().has(media.params.g ?? '') && (media.params.v === 'v1' || media.params.v === 'v1beta1')) {
      return { kind: 'table', group: media.params.g!, version: media.params.v, includeObject };
    }
  }
  throw notAcceptable(['application/json', 'application/yaml']);
}

export function representationContentType(rep: Representation): string {
  return rep.kind === 'table' ? `application/json;as=Table;v=${rep.version};g=${rep.group}` : 'application/json';
}

export const PATCH_TYPES = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
} as const;

export type PatchContentType = (typeof PATCH_TYPES)[keyof typeof PATCH_TYPES];

export const BUILTIN_PATCH_MEDIA = [
  'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml',
];
export const CUSTOM_PATCH_MEDIA = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

/** The patch type of a PATCH Content-Type (any `;charset=` suffix ignored); 415 for anything else. */
export function patchTypeOf(contentType: string | undefined, custom: boolean): PatchContentType {
  const type = parseMediaType(contentType ?? '').type as keyof typeof PATCH_TYPES;
  const patchType = PATCH_TYPES[type];
  if (!patchType || (custom && patchType === 'strategic')) throw unsupportedMediaType(custom ? CUSTOM_PATCH_MEDIA : BUILTIN_PATCH_MEDIA);
  return patchType;
}

const BODY_MEDIA = ['application/json', 'application/yaml'];

/**
 * Decodes a create/update body: JSON, YAML when sent as application/yaml, or a Kubernetes protobuf
 * envelope (kubectl's typed clients); protobuf without the envelope's magic stays a 415.
 */
export function decodeBody(contentType: string | undefined, body: Buffer): unknown {
  const type = parseMediaType(contentType ?? 'application/json').type || 'application/json';
  if (isProtobufBody(type, body)) return decodeProtobufBody(body);
  const text = body.toString('utf8');
  if (type === 'application/json' || type === '*/*') {
    try {
      return JSON.parse(text);
    } catch (error) {
      throw badRequest(`json: ${(error as Error).message}`);
    }
  }
  if (type === 'application/yaml' || type === 'application/x-yaml' || type === 'text/yaml') {
    try {
      // Repeated keys are the field-validation stage's to report (`line 5: key "name" already set in map`).
      return parseYaml(text, { maxAliasCount: 100, uniqueKeys: false });
    } catch (error) {
      throw badRequest(`yaml: ${(error as Error).message}`);
    }
  }
  throw unsupportedMediaType(BODY_MEDIA);
}
