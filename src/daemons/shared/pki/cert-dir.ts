/**
 * The cert directory (`--cert-dir`): the generated CA and serving certificate are created once and
 * reused on later starts while they are valid for the requested names; a serving certificate that
 * lacks a requested name, expires soon, or was not signed by the CA is regenerated; a CA that is
 * missing, expired or does not match its key causes everything to be regenerated.
 */
import {chmod, mkdir, readFile, rename, writeFile} from 'node:fs/promises';
import {join} from 'node:path';
import {generateCa, generateClientCertificate, generateServingCertificate} from './certificates.js';
import type {ClientSubject, KeyPairPem, ServingNames} from './certificates.js';
import {issuedBy, keyMatchesCertificate, missingNames, parseCertificate, subjectLines, validAt} from './inspect.js';

export const CA_CERT_FILE = 'ca.crt';
export const CA_KEY_FILE = 'ca.key';
export const SERVING_CERT_FILE = 'apiserver.crt';
export const SERVING_KEY_FILE = 'apiserver.key';

/** A leaf certificate this close to expiry is regenerated at start (leaves last a year). */
const LEAF_RENEW_MARGIN_MS = 30 * 24 * 60 * 60 * 1000;
/** A CA this close to expiry is regenerated (it would otherwise outlive its leaves' usefulness). */
const CA_RENEW_MARGIN_MS = 365 * 24 * 60 * 60 * 1000;

export interface StoredKeyPair extends KeyPairPem {
  certFile: string;
  keyFile: string;
  /** True when this start created the pair, false when it reused the files on disk. */
  generated: boolean;
}

export interface ServingCertificates {
  ca: StoredKeyPair;
  serving: StoredKeyPair;
  /** Why files were (re)generated, for the start log; empty when everything was reused. */
  reasons: string[];
}

export interface CertDirOptions {
  now?: () => Date;
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Writes through a temporary file and a rename, so a crash never leaves half a key behind. */
async function writeAtomically(path: string, data: string, mode: number): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}`;
  await writeFile(temporary, data, {mode});
  await chmod(temporary, mode); // the umask may have narrowed or the file pre-existed
  await rename(temporary, path);
}

async function storePair(certDir: string, certName: string, keyName: string, pair: KeyPairPem): Promise<StoredKeyPair> {
  const certFile = join(certDir, certName);
  const keyFile = join(certDir, keyName);
  await writeAtomically(keyFile, pair.keyPem, 0o600);
  await writeAtomically(certFile, pair.certPem, 0o644);
  return {...pair, certFile, keyFile, generated: true};
}

async function readPair(certDir: string, certName: string, keyName: string) {
  const certFile = join(certDir, certName);
  const keyFile = join(certDir, keyName);
  const [certPem, keyPem] = await Promise.all([readOptional(certFile), readOptional(keyFile)]);
  return {certFile, keyFile, certPem, keyPem};
}

async function ensureCa(certDir: string, now: Date, reasons: string[]): Promise<StoredKeyPair> {
  const stored = await readPair(certDir, CA_CERT_FILE, CA_KEY_FILE);
  const problem = checkCa(stored.certPem, stored.keyPem, now);
  if (!problem) return {certFile: stored.certFile, keyFile: stored.keyFile, certPem: stored.certPem!, keyPem: stored.keyPem!, generated: false};
  reasons.push(`CA: ${problem}`);
  return storePair(certDir, CA_CERT_FILE, CA_KEY_FILE, await generateCa({now}));
}

function checkCa(certPem: string | undefined, keyPem: string | undefined, now: Date): string | undefined {
  if (certPem === undefined || keyPem === undefined) return 'not found';
  const cert = parseCertificate(certPem);
  if (!cert) return 'unreadable certificate';
  if (!cert.ca) return 'not a CA certificate';
  if (!validAt(cert, now, CA_RENEW_MARGIN_MS)) return 'expired or expiring';
  if (!keyMatchesCertificate(keyPem, cert)) return 'key does not match certificate';
  return undefined;
}

function checkLeaf(certPem: string | undefined, keyPem: string | undefined, caPem: string, now: Date): {problem?: string; cert?: ReturnType<typeof parseCertificate>} {
  if (certPem === undefined || keyPem === undefined) return {problem: 'not found'};
  const cert = parseCertificate(certPem);
  const ca = parseCertificate(caPem)!;
  if (!cert) return {problem: 'unreadable certificate'};
  if (!issuedBy(cert, ca)) return {problem: 'not signed by the current CA'};
  if (!validAt(cert, now, LEAF_RENEW_MARGIN_MS)) return {problem: 'expired or expiring'};
  if (!keyMatchesCertificate(keyPem, cert)) return {problem: 'key does not match certificate'};
  return {cert};
}

/**
 * Makes sure `certDir` holds a CA (`ca.crt`, `ca.key`) and a serving certificate signed by it
 * (`apiserver.crt`, `apiserver.key`) valid for every requested name; keys are written 0600.
 */
export async function ensureServingCertificates(certDir: string, names: ServingNames, options: CertDirOptions = {}): Promise<ServingCertificates> {
  const now = (options.now ?? (() => new Date()))();
  await mkdir(certDir, {recursive: true, mode: 0o700});
  const reasons: string[] = [];
  const ca = await ensureCa(certDir, now, reasons);
  const stored = await readPair(certDir, SERVING_CERT_FILE, SERVING_KEY_FILE);
  let {problem, cert} = checkLeaf(stored.certPem, stored.keyPem, ca.certPem, now);
  if (!problem && cert) {
    const missing = missingNames(cert, names);
    if (missing.length > 0) problem = `lacks ${missing.join(', ')}`;
  }
  if (!problem) {
    const serving = {certFile: stored.certFile, keyFile: stored.keyFile, certPem: stored.certPem!, keyPem: stored.keyPem!, generated: false};
    return {ca, serving, reasons};
  }
  reasons.push(`serving certificate: ${problem}`);
  const serving = await storePair(certDir, SERVING_CERT_FILE, SERVING_KEY_FILE, await generateServingCertificate(ca, names, {now}));
  return {ca, serving, reasons};
}

/**
 * Makes sure `certDir` holds a client certificate `<baseName>.crt`/`.key` for the subject, signed by
 * the CA; reused while valid and still naming the same user and groups.
 */
export async function ensureClientCertificate(
  certDir: string,
  baseName: string,
  ca: KeyPairPem,
  subject: ClientSubject,
  options: CertDirOptions = {},
): Promise<StoredKeyPair> {
  const now = (options.now ?? (() => new Date()))();
  await mkdir(certDir, {recursive: true, mode: 0o700});
  const certName = `${baseName}.crt`;
  const keyName = `${baseName}.key`;
  const stored = await readPair(certDir, certName, keyName);
  const {problem, cert} = checkLeaf(stored.certPem, stored.keyPem, ca.certPem, now);
  const expectedSubject = [...(subject.groups ?? []).map((g) => `O=${g}`), `CN=${subject.user}`];
  if (!problem && cert && subjectLines(cert).join('\n') === expectedSubject.join('\n')) {
    return {certFile: stored.certFile, keyFile: stored.keyFile, certPem: stored.certPem!, keyPem: stored.keyPem!, generated: false};
  }
  return storePair(certDir, certName, keyName, await generateClientCertificate(ca, subject, {now}));
}
