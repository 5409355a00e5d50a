/**
 * The audit Policy (`audit.<domain>/v1`, kind Policy) as upstream's k8s.io/apiserver/pkg/apis/audit
 * and pkg/audit/policy: parsing with upstream's validation messages, and the rule evaluator (first
 * matching rule wins; no match means level None). Pure: the file is read by the caller.
 */
import {parse as parseYaml} from 'yaml';
import {names} from '../../../api/names.js';
import type {UserInfo} from '../../shared/authentication/user.js';

export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type Level = (typeof LEVELS)[number];
export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type Stage = (typeof STAGES)[number];

export interface GroupResources {
  group?: string;
  resources?: string[];
  resourceNames?: string[];
}

export interface PolicyRule {
  level: Level;
  users?: string[];
  userGroups?: string[];
  verbs?: string[];
  resources?: GroupResources[];
  namespaces?: string[];
  nonResourceURLs?: string[];
  omitStages?: Stage[];
  omitManagedFields?: boolean;
}

export interface Policy {
  rules: PolicyRule[];
  omitStages: Stage[];
  omitManagedFields: boolean;
}

/** What the evaluator needs to know about a request (upstream's authorizer.Attributes subset). */
export interface AuditAttributes {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  path: string;
}

export interface RequestAuditConfig {
  level: Level;
  omitStages: Stage[];
  omitManagedFields: boolean;
}

export class PolicyError extends Error {}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const quoteList = (values: readonly string[]) => values.map((v) => JSON.stringify(v)).join(', ');

/** Parses and validates a policy document (YAML or JSON); throws a PolicyError naming every problem. */
export function parsePolicy(text: string, source = 'audit policy'): Policy {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new PolicyError(`${source}: not valid YAML or JSON: ${(error as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new PolicyError(`${source}: expected a Policy object (kind: Policy, apiVersion: ${names().groups.audit}/v1)`);
  const d = doc as Record<string, unknown>;
  const expected = `${names().groups.audit}/v1`;
  const problems: string[] = [];
  if (d.kind !== 'Policy') problems.push(`kind: Unsupported value: ${JSON.stringify(d.kind ?? '')}: supported values: "Policy"`);
  if (d.apiVersion !== expected) problems.push(`apiVersion: Unsupported value: ${JSON.stringify(d.apiVersion ?? '')}: supported values: ${JSON.stringify(expected)}`);
  const omitStages = validateStages(d.omitStages, 'omitStages', problems);
  if (d.omitManagedFields !== undefined && typeof d.omitManagedFields !== 'boolean') problems.push(`omitManagedFields: Invalid value: ${JSON.stringify(d.omitManagedFields)}: must be true or false`);
  const rawRules = d.rules;
  if (!Array.isArray(rawRules) || rawRules.length === 0) {
    // Upstream refuses a policy without rules ("loaded illegal policy with 0 rules").
    problems.push('rules: Required value: a policy needs at least one rule');
  }
  const rules = (Array.isArray(rawRules) ? rawRules : []).map((r, i) => validateRule(r, `rules[${i}]`, problems));
  if (problems.length > 0) throw new PolicyError(`${source}: ${problems.join('; ')}`);
  return {rules, omitStages, omitManagedFields: d.omitManagedFields === true};
}

function stringList(value: unknown, path: string, problems: string[]): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    problems.push(`${path}: Invalid value: ${JSON.stringify(value)}: must be a list of strings`);
    return undefined;
  }
  return value as string[];
}

function validateStages(value: unknown, path: string, problems: string[]): Stage[] {
  const list = stringList(value, path, problems) ?? [];
  list.forEach((s, i) => {
    if (!STAGES.includes(s as Stage)) problems.push(`${path}[${i}]: Unsupported value: ${JSON.stringify(s)}: supported values: ${quoteList(STAGES)}`);
  });
  return list as Stage[];
}

const RULE_KEYS = new Set(['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields']);

function validateRule(raw: unknown, path: string, problems: string[]): PolicyRule {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push(`${path}: Invalid value: ${JSON.stringify(raw)}: must be an object`);
    return {level: 'None'};
  }
  const r = raw as Record<string, unknown>;
  for (const key of Object.keys(r)) if (!RULE_KEYS.has(key)) problems.push(`${path}: unknown field ${JSON.stringify(key)}`);
  if (!LEVELS.includes(r.level as Level)) {
    problems.push(r.level === undefined || r.level === '' ? `${path}.level: Required value` : `${path}.level: Unsupported value: ${JSON.stringify(r.level)}: supported values: ${quoteList(LEVELS)}`);
  }
  const rule: PolicyRule = {
    level: r.level as Level,
    users: stringList(r.users, `${path}.users`, problems),
    userGroups: stringList(r.userGroups, `${path}.userGroups`, problems),
    verbs: stringList(r.verbs, `${path}.verbs`, problems),
    namespaces: stringList(r.namespaces, `${path}.namespaces`, problems),
    nonResourceURLs: stringList(r.nonResourceURLs, `${path}.nonResourceURLs`, problems),
    omitStages: validateStages(r.omitStages, `${path}.omitStages`, problems),
    omitManagedFields: typeof r.omitManagedFields === 'boolean' ? r.omitManagedFields : undefined,
  };
  if (r.omitManagedFields !== undefined && typeof r.omitManagedFields !== 'boolean') problems.push(`${path}.omitManagedFields: Invalid value: ${JSON.stringify(r.omitManagedFields)}: must be true or false`);
  if (r.resources !== undefined) {
    if (!Array.isArray(r.resources)) problems.push(`${path}.resources: Invalid value: must be a list of {group, resources, resourceNames}`);
    else rule.resources = r.resources.map((g, i) => validateGroupResources(g, `${path}.resources[${i}]`, problems));
  }
  const urls = rule.nonResourceURLs ?? [];
  if (urls.length > 0 && ((rule.resources?.length ?? 0) > 0 || (rule.namespaces?.length ?? 0) > 0)) {
    problems.push(`${path}.nonResourceURLs: Invalid value: ${JSON.stringify(urls)}: rules cannot apply to both regular resources and non-resource URLs`);
  }
  urls.forEach((url, i) => {
    if (url === '*') return;
    if (!url.startsWith('/')) problems.push(`${path}.nonResourceURLs[${i}]: Invalid value: ${JSON.stringify(url)}: non-resource URL rules must begin with a '/' character`);
    if (url.slice(0, -1).includes('*')) problems.push(`${path}.nonResourceURLs[${i}]: Invalid value: ${JSON.stringify(url)}: non-resource URL wildcards '*' must be the final character of the rule`);
  });
  return rule;
}

function validateGroupResources(raw: unknown, path: string, problems: string[]): GroupResources {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push(`${path}: Invalid value: ${JSON.stringify(raw)}: must be an object`);
    return {};
  }
  const g = raw as Record<string, unknown>;
  const group = typeof g.group === 'string' ? g.group : undefined;
  if (g.group !== undefined && typeof g.group !== 'string') problems.push(`${path}.group: Invalid value: ${JSON.stringify(g.group)}: must be a string`);
  if (group && !DNS_SUBDOMAIN.test(group)) problems.push(`${path}.group: Invalid value: ${JSON.stringify(group)}: must be a DNS subdomain`);
  const resources = stringList(g.resources, `${path}.resources`, problems);
  const resourceNames = stringList(g.resourceNames, `${path}.resourceNames`, problems);
  if ((resourceNames?.length ?? 0) > 0 && (resources?.length ?? 0) === 0) problems.push(`${path}.resourceNames: Invalid value: ${JSON.stringify(resourceNames)}: using resourceNames requires at least one resource`);
  (resources ?? []).forEach((res, i) => {
    if (res === '' || res === '*' || res === '*/*') return;
    const [resource, sub, ...rest] = res.split('/');
    if (rest.length > 0 || (sub === undefined && resource.includes('*')) || (sub !== undefined && (sub === '' || (resource.includes('*') && resource !== '*') || (sub.includes('*') && sub !== '*')))) {
      problems.push(`${path}.resources[${i}]: Invalid value: ${JSON.stringify(res)}: must be "resource", "resource/subresource", "*", "*/subresource" or "resource/*"`);
    }
  });
  return {group: group ?? '', resources, resourceNames};
}

/** The first matching rule's level and stages to omit; None when no rule matches (upstream's policyRuleEvaluator). */
export function evaluatePolicy(policy: Policy, attrs: AuditAttributes): RequestAuditConfig {
  for (const rule of policy.rules) {
    if (!ruleMatches(rule, attrs)) continue;
    return {
      level: rule.level,
      omitStages: [...new Set([...policy.omitStages, ...(rule.omitStages ?? [])])],
      omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
    };
  }
  return {level: 'None', omitStages: policy.omitStages, omitManagedFields: policy.omitManagedFields};
}

export function ruleMatches(rule: PolicyRule, attrs: AuditAttributes): boolean {
  if (rule.users?.length && !rule.users.includes(attrs.user.name)) return false;
  if (rule.userGroups?.length && !attrs.user.groups.some((g) => rule.userGroups!.includes(g))) return false;
  if (rule.verbs?.length && !rule.verbs.includes(attrs.verb)) return false;
  if (rule.namespaces?.length || rule.resources?.length) return ruleMatchesResource(rule, attrs);
  if (rule.nonResourceURLs?.length) return ruleMatchesNonResource(rule, attrs);
  return true;
}

function ruleMatchesResource(rule: PolicyRule, attrs: AuditAttributes): boolean {
  if (!attrs.isResourceRequest) return false;
  // A cluster-scoped request has namespace "", which a rule lists as "".
  if (rule.namespaces?.length && !rule.namespaces.includes(attrs.namespace ?? '')) return false;
  if (!rule.resources?.length) return true;
  const resource = attrs.resource ?? '';
  const subresource = attrs.subresource ?? '';
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const gr of rule.resources) {
    if ((gr.group ?? '') !== (attrs.apiGroup ?? '')) continue;
    if (!gr.resources?.length) return true;
    if (gr.resourceNames?.length && !gr.resourceNames.includes(attrs.name ?? '')) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (subresource && res.startsWith('*/') && res.slice(2) === subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === resource) return true;
    }
  }
  return false;
}

function ruleMatchesNonResource(rule: PolicyRule, attrs: AuditAttributes): boolean {
  if (attrs.isResourceRequest) return false;
  return (rule.nonResourceURLs ?? []).some((spec) => spec === '*' || spec === attrs.path || (spec.endsWith('*') && attrs.path.startsWith(spec.slice(0, -1))));
}
