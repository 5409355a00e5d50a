/**
 * The authorizer chain of `--authorization-mode`: the modes in order, the first Allow or Deny
 * wins, and upstream's superuser check (group `system:masters` is allowed) always comes first.
 * As upstream, AlwaysDeny answers NoOpinion ("Everything is forbidden."), so a later mode can
 * still allow; a request nobody allows is forbidden.
 */
import type {Authorizer} from '../../shared/authorization/attributes.js';
import {RbacAuthorizer, type RbacPolicySource} from './rbac.js';
import {alwaysAllow, alwaysDeny, privilegedGroups, unionAuthorizer} from '../../shared/authorization/union.js';
import {MASTERS_GROUP} from '../../shared/authentication/user.js';
import {NodeAuthorizer} from './node-authorizer.js';
import type {NodeGraph} from './node-graph.js';
import {nodePolicyRules} from './bootstrap-policy.js';

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];

/** Problems with a mode list (unknown, repeated), as messages for the user. */
export function validateAuthorizationModes(modes: string[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const mode of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(mode)) {
      problems.push(`authorization-mode "${mode}" is not a valid mode (valid: ${AUTHORIZATION_MODES.join(', ')})`);
    }
    if (seen.has(mode)) problems.push(`authorization-mode "${mode}" has mode specified more than once`);
    seen.add(mode);
  }
  return problems;
}

export interface AuthorizerDependencies {
  /** The RBAC objects, needed when the modes include RBAC. */
  rbac?: RbacPolicySource;
  /** The ABAC policy (from --authorization-policy-file), needed when the modes include ABAC. */
  abac?: Authorizer;
  /** The webhook authorizer (from --authorization-webhook-config-file), needed for Webhook. */
  webhook?: Authorizer;
  /** The graph of what each node reaches through its pods, needed for Node. */
  nodeGraph?: NodeGraph;
}

/** A chain of authorizers after upstream's superuser check (group `system:masters` is allowed first). */
export function authorizerChain(authorizers: Authorizer[]): Authorizer {
  return unionAuthorizer([privilegedGroups(MASTERS_GROUP), ...authorizers]);
}

/** The authorizer of a mode list (empty: AlwaysAllow, the seed's default without a config file). */
export function createAuthorizer(modes: string[], dependencies: AuthorizerDependencies = {}): Authorizer {
  const problems = validateAuthorizationModes(modes);
  if (problems.length > 0) throw new Error(problems.join('; '));
  const chain: Authorizer[] = [privilegedGroups(MASTERS_GROUP)];
  for (const mode of modes.length > 0 ? modes : ['AlwaysAllow']) {
    if (mode === 'AlwaysAllow') chain.push(alwaysAllow);
    else if (mode === 'AlwaysDeny') chain.push(alwaysDeny);
    else if (mode === 'ABAC') {
      if (!dependencies.abac) throw new Error('authorization mode ABAC needs a policy (--authorization-policy-file)');
      chain.push(dependencies.abac);
    } else if (mode === 'Webhook') {
      if (!dependencies.webhook) throw new Error('authorization mode Webhook needs a webhook (--authorization-webhook-config-file)');
      chain.push(dependencies.webhook);
    } else if (mode === 'Node') {
      if (!dependencies.nodeGraph) throw new Error('authorization mode Node needs the node graph (no graph given)');
      chain.push(new NodeAuthorizer(dependencies.nodeGraph, nodePolicyRules));
    } else if (mode === 'RBAC') {
      if (!dependencies.rbac) throw new Error('authorization mode RBAC needs the RBAC objects (no policy source given)');
      chain.push(new RbacAuthorizer(dependencies.rbac));
    }
  }
  return unionAuthorizer(chain);
}
