/**
 * `--encryption-provider-config`: upstream's EncryptionConfiguration (apiserver.config.<domain>/v1)
 * with the identity, aesgcm and aescbc providers. Per resource entry (`secrets`,
 * `deployments.apps`, `*.apps`, `*.` for the core group, `*.*`) an ordered provider list: the first
 * writes, all read. Pure: the caller reads the file.
 */
import {parse as parseYaml} from 'yaml';
import {names} from '../../../api/names.js';
import {aesProvider, identityProvider, type Provider} from './providers.js';

export interface ResourceEncryption {
  /** As written: `secrets`, `deployments.apps`, `*.apps`, `*.`, `*.*`. */
  resources: string[];
  providers: Provider[];
}

const SUPPORTED = ['identity', 'aesgcm', 'aescbc'];
const LATER = ['secretbox', 'kms'];

export function encryptionConfigVersion(): string {
  return `apiserver.config.${names().domain}/v1`;
}

export function parseEncryptionConfig(text: string, source = 'encryption configuration'): ResourceEncryption[] {
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
      if (LATER.includes(kind)) return void problems.push(`${ppath}.${kind}: Unsupported value: the ${kind} provider is not supported yet; supported: ${SUPPORTED.join(', ')}`);
      if (kind !== 'aesgcm' && kind !== 'aescbc') return void problems.push(`${ppath}: Unsupported value: ${JSON.stringify(kind)}: supported values: ${SUPPORTED.join(', ')}`);
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
        if (![16, 24, 32].includes(secret.length)) return void problems.push(`${kpath}.secret: Invalid value: REDACTED: secret is not of the expected length, got ${secret.length}, expected one of [16 24 32]`);
        built.push(aesProvider(kind, k.name, secret));
      });
    });
    if (Array.isArray(resources)) out.push({resources: resources as string[], providers: built});
  });
  if (problems.length) throw new Error(`${source}: ${problems.join('; ')}`);
  return out;
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
