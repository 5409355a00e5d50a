/**
 * TLS option values: --tls-min-version and --tls-cipher-suites, with the names Go's crypto/tls uses
 * (component-base cli/flag/ciphersuites_flag.go), and the OpenSSL spelling Node's `tls` needs.
 */
import { ValueFormatError, splitList } from './value-error.js';

export const TLS_VERSIONS = ['VersionTLS10', 'VersionTLS11', 'VersionTLS12', 'VersionTLS13'] as const;
export type TlsVersionName = (typeof TLS_VERSIONS)[number];

/** Node's `minVersion` for each Go version name. */
export const NODE_TLS_VERSION: Readonly<Record<TlsVersionName, 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'>> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

/** Go's tls.CipherSuites(): IANA name -> OpenSSL name. TLS 1.3 suites keep their IANA name in OpenSSL. */
export const SECURE_CIPHER_SUITES: Readonly<Record<string, string>> = {
  TLS_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  // Deprecated spellings component-base keeps accepting.
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
};

/** Go's tls.InsecureCipherSuites(); accepted, as upstream does, but the operator asked for them. */
export const INSECURE_CIPHER_SUITES: Readonly<Record<string, string>> = {
  TLS_RSA_WITH_RC4_128_SHA: 'RC4-SHA',
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: 'DES-CBC3-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_RC4_128_SHA: 'ECDHE-ECDSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_RC4_128_SHA: 'ECDHE-RSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: 'ECDHE-RSA-DES-CBC3-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
};

/** Every accepted cipher suite name -> its OpenSSL name, for Node's tls `ciphers` option. */
export const CIPHER_SUITE_OPENSSL_NAMES: Readonly<Record<string, string>> = {
  ...SECURE_CIPHER_SUITES,
  ...INSECURE_CIPHER_SUITES,
};

/** The OpenSSL cipher string for Node's `ciphers` option (colon-separated, in the given order). */
export function toOpenSslCipherList(goNames: readonly string[]): string {
  return goNames.map((name) => CIPHER_SUITE_OPENSSL_NAMES[name]).join(':');
}

/**
 * The `ciphers` of a server without --tls-cipher-suites: Node's default list with TLS 1.3's suites
 * in Go's order on processors with AES instructions (crypto/tls defaultCipherSuitesTLS13:
 * AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305), which is what upstream's components and kubectl
 * settle on. OpenSSL's default puts AES-256-GCM first and a Node server's order decides; AES-128-GCM
 * costs about two thirds as much per byte (openssl speed, 16 KiB blocks), which counts on the bulk
 * streams (port-forward, exec, logs) that cross two TLS hops.
 */
export function defaultServingCiphers(nodeDefault: string): string {
  const tls13 = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];
  return [...tls13, ...nodeDefault.split(':').filter((c) => !tls13.includes(c))].join(':');
}

export function parseTlsVersion(raw: string): TlsVersionName {
  const text = raw.trim();
  if (!(TLS_VERSIONS as readonly string[]).includes(text)) throw new ValueFormatError('unknown TLS version');
  return text as TlsVersionName;
}

export function parseCipherSuites(raw: string, previous?: string[]): string[] {
  const names = splitList(raw);
  for (const name of names) {
    if (!Object.hasOwn(CIPHER_SUITE_OPENSSL_NAMES, name)) {
      throw new ValueFormatError(`cipher suite ${name} not supported or doesn't exist`);
    }
  }
  return [...(previous ?? []), ...names];
}

/**
 * --tls-curve-preferences: Go's crypto/tls CurveID numbers (the IANA TLS group codes) and the
 * OpenSSL group names Node's `ecdhCurve` takes. 4588 is X25519MLKEM768 (Go 1.24), which needs an
 * OpenSSL with ML-KEM (3.5 or later); tlsCurveProblems says so when the runtime lacks it.
 */
export const TLS_CURVES: Readonly<Record<number, string>> = {
  23: 'P-256', // CurveP256 (secp256r1)
  24: 'P-384', // CurveP384
  25: 'P-521', // CurveP521
  29: 'X25519',
  4588: 'X25519MLKEM768',
};

/** Node's `ecdhCurve` for the given IDs, in order (undefined: the runtime's default list). */
export function toEcdhCurve(ids: readonly number[] | undefined): string | undefined {
  return ids && ids.length > 0 ? ids.map((id) => TLS_CURVES[id]).join(':') : undefined;
}

/**
 * One message per ID that is not a known curve, naming the accepted ones, and per curve this
 * runtime's OpenSSL cannot offer (`supported` probes one group name).
 */
export function tlsCurveProblems(option: string, ids: readonly number[], supported: (name: string) => boolean): string[] {
  const accepted = Object.entries(TLS_CURVES).map(([id, name]) => `${id} (${name})`).join(', ');
  return ids.flatMap((id) => {
    const name = TLS_CURVES[id];
    if (!name) return [`--${option}: unknown curve ID ${id}; accepted: ${accepted}`];
    if (!supported(name)) return [`--${option}: curve ${id} (${name}) is not supported by this runtime's OpenSSL`];
    return [];
  });
}
