/**
 * Issues bound service account tokens (upstream's TokenREST and jwtTokenGenerator): the lifetime
 * rules of `--service-account-max-token-expiration` and `--service-account-extend-token-expiration`,
 * and the signature with the `--service-account-signing-key-file` key under the first issuer.
 */
import {randomUUID, type KeyObject} from 'node:crypto';
import {SignJWT} from 'jose';
import {keyIdOf, signingAlgorithm} from '../../../shared/serving/jwt-keys.js';
import {boundClaims} from './claims.js';

/** Upstream's WarnOnlyBoundTokenExpirationSeconds: what the kubelet asks for; extended when allowed. */
export const WARN_ONLY_EXPIRATION_SECONDS = 60 * 60 + 7;
/** Upstream's ExpirationExtensionSeconds: a year. */
export const EXTENDED_EXPIRATION_SECONDS = 24 * 365 * 60 * 60;
export const DEFAULT_EXPIRATION_SECONDS = 3600;
export const MIN_EXPIRATION_SECONDS = 600;
export const MAX_EXPIRATION_SECONDS = 2 ** 32;

export interface TokenIssuerConfig {
  issuer: string;
  /** The key tokens are signed with, unless `sign` (an external signer) does it. */
  signingKey?: KeyObject;
  /** `--service-account-signing-endpoint`: signs the claims and returns the whole JWT. */
  sign?: (claims: Record<string, unknown>) => Promise<string>;
  /** The default audiences of a request that names none (`--api-audiences`, else the issuers). */
  audiences: string[];
  /** `--service-account-max-token-expiration` in seconds; 0: no limit. */
  maxExpirationSeconds: number;
  extendExpiration: boolean;
  /** The longest extended lifetime (an external signer's maximum); default a year. */
  extendedMaxSeconds?: number;
  now: () => Date;
}

export interface IssueRequest {
  namespace: string;
  serviceAccount: {name: string; uid: string};
  audiences: string[];
  expirationSeconds: number;
  pod?: {name: string; uid: string};
  secret?: {name: string; uid: string};
  node?: {name: string; uid: string};
}

/**
 * The lifetime a token gets, as upstream's TokenREST.Create: the maximum caps the request; then
 * the kubelet's 3607 s request for a pod, for the server's own audiences, becomes a year (with a
 * warn-after of the request) when extension is on.
 */
export function tokenLifetime(requested: number, extendable: boolean, c: Pick<TokenIssuerConfig, 'maxExpirationSeconds' | 'extendExpiration' | 'extendedMaxSeconds'>): {expirationSeconds: number; tokenSeconds: number; warnAfterSeconds?: number} {
  let expirationSeconds = requested;
  if (c.maxExpirationSeconds > 0 && expirationSeconds > c.maxExpirationSeconds) expirationSeconds = c.maxExpirationSeconds;
  if (c.extendExpiration && extendable && expirationSeconds === WARN_ONLY_EXPIRATION_SECONDS) {
    const extended = c.extendedMaxSeconds !== undefined ? Math.min(EXTENDED_EXPIRATION_SECONDS, c.extendedMaxSeconds) : Math.max(c.maxExpirationSeconds, EXTENDED_EXPIRATION_SECONDS);
    return {expirationSeconds, tokenSeconds: extended, warnAfterSeconds: expirationSeconds};
  }
  return {expirationSeconds, tokenSeconds: expirationSeconds};
}

export class TokenIssuer {
  private readonly alg: string;
  private readonly kid: string;

  constructor(readonly config: TokenIssuerConfig) {
    this.alg = config.signingKey ? (signingAlgorithm(config.signingKey) as string) : '';
    this.kid = config.signingKey ? keyIdOf(config.signingKey) : '';
  }

  get audiences(): string[] {
    return this.config.audiences;
  }

  async issue(request: IssueRequest): Promise<{token: string; expirationTimestamp: Date; expirationSeconds: number}> {
    const now = Math.floor(this.config.now().getTime() / 1000);
    const ownAudiences = request.audiences.every((a) => this.config.audiences.includes(a));
    const lifetime = tokenLifetime(request.expirationSeconds, Boolean(request.pod) && ownAudiences, this.config);
    const claims = boundClaims({
      issuer: this.config.issuer,
      audiences: request.audiences,
      namespace: request.namespace,
      serviceAccount: request.serviceAccount,
      pod: request.pod,
      secret: request.secret,
      node: request.node,
      issuedAt: now,
      expiresAt: now + lifetime.tokenSeconds,
      warnAfter: lifetime.warnAfterSeconds !== undefined ? now + lifetime.warnAfterSeconds : undefined,
      jti: randomUUID(),
    });
    const token = this.config.sign
      ? await this.config.sign(claims as Record<string, unknown>)
      : await new SignJWT(claims).setProtectedHeader({alg: this.alg, kid: this.kid}).sign(this.config.signingKey!);
    return {token, expirationTimestamp: new Date((now + lifetime.tokenSeconds) * 1000), expirationSeconds: lifetime.expirationSeconds};
  }
}
