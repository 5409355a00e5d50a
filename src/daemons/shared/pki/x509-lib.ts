/**
 * Lazy access to @peculiar/x509. Only certificate generation needs it (a few hundred kilobytes of
 * ASN.1 schemas), so it is imported on first use and every other path of the program, including
 * reading and checking existing certificates with node:crypto, never pays for loading it.
 */
import {webcrypto} from 'node:crypto';

type X509Module = typeof import('@peculiar/x509');

let loading: Promise<X509Module> | undefined;

export function loadX509(): Promise<X509Module> {
  loading ??= (async () => {
    // The library's dependency injection (tsyringe) refuses to load without the Reflect metadata
    // API, so the polyfill must be evaluated first; sequential dynamic imports guarantee the order.
    await import('reflect-metadata');
    const loaded = await import('@peculiar/x509');
    // Bundlers that pick the package's CommonJS build hand its exports over as `default`.
    const x509 = (loaded.cryptoProvider ? loaded : (loaded as unknown as {default: X509Module}).default) as X509Module;
    // Node's webcrypto is a full WebCrypto implementation; the library's `Crypto` type is the DOM one.
    x509.cryptoProvider.set(webcrypto as never);
    return x509;
  })();
  return loading;
}

/** ECDSA P-256 with SHA-256: fast to generate (RSA-2048 takes ~100 ms a key) and accepted by Go and OpenSSL clients. */
export const EC_P256 = {name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256'} as const;

export {webcrypto};
