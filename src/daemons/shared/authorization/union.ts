/**
 * Authorizers every daemon composes (upstream's authorizerfactory and union): allow all, deny all,
 * the privileged groups, and the union where the first Allow or Deny decides.
 */
import type {AuthorizationAttributes, AuthorizationResult, Authorizer} from './attributes.js';

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
