/**
 * The authorizer chain of `--authorization-mode`: the modes in order, the first Allow or Deny
 * wins, and upstream's superuser check (group `system:masters` is allowed) always comes first.
 * As upstream, AlwaysDeny answers NoOpinion ("Everything is forbidden."), so a later mode can
 * still allow; a request nobody allows is forbidden.
 */
import type {AuthorizationAttributes, AuthorizationResult, Authorizer} from './attributes.js';
import {RbacAuthorizer, type RbacPolicySource} from './rbac.js';
import {MASTERS_GROUP} from './user.js';
import {NodeAuthorizer} from './node-authorizer.js';
import type {NodeGraph} from './node-graph.js';
import {nodePolicyRules} from './bootstrap-policy.js';

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];

export const alwaysAllow: Authorizer = {authorize: () => ({decision: 'Allow', reason: ''})};
export const alwaysDeny: Authorizer = {authorize: () => ({decision: 'NoOpinion', reason: 'Everything is forbidden.'})};

/** Allows members of any of the groups; no opinion otherwise (upstream's privileged-groups authorizer). */
export function privilegedGroups(...groups: string[]): Authorizer {
  return {
    authorize: ({user}) => ({decision: user.groups.some((g) => groups.includes(g)) ? 'Allow' : 'NoOpinion', reason: ''}),
  };
}

/**
 * Runs authorizers in order; the first Allow or Deny decides, else NoOpinion with the reasons
 * joined and the errors of the authorizers that could not decide.
 */
export function unionAuthorizer(authorizers: Authorizer[]): Authorizer {
  return {
    async authorize(attributes: AuthorizationAttributes): Promise<AuthorizationResult> {
      const reasons: string[] = [];
      const errors: Error[] = [];
      for (const authorizer of authorizers) {
        const result = await authorizer.authorize(attributes);
        if (result.decision !== 'NoOpinion') return result;
        if (result.reason) reasons.push(result.reason);
        if (result.error) errors.push(result.error);
      }
      const result: AuthorizationResult = {decision: 'NoOpinion', reason: reasons.join('\n')};
      // Upstream aggregates the errors as `[e1, e2]` when there are several.
      if (errors.length > 0) result.error = errors.length === 1 ? errors[0] : new Error(`[${errors.map((e) => e.message).join(', ')}]`);
      return result;
    },
  };
}

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
