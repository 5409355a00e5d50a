/**
 * The rules a user holds in a namespace, for SelfSubjectRulesReview (`kubectl auth can-i --list`),
 * from the RBAC authorizer's own rule resolution (upstream's RulesFor); the privileged group and
 * AlwaysAllow hold everything. Pure.
 */
import type {JsonObject} from '../../../patch/types.js';
import type {RulesReviewStatus} from '../rest/reviews.js';
import {RbacAuthorizer, type RbacPolicySource} from './rbac.js';
import {MASTERS_GROUP, type UserInfo} from '../../shared/authentication/user.js';

const EVERYTHING: RulesReviewStatus = {
  resourceRules: [{verbs: ['*'], apiGroups: ['*'], resources: ['*']}],
  nonResourceRules: [{verbs: ['*'], nonResourceURLs: ['*']}],
  incomplete: false,
};

export function rulesFor(modes: string[], policy: RbacPolicySource | undefined, user: UserInfo, namespace: string): RulesReviewStatus {
  const effective = modes.length > 0 ? modes : ['AlwaysAllow'];
  if (user.groups.includes(MASTERS_GROUP)) return EVERYTHING;
  for (const mode of effective) {
    if (mode === 'AlwaysAllow') return EVERYTHING;
    if (mode === 'RBAC' && policy) return rbacRules(policy, user, namespace);
  }
  return {resourceRules: [], nonResourceRules: [], incomplete: false};
}

function rbacRules(policy: RbacPolicySource, user: UserInfo, namespace: string): RulesReviewStatus {
  const {rules, errors} = new RbacAuthorizer(policy).rulesFor(user, namespace);
  const resourceRules: JsonObject[] = [];
  const nonResourceRules: JsonObject[] = [];
  for (const rule of rules) {
    if (rule.nonResourceURLs?.length) nonResourceRules.push({verbs: [...rule.verbs], nonResourceURLs: [...rule.nonResourceURLs]});
    if (rule.resources?.length) {
      const entry: JsonObject = {verbs: [...rule.verbs], apiGroups: [...(rule.apiGroups ?? [])], resources: [...rule.resources]};
      if (rule.resourceNames?.length) entry.resourceNames = [...rule.resourceNames];
      resourceRules.push(entry);
    }
  }
  const status: RulesReviewStatus = {resourceRules, nonResourceRules, incomplete: errors.length > 0};
  if (errors.length) status.evaluationError = errors.join(', ');
  return status;
}
