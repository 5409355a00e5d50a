/**
 * The RBAC authorizer, as upstream's (plugin/pkg/auth/authorizer/rbac): a request is allowed when a
 * rule of a role bound to the user allows it; otherwise no opinion. Cluster role bindings are
 * visited first, then the role bindings of the request's namespace. Bindings whose role is missing
 * are reported in the reason (`RBAC: clusterrole.rbac.orch.io "x" not found`). Pure: the objects
 * come from a policy source (an in-memory index the server keeps in step with storage).
 */
import type {AuthorizationAttributes, AuthorizationResult, Authorizer} from '../../shared/authorization/attributes.js';
import {names} from '../../../api/names.js';
import {type ClusterRole, type ClusterRoleBinding, type PolicyRule, type RbacObject, type Role, type RoleBinding, type Subject} from './rbac-types.js';
import {splitServiceAccountUser, type UserInfo} from '../../shared/authentication/user.js';

export interface RbacPolicySource {
  getRole(namespace: string, name: string): Role | undefined;
  getClusterRole(name: string): ClusterRole | undefined;
  listRoleBindings(namespace: string): Iterable<RoleBinding>;
  listClusterRoleBindings(): Iterable<ClusterRoleBinding>;
}

function matchesOrStar(values: string[] | undefined, wanted: string): boolean {
  return (values ?? []).some((v) => v === '*' || v === wanted);
}

// Upstream's ResourceMatches: "*", the exact "resource/subresource", or "*" + "/<subresource>".
function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const ruleResource of rule.resources ?? []) {
    if (ruleResource === '*' || ruleResource === combined) return true;
    if (subresource && ruleResource === `*/${subresource}`) return true;
  }
  return false;
}

function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  return !rule.resourceNames || rule.resourceNames.length === 0 || rule.resourceNames.includes(name);
}

/** Upstream's NonResourceURLMatches: `*`, the exact path, or a prefix ending in `*`. */
function nonResourceUrlMatches(rule: PolicyRule, path: string): boolean {
  for (const url of rule.nonResourceURLs ?? []) {
    if (url === '*' || url === path) return true;
    if (url.endsWith('*') && path.startsWith(url.replace(/\*+$/, ''))) return true;
  }
  return false;
}

export function ruleAllows(attributes: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (!matchesOrStar(rule.verbs, attributes.verb)) return false;
  if (!attributes.resourceRequest) return nonResourceUrlMatches(rule, attributes.path ?? '');
  const subresource = attributes.subresource ?? '';
  const combined = subresource ? `${attributes.resource ?? ''}/${subresource}` : attributes.resource ?? '';
  return matchesOrStar(rule.apiGroups, attributes.apiGroup ?? '') && resourceMatches(rule, combined, subresource) && resourceNameMatches(rule, attributes.name ?? '');
}

/**
 * Whether a binding's subject is the user. A service account subject without a namespace means the
 * binding's own namespace (none for cluster role bindings).
 */
export function subjectMatches(user: UserInfo, subject: Subject, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return user.name === subject.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      if (!namespace) return false;
      const account = splitServiceAccountUser(user.name);
      return account !== undefined && account.namespace === namespace && account.name === subject.name;
    }
    default:
      return false;
  }
}

function notFound(kind: 'role' | 'clusterrole', name: string): string {
  return `${kind}.${names().groups.rbac} ${JSON.stringify(name)} not found`;
}

export class RbacAuthorizer implements Authorizer {
  constructor(private readonly policy: RbacPolicySource) {}

  /**
   * Upstream's VisitRulesFor: the rules of every role bound to the user, cluster role bindings
   * first, then the role bindings of the namespace (none when it is empty). The visitor returns
   * false to stop; a binding whose role is missing is reported as an error, not a rule.
   */
  visitRulesFor(user: UserInfo, namespace: string, visit: (rule: PolicyRule) => boolean | void): string[] {
    const errors: string[] = [];
    const visitAll = (rules: PolicyRule[] | undefined) => (rules ?? []).every((rule) => visit(rule) !== false);
    for (const binding of this.policy.listClusterRoleBindings()) {
      if (!(binding.subjects ?? []).some((s) => subjectMatches(user, s, ''))) continue;
      if (binding.roleRef.kind !== 'ClusterRole') continue; // a cluster binding can only grant a ClusterRole
      const role = this.policy.getClusterRole(binding.roleRef.name);
      if (!role) errors.push(notFound('clusterrole', binding.roleRef.name));
      else if (!visitAll(role.rules)) return errors;
    }
    if (namespace) {
      for (const binding of this.policy.listRoleBindings(namespace)) {
        if (!(binding.subjects ?? []).some((s) => subjectMatches(user, s, namespace))) continue;
        const role = binding.roleRef.kind === 'ClusterRole' ? this.policy.getClusterRole(binding.roleRef.name) : binding.roleRef.kind === 'Role' ? this.policy.getRole(namespace, binding.roleRef.name) : undefined;
        if (!role) errors.push(notFound(binding.roleRef.kind === 'ClusterRole' ? 'clusterrole' : 'role', binding.roleRef.name));
        else if (!visitAll(role.rules)) return errors;
      }
    }
    return errors;
  }

  /** Every rule the user holds in the namespace (cluster-wide rules included), and the resolution errors. */
  rulesFor(user: UserInfo, namespace: string): {rules: PolicyRule[]; errors: string[]} {
    const rules: PolicyRule[] = [];
    const errors = this.visitRulesFor(user, namespace, (rule) => {
      rules.push(rule);
    });
    return {rules, errors};
  }

  authorize(attributes: AuthorizationAttributes): AuthorizationResult {
    let allowed = false;
    const errors = this.visitRulesFor(attributes.user, attributes.namespace ?? '', (rule) => {
      allowed = ruleAllows(attributes, rule);
      return !allowed;
    });
    if (allowed) return {decision: 'Allow', reason: ''};
    // Upstream joins several errors Go-aggregate style: one bare, more in brackets.
    const reason = errors.length === 0 ? '' : `RBAC: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}`;
    return {decision: 'NoOpinion', reason};
  }
}

/**
 * An in-memory RBAC policy source, kept in step with storage by `apply`/`remove` (e.g. from a
 * watch). Bindings are kept per namespace so a request only scans its own namespace's bindings.
 */
export class RbacPolicyIndex implements RbacPolicySource {
  private readonly roles = new Map<string, Role>();
  private readonly clusterRoles = new Map<string, ClusterRole>();
  private readonly roleBindings = new Map<string, Map<string, RoleBinding>>();
  private readonly clusterRoleBindings = new Map<string, ClusterRoleBinding>();

  static from(objects: Iterable<RbacObject>): RbacPolicyIndex {
    const index = new RbacPolicyIndex();
    for (const object of objects) index.apply(object);
    return index;
  }

  /** Adds or replaces an object (by kind, namespace and name). Other kinds are ignored. */
  apply(object: RbacObject): void {
    const {name, namespace = ''} = object.metadata;
    switch (object.kind) {
      case 'Role':
        this.roles.set(`${namespace}/${name}`, object);
        break;
      case 'ClusterRole':
        this.clusterRoles.set(name, object);
        break;
      case 'RoleBinding': {
        let bindings = this.roleBindings.get(namespace);
        if (!bindings) this.roleBindings.set(namespace, (bindings = new Map()));
        bindings.set(name, object);
        break;
      }
      case 'ClusterRoleBinding':
        this.clusterRoleBindings.set(name, object);
        break;
    }
  }

  remove(object: Pick<RbacObject, 'kind' | 'metadata'>): void {
    const {name, namespace = ''} = object.metadata;
    if (object.kind === 'Role') this.roles.delete(`${namespace}/${name}`);
    else if (object.kind === 'ClusterRole') this.clusterRoles.delete(name);
    else if (object.kind === 'RoleBinding') this.roleBindings.get(namespace)?.delete(name);
    else if (object.kind === 'ClusterRoleBinding') this.clusterRoleBindings.delete(name);
  }

  getRole(namespace: string, name: string): Role | undefined {
    return this.roles.get(`${namespace}/${name}`);
  }

  getClusterRole(name: string): ClusterRole | undefined {
    return this.clusterRoles.get(name);
  }

  listRoleBindings(namespace: string): Iterable<RoleBinding> {
    return this.roleBindings.get(namespace)?.values() ?? [];
  }

  listClusterRoleBindings(): Iterable<ClusterRoleBinding> {
    return this.clusterRoleBindings.values();
  }
}
