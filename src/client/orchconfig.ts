/**
 * orchconfig: the client configuration file (upstream's kubeconfig, same format). Loading (one
 * file from `--orchconfig`, else the `ORCHCONFIG` list merged first-wins, else `~/.orch/config`),
 * selection of context, cluster and user with the command-line overrides on top, validation with
 * upstream's messages, and writing (the admin orchconfig the API server generates).
 * Rules and messages: shared/reference/kubeconfig.md. File access goes through an injectable `io`.
 */
import {chmod, mkdir, readFile, rename, writeFile} from 'node:fs/promises';
import {homedir} from 'node:os';
import {dirname, isAbsolute, join, resolve as resolvePath} from 'node:path';
import {parse as parseYaml, stringify as stringifyYaml} from 'yaml';
import {UserError} from '../lib/errors.js';

// ---------------------------------------------------------------------------------------------
// The file format (wire names; lists of named entries become maps keyed by name in memory)

export interface OrchConfigCluster {
  server?: string;
  'certificate-authority'?: string;
  /** base64 of the PEM bytes */
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  'proxy-url'?: string;
  'disable-compression'?: boolean;
  extensions?: unknown[];
}

export interface OrchConfigUser {
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  token?: string;
  /** camelCase, as upstream spells it */
  tokenFile?: string;
  username?: string;
  password?: string;
  as?: string;
  'as-uid'?: string;
  'as-groups'?: string[];
  'as-user-extra'?: Record<string, string[]>;
  exec?: Record<string, unknown>;
  'auth-provider'?: Record<string, unknown>;
  extensions?: unknown[];
}

export interface OrchConfigContext {
  cluster?: string;
  user?: string;
  namespace?: string;
  extensions?: unknown[];
}

export interface OrchConfig {
  preferences: Record<string, unknown>;
  currentContext: string;
  clusters: Map<string, OrchConfigCluster>;
  users: Map<string, OrchConfigUser>;
  contexts: Map<string, OrchConfigContext>;
  /** The file each entry came from (`<section>/<name>` -> path), for messages. */
  origins: Map<string, string>;
}

export class OrchConfigError extends UserError {
  override name = 'OrchConfigError';
}

export function emptyOrchConfig(): OrchConfig {
  return {preferences: {}, currentContext: '', clusters: new Map(), users: new Map(), contexts: new Map(), origins: new Map()};
}

export function isEmptyOrchConfig(config: OrchConfig): boolean {
  return config.clusters.size === 0 && config.users.size === 0 && config.contexts.size === 0 && config.currentContext === '';
}

// ---------------------------------------------------------------------------------------------
// Parsing

type FieldKind = 'string' | 'boolean' | 'strings' | 'stringLists' | 'object' | 'list';

const CLUSTER_FIELDS: Record<string, FieldKind> = {
  server: 'string', 'certificate-authority': 'string', 'certificate-authority-data': 'string', 'insecure-skip-tls-verify': 'boolean',
  'tls-server-name': 'string', 'proxy-url': 'string', 'disable-compression': 'boolean', extensions: 'list',
};
const USER_FIELDS: Record<string, FieldKind> = {
  'client-certificate': 'string', 'client-certificate-data': 'string', 'client-key': 'string', 'client-key-data': 'string',
  token: 'string', tokenFile: 'string', username: 'string', password: 'string', as: 'string', 'as-uid': 'string',
  'as-groups': 'strings', 'as-user-extra': 'stringLists', exec: 'object', 'auth-provider': 'object', extensions: 'list',
};
const CONTEXT_FIELDS: Record<string, FieldKind> = {cluster: 'string', user: 'string', namespace: 'string', extensions: 'list'};
/** Fields holding file paths, resolved against the directory of the file that names them. */
const PATH_FIELDS = ['certificate-authority', 'client-certificate', 'client-key', 'tokenFile'];
const DATA_FIELDS = ['certificate-authority-data', 'client-certificate-data', 'client-key-data'];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkKind(value: unknown, kind: FieldKind): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'strings':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
    case 'stringLists':
      return isPlainObject(value) && Object.values(value).every((v) => Array.isArray(v) && v.every((s) => typeof s === 'string'));
    case 'object':
      return isPlainObject(value);
    case 'list':
      return Array.isArray(value);
  }
}

const KIND_TEXT: Record<FieldKind, string> = {
  string: 'a string', boolean: 'a boolean (true or false)', strings: 'a list of strings', stringLists: 'a map of string lists', object: 'a map', list: 'a list',
};

/** Standard base64 (whitespace allowed, as Go's decoder skips newlines). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function parseEntry<T>(raw: unknown, fields: Record<string, FieldKind>, where: string, fileDir: string): T {
  if (raw === null || raw === undefined) return {} as T;
  if (!isPlainObject(raw)) throw new Error(`${where}: must be a map`);
  const entry: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const kind = fields[key];
    if (kind === undefined) continue; // unknown fields are ignored, as upstream's decoder does
    if (value === null) continue;
    if (!checkKind(value, kind)) throw new Error(`${where}.${key}: must be ${KIND_TEXT[kind]}`);
    if (DATA_FIELDS.includes(key) && !BASE64.test((value as string).replace(/\s+/g, ''))) {
      throw new Error(`${where}.${key}: illegal base64 data`);
    }
    entry[key] = PATH_FIELDS.includes(key) && value !== '' && !isAbsolute(value as string) ? resolvePath(fileDir, value as string) : value;
  }
  return entry as T;
}

function parseNamedList<T>(
  raw: unknown,
  section: 'clusters' | 'users' | 'contexts',
  entryKey: 'cluster' | 'user' | 'context',
  fields: Record<string, FieldKind>,
  file: string,
  config: OrchConfig,
  target: Map<string, T>,
): void {
  if (raw === null || raw === undefined) return;
  if (!Array.isArray(raw)) throw new Error(`${section}: must be a list of {name, ${entryKey}} entries`);
  raw.forEach((item, i) => {
    const where = `${section}[${i}]`;
    if (!isPlainObject(item)) throw new Error(`${where}: must be a map with "name" and "${entryKey}"`);
    if (typeof item.name !== 'string' || item.name === '') throw new Error(`${where}.name: required`);
    // Within one file the last entry of a name wins (upstream's list-to-map conversion).
    target.set(item.name, parseEntry<T>(item[entryKey], fields, `${where}.${entryKey}`, dirname(file)));
    config.origins.set(`${section}/${item.name}`, file);
  });
}

/** Parses the text of one orchconfig file (YAML or JSON). Relative paths resolve against the file's directory. */
export function parseOrchConfig(text: string, file: string): OrchConfig {
  const config = emptyOrchConfig();
  try {
    const document: unknown = parseYaml(text);
    if (document === null || document === undefined) return config;
    if (!isPlainObject(document)) throw new Error('the file must hold a map (apiVersion: v1, kind: Config)');
    if (document.kind !== undefined && document.kind !== 'Config') throw new Error(`kind: must be "Config", not ${JSON.stringify(document.kind)}`);
    if (document.apiVersion !== undefined && document.apiVersion !== 'v1') throw new Error(`apiVersion: must be "v1", not ${JSON.stringify(document.apiVersion)}`);
    const current = document['current-context'];
    if (current !== undefined && current !== null && typeof current !== 'string') throw new Error('current-context: must be a string');
    config.currentContext = (current as string | undefined) ?? '';
    if (document.preferences !== undefined && document.preferences !== null) {
      if (!isPlainObject(document.preferences)) throw new Error('preferences: must be a map');
      config.preferences = document.preferences;
    }
    parseNamedList(document.clusters, 'clusters', 'cluster', CLUSTER_FIELDS, file, config, config.clusters);
    parseNamedList(document.users, 'users', 'user', USER_FIELDS, file, config, config.users);
    parseNamedList(document.contexts, 'contexts', 'context', CONTEXT_FIELDS, file, config, config.contexts);
  } catch (error) {
    throw new OrchConfigError(`error loading config file "${file}": ${(error as Error).message}`);
  }
  return config;
}

/**
 * Merges configurations, the first one winning: an entry name defined by an earlier file is taken
 * whole from it (no field-level merge); the first non-empty current-context and preferences win.
 */
export function mergeOrchConfigs(configs: OrchConfig[]): OrchConfig {
  const merged = emptyOrchConfig();
  let preferencesSet = false;
  for (const config of configs) {
    if (merged.currentContext === '' && config.currentContext !== '') merged.currentContext = config.currentContext;
    if (!preferencesSet && Object.keys(config.preferences).length > 0) {
      merged.preferences = config.preferences;
      preferencesSet = true;
    }
    for (const section of ['clusters', 'users', 'contexts'] as const) {
      const target = merged[section] as Map<string, unknown>;
      for (const [name, entry] of config[section] as Map<string, unknown>) {
        if (target.has(name)) continue;
        target.set(name, entry);
        const origin = config.origins.get(`${section}/${name}`);
        if (origin) merged.origins.set(`${section}/${name}`, origin);
      }
    }
  }
  return merged;
}

// ---------------------------------------------------------------------------------------------
// Loading files

export interface OrchConfigIo {
  env: Record<string, string | undefined>;
  homeDir: string;
  /** Reads a file as UTF-8; rejects with a Node errno error (code ENOENT when missing). */
  readFile(path: string): Promise<string>;
}

export const defaultOrchConfigIo: OrchConfigIo = {
  get env() {
    return process.env;
  },
  get homeDir() {
    return homedir();
  },
  readFile: (path) => readFile(path, 'utf8'),
};

export const ORCHCONFIG_ENV = 'ORCHCONFIG';

export function defaultOrchConfigPath(homeDir: string): string {
  return join(homeDir, '.orch', 'config');
}

/** Go's text for a failed file operation (`open <path>: no such file or directory`), from Node's errno error. */
function goFileError(operation: 'open' | 'stat', path: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const text: Record<string, string> = {ENOENT: 'no such file or directory', EACCES: 'permission denied', EISDIR: 'is a directory', ENOTDIR: 'not a directory'};
  return `${operation} ${path}: ${(code && text[code]) ?? (error as Error).message}`;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

export interface LoadedOrchConfig {
  config: OrchConfig;
  /** The files that were read, in precedence order. */
  files: string[];
  warnings: string[];
}

/** Which files to read: the explicit one, else the `ORCHCONFIG` list (deduplicated, empties dropped), else the default. */
export function orchConfigPaths(explicit: string | undefined, io: Pick<OrchConfigIo, 'env' | 'homeDir'>): {paths: string[]; source: 'flag' | 'env' | 'default'} {
  if (explicit) return {paths: [explicit], source: 'flag'};
  const list = io.env[ORCHCONFIG_ENV];
  if (list) {
    const separator = process.platform === 'win32' ? ';' : ':';
    return {paths: [...new Set(list.split(separator).filter((p) => p !== ''))], source: 'env'};
  }
  return {paths: [defaultOrchConfigPath(io.homeDir)], source: 'default'};
}

export async function loadOrchConfig(explicit: string | undefined, io: OrchConfigIo = defaultOrchConfigIo): Promise<LoadedOrchConfig> {
  const {paths, source} = orchConfigPaths(explicit, io);
  const configs: OrchConfig[] = [];
  const files: string[] = [];
  const missing: string[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = await io.readFile(path);
    } catch (error) {
      if (source === 'flag') throw new OrchConfigError(goFileError('stat', path, error));
      if (isMissing(error)) {
        missing.push(path);
        continue;
      }
      throw new OrchConfigError(`error loading config file "${path}": ${goFileError('open', path, error)}`);
    }
    configs.push(parseOrchConfig(text, path));
    files.push(path);
  }
  const warnings = source === 'env' && missing.length === paths.length ? [`Config not found: ${missing.join(', ')}`] : [];
  return {config: mergeOrchConfigs(configs), files, warnings};
}

// ---------------------------------------------------------------------------------------------
// Resolving a connection

/** The command-line overrides (`--context`, `-s`, `--token`, ...); empty values never override. */
export interface ClientConfigOverrides {
  orchconfig?: string;
  context?: string;
  cluster?: string;
  user?: string;
  namespace?: string;
  server?: string;
  token?: string;
  certificateAuthority?: string;
  clientCertificate?: string;
  clientKey?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
  disableCompression?: boolean;
  username?: string;
  password?: string;
  as?: string;
  asGroups?: string[];
  asUid?: string;
}

export interface Impersonation {
  user: string;
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}

export interface ClientConfig {
  /** The server URL as configured (`https://host:port[/prefix]`). */
  server: string;
  /** Whether TLS settings apply (an https server, or any TLS option set); credentials are sent only then. */
  tls: boolean;
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  insecure: boolean;
  tlsServerName?: string;
  token?: string;
  username?: string;
  password?: string;
  impersonate?: Impersonation;
  proxyUrl?: string;
  disableCompression: boolean;
  /** `-n`, else the context's namespace, else `default`. */
  namespace: string;
  /** Whether the namespace came from `-n` or the context (not the `default` fallback). */
  namespaceExplicit: boolean;
  contextName: string;
  clusterName: string;
  userName: string;
  /** The files the configuration came from. */
  files: string[];
  warnings: string[];
}

/** kubectl's server when nothing is configured (its classic `localhost:8080 was refused` error). */
export const DEFAULT_SERVER = 'http://localhost:8080';

function nonEmpty(value: string | undefined): value is string {
  return value !== undefined && value !== '';
}

function decodeData(data: string): string {
  return Buffer.from(data.replace(/\s+/g, ''), 'base64').toString('utf8');
}

/** The cluster after the flag overrides (reference §4.3). */
function overrideCluster(fileCluster: OrchConfigCluster, flags: ClientConfigOverrides): OrchConfigCluster {
  const cluster: OrchConfigCluster = {...fileCluster};
  if (nonEmpty(flags.server)) cluster.server = flags.server;
  if (flags.insecureSkipTlsVerify === true || nonEmpty(flags.certificateAuthority)) {
    // Either flag takes over all CA settings, so a file's CA data cannot contradict them.
    cluster['certificate-authority'] = flags.certificateAuthority || undefined;
    delete cluster['certificate-authority-data'];
    cluster['insecure-skip-tls-verify'] = flags.insecureSkipTlsVerify ?? false;
  }
  if (nonEmpty(flags.server) || nonEmpty(flags.tlsServerName)) cluster['tls-server-name'] = flags.tlsServerName || undefined;
  if (nonEmpty(flags.proxyUrl)) cluster['proxy-url'] = flags.proxyUrl;
  if (flags.disableCompression !== undefined) cluster['disable-compression'] = flags.disableCompression;
  return cluster;
}

/** The user after the flag overrides (reference §4.4). */
function overrideUser(fileUser: OrchConfigUser, flags: ClientConfigOverrides): OrchConfigUser {
  const user: OrchConfigUser = {...fileUser};
  if (nonEmpty(flags.token)) user.token = flags.token;
  if (nonEmpty(flags.clientCertificate)) {
    user['client-certificate'] = flags.clientCertificate;
    delete user['client-certificate-data'];
  }
  if (nonEmpty(flags.clientKey)) {
    user['client-key'] = flags.clientKey;
    delete user['client-key-data'];
  }
  if (nonEmpty(flags.username)) user.username = flags.username;
  if (nonEmpty(flags.password)) user.password = flags.password;
  if (nonEmpty(flags.as)) user.as = flags.as;
  if (nonEmpty(flags.asUid)) user['as-uid'] = flags.asUid;
  if (flags.asGroups && flags.asGroups.length > 0) user['as-groups'] = flags.asGroups;
  return user;
}

/** Joins validation errors as upstream: `invalid configuration: e` or `invalid configuration: [e1, e2]`. */
function invalidConfiguration(errors: string[]): OrchConfigError {
  return new OrchConfigError(`invalid configuration: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}`);
}

/** Reads a PEM from `*-data` or from a file, recording the upstream message when the file cannot be read. */
async function readMaterial(data: string | undefined, path: string | undefined, describe: (path: string, error: string) => string, io: OrchConfigIo, errors: string[]): Promise<string | undefined> {
  if (nonEmpty(data)) return decodeData(data);
  if (!nonEmpty(path)) return undefined;
  try {
    return await io.readFile(path);
  } catch (error) {
    errors.push(describe(path, goFileError('open', path, error)));
    return undefined;
  }
}

/**
 * Resolves the connection settings from the orchconfig files and the command-line overrides, with
 * upstream's precedence (flags beat the file; non-empty values only) and validation messages.
 */
export async function resolveClientConfig(flags: ClientConfigOverrides = {}, io: OrchConfigIo = defaultOrchConfigIo): Promise<ClientConfig> {
  const {config, files, warnings} = await loadOrchConfig(flags.orchconfig, io);
  const errors: string[] = [];

  if (nonEmpty(flags.context) && !config.contexts.has(flags.context)) throw new OrchConfigError(`context "${flags.context}" does not exist`);
  if (nonEmpty(flags.cluster) && !config.clusters.has(flags.cluster)) throw new OrchConfigError(`cluster "${flags.cluster}" does not exist`);
  if (nonEmpty(flags.user) && !config.users.has(flags.user)) throw new OrchConfigError(`auth info "${flags.user}" does not exist`);

  const contextName = flags.context || config.currentContext;
  const context = config.contexts.get(contextName);
  if (contextName !== '' && !context) errors.push(`context was not found for specified context: ${contextName}`);
  const clusterName = flags.cluster || context?.cluster || '';
  const userName = flags.user || context?.user || '';
  if (context && !flags.cluster && clusterName !== '' && !config.clusters.has(clusterName)) errors.push(`cluster "${clusterName}" was not found for context "${contextName}"`);
  if (context && !flags.user && userName !== '' && !config.users.has(userName)) errors.push(`user "${userName}" was not found for context "${contextName}"`);

  const cluster = overrideCluster(config.clusters.get(clusterName) ?? {}, flags);
  const user = overrideUser(config.users.get(userName) ?? {}, flags);
  // No cluster selected (e.g. no configuration at all): kubectl's fallback server, no error here;
  // connecting will say what is wrong. A named cluster without a server is an error below.
  if (!nonEmpty(cluster.server) && clusterName === '') cluster.server = DEFAULT_SERVER;

  // Cluster checks (upstream validateClusterInfo).
  if (!nonEmpty(cluster.server)) errors.push(`no server found for cluster "${clusterName}"`);
  if (nonEmpty(cluster['certificate-authority']) && nonEmpty(cluster['certificate-authority-data'])) {
    errors.push(`certificate-authority-data and certificate-authority are both specified for ${clusterName}. certificate-authority-data will override.`);
  }
  const caPem = await readMaterial(cluster['certificate-authority-data'], cluster['certificate-authority'], (p, e) => `unable to read certificate-authority ${p} for ${clusterName} due to ${e}`, io, errors);
  const insecure = cluster['insecure-skip-tls-verify'] === true;
  if (insecure && caPem !== undefined) errors.push('specifying a root certificates file with the insecure flag is not allowed');

  // User checks (upstream validateAuthInfo).
  const hasCert = nonEmpty(user['client-certificate']) || nonEmpty(user['client-certificate-data']);
  const hasKey = nonEmpty(user['client-key']) || nonEmpty(user['client-key-data']);
  if (nonEmpty(user['client-certificate']) && nonEmpty(user['client-certificate-data'])) {
    errors.push(`client-cert-data and client-cert are both specified for ${userName}. client-cert-data will override.`);
  }
  if (nonEmpty(user['client-key']) && nonEmpty(user['client-key-data'])) {
    errors.push(`client-key-data and client-key are both specified for ${userName}; client-key-data will override`);
  }
  if (hasCert && !hasKey) errors.push(`client-key-data or client-key must be specified for ${userName} to use the clientCert authentication method.`);
  if (hasKey && !hasCert) errors.push(`client-cert-data or client-cert must be specified for ${userName} to use the clientCert authentication method.`);
  const methods = [...(nonEmpty(user.token) || nonEmpty(user.tokenFile) ? ['token'] : []), ...(nonEmpty(user.username) || nonEmpty(user.password) ? ['basicAuth'] : [])];
  if (methods.length > 1) errors.push(`more than one authentication method found for ${userName}; found [${methods.join(' ')}], only one is allowed`);
  const extra = user['as-user-extra'] ?? {};
  if (!nonEmpty(user.as) && (nonEmpty(user['as-uid']) || (user['as-groups'] ?? []).length > 0 || Object.keys(extra).length > 0)) {
    errors.push(`requesting uid, groups or user-extra for ${userName} without impersonating a user`);
  }
  const certPem = await readMaterial(user['client-certificate-data'], user['client-certificate'], (p, e) => `unable to read client-cert ${p} for ${userName} due to ${e}`, io, errors);
  const keyPem = await readMaterial(user['client-key-data'], user['client-key'], (p, e) => `unable to read client-key ${p} for ${userName} due to ${e}`, io, errors);
  let token = nonEmpty(user.token) ? user.token : undefined;
  if (token === undefined && nonEmpty(user.tokenFile)) {
    try {
      token = (await io.readFile(user.tokenFile)).trim();
    } catch (error) {
      errors.push(`unable to read tokenFile ${user.tokenFile} for ${userName} due to ${goFileError('open', user.tokenFile, error)}`);
    }
  }
  if (errors.length > 0) throw invalidConfiguration(errors);

  const server = cluster.server!;
  const tlsServerName = nonEmpty(cluster['tls-server-name']) ? cluster['tls-server-name'] : undefined;
  const tls = server.startsWith('https://') || insecure || caPem !== undefined || tlsServerName !== undefined || certPem !== undefined || keyPem !== undefined;
  const namespace = flags.namespace || context?.namespace || '';
  const result: ClientConfig = {
    server,
    tls,
    caPem,
    insecure,
    tlsServerName,
    proxyUrl: nonEmpty(cluster['proxy-url']) ? cluster['proxy-url'] : undefined,
    disableCompression: cluster['disable-compression'] === true,
    namespace: namespace || 'default',
    namespaceExplicit: namespace !== '',
    contextName,
    clusterName,
    userName,
    files,
    warnings,
    certPem: undefined,
    keyPem: undefined,
    token: undefined,
    username: undefined,
    password: undefined,
  };
  // Upstream applies credentials (and impersonation) only to TLS transports, never in clear text.
  if (tls) {
    Object.assign(result, {certPem, keyPem, token, username: user.username || undefined, password: user.password || undefined});
    if (nonEmpty(user.as)) result.impersonate = {user: user.as, uid: user['as-uid'] || undefined, groups: user['as-groups'] ?? [], extra};
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Writing

/** The wire form: lists sorted by name and keys sorted, as upstream writes kubeconfig files. */
export function serializeOrchConfig(config: OrchConfig): string {
  const named = <T>(map: Map<string, T>, key: string) =>
    [...map.keys()].sort().map((name) => ({name, [key]: map.get(name)}));
  const document = {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: config.preferences,
    'current-context': config.currentContext,
    clusters: named(config.clusters, 'cluster'),
    users: named(config.users, 'user'),
    contexts: named(config.contexts, 'context'),
  };
  return stringifyYaml(document, {sortMapEntries: true, lineWidth: 0});
}

/** Writes an orchconfig atomically, readable by its owner only (it may hold keys and tokens). */
export async function writeOrchConfig(path: string, config: OrchConfig): Promise<void> {
  await mkdir(dirname(path), {recursive: true, mode: 0o700});
  const temporary = `${path}.tmp-${process.pid}`;
  await writeFile(temporary, serializeOrchConfig(config), {mode: 0o600});
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

export interface AdminOrchConfigInput {
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  clusterName?: string;
  userName?: string;
  contextName?: string;
}

/** A self-contained configuration: cluster, user and context with the PEMs embedded as `*-data`. */
export function adminOrchConfig(input: AdminOrchConfigInput): OrchConfig {
  const clusterName = input.clusterName ?? 'orch';
  const userName = input.userName ?? 'orch-admin';
  const contextName = input.contextName ?? `${userName}@${clusterName}`;
  const base64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');
  const config = emptyOrchConfig();
  config.clusters.set(clusterName, {server: input.server, 'certificate-authority-data': base64(input.caPem)});
  config.users.set(userName, {'client-certificate-data': base64(input.certPem), 'client-key-data': base64(input.keyPem)});
  config.contexts.set(contextName, {cluster: clusterName, user: userName});
  config.currentContext = contextName;
  return config;
}

/** Writes the admin orchconfig of the API server, usable as is by `kubectl --kubeconfig <path>`. */
export async function writeAdminOrchconfig(path: string, input: AdminOrchConfigInput): Promise<void> {
  await writeOrchConfig(path, adminOrchConfig(input));
}
