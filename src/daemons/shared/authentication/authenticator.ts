/**
 * The request authenticator chain, in upstream's order and semantics: client certificate, then
 * bearer token (static token file, service account tokens, OIDC, webhook: the token union); the first to identify the user wins, and the user gets the
 * group `system:authenticated`. When none does: if any of them rejected the credentials it was
 * given (a bad certificate, an unknown token) the request is unauthorized even with anonymous
 * access on; otherwise it is anonymous when `--anonymous-auth`, else unauthorized.
 */
import type {X509Certificate} from 'node:crypto';
import {headerValue, type AuthenticationRequest} from './request.js';
import {bearerToken, type TokenTable} from './token-file.js';
import type {TokenAuthenticator} from './token-authenticator.js';
import type {RequestHeaderAuthenticator} from './request-header.js';
import {anonymousUser, withAuthenticatedGroup, type UserInfo} from './user.js';
import {ClientCertificateAuthenticator} from './x509.js';

export interface AuthenticatorConfig {
  /**
   * Accept requests no authenticator identified, as `system:anonymous`: everywhere (true), or only
   * on the listed paths (`--authentication-config`'s anonymous conditions).
   */
  anonymous: boolean | {paths: readonly string[]};
  /** Client CAs (`--client-ca-file` and the generated CA); none: no certificate authentication. */
  clientCas?: X509Certificate[];
  /** Static tokens (`--token-auth-file`), for the synchronous path (the agent). */
  tokens?: TokenTable;
  /** Every bearer token authenticator (static tokens first), for the asynchronous path. */
  tokenUnion?: TokenAuthenticator;
  /** The front proxy (`--requestheader-*`), asked first. */
  requestHeader?: RequestHeaderAuthenticator;
  /** The audiences requests are authenticated for (`--api-audiences`). */
  apiAudiences?: string[];
  now?: () => Date;
}

export interface AuthenticationOutcome {
  /** The identity; undefined means 401 Unauthorized. */
  user?: UserInfo;
  /** Why credentials were rejected, for the log (never sent to the client). */
  error?: string;
  /** The request's bearer token identified the user: the server should drop the Authorization header. */
  usedBearerToken?: boolean;
}

export class RequestAuthenticator {
  private readonly certificates: ClientCertificateAuthenticator | undefined;

  get requestHeader(): RequestHeaderAuthenticator | undefined {
    return this.config.requestHeader;
  }

  constructor(private readonly config: AuthenticatorConfig) {
    this.certificates = config.clientCas && config.clientCas.length > 0 ? new ClientCertificateAuthenticator(config.clientCas, config.now) : undefined;
  }

  /** The identity of a request, or undefined for 401 Unauthorized. */
  async authenticate(request: AuthenticationRequest): Promise<UserInfo | undefined> {
    return (await this.authenticateRequestAsync(request)).user;
  }

  /** As `authenticate`, with the reason of a rejection: certificates, then the token union. */
  async authenticateRequestAsync(request: AuthenticationRequest): Promise<AuthenticationOutcome> {
    if (!this.config.tokenUnion) return this.authenticateRequest(request);
    const errors: string[] = [];
    const byConnection = this.proxyOrCertificate(request, errors);
    if (byConnection) return {user: byConnection};

    const token = bearerToken(headerValue(request, 'authorization'));
    if (token !== undefined) {
      const result = await this.config.tokenUnion.authenticateToken(token, this.config.apiAudiences);
      if (result && 'user' in result) return {user: withAuthenticatedGroup(result.user), usedBearerToken: true};
      errors.push(result?.error ?? 'invalid bearer token');
    }
    if (errors.length > 0) return {error: errors.join('; ')};
    if (this.anonymousAllowed(request)) return {user: anonymousUser()};
    return {};
  }

  /** A front proxy's headers (its certificate vouching), else the client certificate; failures go to `errors`. */
  private proxyOrCertificate(request: AuthenticationRequest, errors: string[]): UserInfo | undefined {
    const byProxy = this.config.requestHeader?.authenticate(request);
    if (byProxy && 'user' in byProxy) return withAuthenticatedGroup(byProxy.user);
    if (byProxy) errors.push(byProxy.error);
    const byCertificate = this.certificates?.authenticate(request.socket);
    if (byCertificate && 'user' in byCertificate) return withAuthenticatedGroup(byCertificate.user);
    if (byCertificate) errors.push(byCertificate.error);
    return undefined;
  }

  private anonymousAllowed(request: AuthenticationRequest): boolean {
    const anonymous = this.config.anonymous;
    if (typeof anonymous === 'boolean') return anonymous;
    // Upstream compares the request's path, without its query, to each condition's path exactly.
    const path = (request.url ?? '').split('?')[0];
    return anonymous.paths.includes(path);
  }

  /** The synchronous chain of the local authenticators (certificates, static tokens), for the agent. */
  authenticateRequest(request: AuthenticationRequest): AuthenticationOutcome {
    const errors: string[] = [];
    const byConnection = this.proxyOrCertificate(request, errors);
    if (byConnection) return {user: byConnection};

    const token = this.config.tokens ? bearerToken(headerValue(request, 'authorization')) : undefined;
    if (token !== undefined) {
      const user = this.config.tokens!.tokens.get(token);
      if (user) return {user: withAuthenticatedGroup(user), usedBearerToken: true};
      errors.push('invalid bearer token');
    }

    if (errors.length > 0) return {error: errors.join('; ')};
    if (this.anonymousAllowed(request)) return {user: anonymousUser()};
    return {};
  }
}
