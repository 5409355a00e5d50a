/**
 * OpenID Connect ID tokens (upstream's plugin/pkg/authenticator/token/oidc with the `--oidc-*`
 * options): a JWT whose `iss` is `--oidc-issuer-url`, for `--oidc-client-id`, signed with one of
 * `--oidc-signing-algs` by a key of the issuer's JWKS (found through its discovery document, over
 * HTTPS trusting `--oidc-ca-file`; jose fetches and refreshes the key set), carrying the
 * `--oidc-required-claim`s; the user is the username claim with its prefix, the groups claim with
 * its prefix. Discovery happens on first use and is retried after a failure, as upstream keeps
 * trying an issuer that is not up yet: until then its tokens are refused.
 */
import {Agent, get} from 'node:https';
import {createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload} from 'jose';
import type {TokenAuthenticator, TokenResult} from '../../shared/authentication/token-authenticator.js';
import type {UserInfo} from '../../shared/authentication/user.js';

export interface OidcOptions {
  issuerUrl: string;
  clientId: string;
  /** PEM bundle of `--oidc-ca-file`; system roots when absent. */
  caPem?: string;
  usernameClaim: string;
  /** `--oidc-username-prefix` as given (undefined: upstream's default, see usernamePrefix). */
  usernamePrefix?: string;
  groupsClaim?: string;
  groupsPrefix?: string;
  requiredClaims: Record<string, string>;
  signingAlgs: string[];
  now?: () => Date;
}

/** Upstream's default prefix: none for `email`, else `<issuer>#`; `-` means none. */
export function usernamePrefix(o: Pick<OidcOptions, 'issuerUrl' | 'usernameClaim' | 'usernamePrefix'>): string {
  if (o.usernamePrefix === '-') return '';
  if (o.usernamePrefix !== undefined && o.usernamePrefix !== '') return o.usernamePrefix;
  return o.usernameClaim === 'email' ? '' : `${o.issuerUrl}#`;
}

/** The user an ID token's (verified) claims make, or why they make none. Pure. */
export function oidcUser(claims: JWTPayload, o: OidcOptions): {user: UserInfo} | {error: string} {
  for (const [claim, value] of Object.entries(o.requiredClaims)) {
    if (!(claim in claims)) return {error: `oidc: required claim ${claim} not present in ID token`};
    if (claims[claim] !== value) return {error: `oidc: required claim ${claim} value does not match. Got = ${JSON.stringify(claims[claim])}, want = ${value}`};
  }
  const username = claims[o.usernameClaim];
  if (typeof username !== 'string' || username === '') return {error: `oidc: parse username claims ${JSON.stringify(o.usernameClaim)}: claim not present or not a string`};
  if (o.usernameClaim === 'email' && 'email_verified' in claims && claims.email_verified !== true) {
    return {error: `oidc: email not verified`};
  }
  const user: UserInfo = {name: usernamePrefix(o) + username, groups: []};
  if (o.groupsClaim && claims[o.groupsClaim] !== undefined) {
    const raw = claims[o.groupsClaim];
    const groups = typeof raw === 'string' ? [raw] : Array.isArray(raw) && raw.every((g) => typeof g === 'string') ? (raw as string[]) : undefined;
    if (!groups) return {error: `oidc: parse groups claim ${JSON.stringify(o.groupsClaim)}: not a string or a list of strings`};
    user.groups = groups.map((g) => (o.groupsPrefix ?? '') + g);
  }
  return {user};
}

/** GET a JSON document over HTTPS with the given agent, bounded in time. */
function fetchJson(url: string, agent: Agent, timeoutMs: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const req = get(url, {agent, timeout: timeoutMs, headers: {accept: 'application/json'}}, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${url}: HTTP ${res.statusCode}`));
        try {
          const body = JSON.parse(text);
          if (typeof body !== 'object' || body === null) throw new Error('not an object');
          resolve(body as Record<string, unknown>);
        } catch (error) {
          reject(new Error(`${url}: not a JSON document (${(error as Error).message})`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: timed out`)));
    req.on('error', reject);
  });
}

const DISCOVERY_TIMEOUT_MS = 10_000;
/** Upstream's clock skew allowance for ID tokens. */
const LEEWAY_SECONDS = 60;

/**
 * An issuer's signing keys: its discovery document (at `discoveryUrl`, by default under the issuer
 * URL) names the JWKS, which jose fetches and refreshes. Discovery happens on first use; a failure
 * is forgotten so that the next token tries again.
 */
export class IssuerKeys {
  private readonly agent: Agent;
  private keySet?: Promise<ReturnType<typeof createRemoteJWKSet>>;

  constructor(private readonly issuerUrl: string, caPem: string | undefined, private readonly discoveryUrl?: string) {
    // No keep-alive: discovery and key refreshes are rare, and no idle socket outlives the server.
    this.agent = new Agent({ca: caPem});
  }

  get(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    this.keySet ??= (async () => {
      const url = this.discoveryUrl ?? `${this.issuerUrl.replace(/\/$/, '')}/.well-known/openid-configuration`;
      const discovery = await fetchJson(url, this.agent, DISCOVERY_TIMEOUT_MS);
      if (discovery.issuer !== this.issuerUrl) throw new Error(`oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(this.issuerUrl)} got ${JSON.stringify(discovery.issuer)}`);
      if (typeof discovery.jwks_uri !== 'string' || !discovery.jwks_uri.startsWith('https://')) throw new Error('oidc: the discovery document has no https jwks_uri');
      return createRemoteJWKSet(new URL(discovery.jwks_uri), {agent: this.agent, timeoutDuration: DISCOVERY_TIMEOUT_MS});
    })();
    this.keySet.catch(() => (this.keySet = undefined));
    return this.keySet;
  }
}

/** Whether a compact JWT names `issuer` as its `iss` (unverified: it only routes the token to its issuer's authenticator). */
export function issuedBy(token: string, issuer: string): boolean {
  if (token.split('.').length !== 3) return false;
  try {
    return decodeJwt(token).iss === issuer;
  } catch {
    return false;
  }
}

/** Upstream's clock skew allowance for ID tokens. */
export const ID_TOKEN_LEEWAY_SECONDS = LEEWAY_SECONDS;

export class OidcAuthenticator implements TokenAuthenticator {
  private readonly keys: IssuerKeys;

  constructor(private readonly o: OidcOptions) {
    this.keys = new IssuerKeys(o.issuerUrl, o.caPem);
  }

  async authenticateToken(token: string): Promise<TokenResult | undefined> {
    if (!issuedBy(token, this.o.issuerUrl)) return undefined; // another issuer's token
    let payload: JWTPayload;
    try {
      payload = (await jwtVerify(token, await this.keys.get(), {
        issuer: this.o.issuerUrl,
        audience: this.o.clientId,
        algorithms: this.o.signingAlgs,
        requiredClaims: ['exp'],
        clockTolerance: LEEWAY_SECONDS,
        currentDate: this.o.now?.(),
      })).payload;
    } catch (error) {
      return {error: `oidc: verify token: ${(error as Error).message}`};
    }
    const result = oidcUser(payload, this.o);
    return 'error' in result ? result : {user: result.user, audiences: []};
  }
}
