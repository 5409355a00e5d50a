/**
 * One JWT issuer of `--authentication-config` (upstream's structured OIDC authenticator): a token
 * whose `iss` is the issuer's URL is verified against the issuer's keys for one of its audiences,
 * its claims checked by the claim validation rules, mapped to a user (claims with prefixes, or CEL
 * expressions over `claims`), and the user checked by the user validation rules.
 */
import {jwtVerify, type JWTPayload} from 'jose';
import type {TokenAuthenticator, TokenResult} from '../../shared/authentication/token-authenticator.js';
import type {UserInfo} from '../../shared/authentication/user.js';
import type {ClaimOrExpression, JwtConfiguration} from './authentication-config.js';
import {ID_TOKEN_LEEWAY_SECONDS, IssuerKeys, issuedBy} from './oidc.js';

/** Upstream's signing algorithms for structured JWT authenticators (asymmetric only). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'];

type Mapped = {value: unknown} | {error: string};

function mapped(mapping: ClaimOrExpression, claims: JWTPayload, what: string): Mapped {
  if (mapping.expression) {
    try {
      return {value: mapping.expression({claims})};
    } catch (error) {
      return {error: `oidc: error evaluating ${what} expression: ${(error as Error).message}`};
    }
  }
  return {value: claims[mapping.claim!]};
}

const strings = (value: unknown): string[] | undefined =>
  typeof value === 'string' ? [value] : Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined;

/** The user the verified claims make, or why they make none. Pure. */
export function jwtUser(claims: JWTPayload, c: JwtConfiguration): {user: UserInfo} | {error: string} {
  for (const rule of c.claimValidationRules) {
    if ('claim' in rule) {
      if (!(rule.claim in claims)) return {error: `oidc: required claim ${rule.claim} not present in ID token`};
      if (claims[rule.claim] !== rule.requiredValue) return {error: `oidc: required claim ${rule.claim} value does not match. Got = ${JSON.stringify(claims[rule.claim])}, want = ${rule.requiredValue}`};
      continue;
    }
    let ok: unknown;
    try {
      ok = rule.expression({claims});
    } catch (error) {
      return {error: `oidc: error evaluating claim validation expression: ${(error as Error).message}`};
    }
    if (ok !== true) return {error: `oidc: error evaluating claim validation expression: expression '${rule.expressionText}' resulted in error: ${rule.message}`};
  }
  const {username: u, groups: g, uid: id, extra} = c.claimMappings;
  const name = mapped(u, claims, 'username');
  if ('error' in name) return name;
  if (typeof name.value !== 'string' || name.value === '') {
    return {error: u.expression ? 'oidc: empty username via CEL expression is not allowed' : `oidc: parse username claims ${JSON.stringify(u.claim)}: claim not present or not a string`};
  }
  if (u.claim === 'email' && 'email_verified' in claims && claims.email_verified !== true) return {error: 'oidc: email not verified'};
  const user: UserInfo = {name: (u.prefix ?? '') + name.value, groups: []};
  if (g) {
    const groups = mapped(g, claims, 'groups');
    if ('error' in groups) return groups;
    if (groups.value !== undefined && groups.value !== null) {
      const list = strings(groups.value);
      if (!list) return {error: `oidc: groups ${g.claim ? `claim ${JSON.stringify(g.claim)}` : 'expression'}: not a string or a list of strings`};
      user.groups = list.map((group) => (g.prefix ?? '') + group);
    }
  }
  if (id) {
    const uid = mapped(id, claims, 'uid');
    if ('error' in uid) return uid;
    if (uid.value !== undefined && uid.value !== null) {
      if (typeof uid.value !== 'string') return {error: 'oidc: uid must be a string'};
      user.uid = uid.value;
    }
  }
  for (const entry of extra) {
    let value: unknown;
    try {
      value = entry.valueExpression({claims});
    } catch (error) {
      return {error: `oidc: error evaluating extra ${entry.key} expression: ${(error as Error).message}`};
    }
    if (value === undefined || value === null || value === '') continue;
    const list = strings(value);
    if (!list) return {error: `oidc: extra ${entry.key}: not a string or a list of strings`};
    if (list.length > 0) (user.extra ??= {})[entry.key] = list;
  }
  const userVariable = {username: user.name, uid: user.uid ?? '', groups: user.groups, extra: user.extra ?? {}};
  for (const rule of c.userValidationRules) {
    let ok: unknown;
    try {
      ok = rule.expression({user: userVariable});
    } catch (error) {
      return {error: `oidc: error evaluating user info validation rule: ${(error as Error).message}`};
    }
    if (ok !== true) return {error: `oidc: error evaluating user info validation rule: validation expression '${rule.expressionText}' failed: ${rule.message}`};
  }
  return {user};
}

export class JwtAuthenticator implements TokenAuthenticator {
  private readonly keys: IssuerKeys;

  constructor(private readonly c: JwtConfiguration, private readonly now?: () => Date) {
    this.keys = new IssuerKeys(c.issuer.url, c.issuer.certificateAuthority, c.issuer.discoveryUrl);
  }

  get issuer(): string {
    return this.c.issuer.url;
  }

  async authenticateToken(token: string): Promise<TokenResult | undefined> {
    if (!issuedBy(token, this.c.issuer.url)) return undefined;
    let payload: JWTPayload;
    try {
      payload = (await jwtVerify(token, await this.keys.get(), {
        issuer: this.c.issuer.url,
        audience: this.c.issuer.audiences,
        algorithms: ALGORITHMS,
        requiredClaims: ['exp'],
        clockTolerance: ID_TOKEN_LEEWAY_SECONDS,
        currentDate: this.now?.(),
      })).payload;
    } catch (error) {
      return {error: `oidc: verify token: ${(error as Error).message}`};
    }
    const result = jwtUser(payload, this.c);
    return 'error' in result ? result : {user: result.user, audiences: []};
  }
}
