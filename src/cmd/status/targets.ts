/**
 * Where `orch status` looks: the API server from the orchconfig (`--orchconfig`, ORCHCONFIG,
 * ~/.orch/config; the admin orchconfig of `orch apiserver`'s default data dir when none of those
 * exists), and the controller manager and the agent from their URL options.
 */
import {access} from 'node:fs/promises';
import {homedir} from 'node:os';
import {join} from 'node:path';
import {UserError} from '../../lib/errors.js';
import {resolveClientConfig, type ClientConfig} from '../../client/orchconfig.js';
import {authHeaders} from '../../client/rest-client.js';
import {COMPONENTS, type ComponentName} from './report.js';
import type {Endpoint, StatusPlan, StatusTarget} from './collect.js';

export const DEFAULT_CONTROLLER_MANAGER_URL = 'https://127.0.0.1:10257';
export const DEFAULT_AGENT_URL = 'https://127.0.0.1:10250';

/** The admin orchconfig `orch apiserver` writes in its default data dir (~/.orch/apiserver). */
export function defaultAdminOrchconfig(home = homedir()): string {
  return join(home, '.orch', 'apiserver', 'admin.orchconfig');
}

/** `--components a,b`: known names, each once, in display order whatever the order given. */
export function parseComponents(text: string): ComponentName[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => !(COMPONENTS as readonly string[]).includes(n));
  if (unknown.length > 0) throw new UserError(`unknown component${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')} in --components: expected ${COMPONENTS.join(', ')}`);
  if (names.length === 0) throw new UserError(`--components is empty: expected some of ${COMPONENTS.join(', ')}`);
  return COMPONENTS.filter((c) => names.includes(c));
}

/** A URL option: http(s) only, so a typo fails now rather than as a confusing connection error. */
export function checkUrl(option: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UserError(`--${option}: "${value}" is not a URL (expected https://host:port)`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UserError(`--${option}: "${value}" must be an http:// or https:// URL`);
  return value.replace(/\/$/, '');
}

/**
 * A server whose certificate is not checked: the controller manager and the agent serve
 * self-signed certificates by default, and their health endpoints need no credentials, so none are
 * sent (a token must never go to a server that was not verified).
 */
export function unverifiedEndpoint(url: string): Endpoint {
  return {url, verify: false, headers: {}};
}

export function apiServerEndpoint(config: ClientConfig): Endpoint {
  return {
    url: config.server,
    ca: config.caPem,
    cert: config.certPem,
    key: config.keyPem,
    verify: !config.insecure,
    servername: config.tlsServerName,
    headers: authHeaders(config) as Record<string, string | string[]>,
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

export interface TargetOptions {
  orchconfig?: string;
  context?: string;
  controllerManagerUrl: string;
  agentUrl: string;
  components: ComponentName[];
}

/**
 * The API server target. A configuration problem is reported as that component's error (the
 * other components are still checked), not as a failure of the whole command.
 */
export async function apiServerTarget(options: Pick<TargetOptions, 'orchconfig' | 'context'>, adminOrchconfig = defaultAdminOrchconfig()): Promise<StatusTarget> {
  try {
    let config = await resolveClientConfig({orchconfig: options.orchconfig, context: options.context});
    if (!options.orchconfig && config.files.length === 0 && (await exists(adminOrchconfig))) {
      config = await resolveClientConfig({orchconfig: adminOrchconfig, context: options.context});
    }
    return {name: 'apiserver', url: config.server, endpoint: apiServerEndpoint(config)};
  } catch (error) {
    return {name: 'apiserver', url: options.orchconfig ?? '', configError: (error as Error).message};
  }
}

export async function statusPlan(options: TargetOptions): Promise<StatusPlan> {
  const apiserver = await apiServerTarget(options);
  const others: Record<Exclude<ComponentName, 'apiserver'>, StatusTarget> = {
    'controller-manager': {name: 'controller-manager', url: options.controllerManagerUrl, endpoint: unverifiedEndpoint(options.controllerManagerUrl)},
    agent: {name: 'agent', url: options.agentUrl, endpoint: unverifiedEndpoint(options.agentUrl)},
  };
  return {apiserver, targets: options.components.map((name) => (name === 'apiserver' ? apiserver : others[name]))};
}
