/**
 * The RBAC registries' escalation checks (upstream's policybased storage) as write guards: roles
 * and cluster roles may only carry rules the writer holds unless it may `escalate` them (and only
 * an escalating writer may set an aggregation rule); bindings may only reference a role whose rules
 * the writer holds unless it may `bind` it. The arithmetic is in rbac-escalation.ts.
 */
import {bindAttributes, escalationAllowed, escalationMessage, sameRules} from './rbac-escalation.js';
import type {RbacAuthorizer, RbacPolicySource} from './rbac.js';
import type {PolicyRule, RoleRef} from './rbac-types.js';
import type {WriteGuard} from '../rest/write-guard.js';
import type {WriteContext} from '../rest/registry-store.js';
import {forbidden, notFound} from '../../../api/status.js';
import {names} from '../../../api/names.js';
import type {JsonObject} from '../../../patch/types.js';

export const RBAC_RESOURCES = ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'] as const;
export type RbacResource = (typeof RBAC_RESOURCES)[number];

const rulesOf = (o: JsonObject) => ((o as unknown as {rules?: PolicyRule[]}).rules ?? []);
const objectName = (o: JsonObject) => String((o.metadata as {name?: unknown} | undefined)?.name ?? '');

async function allowedTo(ctx: WriteContext, attrs: {verb: string; apiGroup: string; resource: string; name: string; namespace: string}): Promise<boolean> {
  if (!ctx.authorize) return false;
  const decision = await ctx.authorize({user: ctx.user, resourceRequest: true, apiVersion: '*', subresource: '', path: '', ...attrs});
  return decision.allowed;
}

export function rbacWriteGuard(resource: RbacResource, rbac: RbacAuthorizer, policy: RbacPolicySource): WriteGuard {
  const group = () => names().groups.rbac;
  const refuse = (name: string, message: string) => forbidden({group: group(), resource}, name, message);

  async function checkRules(ctx: WriteContext, namespace: string, object: JsonObject): Promise<void> {
    if (escalationAllowed(ctx.user)) return;
    const name = objectName(object);
    if (await allowedTo(ctx, {verb: 'escalate', apiGroup: group(), resource, name, namespace})) return;
    if (resource === 'clusterroles' && object.aggregationRule) throw refuse(name, 'must have cluster-admin privileges to use the aggregationRule');
    const {rules: owned, errors} = rbac.rulesFor(ctx.user, namespace);
    const message = escalationMessage(ctx.user, owned, rulesOf(object), errors);
    if (message) throw refuse(name, message);
  }

  function referencedRules(roleRef: RoleRef, namespace: string): PolicyRule[] {
    if (roleRef.kind === 'ClusterRole') {
      const role = policy.getClusterRole(roleRef.name);
      if (!role) throw notFound({group: group(), resource: 'clusterroles'}, roleRef.name);
      return role.rules ?? [];
    }
    const role = roleRef.kind === 'Role' ? policy.getRole(namespace, roleRef.name) : undefined;
    if (!role) throw notFound({group: group(), resource: 'roles'}, roleRef.name);
    return role.rules ?? [];
  }

  async function checkBinding(ctx: WriteContext, namespace: string, object: JsonObject): Promise<void> {
    if (escalationAllowed(ctx.user)) return;
    const roleRef = ((object as unknown as {roleRef?: RoleRef}).roleRef ?? {}) as RoleRef;
    const bind = bindAttributes(roleRef, namespace);
    if (bind && (await allowedTo(ctx, bind))) return;
    const {rules: owned, errors} = rbac.rulesFor(ctx.user, namespace);
    const message = escalationMessage(ctx.user, owned, referencedRules(roleRef, namespace), errors);
    if (message) throw refuse(objectName(object), message);
  }

  const isRole = resource === 'roles' || resource === 'clusterroles';
  return {
    checkCreate: (ctx, namespace, object) => (isRole ? checkRules(ctx, namespace, object) : checkBinding(ctx, namespace, object)),
    async checkUpdate(ctx, namespace, object, old) {
      if (isRole) {
        // Only a change of rules (or of the aggregation rule) can grant anything.
        if (sameRules(rulesOf(object), rulesOf(old)) && JSON.stringify(object.aggregationRule) === JSON.stringify(old.aggregationRule)) return;
        return checkRules(ctx, namespace, object);
      }
      if (JSON.stringify(object.roleRef) === JSON.stringify(old.roleRef) && JSON.stringify(object.subjects) === JSON.stringify(old.subjects)) return;
      return checkBinding(ctx, namespace, object);
    },
  };
}
