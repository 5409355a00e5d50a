/**
 * The service account token authenticator (upstream pkg/serviceaccount/jwt.go with its bound and
 * legacy validators): a JWT whose issuer is one of `--service-account-issuer` (bound tokens) or
 * the legacy issuer (token secrets), signed by one of the verification keys, alive, for the
 * wanted audiences, naming an account (and bound object) that still exists with the same uid.
 * Tokens of another issuer are not this authenticator's: the next one in the union gets them.
 */
import type {KeyObject} from 'node:crypto';
import {decodeJwt, decodeProtectedHeader, jwtVerify} from 'jose';
import {names} from '../../../../api/names.js';
import type {JsonObject} from '../../../../patch/types.js';
import type {TokenAuthenticator, TokenResult} from '../../../shared/authentication/token-authenticator.js';
import {keyIdOf, SERVICE_ACCOUNT_ALGORITHMS, signingAlgorithm} from '../../../shared/serving/jwt-keys.js';
import {matchAudiences, readBoundClaims, readLegacyClaims, serviceAccountUserInfo, tokenAudiences, type ServiceAccountInfo} from './claims.js';

/** Reads the objects tokens refer to; undefined when absent. */
export type ObjectGetter = (resource: 'serviceaccounts' | 'pods' | 'secrets' | 'nodes', namespace: string, name: string) => Promise<JsonObject | undefined>;

export interface ServiceAccountAuthenticatorConfig {
  /** `--service-account-issuer`: all of them are accepted. */
  issuers: string[];
  /** The verification keys (`--service-account-key-file`, or the fallbacks). */
  keys: KeyObject[];
  /** `--api-audiences` (or the issuers). */
  implicitAudiences: string[];
  /** `--service-account-lookup`: legacy tokens need their secret and account (bound tokens always do). */
  legacyLookup: boolean;
  getObject: ObjectGetter;
  now: () => Date;
  /** `--service-account-signing-endpoint`: the external signer's keys, refreshed when a token names an unknown key id. */
  external?: {keys(): readonly {kid: string; alg?: string; key: KeyObject}[]; refreshForUnknownKey(kid: string | undefined): Promise<boolean>};
}

/** Upstream's jwt leeway for clock skew between issuer and verifier. */
const LEEWAY_SECONDS = 60;

const metadata = (o: JsonObject | undefined) => (o?.metadata ?? {}) as {uid?: string; deletionTimestamp?: string};

export class ServiceAccountTokenAuthenticator implements TokenAuthenticator {
  private readonly keys: {kid: string; alg?: string; key: KeyObject}[];

  constructor(private readonly config: ServiceAccountAuthenticatorConfig) {
    this.keys = config.keys.map((key) => ({kid: keyIdOf(key), alg: signingAlgorithm(key), key}));
  }

  async authenticateToken(token: string, audiences?: string[]): Promise<TokenResult | undefined> {
    if (token.split('.').length !== 3) return undefined;
    let issuer: unknown;
    let kid: string | undefined;
    let alg: string | undefined;
    try {
      issuer = decodeJwt(token).iss;
      ({kid, alg} = decodeProtectedHeader(token));
    } catch {
      return undefined; // not a JWT: another authenticator's
    }
    const legacy = issuer === names().legacyTokenIssuer;
    if (!legacy && !this.config.issuers.includes(issuer as string)) return undefined;

    // A key id the external signer has not told us of yet: it may have rotated (upstream refetches).
    const external = this.config.external;
    if (external && kid !== undefined && !this.keys.some((k) => k.kid === kid) && !external.keys().some((k) => k.kid === kid)) await external.refreshForUnknownKey(kid);
    // Upstream tries every key that can check the token's algorithm; the key id only orders the attempts.
    const usable = [...this.keys, ...(external?.keys() ?? [])].filter((k) => k.alg === alg);
    const candidates = [...usable.filter((k) => k.kid === kid), ...usable.filter((k) => k.kid !== kid)];
    let payload: Record<string, unknown> | undefined;
    let failure = SERVICE_ACCOUNT_ALGORITHMS.includes(alg ?? '') ? 'invalid signature' : `unsupported algorithm ${JSON.stringify(alg ?? '')}`;
    for (const {key} of candidates) {
      try {
        const verified = await jwtVerify(token, key, {
          algorithms: SERVICE_ACCOUNT_ALGORITHMS,
          currentDate: this.config.now(),
          clockTolerance: LEEWAY_SECONDS,
          requiredClaims: legacy ? [] : ['exp'],
        });
        payload = verified.payload as Record<string, unknown>;
        break;
      } catch (error) {
        const code = (error as {code?: string}).code;
        failure = code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' || code === 'ERR_JWS_INVALID' ? 'invalid signature' : (error as Error).message;
        // A token that verified but failed a claim (expired...) will not do better with another key.
        if (code?.startsWith('ERR_JWT_')) break;
      }
    }
    if (!payload) return {error: `service account token: ${failure}`};

    const claims = legacy ? readLegacyClaims(payload) : readBoundClaims(payload);
    if ('error' in claims) return {error: claims.error};
    const audienceCheck = matchAudiences(tokenAudiences(payload), audiences, this.config.implicitAudiences);
    if ('error' in audienceCheck) return {error: audienceCheck.error};
    const problem = legacy ? await this.checkLegacy(claims.info, token) : await this.checkBound(claims.info);
    if (problem) return {error: problem};
    return {user: serviceAccountUserInfo(claims.info), audiences: audienceCheck.audiences};
  }

  /** The account and the bound objects still exist, with the uids the token names. */
  private async checkBound(info: ServiceAccountInfo): Promise<string | undefined> {
    const accountProblem = await this.checkAccount(info);
    if (accountProblem) return accountProblem;
    for (const [resource, ref] of [['pods', info.pod], ['secrets', info.secret]] as const) {
      if (!ref) continue;
      const object = await this.config.getObject(resource, info.namespace, ref.name);
      const kind = resource === 'pods' ? 'pod' : 'secret';
      if (!object) return `${kind} "${info.namespace}/${ref.name}" the token is bound to is not found`;
      const meta = metadata(object);
      if (meta.uid !== ref.uid) return `${kind} UID (${meta.uid}) does not match claim (${ref.uid})`;
      if (meta.deletionTimestamp) return `${kind} "${info.namespace}/${ref.name}" the token is bound to has been deleted`;
    }
    return undefined;
  }

  private async checkAccount(info: ServiceAccountInfo): Promise<string | undefined> {
    const account = await this.config.getObject('serviceaccounts', info.namespace, info.name);
    if (!account) return `service account "${info.namespace}/${info.name}" is not found`;
    const meta = metadata(account);
    if (meta.deletionTimestamp) return `service account "${info.namespace}/${info.name}" has been deleted`;
    if (meta.uid !== info.uid) return `service account UID (${meta.uid}) does not match claim (${info.uid})`;
    return undefined;
  }

  /** Upstream's legacy validator: the secret still holds this very token, and the account exists. */
  private async checkLegacy(info: ServiceAccountInfo, token: string): Promise<string | undefined> {
    if (!this.config.legacyLookup) return undefined;
    const secret = await this.config.getObject('secrets', info.namespace, info.legacySecretName as string);
    if (!secret) return `secret "${info.namespace}/${info.legacySecretName}" holding the token is not found`;
    if (metadata(secret).deletionTimestamp) return 'token has been invalidated';
    const data = (secret.data ?? {}) as Record<string, string>;
    if (Buffer.from(data.token ?? '', 'base64').toString('utf8') !== token) return 'token does not match the secret that holds it';
    return this.checkAccount(info);
  }
}
