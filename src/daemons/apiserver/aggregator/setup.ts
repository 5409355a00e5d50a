/**
 * Builds the aggregator from the server's options: the proxy client certificate and key (both or
 * neither, readable, a matching pair), the egress selector's `cluster` dialer, and the routing and
 * redirect options. Problems stop the start naming the option.
 */
import {readFile} from 'node:fs/promises';
import {createPrivateKey, X509Certificate} from 'node:crypto';
import {UserError} from '../../../lib/errors.js';
import type {Store} from '../storage/store.js';
import {Aggregator, type AggregatorOptions} from './aggregator.js';
import {loadEgressSelector} from './egress.js';

export interface AggregatorConfig {
  routing: boolean;
  rejectForwardingRedirect: boolean;
  proxyClientCertFile?: string;
  proxyClientKeyFile?: string;
  egressSelectorConfigFile?: string;
  /** How often APIServices are checked (default 30s, upstream's resync); tests make it short. */
  availabilityIntervalMs?: number;
}

async function readOption(option: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UserError(`--${option}: cannot read ${path}: ${(error as Error).message}`);
  }
}

export async function proxyClientCredentials(c: AggregatorConfig): Promise<{cert: string; key: string} | undefined> {
  if (!c.proxyClientCertFile && !c.proxyClientKeyFile) return undefined;
  if (!c.proxyClientCertFile || !c.proxyClientKeyFile) {
    throw new UserError('--proxy-client-cert-file and --proxy-client-key-file must be given together');
  }
  const cert = await readOption('proxy-client-cert-file', c.proxyClientCertFile);
  const key = await readOption('proxy-client-key-file', c.proxyClientKeyFile);
  try {
    if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) throw new Error('private key does not match public key');
  } catch (error) {
    throw new UserError(`--proxy-client-cert-file/--proxy-client-key-file: ${(error as Error).message}`);
  }
  return {cert, key};
}

export async function createAggregator(c: AggregatorConfig, store: Store, keyPrefix: string, onError: AggregatorOptions['onError']): Promise<Aggregator> {
  const egress = c.egressSelectorConfigFile ? await loadEgressSelector(c.egressSelectorConfigFile) : undefined;
  return new Aggregator({
    store,
    keyPrefix,
    routing: c.routing,
    rejectForwardingRedirect: c.rejectForwardingRedirect,
    proxyClient: await proxyClientCredentials(c),
    egress: egress?.dialer('cluster'),
    availabilityIntervalMs: c.availabilityIntervalMs,
    onError,
  });
}
