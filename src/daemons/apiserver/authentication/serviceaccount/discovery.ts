/**
 * Service account issuer discovery (upstream's serviceaccount/openidmetadata.go): the OpenID
 * provider configuration at `/.well-known/openid-configuration` and the verification keys at
 * `/openid/v1/jwks`, so that other systems can verify the tokens this server issues. Built once:
 * the keys do not change while the server runs.
 */
import type {KeyObject} from 'node:crypto';
import {exportJWK} from 'jose';
import {keyIdOf, signingAlgorithm} from '../../../shared/serving/jwt-keys.js';

export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';

export interface IssuerDiscovery {
  configuration: Record<string, unknown>;
  jwks: {keys: Record<string, unknown>[]};
}

/** The documents; `jwksUri`: `--service-account-jwks-uri`, else this server's external URL + JWKS_PATH. */
export async function issuerDiscovery(issuer: string, jwksUri: string, keys: Array<KeyObject | {key: KeyObject; kid: string}>): Promise<IssuerDiscovery> {
  // A key comes with its id when an external signer named it (its tokens carry that id).
  const jwks = await Promise.all(
    keys.map(async (entry) => {
      const {key, kid} = 'kid' in entry ? entry : {key: entry, kid: keyIdOf(entry)};
      return {use: 'sig', ...(await exportJWK(key)), kid, alg: signingAlgorithm(key)};
    }),
  );
  const algorithms = [...new Set(jwks.map((k) => k.alg as string))].sort();
  return {
    configuration: {
      issuer,
      jwks_uri: jwksUri,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: algorithms,
    },
    jwks: {keys: jwks},
  };
}

/** Which document a path asks for (with or without the trailing slash, as upstream routes them). */
export function discoveryDocument(path: string): 'configuration' | 'jwks' | undefined {
  const trimmed = path.replace(/\/$/, '');
  if (trimmed === OPENID_CONFIGURATION_PATH) return 'configuration';
  if (trimmed === JWKS_PATH) return 'jwks';
  return undefined;
}
