/**
 * Service account tokens from the server's options, read once at start; every problem is an error
 * naming the option and file.
 *
 * Upstream requires --service-account-issuer and --service-account-signing-key-file. orch keeps a
 * zero-configuration start: without a signing key it generates one (ECDSA P-256) into the cert
 * dir as `sa.key` once and reuses it (as kubeadm does), and without an issuer it uses the in-cluster
 * address of the default service (`https://<defaultService>.default.svc.cluster.local`, kubeadm's
 * default). Verification keys are --service-account-key-file, else --tls-private-key-file when it
 * is RSA or ECDSA (upstream's fallback), else the signing key itself.
 */
import {createPublicKey, generateKeyPairSync, type KeyObject} from 'node:crypto';
import {readFile, writeFile} from 'node:fs/promises';
import {join} from 'node:path';
import {names} from '../../../../api/names.js';
import {privateKeyFromPem, publicKeysFromPem, signingAlgorithm} from '../../../shared/serving/jwt-keys.js';
import {ServiceAccountTokenAuthenticator, type ObjectGetter} from './authenticator.js';
import {TokenIssuer} from './issuer.js';
import {ExternalSigner} from './external-signer.js';

export interface ServiceAccountOptions {
  issuers?: string[];
  keyFiles?: string[];
  signingKeyFile?: string;
  tlsPrivateKeyFile?: string;
  /** `--api-audiences`. */
  apiAudiences?: string[];
  lookup: boolean;
  maxTokenExpirationSeconds: number;
  extendTokenExpiration: boolean;
  jwksUri?: string;
  /** `--service-account-signing-endpoint`: the external signer's unix socket. */
  signingEndpoint?: string;
  certDir: string;
  getObject: ObjectGetter;
  now?: () => Date;
}

export interface ServiceAccountSetup {
  issuer: TokenIssuer;
  authenticator: ServiceAccountTokenAuthenticator;
  /** The audiences requests are authenticated for (`--api-audiences`, else the issuers). */
  apiAudiences: string[];
  issuers: string[];
  verificationKeys: KeyObject[];
  /** The keys the issuer discovery document publishes now (the external signer's may change). */
  discoveryKeys(): Array<KeyObject | {key: KeyObject; kid: string}>;
  /** The external signer, closed when the server stops. */
  externalSigner?: ExternalSigner;
  warnings: string[];
}

export const GENERATED_KEY_FILE = 'sa.key';

export function defaultIssuer(): string {
  return `https://${names().defaultService}.default.svc.cluster.local`;
}

async function readNamed(option: string, file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`--${option} ${file}: ${(error as Error).message}`);
  }
}

/** The generated signing key of the cert dir, made on first start. */
async function generatedSigningKey(certDir: string): Promise<string> {
  const file = join(certDir, GENERATED_KEY_FILE);
  try {
    return await readFile(file, 'utf8');
  } catch {
    const {privateKey} = generateKeyPairSync('ec', {namedCurve: 'prime256v1'});
    const pem = privateKey.export({type: 'pkcs8', format: 'pem'}) as string;
    await writeFile(file, pem, {mode: 0o600, flag: 'wx'}).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    return readFile(file, 'utf8');
  }
}

export async function createServiceAccountTokens(o: ServiceAccountOptions): Promise<ServiceAccountSetup> {
  const warnings: string[] = [];
  const issuers = o.issuers && o.issuers.length > 0 ? o.issuers : [defaultIssuer()];
  for (const issuer of issuers) if (issuer.includes(':') && !/^https?:\/\//.test(issuer) && !issuer.startsWith('urn:')) {
    throw new Error(`--service-account-issuer: ${JSON.stringify(issuer)} must be a URL (https://...) or a string without a colon`);
  }
  if (o.signingEndpoint) return externalServiceAccountTokens(o, issuers);

  let signingKey: KeyObject;
  const signingFile = o.signingKeyFile ?? join(o.certDir, GENERATED_KEY_FILE);
  const signingPem = o.signingKeyFile ? await readNamed('service-account-signing-key-file', o.signingKeyFile) : await generatedSigningKey(o.certDir);
  try {
    signingKey = privateKeyFromPem(signingPem);
  } catch (error) {
    throw new Error(`--service-account-signing-key-file ${signingFile}: ${(error as Error).message}`);
  }

  const verificationKeys: KeyObject[] = [];
  if (o.keyFiles && o.keyFiles.length > 0) {
    for (const file of o.keyFiles) {
      const pem = await readNamed('service-account-key-file', file);
      try {
        verificationKeys.push(...publicKeysFromPem(pem));
      } catch (error) {
        throw new Error(`--service-account-key-file ${file}: ${(error as Error).message}`);
      }
    }
  } else if (o.tlsPrivateKeyFile && o.signingKeyFile) {
    try {
      const tlsKey = privateKeyFromPem(await readNamed('tls-private-key-file', o.tlsPrivateKeyFile));
      if (signingAlgorithm(tlsKey)) verificationKeys.push(createPublicKey(tlsKey));
    } catch (error) {
      warnings.push(`--tls-private-key-file cannot verify service account tokens: ${(error as Error).message}`);
    }
  }
  const signingPublic = createPublicKey(signingKey);
  const verifiesOwn = verificationKeys.some((k) => k.equals(signingPublic));
  if (verificationKeys.length === 0) verificationKeys.push(signingPublic);
  else if (!verifiesOwn) warnings.push('the service account signing key is not among the verification keys (--service-account-key-file): tokens this server issues will not authenticate');

  const apiAudiences = o.apiAudiences && o.apiAudiences.length > 0 ? o.apiAudiences : issuers;
  const now = o.now ?? (() => new Date());
  return {
    issuer: new TokenIssuer({issuer: issuers[0], signingKey, audiences: apiAudiences, maxExpirationSeconds: o.maxTokenExpirationSeconds, extendExpiration: o.extendTokenExpiration, now}),
    authenticator: new ServiceAccountTokenAuthenticator({issuers, keys: verificationKeys, implicitAudiences: apiAudiences, legacyLookup: o.lookup, getObject: o.getObject, now}),
    apiAudiences,
    issuers,
    verificationKeys,
    discoveryKeys: () => verificationKeys,
    warnings,
  };
}

/**
 * Tokens signed by an external signer (upstream's ExternalJWTSigner): it holds the keys, so the key
 * files may not be given; the longest lifetime is the signer's unless the option is lower.
 */
async function externalServiceAccountTokens(o: ServiceAccountOptions, issuers: string[]): Promise<ServiceAccountSetup> {
  if (o.signingKeyFile || (o.keyFiles && o.keyFiles.length > 0)) {
    throw new Error('--service-account-signing-endpoint cannot be used with --service-account-signing-key-file or --service-account-key-file: the external signer holds the keys');
  }
  const signer = await ExternalSigner.connect(o.signingEndpoint!, () => undefined);
  let maxExpirationSeconds = o.maxTokenExpirationSeconds;
  if (maxExpirationSeconds > signer.maxTokenExpirationSeconds) {
    signer.close();
    throw new Error(`--service-account-max-token-expiration (${maxExpirationSeconds}s) is longer than the external signer's maximum (${signer.maxTokenExpirationSeconds}s)`);
  }
  if (maxExpirationSeconds <= 0) maxExpirationSeconds = signer.maxTokenExpirationSeconds;
  const apiAudiences = o.apiAudiences && o.apiAudiences.length > 0 ? o.apiAudiences : issuers;
  const now = o.now ?? (() => new Date());
  const discoveryKeys = () => signer.keys().filter((k) => !k.excludeFromDiscovery).map((k) => ({key: k.key, kid: k.kid}));
  return {
    issuer: new TokenIssuer({
      issuer: issuers[0], sign: (claims) => signer.sign(claims), audiences: apiAudiences, maxExpirationSeconds,
      // The extended lifetime is at most the signer's (upstream: min(1 year, max_token_expiration_seconds)).
      extendExpiration: o.extendTokenExpiration, extendedMaxSeconds: signer.maxTokenExpirationSeconds, now,
    }),
    authenticator: new ServiceAccountTokenAuthenticator({issuers, keys: [], external: signer, implicitAudiences: apiAudiences, legacyLookup: o.lookup, getObject: o.getObject, now}),
    apiAudiences,
    issuers,
    verificationKeys: signer.keys().map((k) => k.key),
    discoveryKeys,
    externalSigner: signer,
    warnings: [],
  };
}
