/**
 * Delegated authentication and authorization, shared by the controller manager's and the agent's
 * secure ports (upstream's DelegatingAuthenticationOptions / DelegatingAuthorizationOptions):
 * who is calling is decided locally from a client certificate, else by asking the API server with
 * a TokenReview for a bearer token, else anonymous; what they may do is asked of the API server with
 * a SubjectAccessReview, cached as the webhook authorizer caches. Paths listed as always allowed
 * skip authorization; without a client to ask, every other request is forbidden, as upstream.
 */
import type {IncomingMessage} from 'node:http';
import type {RestClient} from '../../../client/rest-client.js';
import {names} from '../../../api/names.js';
import type {AuthorizationAttributes, AuthorizationResult, Authorizer} from '../authorization/attributes.js';
import type {RequestAuthenticator} from '../authentication/authenticator.js';
import {headerValue} from '../authentication/request.js';
import {bearerToken} from '../authentication/token-file.js';
import {anonymousUser, type UserInfo} from '../authentication/user.js';
import {WebhookAuthorizer} from '../authorization/webhook-authorizer.js';

/** Upstream's path matcher of --authorization-always-allow-paths: exact, or a prefix ending in `*`. */
export function alwaysAllowedPath(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) => (p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : p === path));
}

export interface DelegatedAuthorizerOptions {
  /** The API server (`--authorization-orchconfig`); none: every request not always allowed is forbidden. */
  client?: RestClient;
  alwaysAllowPaths: readonly string[];
  /** Groups allowed without asking (upstream's AlwaysAllowGroups). */
  alwaysAllowGroups?: readonly string[];
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  now?: () => number;
}

export function delegatedAuthorizer(o: DelegatedAuthorizerOptions): Authorizer {
  const remote = o.client
    ? new WebhookAuthorizer({
        version: 'v1',
        authorizedTtlMs: o.authorizedTtlMs,
        unauthorizedTtlMs: o.unauthorizedTtlMs,
        now: o.now,
        // One try: a caller of /metrics retries itself, and a stuck API server must not hold requests here.
        retry: {initialMs: 0, factor: 1, steps: 1},
        post: async (review) => (await o.client!.request({method: 'POST', path: `/apis/${names().groups.authorization}/v1/subjectaccessreviews`, body: review})).body,
      })
    : undefined;
  return {
    async authorize(a: AuthorizationAttributes): Promise<AuthorizationResult> {
      if (!a.resourceRequest && alwaysAllowedPath(o.alwaysAllowPaths, a.path ?? '')) return {decision: 'Allow', reason: ''};
      if (a.user.groups.some((g) => o.alwaysAllowGroups?.includes(g))) return {decision: 'Allow', reason: ''};
      if (!remote) return {decision: 'NoOpinion', reason: 'no authorization server is configured'};
      return remote.authorize(a);
    },
  };
}

export interface DelegatedAuthenticatorOptions {
  /** Client certificates (and anonymous) decided locally. */
  local: RequestAuthenticator;
  /** The API server for TokenReviews (`--authentication-orchconfig`); none: bearer tokens are not accepted. */
  client?: RestClient;
  cacheTtlMs: number;
  now?: () => number;
}

export interface DelegatedAuthentication {
  /** The caller, or undefined for 401. */
  authenticate(req: Pick<IncomingMessage, 'headers' | 'socket'>): Promise<UserInfo | undefined>;
}

/** The user of a TokenReview answer, or undefined when the token was not authenticated. */
export function tokenReviewUser(answer: unknown): UserInfo | undefined {
  const status = (answer as {status?: {authenticated?: unknown; user?: {username?: unknown; uid?: unknown; groups?: unknown; extra?: unknown}}})?.status;
  if (status?.authenticated !== true || typeof status.user?.username !== 'string') return undefined;
  const user: UserInfo = {name: status.user.username, groups: Array.isArray(status.user.groups) ? (status.user.groups as string[]) : []};
  if (typeof status.user.uid === 'string' && status.user.uid) user.uid = status.user.uid;
  if (status.user.extra && typeof status.user.extra === 'object') user.extra = status.user.extra as Record<string, string[]>;
  return user;
}

export function delegatedAuthentication(o: DelegatedAuthenticatorOptions): DelegatedAuthentication {
  const now = o.now ?? Date.now;
  const cache = new Map<string, {expires: number; user: UserInfo | undefined}>();
  async function review(token: string): Promise<UserInfo | undefined> {
    const hit = cache.get(token);
    if (hit && hit.expires > now()) return hit.user;
    const body = {apiVersion: `${names().groups.authentication}/v1`, kind: 'TokenReview', spec: {token}};
    let user: UserInfo | undefined;
    try {
      user = tokenReviewUser((await o.client!.request({method: 'POST', path: `/apis/${names().groups.authentication}/v1/tokenreviews`, body})).body);
    } catch {
      return undefined; // the API server could not say: unauthorized, not cached
    }
    if (o.cacheTtlMs > 0) cache.set(token, {expires: now() + o.cacheTtlMs, user});
    return user;
  }
  return {
    async authenticate(req) {
      const outcome = o.local.authenticateRequest({headers: req.headers, socket: req.socket});
      // A certificate identified the caller, or credentials were rejected locally.
      if (outcome.user && outcome.user.name !== anonymousUser().name) return outcome.user;
      if (outcome.error && !outcome.user) return undefined;
      const token = bearerToken(headerValue({headers: req.headers}, 'authorization'));
      if (token !== undefined) return o.client ? review(token) : undefined;
      return outcome.user;
    },
  };
}

/** Upstream's 403 text of a delegated authorization refusal. */
export function delegatedForbiddenMessage(a: AuthorizationAttributes, reason: string): string {
  const who = `User ${JSON.stringify(a.user.name)} cannot ${a.verb}`;
  const what = a.resourceRequest
    ? `resource ${JSON.stringify(a.subresource ? `${a.resource}/${a.subresource}` : a.resource)} in API group ${JSON.stringify(a.apiGroup ?? '')} at the cluster scope`
    : `path ${JSON.stringify(a.path)}`;
  return `forbidden: ${who} ${what}${reason ? `: ${reason}` : ''}`;
}
