/**
 * Bearer token authenticators and their union, as upstream's authenticator.Token and
 * tokenunion: each says the token is not its kind (undefined), names the user (with the audiences
 * the token is good for), or rejects it (an error for the log, never the token). The union asks
 * each in order; the first user wins, else the errors of all. The same union serves requests
 * (audiences: the server's own) and TokenReview (audiences: the review's).
 */
import {createHash} from 'node:crypto';
import type {TokenTable} from './token-file.js';
import type {UserInfo} from './user.js';

export type TokenResult = {user: UserInfo; audiences: string[]} | {error: string};

export interface TokenAuthenticator {
  /** `audiences`: what the caller wants the token good for; undefined: the server's own. */
  authenticateToken(token: string, audiences?: string[]): Promise<TokenResult | undefined>;
}

export class TokenUnion implements TokenAuthenticator {
  constructor(private readonly members: TokenAuthenticator[]) {}

  get size(): number {
    return this.members.length;
  }

  async authenticateToken(token: string, audiences?: string[]): Promise<TokenResult | undefined> {
    const errors: string[] = [];
    for (const member of this.members) {
      let result: TokenResult | undefined;
      try {
        result = await member.authenticateToken(token, audiences);
      } catch (error) {
        result = {error: (error as Error).message};
      }
      if (!result) continue;
      if ('user' in result) return result;
      errors.push(result.error);
    }
    return errors.length > 0 ? {error: errors.join('; ')} : undefined;
  }
}

/**
 * Upstream's WrapAudienceAgnosticToken: an authenticator whose tokens carry no audience (static
 * tokens, webhooks without audiences) is good for the server's own audiences only.
 */
export function audienceAgnostic(inner: (token: string) => Promise<UserInfo | undefined | {error: string}>, implicit: string[]): TokenAuthenticator {
  return {
    async authenticateToken(token, audiences) {
      const wanted = audiences && audiences.length > 0 ? audiences : implicit;
      const common = implicit.length === 0 ? wanted : wanted.filter((a) => implicit.includes(a));
      if (implicit.length > 0 && common.length === 0) return undefined;
      const found = await inner(token);
      if (!found) return undefined;
      if ('error' in found) return found;
      return {user: found, audiences: common};
    },
  };
}

/** The static tokens of `--token-auth-file` as a token authenticator. */
export function staticTokens(table: TokenTable, implicit: string[]): TokenAuthenticator {
  return audienceAgnostic(async (token) => table.tokens.get(token), implicit);
}

/** Upstream's TokenSuccessCacheTTL: a token that authenticated is believed this long without asking again. */
export const TOKEN_SUCCESS_CACHE_TTL_MS = 10_000;

/**
 * Upstream's token cache in front of the union (pkg/kubeapiserver/authenticator, tokencache):
 * successes are kept for the TTL, failures are not. Keyed by a hash of the token and the audiences,
 * so no token is kept in memory; an entry never outlives the token's own `exp` when it has one.
 * The price is upstream's: a deleted account or pod is noticed up to the TTL late.
 */
export class CachedTokenAuthenticator implements TokenAuthenticator {
  private readonly entries = new Map<string, {expires: number; result: TokenResult}>();

  constructor(
    private readonly inner: TokenAuthenticator,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  async authenticateToken(token: string, audiences?: string[]): Promise<TokenResult | undefined> {
    if (this.ttlMs <= 0) return this.inner.authenticateToken(token, audiences);
    const key = createHash('sha256').update(token).update('\0').update((audiences ?? []).join('\0')).digest('base64url');
    const hit = this.entries.get(key);
    if (hit && hit.expires > this.now()) return hit.result;
    if (hit) this.entries.delete(key);
    const result = await this.inner.authenticateToken(token, audiences);
    if (result && 'user' in result) {
      let expires = this.now() + this.ttlMs;
      const exp = jwtExpiry(token);
      if (exp !== undefined) expires = Math.min(expires, exp * 1000);
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(key, {expires, result});
    }
    return result;
  }
}

/** The `exp` of a JWT-shaped token, without verifying it (the inner authenticator did). */
function jwtExpiry(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const exp = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')).exp;
    return typeof exp === 'number' ? exp : undefined;
  } catch {
    return undefined;
  }
}
