/**
 * Client-certificate authentication, as upstream's x509 authenticator: the peer's certificate must
 * chain to one of the client CAs (`--client-ca-file` and the generated CA), be within its validity
 * period and allow client authentication; the user is its CommonName and the groups its
 * Organization values. The chain is verified here rather than trusting `socket.authorized`, so the
 * decision does not depend on how the TLS server was configured (the handshake itself already
 * proved the client holds the certificate's key).
 */
import {X509Certificate} from 'node:crypto';
import type {DetailedPeerCertificate} from 'node:tls';
import {decodePemBlocks} from '../pki/pem.js';
import type {UserInfo} from './user.js';

const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';
const ANY_EXTENDED_KEY_USAGE_OID = '2.5.29.37.0';
const MAX_CHAIN_LENGTH = 10;

export type CertificateAuthResult = {user: UserInfo} | {error: string} | undefined;

/** Parses a PEM bundle (a CA file) into certificates; throws naming the source when it has none. */
export function parseCertificateBundle(pem: string, source: string): X509Certificate[] {
  const ders = decodePemBlocks(pem, 'CERTIFICATE');
  if (ders.length === 0) throw new Error(`${source}: no certificates found (expected PEM "CERTIFICATE" blocks)`);
  return ders.map((der, i) => {
    try {
      return new X509Certificate(der);
    } catch (error) {
      throw new Error(`${source}: certificate ${i + 1}: ${(error as Error).message}`);
    }
  });
}

function validAt(cert: X509Certificate, now: Date): boolean {
  return new Date(cert.validFrom).getTime() <= now.getTime() && now.getTime() <= new Date(cert.validTo).getTime();
}

function signs(issuer: X509Certificate, cert: X509Certificate): boolean {
  return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
}

/** Why the chain does not verify, or undefined when it does. Intermediates are what the client sent. */
export function verifyClientChain(leaf: X509Certificate, intermediates: X509Certificate[], roots: X509Certificate[], now: Date): string | undefined {
  if (!validAt(leaf, now)) return `x509: certificate has expired or is not yet valid: current time ${now.toISOString()} is outside ${leaf.validFrom} - ${leaf.validTo}`;
  // Node's `keyUsage` is the extended key usage list; no extension means any usage (as in Go).
  const usages = leaf.keyUsage;
  if (usages && !usages.includes(CLIENT_AUTH_OID) && !usages.includes(ANY_EXTENDED_KEY_USAGE_OID)) {
    return 'x509: certificate specifies an incompatible key usage';
  }
  let current = leaf;
  for (let depth = 0; depth < MAX_CHAIN_LENGTH; depth++) {
    if (roots.some((root) => validAt(root, now) && signs(root, current))) return undefined;
    const next = intermediates.find((candidate) => candidate !== current && candidate.ca && validAt(candidate, now) && signs(candidate, current));
    if (!next) break;
    current = next;
  }
  return 'x509: certificate signed by unknown authority';
}

/** Node gives a subject attribute as a string, or an array when the name repeats it. */
function attributeValues(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** The raw DER certificates a client sent: its own first, then the issuers Node linked to it. */
function peerChain(peer: DetailedPeerCertificate): Buffer[] {
  const chain: Buffer[] = [];
  let current: DetailedPeerCertificate | undefined = peer;
  while (current?.raw && chain.length < MAX_CHAIN_LENGTH) {
    chain.push(current.raw);
    if (current.issuerCertificate === current) break; // a self-signed root links to itself
    current = current.issuerCertificate;
  }
  return chain;
}

interface TlsSocketLike {
  getPeerCertificate(detailed: true): DetailedPeerCertificate;
}

function isTlsSocket(socket: unknown): socket is TlsSocketLike {
  return typeof (socket as TlsSocketLike | undefined)?.getPeerCertificate === 'function';
}

export class ClientCertificateAuthenticator {
  /** Results per connection: a connection keeps its certificate, so verify it once. */
  private readonly cache = new WeakMap<object, {result: CertificateAuthResult; until: number}>();

  constructor(
    private readonly roots: X509Certificate[],
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** undefined: no client certificate (or no CommonName), so another authenticator may decide. */
  authenticate(socket: unknown): CertificateAuthResult {
    if (!isTlsSocket(socket) || this.roots.length === 0) return undefined;
    const now = this.now();
    const cached = this.cache.get(socket);
    if (cached && now.getTime() <= cached.until) return cached.result;
    const peer = socket.getPeerCertificate(true);
    const {result, until} = this.authenticatePeer(peer, now);
    this.cache.set(socket, {result, until});
    return result;
  }

  /** Verifies a peer certificate as Node's TLS socket reports it. */
  authenticatePeer(peer: DetailedPeerCertificate | Record<string, never>, now: Date = this.now()): {result: CertificateAuthResult; until: number} {
    const chain = 'raw' in peer && peer.raw ? peerChain(peer as DetailedPeerCertificate) : [];
    if (chain.length === 0) return {result: undefined, until: Infinity};
    let certificates: X509Certificate[];
    try {
      certificates = chain.map((der) => new X509Certificate(der));
    } catch (error) {
      return {result: {error: `unreadable client certificate: ${(error as Error).message}`}, until: Infinity};
    }
    const [leaf, ...intermediates] = certificates;
    const problem = verifyClientChain(leaf, intermediates, this.roots, now);
    if (problem) {
      return {result: {error: `verifying certificate SN=${leaf.serialNumber}, subject="${leaf.subject.replace(/\n/g, ',')}" failed: ${problem}`}, until: Infinity};
    }
    const subject = (peer as DetailedPeerCertificate).subject ?? {};
    const [commonName] = attributeValues(subject.CN);
    // Upstream: a certificate without a CommonName identifies nobody, and is no error either.
    const result = commonName ? {user: {name: commonName, groups: attributeValues(subject.O)}} : undefined;
    return {result, until: new Date(leaf.validTo).getTime()};
  }
}
