/**
 * Query parameters of list, watch and write requests, parsed and validated as upstream's
 * ListOptions/CreateOptions/... validation does (422 against `<Kind>Options.<meta group>`, `meta.orch.io` with orch's names).
 */
import { names } from '../../../api/names.js';
import { badRequest, field, invalid, type FieldError } from '../../../api/status.js';
import { parseFieldSelector, parseLabelSelector, SelectorParseError, type FieldRequirement, type LabelRequirement } from '../../../api/selectors.js';

export interface ListParams {
  labelSelector: LabelRequirement[];
  fieldSelector: FieldRequirement[];
  /** 0: no limit. */
  limit: number;
  continueToken?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  timeoutSeconds?: number;
  allowWatchBookmarks: boolean;
  sendInitialEvents?: boolean;
}

function optionsInvalid(kind: string, errors: FieldError[]): never {
  throw invalid({ group: names().groups.meta, kind }, '', errors);
}

function isTrue(value: string | null): boolean {
  return value === '1' || value === 'true' || value === 'True';
}

function integer(query: URLSearchParams, name: string): number | undefined {
  const text = query.get(name);
  if (text === null || text === '') return undefined;
  if (!/^-?\d+$/.test(text)) throw badRequest(`invalid ${name}: strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`);
  return Number(text);
}

export function parseListParams(query: URLSearchParams, watch: boolean): ListParams {
  let labelSelector: LabelRequirement[];
  let fieldSelector: FieldRequirement[];
  try {
    labelSelector = parseLabelSelector(query.get('labelSelector') ?? '');
  } catch (error) {
    if (error instanceof SelectorParseError) throw badRequest(`unable to parse requirement: ${error.message.replace(/^unable to parse requirement: /, '')}`);
    throw error;
  }
  try {
    fieldSelector = parseFieldSelector(query.get('fieldSelector') ?? '');
  } catch (error) {
    if (error instanceof SelectorParseError) throw badRequest(error.message);
    throw error;
  }
  const match = query.get('resourceVersionMatch') ?? '';
  const resourceVersion = query.get('resourceVersion') ?? undefined;
  const continueToken = query.get('continue') || undefined;
  const sendInitialEventsText = query.get('sendInitialEvents');
  const sendInitialEvents = sendInitialEventsText === null ? undefined : isTrue(sendInitialEventsText);
  const params: ListParams = {
    labelSelector,
    fieldSelector,
    limit: Math.max(0, integer(query, 'limit') ?? 0),
    continueToken,
    resourceVersion: resourceVersion === '' ? undefined : resourceVersion,
    timeoutSeconds: integer(query, 'timeoutSeconds'),
    allowWatchBookmarks: isTrue(query.get('allowWatchBookmarks')),
    sendInitialEvents,
  };

  const errors: FieldError[] = [];
  if (match !== '') {
    if (match !== 'NotOlderThan' && match !== 'Exact') {
      errors.push(field.notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    } else params.resourceVersionMatch = match;
    // A streaming list (watch with sendInitialEvents) may start from the latest state.
    if (params.resourceVersion === undefined && !(watch && sendInitialEvents !== undefined)) errors.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (params.continueToken) errors.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match === 'Exact' && params.resourceVersion === '0') {
      errors.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
  }
  if (sendInitialEvents !== undefined) {
    if (!watch) errors.push(field.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
    else if (sendInitialEvents && params.resourceVersionMatch !== 'NotOlderThan') {
      errors.push(field.forbidden('resourceVersionMatch', "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
    }
    if (watch && sendInitialEvents && !params.allowWatchBookmarks) {
      errors.push(field.forbidden('allowWatchBookmarks', 'allowWatchBookmarks required when sendInitialEvents is true'));
    }
  } else if (watch && match !== '') {
    errors.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
  }
  if (errors.length) optionsInvalid('ListOptions', errors);
  if (params.resourceVersion !== undefined && !/^\d+$/.test(params.resourceVersion)) {
    throw badRequest(`invalid resource version: ${JSON.stringify(params.resourceVersion)}`);
  }
  return params;
}

export interface WriteParams {
  dryRun: boolean;
  fieldManager: string;
  /** `force` of an apply patch. */
  force: boolean;
}

/** dryRun (only `All`) and fieldManager (at most 128 characters), for `<kind>` = CreateOptions, UpdateOptions, PatchOptions, DeleteOptions. */
export function parseWriteParams(query: URLSearchParams, optionsKind: string, defaultManager: string, dryRunFromBody: string[] = [], apply = false): WriteParams {
  const dryRun = [...query.getAll('dryRun'), ...dryRunFromBody].filter((v) => v !== '');
  const errors: FieldError[] = [];
  if (dryRun.some((v) => v !== 'All')) errors.push(field.notSupported('dryRun', dryRun, ['All']));
  const explicit = query.get('fieldManager');
  if (explicit !== null && explicit.length > 128) errors.push(field.tooLong('fieldManager', 'may not be more than 128 bytes'));
  if (explicit !== null && /[^\x20-\x7e]/.test(explicit)) errors.push(field.invalid('fieldManager', explicit, 'is not a printable ASCII string'));
  if (query.get('force') !== null && optionsKind === 'PatchOptions' && !apply) errors.push(field.forbidden('force', 'may not be specified for non-apply patch'));
  // Upstream's ValidatePatchOptions: an applier must name itself; the User-Agent is not a default here.
  if (apply && !explicit) errors.unshift(field.required('fieldManager', 'is required for apply patch'));
  if (errors.length) optionsInvalid(optionsKind, errors);
  return { dryRun: dryRun.length > 0, fieldManager: explicit || defaultManager, force: apply && isTrue(query.get('force')) };
}
