/**
 * Builds the authentication and authorization of the server from its options, reading the files
 * they name once at start. Every problem is an error naming the option and file.
 */
import {readFile} from 'node:fs/promises';
import type {X509Certificate} from 'node:crypto';
import {RequestAuthenticator} from './authenticator.js';
import {loadTokenFile} from './token-file.js';
import {parseCertificateBundle} from './x509.js';
import {staticTokens, TokenUnion, type TokenAuthenticator} from './token-authenticator.js';
import {createServiceAccountTokens, type ServiceAccountOptions, type ServiceAccountSetup} from './serviceaccount/setup.js';

export interface AuthenticationOptions {
  anonymousAuth: boolean;
  /** `--client-ca-file`. */
  clientCaFile?: string;
  /** The generated CA (PEM), which signs the admin orchconfig's client certificate. */
  generatedCaPem?: string;
  /** `--token-auth-file`. */
  tokenAuthFile?: string;
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
  /** The bearer token authenticators (TokenReview asks them). */
  tokenUnion: TokenUnion;
  serviceAccounts?: ServiceAccountSetup;
  apiAudiences: string[];
}

export async function createAuthentication(options: AuthenticationOptions): Promise<AuthenticationSetup> {
  const clientCas: X509Certificate[] = [];
  if (options.clientCaFile) {
    let pem: string;
    try {
      pem = await readFile(options.clientCaFile, 'utf8');
    } catch (error) {
      throw new Error(`--client-ca-file: ${(error as Error).message}`);
    }
    clientCas.push(...parseCertificateBundle(pem, `--client-ca-file ${options.clientCaFile}`));
  }
  if (options.generatedCaPem) clientCas.push(...parseCertificateBundle(options.generatedCaPem, 'the generated CA'));
  const tokens = options.tokenAuthFile ? await loadTokenFile(options.tokenAuthFile) : undefined;
  const warnings = [...(tokens?.warnings ?? [])];
  const serviceAccounts = options.serviceAccounts ? await createServiceAccountTokens({now: options.now, ...options.serviceAccounts}) : undefined;
  warnings.push(...(serviceAccounts?.warnings ?? []));
  const apiAudiences = serviceAccounts?.apiAudiences ?? [];
  // Upstream's order: token file, service account tokens, (bootstrap tokens, OIDC, webhook).
  const members: TokenAuthenticator[] = [];
  if (tokens) members.push(staticTokens(tokens, apiAudiences));
  if (serviceAccounts) members.push(serviceAccounts.authenticator);
  const tokenUnion = new TokenUnion(members);
  return {
    authenticator: new RequestAuthenticator({
      anonymous: options.anonymousAuth, clientCas, tokens, now: options.now,
      tokenUnion: options.serviceAccounts ? tokenUnion : undefined, apiAudiences,
    }),
    clientCaPems: clientCas.map((cert) => cert.toString()),
    warnings,
    tokenUnion,
    serviceAccounts,
    apiAudiences,
  };
}
