/**
 * Builds the authentication and authorization of the server from its options, reading the files
 * they name once at start. Every problem is an error naming the option and file.
 */
import {readFile} from 'node:fs/promises';
import {RequestAuthenticator} from '../../shared/authentication/authenticator.js';
import {loadTokenFile} from '../../shared/authentication/token-file.js';
import {parseCertificateBundle} from '../../shared/authentication/x509.js';
import {loadClientCas} from '../../shared/authentication/client-certificates.js';
import {resolveClientConfig} from '../../../client/orchconfig.js';
import {RestClient} from '../../../client/rest-client.js';
import {TOKEN_REVIEW_VERSIONS, WebhookTokenAuthenticator, type TokenReviewVersion} from '../../shared/authentication/webhook-token.js';
import {RequestHeaderAuthenticator, type RequestHeaderOptions} from '../../shared/authentication/request-header.js';
import {BootstrapTokenAuthenticator} from './bootstrap-token.js';
import type {ObjectGetter} from './serviceaccount/authenticator.js';
import {OidcAuthenticator, type OidcOptions} from './oidc.js';
import {ReloadingJwtAuthenticators} from './authentication-config-loader.js';
import {audienceAgnostic, CachedTokenAuthenticator, staticTokens, TOKEN_SUCCESS_CACHE_TTL_MS, TokenUnion, type TokenAuthenticator} from '../../shared/authentication/token-authenticator.js';
import {createServiceAccountTokens, type ServiceAccountOptions, type ServiceAccountSetup} from './serviceaccount/setup.js';

export interface AuthenticationOptions {
  anonymousAuth: boolean;
  /** `--client-ca-file`. */
  clientCaFile?: string;
  /** The generated CA (PEM), which signs the admin orchconfig's client certificate. */
  generatedCaPem?: string;
  /** `--token-auth-file`. */
  tokenAuthFile?: string;
  /** `--requestheader-*` (the CA file read here). */
  requestHeader?: Omit<RequestHeaderOptions, 'cas' | 'now'> & {clientCaFile: string};
  /** `--enable-bootstrap-token-auth`: where the bootstrap token secrets are read. */
  bootstrapTokens?: {getObject: ObjectGetter; log?: (message: string) => void};
  /** The success cache in front of the token union (default upstream's 10 s; 0: none). */
  tokenCacheTtlMs?: number;
  /** `--oidc-*` (caFile read here). */
  oidc?: Omit<OidcOptions, 'caPem' | 'now'> & {caFile?: string};
  /** `--authentication-config` (its JWT issuers replace `--oidc-*`; its anonymous section `--anonymous-auth`). */
  authenticationConfig?: {file: string; log: (message: string) => void; anonymousAuthSet?: boolean};
  /** `--authentication-token-webhook-*`. */
  tokenWebhook?: {configFile: string; version: string; cacheTtlMs: number; timeoutMs?: number};
  /** Service account tokens (the API server; the agent has none). */
  serviceAccounts?: ServiceAccountOptions;
  now?: () => Date;
}

export interface AuthenticationSetup {
  authenticator: RequestAuthenticator;
  /** The client CAs, for the TLS server's `ca` option (with `requestCert: true, rejectUnauthorized: false`). */
  clientCaPems: string[];
  /** Warnings to log (duplicate or empty tokens). */
  warnings: string[];
  /** The front proxy's settings and CA, for the extension-apiserver-authentication config map. */
  requestHeader?: {caPems: string[]; options: Omit<RequestHeaderOptions, 'cas' | 'now'>};
  /** The bearer token authenticators behind their cache (TokenReview asks them too). */
  tokenUnion: TokenAuthenticator;
  serviceAccounts?: ServiceAccountSetup;
  apiAudiences: string[];
  /** `--authentication-config`'s JWT authenticators (the server starts their reload). */
  structured?: ReloadingJwtAuthenticators;
}

export async function createAuthentication(options: AuthenticationOptions): Promise<AuthenticationSetup> {
  const clientCas = await loadClientCas(options);
  let requestHeader: RequestHeaderAuthenticator | undefined;
  let requestHeaderInfo: AuthenticationSetup['requestHeader'];
  if (options.requestHeader) {
    const {clientCaFile, ...rest} = options.requestHeader;
    let pem: string;
    try {
      pem = await readFile(clientCaFile, 'utf8');
    } catch (error) {
      throw new Error(`--requestheader-client-ca-file: ${(error as Error).message}`);
    }
    const cas = parseCertificateBundle(pem, `--requestheader-client-ca-file ${clientCaFile}`);
    if (rest.usernameHeaders.length === 0) throw new Error('--requestheader-username-headers: at least one header is needed with --requestheader-client-ca-file');
    requestHeader = new RequestHeaderAuthenticator({...rest, cas, now: options.now});
    requestHeaderInfo = {caPems: cas.map((c) => c.toString()), options: rest};
  }
  const tokens = options.tokenAuthFile ? await loadTokenFile(options.tokenAuthFile) : undefined;
  const warnings = [...(tokens?.warnings ?? [])];
  const serviceAccounts = options.serviceAccounts ? await createServiceAccountTokens({now: options.now, ...options.serviceAccounts}) : undefined;
  warnings.push(...(serviceAccounts?.warnings ?? []));
  const apiAudiences = serviceAccounts?.apiAudiences ?? [];
  // Upstream's order: token file, service account tokens, (bootstrap tokens, OIDC, webhook).
  const members: TokenAuthenticator[] = [];
  if (tokens) members.push(staticTokens(tokens, apiAudiences));
  if (serviceAccounts) members.push(serviceAccounts.authenticator);
  if (options.bootstrapTokens) {
    const bootstrap = new BootstrapTokenAuthenticator(options.bootstrapTokens.getObject, options.now, options.bootstrapTokens.log);
    members.push(audienceAgnostic(async (token) => {
      const result = await bootstrap.authenticateToken(token);
      return result && 'user' in result ? result.user : undefined;
    }, apiAudiences));
  }
  if (options.oidc) members.push(await loadOidc(options.oidc, apiAudiences, options.now));
  let structured: ReloadingJwtAuthenticators | undefined;
  if (options.authenticationConfig) {
    structured = await ReloadingJwtAuthenticators.load(options.authenticationConfig.file, options.authenticationConfig.log, options.now);
    const jwt = structured;
    // As ID tokens of --oidc-*: the token's audience is the issuer's, good for the server's own.
    members.push(audienceAgnostic(async (token) => {
      const result = await jwt.authenticateToken(token);
      if (!result) return undefined;
      return 'user' in result ? result.user : result;
    }, apiAudiences));
  }
  const anonymousSection = structured?.initial.anonymous;
  if (anonymousSection && options.authenticationConfig?.anonymousAuthSet) {
    throw new Error('--anonymous-auth flag cannot be set when anonymous field is configured in the authentication configuration file (--authentication-config)');
  }
  const anonymous = anonymousSection ? (anonymousSection.enabled ? (anonymousSection.paths.length > 0 ? {paths: anonymousSection.paths} : true) : false) : options.anonymousAuth;
  if (options.tokenWebhook) members.push(await loadTokenWebhook(options.tokenWebhook, apiAudiences));
  const union = new TokenUnion(members);
  const tokenUnion = new CachedTokenAuthenticator(union, options.tokenCacheTtlMs ?? TOKEN_SUCCESS_CACHE_TTL_MS);
  return {
    authenticator: new RequestAuthenticator({
      anonymous, clientCas, tokens, now: options.now,
      tokenUnion, apiAudiences, requestHeader,
    }),
    clientCaPems: clientCas.map((cert) => cert.toString()),
    requestHeader: requestHeaderInfo,
    warnings,
    tokenUnion,
    serviceAccounts,
    apiAudiences,
    structured,
  };
}

/** Upstream's webhook client timeout for token reviews. */
const TOKEN_WEBHOOK_TIMEOUT_MS = 10_000;

async function loadTokenWebhook(o: NonNullable<AuthenticationOptions['tokenWebhook']>, implicitAudiences: string[]): Promise<WebhookTokenAuthenticator> {
  if (!(TOKEN_REVIEW_VERSIONS as readonly string[]).includes(o.version)) {
    throw new Error(`--authentication-token-webhook-version: invalid value "${o.version}": accepted values are ${TOKEN_REVIEW_VERSIONS.join(', ')}`);
  }
  let client: RestClient;
  try {
    const config = await resolveClientConfig({orchconfig: o.configFile});
    client = new RestClient({config, timeoutMs: o.timeoutMs ?? TOKEN_WEBHOOK_TIMEOUT_MS, maxRetries: 0, userAgent: 'orch-apiserver/authentication-webhook'});
  } catch (error) {
    throw new Error(`--authentication-token-webhook-config-file ${o.configFile}: ${(error as Error).message}`);
  }
  return new WebhookTokenAuthenticator({
    version: o.version as TokenReviewVersion,
    cacheTtlMs: o.cacheTtlMs,
    implicitAudiences,
    post: async (review) => (await client.request({method: 'POST', path: '', body: review})).body,
  });
}

async function loadOidc(o: NonNullable<AuthenticationOptions['oidc']>, implicitAudiences: string[], now?: () => Date): Promise<TokenAuthenticator> {
  if (!o.issuerUrl.startsWith('https://')) throw new Error(`--oidc-issuer-url must be an https:// URL, got ${JSON.stringify(o.issuerUrl)}`);
  if (!o.clientId) throw new Error('--oidc-client-id: the client ID is required when the issuer URL is set');
  let caPem: string | undefined;
  if (o.caFile) {
    try {
      caPem = await readFile(o.caFile, 'utf8');
    } catch (error) {
      throw new Error(`--oidc-ca-file: ${(error as Error).message}`);
    }
    parseCertificateBundle(caPem, `--oidc-ca-file ${o.caFile}`);
  }
  const {caFile: _caFile, ...rest} = o;
  const oidc = new OidcAuthenticator({...rest, caPem, now});
  // ID tokens carry the client ID as their audience, not the server's: good for the server's own.
  return audienceAgnostic(async (token) => {
    const result = await oidc.authenticateToken(token);
    if (!result) return undefined;
    return 'user' in result ? result.user : result;
  }, implicitAudiences);
}
