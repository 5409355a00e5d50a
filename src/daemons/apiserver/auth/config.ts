/**
 * Builds the authentication and authorization of the server from its options, reading the files
 * they name once at start. Every problem is an error naming the option and file.
 */
import {readFile} from 'node:fs/promises';
import type {X509Certificate} from 'node:crypto';
import {RequestAuthenticator} from './authenticator.js';
import {loadTokenFile} from './token-file.js';
import {parseCertificateBundle} from './x509.js';

export interface AuthenticationOptions {
  anonymousAuth: boolean;
  /** `--client-ca-file`. */
  clientCaFile?: string;
  /** The generated CA (PEM), which signs the admin orchconfig's client certificate. */
  generatedCaPem?: string;
  /** `--token-auth-file`. */
  tokenAuthFile?: string;
  now?: () => Date;
}

export interface AuthenticationSetup {
  authenticator: RequestAuthenticator;
  /** The client CAs, for the TLS server's `ca` option (with `requestCert: true, rejectUnauthorized: false`). */
  clientCaPems: string[];
  /** Warnings to log (duplicate or empty tokens). */
  warnings: string[];
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
  return {
    authenticator: new RequestAuthenticator({anonymous: options.anonymousAuth, clientCas, tokens, now: options.now}),
    clientCaPems: clientCas.map((cert) => cert.toString()),
    warnings: tokens?.warnings ?? [],
  };
}
