/**
 * Which FlowSchema a request belongs to (upstream's util/flowcontrol/rule.go): schemas are tried by
 * ascending matchingPrecedence, then name; the first whose rules match the request's user and
 * verb/resource (or non-resource path) wins. Its distinguisher makes the flow: the user's name
 * (ByUser), the namespace (ByNamespace; empty for cluster-scoped and non-resource requests) or
 * nothing.
 */
import type {RequestInfo} from '../request-info.js';
import type {FlowSchema, NonResourcePolicyRule, ResourcePolicyRule, Subject} from './types.js';

export interface RequestDigest {
  info: RequestInfo;
  /** The request's path (non-resource rules match it). */
  path: string;
  user: {name: string; groups: readonly string[]};
}

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** Sorted as upstream orders them for matching. */
export function sortSchemas(schemas: FlowSchema[]): FlowSchema[] {
  return [...schemas].sort((a, b) => (a.spec.matchingPrecedence ?? 1000) - (b.spec.matchingPrecedence ?? 1000) || (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
}

export function matchesSchema(schema: FlowSchema, digest: RequestDigest): boolean {
  for (const rule of schema.spec.rules ?? []) {
    if (!rule.subjects.some((s) => matchesSubject(s, digest.user))) continue;
    if (digest.info.isResourceRequest) {
      if ((rule.resourceRules ?? []).some((r) => matchesResourceRule(r, digest.info))) return true;
    } else if ((rule.nonResourceRules ?? []).some((r) => matchesNonResourceRule(r, digest.info.verb, digest.path))) return true;
  }
  return false;
}

export function matchesSubject(subject: Subject, user: RequestDigest['user']): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.user?.name === '*' || subject.user?.name === user.name;
    case 'Group':
      return subject.group?.name === '*' || user.groups.includes(subject.group?.name ?? '');
    case 'ServiceAccount': {
      const sa = subject.serviceAccount;
      if (!sa || !user.name.startsWith(SERVICE_ACCOUNT_PREFIX)) return false;
      const [namespace, name] = user.name.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
      return namespace === sa.namespace && (sa.name === '*' || sa.name === name);
    }
    default:
      return false;
  }
}

const has = (list: readonly string[] | undefined, value: string) => !!list && (list.includes('*') || list.includes(value));

export function matchesResourceRule(rule: ResourcePolicyRule, info: RequestInfo): boolean {
  if (!has(rule.verbs, info.verb) || !has(rule.apiGroups, info.apiGroup)) return false;
  const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  if (!has(rule.resources, resource)) return false;
  if (info.namespace === '') return rule.clusterScope === true;
  return has(rule.namespaces, info.namespace);
}

/** `*` matches every path; a URL ending in `*` matches the paths starting with the rest (upstream's nonResourceURLs). */
export function matchesNonResourceRule(rule: NonResourcePolicyRule, verb: string, path: string): boolean {
  if (!has(rule.verbs, verb)) return false;
  return rule.nonResourceURLs.some((url) => url === '*' || url === path || (url.endsWith('*') && path.startsWith(url.replace(/\*+$/, ''))));
}

export function flowDistinguisher(schema: FlowSchema, digest: RequestDigest): string {
  switch (schema.spec.distinguisherMethod?.type) {
    case 'ByUser':
      return digest.user.name;
    case 'ByNamespace':
      return digest.info.namespace;
    default:
      return '';
  }
}
