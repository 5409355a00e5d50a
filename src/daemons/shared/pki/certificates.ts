/**
 * Generation of the server's certificates: a self-signed CA, serving certificates and client
 * certificates signed by it. Keys are EC P-256 in PKCS#8 PEM (`PRIVATE KEY`), which Node's tls and
 * Go clients (kubectl) both load. Pure apart from randomness; the clock is a parameter.
 */
import {randomBytes} from 'node:crypto';
import {isIP} from 'node:net';
import {decodePem, encodePem} from './pem.js';
import {EC_P256, loadX509, webcrypto} from './x509-lib.js';

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

export interface ServingNames {
  /** DNS names for the subjectAltName extension. */
  hosts: string[];
  /** IPv4/IPv6 addresses for the subjectAltName extension. */
  ips: string[];
}

export interface ClientSubject {
  /** Becomes the certificate's CommonName, which the x509 authenticator takes as the user name. */
  user: string;
  /** Become the certificate's Organization values, which the authenticator takes as groups. */
  groups?: string[];
}

interface ValidityOptions {
  now?: Date;
  validityDays?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
export const CA_COMMON_NAME = 'orch-ca';
export const CA_VALIDITY_DAYS = 3650;
/** One year, as upstream's generated serving and client certificates. */
export const LEAF_VALIDITY_DAYS = 365;
/** Backdating notBefore tolerates clock skew between this host and its clients. */
const BACKDATE_MS = 60 * 60 * 1000;

function validity({now = new Date(), validityDays}: ValidityOptions, defaultDays: number) {
  return {notBefore: new Date(now.getTime() - BACKDATE_MS), notAfter: new Date(now.getTime() + (validityDays ?? defaultDays) * DAY_MS)};
}

/** A positive 128-bit serial (the top bit cleared so DER does not read it as negative). */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] &= 0x7f;
  return bytes.toString('hex');
}

async function generateKeys(): Promise<webcrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(EC_P256, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
}

async function exportKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  return encodePem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', key));
}

async function importSigningKey(keyPem: string): Promise<webcrypto.CryptoKey> {
  const block = decodePem(keyPem).find((b) => b.label === 'PRIVATE KEY');
  if (!block) throw new Error('the CA key is not a PKCS#8 "PRIVATE KEY" PEM block');
  return webcrypto.subtle.importKey('pkcs8', block.der, EC_P256, false, ['sign']);
}

/** A self-signed CA certificate (CN `orch-ca`, 10 years, may sign leaf certificates only). */
export async function generateCa(options: ValidityOptions & {commonName?: string} = {}): Promise<KeyPairPem> {
  const x509 = await loadX509();
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: [{CN: [options.commonName ?? CA_COMMON_NAME]}],
    ...validity(options, CA_VALIDITY_DAYS),
    keys,
    signingAlgorithm: EC_P256,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {certPem: cert.toString('pem') + '\n', keyPem: await exportKeyPem(keys.privateKey)};
}

interface LeafSpec {
  subject: Array<Record<string, string[]>>;
  extendedKeyUsage: 'serverAuth' | 'clientAuth';
  altNames?: ServingNames;
}

async function generateLeaf(ca: KeyPairPem, spec: LeafSpec, options: ValidityOptions): Promise<KeyPairPem> {
  const x509 = await loadX509();
  const caCert = new x509.X509Certificate(ca.certPem);
  const [keys, signingKey] = await Promise.all([generateKeys(), importSigningKey(ca.keyPem)]);
  const usage = x509.ExtendedKeyUsage[spec.extendedKeyUsage];
  const extensions: InstanceType<typeof x509.Extension>[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([usage], false),
    await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
  ];
  if (spec.altNames) {
    const names = [
      ...spec.altNames.hosts.map((value) => ({type: 'dns' as const, value})),
      ...spec.altNames.ips.map((value) => ({type: 'ip' as const, value})),
    ];
    if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names, false));
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: spec.subject,
    issuer: caCert.subjectName,
    ...validity(options, LEAF_VALIDITY_DAYS),
    publicKey: keys.publicKey,
    signingKey,
    signingAlgorithm: EC_P256,
    extensions,
  });
  return {certPem: cert.toString('pem') + '\n', keyPem: await exportKeyPem(keys.privateKey)};
}

/** A serving certificate for the given DNS names and IP addresses, signed by the CA. */
export async function generateServingCertificate(
  ca: KeyPairPem,
  names: ServingNames,
  options: ValidityOptions & {commonName?: string} = {},
): Promise<KeyPairPem> {
  const badIp = names.ips.find((ip) => isIP(ip) === 0);
  if (badIp !== undefined) throw new Error(`not an IP address: "${badIp}"`);
  const commonName = options.commonName ?? names.hosts[0] ?? names.ips[0] ?? 'orch-apiserver';
  return generateLeaf(ca, {subject: [{CN: [commonName]}], extendedKeyUsage: 'serverAuth', altNames: names}, options);
}

/**
 * A client certificate: CN = user name, one O per group (e.g. CN `orch-admin`, O `system:masters`).
 * O comes before CN in the subject, as Go's crypto/x509 orders them.
 */
export async function generateClientCertificate(ca: KeyPairPem, subject: ClientSubject, options: ValidityOptions = {}): Promise<KeyPairPem> {
  const name = [...(subject.groups ?? []).map((group) => ({O: [group]})), {CN: [subject.user]}];
  return generateLeaf(ca, {subject: name, extendedKeyUsage: 'clientAuth'}, options);
}
