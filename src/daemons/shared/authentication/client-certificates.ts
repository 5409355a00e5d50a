/**
 * Client-certificate authentication as every daemon's secure port sets it up: the CAs of
 * `--client-ca-file` (and the generated CA where a daemon has one), an authenticator over them, and
 * anonymous requests where allowed. The API server adds its token authenticators on top
 * (apiserver/authentication/config.ts); the controller manager and the agent use this alone.
 */
import {readFile} from 'node:fs/promises';
import type {X509Certificate} from 'node:crypto';
import {RequestAuthenticator} from './authenticator.js';
import {parseCertificateBundle} from './x509.js';

export interface ClientCaOptions {
  /** `--client-ca-file`. */
  clientCaFile?: string;
  /** A generated CA (PEM), e.g. the one that signs the admin orchconfig's client certificate. */
  generatedCaPem?: string;
}

/** Reads the client CAs; a missing or malformed file is an error naming `--client-ca-file`. */
export async function loadClientCas(options: ClientCaOptions): Promise<X509Certificate[]> {
  const cas: X509Certificate[] = [];
  if (options.clientCaFile) {
    let pem: string;
    try {
      pem = await readFile(options.clientCaFile, 'utf8');
    } catch (error) {
      throw new Error(`--client-ca-file: ${(error as Error).message}`);
    }
    cas.push(...parseCertificateBundle(pem, `--client-ca-file ${options.clientCaFile}`));
  }
  if (options.generatedCaPem) cas.push(...parseCertificateBundle(options.generatedCaPem, 'the generated CA'));
  return cas;
}

export interface LocalAuthentication {
  authenticator: RequestAuthenticator;
  /** The client CAs, for the TLS server's `ca` option (with `requestCert: true, rejectUnauthorized: false`). */
  clientCaPems: string[];
}

/** Certificates and anonymous requests only: what a daemon knows without asking the API server. */
export async function createLocalAuthentication(options: ClientCaOptions & {anonymousAuth: boolean; now?: () => Date}): Promise<LocalAuthentication> {
  const clientCas = await loadClientCas(options);
  return {
    authenticator: new RequestAuthenticator({anonymous: options.anonymousAuth, clientCas, now: options.now}),
    clientCaPems: clientCas.map((cert) => cert.toString()),
  };
}
