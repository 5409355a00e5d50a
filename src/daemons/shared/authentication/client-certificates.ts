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
import {RequestHeaderAuthenticator, type RequestHeaderOptions} from './request-header.js';

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

/** A front proxy's settings (`--requestheader-*`), its CA as PEM (from the file or the API server's config map). */
export type RequestHeaderSettings = Omit<RequestHeaderOptions, 'cas' | 'now'> & {caPem: string; source: string};

/**
 * Certificates, a front proxy's headers and anonymous requests: what a daemon knows without asking
 * the API server. The proxy's CA joins the CAs the TLS server asks client certificates of.
 */
export async function createLocalAuthentication(options: ClientCaOptions & {anonymousAuth: boolean; requestHeader?: RequestHeaderSettings; now?: () => Date}): Promise<LocalAuthentication> {
  const clientCas = await loadClientCas(options);
  let requestHeader: RequestHeaderAuthenticator | undefined;
  const proxyCas = options.requestHeader ? parseCertificateBundle(options.requestHeader.caPem, options.requestHeader.source) : [];
  if (options.requestHeader) {
    const {caPem: _pem, source: _source, ...settings} = options.requestHeader;
    requestHeader = new RequestHeaderAuthenticator({...settings, cas: proxyCas, now: options.now});
  }
  return {
    authenticator: new RequestAuthenticator({anonymous: options.anonymousAuth, clientCas, requestHeader, now: options.now}),
    clientCaPems: [...clientCas, ...proxyCas].map((cert) => cert.toString()),
  };
}
