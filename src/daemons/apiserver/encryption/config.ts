/**
 * `--encryption-provider-config`: upstream's EncryptionConfiguration (apiserver.config.<domain>/v1)
 * with the identity, aesgcm, aescbc, secretbox and kms (apiVersion v2) providers. Per resource entry (`secrets`,
 * `deployments.apps`, `*.apps`, `*.` for the core group, `*.*`) an ordered provider list: the first
 * writes, all read. Pure: the caller reads the file, and builds KMS providers (which talk to a
 * plugin) through the factory it passes.
 */
import {parse as parseYaml} from 'yaml';
import {names} from '../../../api/names.js';
import {parseDuration} from '../../../options/duration.js';
import {aesProvider, identityProvider, type Provider} from './providers.js';
import {secretboxProvider} from './secretbox.js';

export interface ResourceEncryption {
  /** As written: `secrets`, `deployments.apps`, `*.apps`, `*.`, `*.*`. */
  resources: string[];
  providers: Provider[];
}

const SUPPORTED = ['identity', 'aesgcm', 'aescbc', 'secretbox', 'kms'];

/** A `kms` provider entry, validated (upstream's KMSConfiguration, apiVersion v2). */
export interface KmsSpec {
  name: string;
  /** The plugin's unix socket path (the `endpoint` without `unix://`). */
  socketPath: string;
  timeoutMs: number;
}

/** Builds a KMS provider for an entry; without one, a configuration naming kms cannot be used. */
export type KmsFactory = (spec: KmsSpec) => Provider;

const noKms: KmsFactory = (spec) => {
  throw new Error(`kms provider ${spec.name}: no plugin connection available here`);
};

export function encryptionConfigVersion(): string {
  return `apiserver.config.${names().domain}/v1`;
}

export function parseEncryptionConfig(text: string, source = 'encryption configuration', kms: KmsFactory = noKms): ResourceEncryption[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new Error(`${source}: not valid YAML or JSON: ${(error as Error).message}`);
  }
  const d = (doc ?? {}) as Record<string, unknown>;
  const problems: string[] = [];
  if (d.kind !== 'EncryptionConfiguration') problems.push(`kind: Unsupported value: ${JSON.stringify(d.kind ?? '')}: supported values: "EncryptionConfiguration"`);
  if (d.apiVersion !== encryptionConfigVersion()) problems.push(`apiVersion: Unsupported value: ${JSON.stringify(d.apiVersion ?? '')}: supported values: ${JSON.stringify(encryptionConfigVersion())}`);
  if (!Array.isArray(d.resources) || d.resources.length === 0) problems.push('resources: Required value: at least one resource entry is required');
  const seen = new Set<string>();
  const kmsNames = new Set<string>();
  const deferred: Array<() => void> = [];
  const out: ResourceEncryption[] = [];
  (Array.isArray(d.resources) ? d.resources : []).forEach((entry: Record<string, unknown>, i: number) => {
    const path = `resources[${i}]`;
    const resources = entry?.resources;
    if (!Array.isArray(resources) || resources.length === 0 || resources.some((r) => typeof r !== 'string' || r === '')) {
      problems.push(`${path}.resources: Required value: a list of resource names (secrets, deployments.apps, *.apps, *.*)`);
    } else {
      resources.forEach((r: string, j: number) => {
        if (seen.has(r)) problems.push(`${path}.resources[${j}]: Duplicate value: ${JSON.stringify(r)}`);
        seen.add(r);
        if (r.includes('*') && !/^\*\.([a-z0-9.-]*|\*)$/.test(r)) problems.push(`${path}.resources[${j}]: Invalid value: ${JSON.stringify(r)}: a wildcard is "*.<group>", "*." (core group) or "*.*"`);
      });
    }
    const providers = entry?.providers;
    if (!Array.isArray(providers) || providers.length === 0) {
      problems.push(`${path}.providers: Required value: at least one provider is required`);
      return;
    }
    const built: Provider[] = [];
    providers.forEach((p: Record<string, unknown>, j: number) => {
      const ppath = `${path}.providers[${j}]`;
      const kinds = Object.keys(p ?? {});
      if (kinds.length !== 1) {
        problems.push(`${ppath}: Invalid value: ${JSON.stringify(kinds)}: exactly one provider type is required (one of ${SUPPORTED.join(', ')})`);
        return;
      }
      const kind = kinds[0]!;
      if (kind === 'identity') return void built.push(identityProvider());
      if (kind === 'kms') {
        const spec = kmsSpec(p.kms, `${ppath}.kms`, kmsNames, problems);
        // Built once the whole file is valid: a provider connects to its plugin.
        if (spec) {
          const slot = built.push(identityProvider()) - 1;
          deferred.push(() => (built[slot] = kms(spec)));
        }
        return;
      }
      if (kind !== 'aesgcm' && kind !== 'aescbc' && kind !== 'secretbox') return void problems.push(`${ppath}: Unsupported value: ${JSON.stringify(kind)}: supported values: ${SUPPORTED.join(', ')}`);
      const keys = (p[kind] as {keys?: unknown})?.keys;
      if (!Array.isArray(keys) || keys.length === 0) return void problems.push(`${ppath}.${kind}.keys: Required value: at least one key is required`);
      const names = new Set<string>();
      keys.forEach((k: {name?: unknown; secret?: unknown}, n: number) => {
        const kpath = `${ppath}.${kind}.keys[${n}]`;
        if (typeof k?.name !== 'string' || k.name === '') return void problems.push(`${kpath}.name: Required value`);
        if (k.name.includes(':')) return void problems.push(`${kpath}.name: Invalid value: ${JSON.stringify(k.name)}: may not contain a ':'`);
        if (names.has(k.name)) problems.push(`${kpath}.name: Duplicate value: ${JSON.stringify(k.name)}`);
        names.add(k.name);
        const secret = typeof k.secret === 'string' ? Buffer.from(k.secret, 'base64') : undefined;
        if (!secret || secret.length === 0 || secret.toString('base64') !== (k.secret as string).replace(/\s/g, '')) return void problems.push(`${kpath}.secret: Invalid value: REDACTED: secrets must be base64-encoded`);
        if (kind === 'secretbox') {
          if (secret.length !== 32) return void problems.push(`${kpath}.secret: Invalid value: REDACTED: secret is not of the expected length, got ${secret.length}, expected 32`);
          return void built.push(secretboxProvider(k.name, secret));
        }
        if (![16, 24, 32].includes(secret.length)) return void problems.push(`${kpath}.secret: Invalid value: REDACTED: secret is not of the expected length, got ${secret.length}, expected one of [16 24 32]`);
        built.push(aesProvider(kind, k.name, secret));
      });
    });
    if (Array.isArray(resources)) out.push({resources: resources as string[], providers: built});
  });
  if (problems.length) throw new Error(`${source}: ${problems.join('; ')}`);
  for (const build of deferred) build();
  return out;
}

/** A kms entry checked as upstream's validateKMSConfiguration for apiVersion v2; undefined when it has problems. */
function kmsSpec(raw: unknown, path: string, names: Set<string>, problems: string[]): KmsSpec | undefined {
  const k = (raw ?? {}) as Record<string, unknown>;
  const before = problems.length;
  const name = typeof k.name === 'string' ? k.name : '';
  if (name === '') problems.push(`${path}.name: Required value`);
  else if (name.includes(':')) problems.push(`${path}.name: Invalid value: ${JSON.stringify(name)}: should not contain ':'`);
  else if (names.has(name)) problems.push(`${path}.name: Invalid value: ${JSON.stringify(name)}: duplicate KMS provider name, names must be unique`);
  names.add(name);
  if (k.apiVersion === 'v1' || k.apiVersion === undefined) {
    problems.push(`${path}.apiVersion: Invalid value: ${JSON.stringify(k.apiVersion ?? 'v1')}: KMSv1 is deprecated and not supported; use apiVersion: v2`);
  } else if (k.apiVersion !== 'v2') {
    problems.push(`${path}.apiVersion: Invalid value: ${JSON.stringify(k.apiVersion)}: unsupported apiVersion for KMS provider, only v2 is supported`);
  }
  if (k.cachesize !== undefined) problems.push(`${path}.cachesize: Invalid value: ${JSON.stringify(k.cachesize)}: cachesize is not supported in v2`);
  const endpoint = typeof k.endpoint === 'string' ? k.endpoint : '';
  if (endpoint === '') problems.push(`${path}.endpoint: Invalid value: "": endpoint is required`);
  else if (!endpoint.startsWith('unix://') || endpoint.length === 'unix://'.length) problems.push(`${path}.endpoint: Invalid value: ${JSON.stringify(endpoint)}: unsupported scheme ${JSON.stringify(endpoint.split('://')[0])} for KMS provider, only unix is supported`);
  let timeoutMs = 3000;
  if (k.timeout !== undefined) {
    try {
      timeoutMs = parseDuration(String(k.timeout));
    } catch {
      timeoutMs = Number.NaN;
    }
    if (!(timeoutMs > 0)) problems.push(`${path}.timeout: Invalid value: ${JSON.stringify(k.timeout)}: timeout should be a positive value`);
  }
  if (problems.length > before) return undefined;
  // unix:///run/kms.sock is a path; upstream also accepts the abstract-less relative form unix://kms.sock.
  return {name, socketPath: endpoint.slice('unix://'.length), timeoutMs};
}

/** The providers for a resource: the first entry naming it exactly, else by wildcard, as upstream orders them. */
export function providersFor(config: ResourceEncryption[], group: string, resource: string): Provider[] | undefined {
  const exact = group ? `${resource}.${group}` : resource;
  for (const entry of config) {
    for (const r of entry.resources) {
      if (r === exact || r === `*.${group}` || r === '*.*') return entry.providers;
    }
  }
  return undefined;
}
