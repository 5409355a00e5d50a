/** The identity of a request, as upstream's `user.Info`, and the well-known system names. */

export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export const ANONYMOUS_USER = 'system:anonymous';
export const AUTHENTICATED_GROUP = 'system:authenticated';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
/** Upstream's superuser group: every authorization mode chain allows it first. */
export const MASTERS_GROUP = 'system:masters';
export const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

export function anonymousUser(): UserInfo {
  return {name: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP]};
}

/**
 * Adds `system:authenticated` to an authenticated user's groups, as upstream's
 * AuthenticatedGroupAdder: not for the anonymous user, and not when either system group is there.
 */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.name === ANONYMOUS_USER) return user;
  if (user.groups.includes(AUTHENTICATED_GROUP) || user.groups.includes(UNAUTHENTICATED_GROUP)) return user;
  return {...user, groups: [...user.groups, AUTHENTICATED_GROUP]};
}

/** `system:serviceaccount:<ns>:<name>` split into its parts, or undefined for other user names. */
export function splitServiceAccountUser(name: string): {namespace: string; name: string} | undefined {
  if (!name.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined;
  const parts = name.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') return undefined;
  return {namespace: parts[0], name: parts[1]};
}

export function serviceAccountUser(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`;
}

export function serviceAccountGroups(namespace: string): string[] {
  return [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`];
}
