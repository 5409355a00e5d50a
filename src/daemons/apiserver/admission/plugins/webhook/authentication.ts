/**
 * The credentials the API server presents to each admission webhook, from the kubeconfig named by
 * the plugin's configuration (upstream's WebhookAdmission `kubeConfigFile` and
 * util/webhook/authentication.go): the kubeconfig's users are named after the hosts they serve.
 * For a target `host:port` the first of these wins: the user named exactly so; `*.<suffix>` for
 * ever shorter suffixes; the same two without the port when it is 443; the user `*`; the current
 * context's user; none (anonymous). A service is the host `<name>.<namespace>.svc:<port>`.
 */
import {readFile} from 'node:fs/promises';
import {isAbsolute} from 'node:path';
import {names} from '../../../../../api/names.js';
import {parseOrchConfig, type OrchConfig, type OrchConfigUser} from '../../../../../client/orchconfig.js';
import type {JsonObject} from '../../../../../patch/types.js';

export interface WebhookCredentials {
  token?: string;
  username?: string;
  password?: string;
  certPem?: string;
  keyPem?: string;
  impersonate?: {user: string; uid?: string; groups: string[]; extra: Record<string, string[]>};
}

export type CredentialsResolver = (hostPort: string) => WebhookCredentials;

/** The user entry for a target, by upstream's precedence (see the file comment). */
export function userForTarget(config: OrchConfig, target: string): string | undefined {
  const users = config.users;
  const lookup = (host: string): string | undefined => {
    if (users.has(host)) return host;
    const steps = host.split('.');
    for (let i = 1; i < steps.length; i++) {
      const nick = `*.${steps.slice(i).join('.')}`;
      if (users.has(nick)) return nick;
    }
    return undefined;
  };
  const found = lookup(target) ?? (target.endsWith(':443') ? lookup(target.slice(0, -':443'.length)) : undefined);
  if (found) return found;
  if (users.has('*')) return '*';
  const context = config.contexts.get(config.currentContext);
  if (context?.user && users.has(context.user)) return context.user;
  return undefined;
}

async function material(data: string | undefined, path: string | undefined, what: string, user: string): Promise<string | undefined> {
  if (data) return Buffer.from(data.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (!path) return undefined;
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`user "${user}": cannot read ${what} ${path}: ${(error as Error).message}`);
  }
}

/** One user's credentials, files read (upstream's restConfigFromKubeconfig). */
export async function credentialsOf(name: string, user: OrchConfigUser): Promise<WebhookCredentials> {
  if (user['auth-provider']) throw new Error(`user "${name}": auth provider not supported`);
  if (user.exec) throw new Error(`user "${name}": exec credential plugins are not supported for admission webhooks`);
  const out: WebhookCredentials = {};
  if (user.token) out.token = user.token;
  else if (user.tokenFile) out.token = (await material(undefined, user.tokenFile, 'tokenFile', name))!.trim();
  const cert = await material(user['client-certificate-data'], user['client-certificate'], 'client-certificate', name);
  const key = await material(user['client-key-data'], user['client-key'], 'client-key', name);
  if (cert && key) Object.assign(out, {certPem: cert, keyPem: key});
  else if (cert || key) throw new Error(`user "${name}": a client certificate needs both client-certificate and client-key`);
  if (user.username || user.password) Object.assign(out, {username: user.username ?? '', password: user.password ?? ''});
  if (user.as) out.impersonate = {user: user.as, uid: user['as-uid'], groups: user['as-groups'] ?? [], extra: user['as-user-extra'] ?? {}};
  return out;
}

/** Request headers for credentials (the certificate goes to TLS, not here). */
export function credentialHeaders(c: WebhookCredentials): Record<string, string> {
  const headers: Record<string, string> = {};
  if (c.token) headers.Authorization = `Bearer ${c.token}`;
  else if (c.username !== undefined) headers.Authorization = `Basic ${Buffer.from(`${c.username}:${c.password ?? ''}`).toString('base64')}`;
  if (c.impersonate) {
    headers['Impersonate-User'] = c.impersonate.user;
    if (c.impersonate.uid) headers['Impersonate-Uid'] = c.impersonate.uid;
    // Node sends one header per call site; several groups join with commas, which servers split.
    if (c.impersonate.groups.length > 0) headers['Impersonate-Group'] = c.impersonate.groups.join(',');
  }
  return headers;
}

/** Reads the kubeconfig and every user's credentials once, at start; answers per target host. */
export async function loadCredentialsResolver(kubeConfigFile: string | undefined): Promise<CredentialsResolver> {
  if (!kubeConfigFile) return () => ({});
  let text: string;
  try {
    text = await readFile(kubeConfigFile, 'utf8');
  } catch (error) {
    throw new Error(`kubeConfigFile ${kubeConfigFile}: ${(error as Error).message}`);
  }
  const config = parseOrchConfig(text, kubeConfigFile);
  const resolved = new Map<string, WebhookCredentials>();
  for (const [name, user] of config.users) resolved.set(name, await credentialsOf(name, user));
  return (target) => {
    const name = userForTarget(config, target);
    return (name && resolved.get(name)) || {};
  };
}

/**
 * The plugin's configuration (WebhookAdmissionConfiguration of `apiserver.config.<domain>/v1`, or
 * the older WebhookAdmission of v1alpha1): the kubeconfig's path, which must be absolute.
 */
export function parseWebhookAdmissionConfiguration(configuration: JsonObject | undefined): {kubeConfigFile?: string} {
  if (!configuration) return {};
  const group = `apiserver.config.${names().domain}`;
  const accepted: Record<string, string> = {[`${group}/v1`]: 'WebhookAdmissionConfiguration', [`${group}/v1alpha1`]: 'WebhookAdmission'};
  const {apiVersion, kind} = configuration;
  if (typeof apiVersion === 'string' && accepted[apiVersion] === undefined) {
    throw new Error(`no kind "${String(kind)}" is registered for version "${apiVersion}" (accepted: ${Object.entries(accepted).map(([v, k]) => `${v} ${k}`).join(', ')})`);
  }
  if (typeof apiVersion === 'string' && kind !== accepted[apiVersion]) {
    throw new Error(`no kind "${String(kind)}" is registered for version "${apiVersion}" (expected kind ${accepted[apiVersion]})`);
  }
  const file = configuration.kubeConfigFile;
  if (file !== undefined && typeof file !== 'string') throw new Error('kubeConfigFile: must be a string');
  if (!file || !isAbsolute(file)) throw new Error(`kubeConfigFile: Invalid value: ${JSON.stringify(file ?? '')}: must be an absolute file path`);
  return {kubeConfigFile: file};
}
