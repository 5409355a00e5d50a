/**
 * RBAC's escalation prevention, as upstream's policy-based role and binding storage
 * (pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased and
 * pkg/registry/rbac/validation): a user may write a role only with rules it holds itself, or when
 * it may `escalate` roles; it may bind a role only when it holds the role's rules, or may `bind`
 * it. `system:masters` may always. The rule arithmetic (breakdown, covers, compaction and the
 * message) is pure; the guard asks the request's authorizer and the RBAC rules of the user.
 */
import type {PolicyRule, RoleRef} from './rbac-types.js';
import {MASTERS_GROUP, type UserInfo} from '../../shared/authentication/user.js';

const has = (set: readonly string[] | undefined, item: string) => (set ?? []).includes(item);
const hasAll = (set: readonly string[] | undefined, items: readonly string[] | undefined) => (items ?? []).every((i) => has(set, i));

/** One rule per group × resource × verb (× name), and per URL × verb: upstream's BreakdownRule. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const subrules: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        if (rule.resourceNames?.length) for (const name of rule.resourceNames) subrules.push({apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name]});
        else subrules.push({apiGroups: [group], resources: [resource], verbs: [verb]});
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs ?? []) subrules.push({nonResourceURLs: [url], verbs: [verb]});
  return subrules;
}

function resourceCoversAll(owner: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  if (has(owner, '*') || hasAll(owner, wanted)) return true;
  return (wanted ?? []).every((path) => {
    if (has(owner, path)) return true;
    const slash = path.indexOf('/');
    return slash >= 0 && has(owner, `*/${path.slice(slash + 1)}`);
  });
}

function nonResourceUrlCovers(ownerPath: string, subPath: string): boolean {
  return ownerPath === subPath || (ownerPath.endsWith('*') && subPath.startsWith(ownerPath.replace(/\*+$/, '')));
}

/** Upstream's ruleCovers: whether one owner rule covers an atomic subrule. */
export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, '*') || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, '*') || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourceCoversAll(owner.resources, sub.resources);
  const urls = (sub.nonResourceURLs ?? []).every((path) => (owner.nonResourceURLs ?? []).some((o) => nonResourceUrlCovers(o, path)));
  const names = sub.resourceNames?.length ? !owner.resourceNames?.length || hasAll(owner.resourceNames, sub.resourceNames) : !owner.resourceNames?.length;
  return verbs && groups && resources && names && urls;
}

/** The atomic subrules of `servant` that no rule of `owner` covers (empty: covered). */
export function uncoveredRules(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): PolicyRule[] {
  return servant.flatMap(breakdownRule).filter((sub) => !owner.some((o) => ruleCovers(o, sub)));
}

/** Upstream's CompactRules: subrules of one group and resource (and at most one name) share their verbs. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const compacted: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const rule of rules) {
    const isSimple = (rule.resourceNames?.length ?? 0) <= 1 && !rule.nonResourceURLs?.length && rule.apiGroups?.length === 1 && rule.resources?.length === 1;
    if (!isSimple) {
      compacted.push(rule);
      continue;
    }
    const key = JSON.stringify([rule.apiGroups![0], rule.resources![0], rule.resourceNames?.[0] ?? null]);
    const existing = simple.get(key);
    if (existing) existing.verbs = [...(existing.verbs ?? []), ...(rule.verbs ?? [])];
    else simple.set(key, {...rule, verbs: [...(rule.verbs ?? [])]});
  }
  return [...compacted, ...simple.values()];
}

/** Go's %q of a []string: `["a" "b"]`. */
const quoted = (values: readonly string[]) => `[${values.map((v) => JSON.stringify(v)).join(' ')}]`;

/** Upstream's rbacv1helpers.CompactString: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["create"]}`. */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  if (rule.apiGroups?.length) parts.push(`APIGroups:${quoted(rule.apiGroups)}`);
  if (rule.resources?.length) parts.push(`Resources:${quoted(rule.resources)}`);
  if (rule.nonResourceURLs?.length) parts.push(`NonResourceURLs:${quoted(rule.nonResourceURLs)}`);
  if (rule.resourceNames?.length) parts.push(`ResourceNames:${quoted(rule.resourceNames)}`);
  if (rule.verbs?.length) parts.push(`Verbs:${quoted(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/**
 * Upstream's ConfirmNoEscalation: undefined when the user's rules cover `rules`, else the message
 * listing what is missing (sorted, compacted) and any errors met resolving the user's rules.
 */
export function escalationMessage(user: UserInfo, ownerRules: readonly PolicyRule[], rules: readonly PolicyRule[], resolutionErrors: readonly string[] = []): string | undefined {
  const missing = uncoveredRules(ownerRules, rules);
  if (missing.length === 0) return undefined;
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
  let message = `user ${JSON.stringify(user.name)} (groups=${quoted(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join('\n')}`;
  if (resolutionErrors.length > 0) message += `; resolution errors: [${resolutionErrors.join(' ')}]`;
  return message;
}

/** Upstream's EscalationAllowed: the privileged group may grant anything. */
export function escalationAllowed(user: UserInfo): boolean {
  return user.groups.includes(MASTERS_GROUP);
}

/** Whether two rule lists are the same (an update that keeps the rules is not checked). */
export function sameRules(a: readonly PolicyRule[] | undefined, b: readonly PolicyRule[] | undefined): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
}

/** The attributes of the `bind` check of a role reference (upstream's BindingAuthorized). */
export function bindAttributes(roleRef: RoleRef, bindingNamespace: string): {verb: 'bind'; apiGroup: string; resource: string; name: string; namespace: string} | undefined {
  if (roleRef.kind !== 'ClusterRole' && roleRef.kind !== 'Role') return undefined;
  return {verb: 'bind', apiGroup: roleRef.apiGroup ?? '', resource: roleRef.kind === 'ClusterRole' ? 'clusterroles' : 'roles', name: roleRef.name, namespace: bindingNamespace};
}
