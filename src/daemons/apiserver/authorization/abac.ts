/**
 * The ABAC authorizer of `--authorization-mode=ABAC` with `--authorization-policy-file`, as
 * upstream's (pkg/auth/authorizer/abac): one JSON policy object per line, versioned
 * (`{"apiVersion": "abac.authorization.<domain>/v1beta1", "kind": "Policy", "spec": {...}}`) or
 * unversioned (v0: `{"user": "alice", "readonly": true}`), converted to one form as upstream
 * converts them. A request is allowed when any policy matches it; otherwise no opinion.
 * Parsing and matching are pure; reading the file is the caller's.
 */
import type {AuthorizationAttributes, AuthorizationResult, Authorizer} from '../../shared/authorization/attributes.js';
import {AUTHENTICATED_GROUP, type UserInfo} from '../../shared/authentication/user.js';
import {names} from '../../../api/names.js';

/** A policy in upstream's internal form (the v1beta1 spec after conversion). */
export interface AbacPolicy {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  nonResourcePath: string;
}

export class AbacPolicyError extends Error {}

const SPEC_FIELDS = ['user', 'group', 'readonly', 'apiGroup', 'resource', 'namespace', 'nonResourcePath'] as const;
const V0_FIELDS = ['user', 'group', 'readonly', 'resource', 'namespace'] as const;

/** The apiVersion of versioned policy lines under the active name set. */
export function abacApiVersion(): string {
  return `abac.authorization.${names().labelDomain}/v1beta1`;
}

function stringField(object: Record<string, unknown>, field: string): string {
  const value = object[field];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new Error(`json: cannot unmarshal ${typeof value} into Go struct field .${field} of type string`);
  return value;
}

function boolField(object: Record<string, unknown>, field: string): boolean {
  const value = object[field];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new Error(`json: cannot unmarshal ${typeof value} into Go struct field .${field} of type bool`);
  return value;
}

// Upstream decodes policy lines leniently (unknown fields are dropped), so a file that works there
// works here; each unknown field is reported as a warning instead, since it is usually a typo.
function unknownFields(object: Record<string, unknown>, known: readonly string[], where: string, found: string[]): void {
  for (const key of Object.keys(object)) if (!known.includes(key)) found.push(`${where}${key}`);
}

/** Upstream's v1beta1 -> internal conversion: a `*` user or group means every authenticated subject. */
function fromV1beta1(spec: Record<string, unknown>, unknown: string[]): AbacPolicy {
  unknownFields(spec, SPEC_FIELDS, 'spec.', unknown);
  const policy: AbacPolicy = {
    user: stringField(spec, 'user'),
    group: stringField(spec, 'group'),
    readonly: boolField(spec, 'readonly'),
    apiGroup: stringField(spec, 'apiGroup'),
    resource: stringField(spec, 'resource'),
    namespace: stringField(spec, 'namespace'),
    nonResourcePath: stringField(spec, 'nonResourcePath'),
  };
  if (policy.user === '*' || policy.group === '*') return {...policy, user: '', group: AUTHENTICATED_GROUP};
  return policy;
}

/** Upstream's v0 -> internal conversion: empty fields are wildcards, and every API group matches. */
function fromV0(line: Record<string, unknown>, unknown: string[]): AbacPolicy {
  unknownFields(line, V0_FIELDS, '', unknown);
  const user = stringField(line, 'user');
  const group = stringField(line, 'group');
  const namespace = stringField(line, 'namespace');
  const resource = stringField(line, 'resource');
  const everyone = (user === '' && group === '') || user === '*' || group === '*';
  return {
    user: everyone ? '' : user,
    group: everyone ? AUTHENTICATED_GROUP : group,
    readonly: boolField(line, 'readonly'),
    apiGroup: '*',
    namespace: namespace === '' ? '*' : namespace,
    resource: resource === '' ? '*' : resource,
    nonResourcePath: namespace === '' && resource === '' ? '*' : '',
  };
}

/** One line: a versioned policy, or an unversioned one (no apiVersion and no kind). */
function parseLine(text: string, unknown: string[]): {policy: AbacPolicy; unversioned: boolean} {
  const object = JSON.parse(text) as unknown;
  if (typeof object !== 'object' || object === null || Array.isArray(object)) throw new Error('a policy line must be a JSON object');
  const line = object as Record<string, unknown>;
  if (line.apiVersion === undefined && line.kind === undefined) return {policy: fromV0(line, unknown), unversioned: true};
  if (line.apiVersion !== abacApiVersion()) throw new Error(`apiVersion ${JSON.stringify(line.apiVersion)} is not ${JSON.stringify(abacApiVersion())}`);
  if (line.kind !== 'Policy') throw new Error(`kind ${JSON.stringify(line.kind)} is not "Policy"`);
  unknownFields(line, ['apiVersion', 'kind', 'spec'], '', unknown);
  const spec = line.spec;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new Error('spec must be an object');
  return {policy: fromV1beta1(spec as Record<string, unknown>, unknown), unversioned: false};
}

export interface ParsedAbacPolicies {
  policies: AbacPolicy[];
  /** Upstream warns once when a file holds unversioned lines. */
  unversionedLines: number;
  /** Warnings for the log: unversioned lines, unknown (ignored) fields with their line numbers. */
  warnings: string[];
}

/**
 * Parses a policy file's text. Blank lines and lines starting with `#` are skipped; any other line
 * that is not a valid policy stops the parse with upstream's message, naming the file and line.
 */
export function parseAbacPolicyFile(text: string, path: string): ParsedAbacPolicies {
  const policies: AbacPolicy[] = [];
  const warnings: string[] = [];
  let unversionedLines = 0;
  const lines = text.split('\n');
  lines.forEach((raw, index) => {
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const unknown: string[] = [];
    try {
      const {policy, unversioned} = parseLine(trimmed, unknown);
      policies.push(policy);
      if (unversioned) unversionedLines++;
    } catch (error) {
      throw new AbacPolicyError(`error reading policy file ${path}, line ${index + 1}: ${trimmed}: ${(error as Error).message}`);
    }
    for (const field of unknown) warnings.push(`policy file ${path}, line ${index + 1}: unknown field "${field}" ignored`);
  });
  if (unversionedLines > 0) {
    warnings.unshift(`Policy file ${path} contained unversioned rules. See the ABAC file format in the authorization documentation.`);
  }
  return {policies, unversionedLines, warnings};
}

function subjectMatches(p: AbacPolicy, user: UserInfo): boolean {
  let matched = false;
  if (p.user !== '') {
    if (p.user === '*') matched = true;
    else if (p.user === user.name) matched = true;
    else return false;
  }
  if (p.group !== '') {
    if (p.group === '*') matched = true;
    else if (user.groups.includes(p.group)) matched = true;
    else return false;
  }
  return matched;
}

const READ_ONLY_VERBS = new Set(['get', 'list', 'watch']);

function verbMatches(p: AbacPolicy, a: AuthorizationAttributes): boolean {
  return READ_ONLY_VERBS.has(a.verb) || !p.readonly;
}

function resourceMatches(p: AbacPolicy, a: AuthorizationAttributes): boolean {
  if (!a.resourceRequest) return false;
  return (
    (p.namespace === '*' || p.namespace === (a.namespace ?? '')) &&
    (p.resource === '*' || p.resource === (a.resource ?? '')) &&
    (p.apiGroup === '*' || p.apiGroup === (a.apiGroup ?? ''))
  );
}

function nonResourceMatches(p: AbacPolicy, a: AuthorizationAttributes): boolean {
  if (a.resourceRequest) return false;
  const path = a.path ?? '';
  if (p.nonResourcePath === '*' || p.nonResourcePath === path) return true;
  return p.nonResourcePath.endsWith('*') && path.startsWith(p.nonResourcePath.replace(/\*+$/, ''));
}

export function abacPolicyMatches(p: AbacPolicy, a: AuthorizationAttributes): boolean {
  return subjectMatches(p, a.user) && verbMatches(p, a) && (resourceMatches(p, a) || nonResourceMatches(p, a));
}

export class AbacAuthorizer implements Authorizer {
  constructor(private readonly policies: readonly AbacPolicy[]) {}

  authorize(attributes: AuthorizationAttributes): AuthorizationResult {
    return this.policies.some((p) => abacPolicyMatches(p, attributes))
      ? {decision: 'Allow', reason: ''}
      : {decision: 'NoOpinion', reason: 'No policy matched.'};
  }
}
