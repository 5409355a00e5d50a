/**
 * The I/O edges of service account tokens in the API server: reading the objects a token names
 * from the store, and writing the issuer discovery documents.
 */
import type {ServerResponse} from 'node:http';
import type {JsonObject} from '../../../../patch/types.js';
import type {Store} from '../../storage/store.js';
import {resourceKeyPrefix} from '../../storage-keys.js';
import type {ObjectGetter} from './authenticator.js';
import type {IssuerDiscovery} from './discovery.js';

/** Core objects by namespace and name, straight from the store (the watch cache when it has them). */
export function storeObjectGetter(store: Store, keyPrefix: string): ObjectGetter {
  return async (resource, namespace, name) => {
    const key = resource === 'nodes' ? `${resourceKeyPrefix(keyPrefix, '', resource)}${name}` : `${resourceKeyPrefix(keyPrefix, '', resource)}${namespace}/${name}`;
    const kv = await store.get(key);
    return kv ? (JSON.parse(kv.value) as JsonObject) : undefined;
  };
}

/** Upstream's metadata server: JSON, cacheable for an hour. */
export function serveIssuerDiscovery(res: ServerResponse, documents: IssuerDiscovery, which: 'configuration' | 'jwks'): void {
  const body = JSON.stringify(which === 'configuration' ? documents.configuration : documents.jwks);
  res.writeHead(200, {
    'Content-Type': which === 'configuration' ? 'application/json' : 'application/jwk-set+json',
    'Cache-Control': 'public, max-age=3600',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}
