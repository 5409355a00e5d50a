/**
 * The main server's TLS: the certificate from --tls-cert-file/--tls-private-key-file or, without
 * them, a pair generated once into --cert-dir (a CA of its own signing the serving certificate, the
 * API server's code); --tls-min-version and --tls-cipher-suites; and the client CAs of
 * --client-ca-file, asked for but not required in the handshake so that the authenticator, not the
 * TLS layer, decides (anonymous requests stay possible).
 */
import {readFile} from 'node:fs/promises';
import type {ServerOptions} from 'node:https';
import {isIP} from 'node:net';
import {hostname as osHostname} from 'node:os';
import {ensureServingCertificates} from '../../shared/pki/cert-dir.js';
import type {ServingNames} from '../../shared/pki/certificates.js';
import {DEFAULT_CIPHERS} from 'node:tls';
import {NODE_TLS_VERSION, defaultServingCiphers, toOpenSslCipherList} from '../../../options/types.js';
import type {AgentServerConfig} from './types.js';

export interface ServingCertificate {
  cert: string;
  key: string;
  /** Why the pair in the cert dir was (re)generated, for the start log; empty otherwise. */
  generatedBecause: string[];
}

const UNSPECIFIED = new Set(['', '0.0.0.0', '::']);

/** The generated certificate names the host (as upstream's) and loopback, where tests and local tools connect. */
export function generatedCertificateNames(hostname: string, address: string): ServingNames {
  const names = [hostname, 'localhost', ...(UNSPECIFIED.has(address) ? [] : [address]), '127.0.0.1', '::1'];
  const hosts = [...new Set(names.filter((n) => isIP(n) === 0).map((n) => n.toLowerCase()))];
  const ips = [...new Set(names.filter((n) => isIP(n) !== 0))];
  return {hosts, ips};
}

async function readNamed(option: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`${option}: ${(error as Error).message}`);
  }
}

export async function loadServingCertificate(config: AgentServerConfig): Promise<ServingCertificate> {
  if (config.tlsCertFile && config.tlsPrivateKeyFile) {
    const [cert, key] = await Promise.all([readNamed('--tls-cert-file', config.tlsCertFile), readNamed('--tls-private-key-file', config.tlsPrivateKeyFile)]);
    return {cert, key, generatedBecause: []};
  }
  if (config.tlsCertFile || config.tlsPrivateKeyFile) {
    throw new Error('--tls-cert-file and --tls-private-key-file must be given together');
  }
  const names = generatedCertificateNames(config.hostname ?? osHostname(), config.address);
  const generated = await ensureServingCertificates(config.certDir, names);
  // The chain includes the CA so that a client trusting <cert-dir>/ca.crt verifies the server.
  return {cert: generated.serving.certPem + generated.ca.certPem, key: generated.serving.keyPem, generatedBecause: generated.reasons};
}

export function tlsServerOptions(config: AgentServerConfig, certificate: ServingCertificate, clientCaPems: string[]): ServerOptions {
  const options: ServerOptions = {cert: certificate.cert, key: certificate.key};
  if (config.tlsMinVersion) options.minVersion = NODE_TLS_VERSION[config.tlsMinVersion];
  options.ciphers = config.tlsCipherSuites && config.tlsCipherSuites.length > 0 ? toOpenSslCipherList(config.tlsCipherSuites) : defaultServingCiphers(DEFAULT_CIPHERS);
  if (clientCaPems.length > 0) {
    options.ca = clientCaPems;
    options.requestCert = true;
    options.rejectUnauthorized = false;
  }
  return options;
}
