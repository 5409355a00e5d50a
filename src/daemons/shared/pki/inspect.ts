/**
 * Checks of existing certificates with node:crypto only (no ASN.1 library), so reusing the
 * certificates of a previous start costs a millisecond. Pure: the time is a parameter.
 */
import {X509Certificate, createPrivateKey, createPublicKey} from 'node:crypto';
import type {ServingNames} from './certificates.js';

/** Parses a certificate PEM, or undefined when it is not one. */
export function parseCertificate(pem: string): X509Certificate | undefined {
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

/** Whether the private key (PEM) is the one of the certificate. */
export function keyMatchesCertificate(keyPem: string, cert: X509Certificate): boolean {
  try {
    const publicOfKey = createPublicKey(createPrivateKey(keyPem)).export({type: 'spki', format: 'der'});
    return publicOfKey.equals(cert.publicKey.export({type: 'spki', format: 'der'}));
  } catch {
    return false;
  }
}

/** Whether `now + margin` falls inside the certificate's validity window. */
export function validAt(cert: X509Certificate, now: Date, marginMs = 0): boolean {
  return new Date(cert.validFrom).getTime() <= now.getTime() && now.getTime() + marginMs < new Date(cert.validTo).getTime();
}

/** Whether `cert` was signed by `ca` (names and signature). */
export function issuedBy(cert: X509Certificate, ca: X509Certificate): boolean {
  return cert.checkIssued(ca) && cert.verify(ca.publicKey);
}

/** The requested names the certificate's subjectAltName lacks (empty: it covers them all). */
export function missingNames(cert: X509Certificate, names: ServingNames): string[] {
  const missing: string[] = [];
  for (const host of names.hosts) {
    // Exact matches only: a wildcard or a CN match would not be what we generated.
    if (cert.checkHost(host, {subject: 'never', wildcards: false}) === undefined) missing.push(host);
  }
  for (const ip of names.ips) if (cert.checkIP(ip) === undefined) missing.push(ip);
  return missing;
}

/** The subject's relative distinguished names as Node prints them, one `KEY=value` a line. */
export function subjectLines(cert: X509Certificate): string[] {
  return cert.subject.split('\n').filter((line) => line !== '');
}
