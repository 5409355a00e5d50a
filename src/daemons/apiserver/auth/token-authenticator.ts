/**
 * Bearer token authenticators and their union, as upstream's authenticator.Token and
 * tokenunion: each says the token is not its kind (undefined), names the user (with the audiences
 * the token is good for), or rejects it (an error for the log, never the token). The union asks
 * each in order; the first user wins, else the errors of all. The same union serves requests
 * (audiences: the server's own) and TokenReview (audiences: the review's).
 */
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
