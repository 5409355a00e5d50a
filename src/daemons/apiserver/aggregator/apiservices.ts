/**
 * Upstream's kube-aggregator decisions over APIService objects, pure: which APIService serves a
 * path (`/apis/<group>/<version>/...` of a non-local APIService), where its service is (the
 * endpoint address with --enable-aggregator-routing, else the service's cluster IP, as upstream's
 * two service resolvers), the front-proxy identity headers, and the discovery documents the
 * aggregator itself answers (`/apis` merged, `/apis/<group>` of an aggregated group).
 */
import {isJsonObject, type JsonObject} from '../../../patch/types.js';
import {resolveServiceEndpoint} from '../rest/service-resolver.js';
import type {UserInfo} from '../../shared/authentication/user.js';
import {compareVersionPriority} from '../../../api/api-enablement.js';

export interface ServiceRef {
  namespace: string;
  name: string;
  port: number;
}

export interface ApiServiceView {
  name: string;
  group: string;
  version: string;
  /** Absent for a local APIService (served by this server). */
  service?: ServiceRef;
  caBundle?: string;
  insecureSkipTLSVerify: boolean;
  groupPriorityMinimum: number;
  versionPriority: number;
  available: boolean;
}

export function apiServiceView(object: JsonObject): ApiServiceView {
  const meta = isJsonObject(object.metadata) ? object.metadata : {};
  const spec = isJsonObject(object.spec) ? object.spec : {};
  const service = isJsonObject(spec.service) ? spec.service : undefined;
  const conditions = isJsonObject(object.status) && Array.isArray(object.status.conditions) ? object.status.conditions.filter(isJsonObject) : [];
  return {
    name: String(meta.name ?? ''),
    group: typeof spec.group === 'string' ? spec.group : '',
    version: typeof spec.version === 'string' ? spec.version : '',
    service: service
      ? {namespace: String(service.namespace ?? ''), name: String(service.name ?? ''), port: typeof service.port === 'number' ? service.port : 443}
      : undefined,
    caBundle: typeof spec.caBundle === 'string' && spec.caBundle !== '' ? Buffer.from(spec.caBundle, 'base64').toString('utf8') : undefined,
    insecureSkipTLSVerify: spec.insecureSkipTLSVerify === true,
    groupPriorityMinimum: typeof spec.groupPriorityMinimum === 'number' ? spec.groupPriorityMinimum : 0,
    versionPriority: typeof spec.versionPriority === 'number' ? spec.versionPriority : 0,
    available: conditions.some((c) => c.type === 'Available' && c.status === 'True'),
  };
}

/** The non-local APIService a request path belongs to, if any (`/apis/<group>/<version>[/...]`). */
export function apiServiceForPath(path: string, byName: ReadonlyMap<string, ApiServiceView>): ApiServiceView | undefined {
  const m = /^\/apis\/([^/]+)\/([^/]+)(?:\/|$)/.exec(path);
  if (!m) return undefined;
  const view = byName.get(`${m[2]}.${m[1]}`);
  return view?.service ? view : undefined;
}

export interface Target {
  host: string;
  port: number;
  /** The name the extension's serving certificate must carry: `<service>.<namespace>.svc`. */
  serverName: string;
}

/**
 * Where to send a request for an APIService's service. With routing, a ready endpoint address
 * (upstream's endpoint resolver); without, the service's cluster IP and port (upstream's cluster
 * resolver; orch runs no kube-proxy, so the address must be reachable as it is), or the external
 * name of an ExternalName service.
 */
export function resolveTarget(ref: ServiceRef, service: JsonObject | undefined, endpoints: JsonObject | undefined, routing: boolean): Target {
  const serverName = `${ref.name}.${ref.namespace}.svc`;
  if (routing) return {...resolveServiceEndpoint(ref.namespace, ref.name, ref.port, service, endpoints), serverName};
  if (!service) throw new Error(`service "${ref.namespace}/${ref.name}" not found`);
  const spec = isJsonObject(service.spec) ? service.spec : {};
  if (spec.type === 'ExternalName' && typeof spec.externalName === 'string') return {host: spec.externalName, port: ref.port, serverName};
  const ports = (Array.isArray(spec.ports) ? spec.ports : []).filter(isJsonObject);
  if (!ports.some((p) => p.port === ref.port)) throw new Error(`no service port ${ref.port} found for service "${ref.name}"`);
  const clusterIP = typeof spec.clusterIP === 'string' ? spec.clusterIP : '';
  if (clusterIP === '' || clusterIP === 'None') throw new Error(`invalid clusterIP: ${clusterIP}`);
  return {host: clusterIP, port: ref.port, serverName};
}

/** Go's net/http token characters: anything else in an extra's key is percent-encoded (upstream's headerKeyEscape). */
function headerKeyEscape(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (byte < 0x80 && c !== '%' && /[!#$&'*+\-.^_`|~0-9A-Za-z]/.test(c)) out += c;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * upstream's SetAuthProxyHeaders: the user as X-Remote-User, X-Remote-Uid, X-Remote-Group (one per
 * group) and X-Remote-Extra-<key>; whatever the client sent under those names is dropped first, and
 * so are its credentials (the extension trusts the proxy's client certificate, not the caller).
 */
export function proxyHeaders(incoming: Record<string, string | string[] | undefined>, user: UserInfo): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower) || lower.startsWith('x-remote-') || lower.startsWith('impersonate-')) continue;
    out[name] = value;
  }
  out['X-Remote-User'] = user.name;
  if (user.uid) out['X-Remote-Uid'] = user.uid;
  if (user.groups.length > 0) out['X-Remote-Group'] = [...user.groups];
  for (const [key, values] of Object.entries(user.extra ?? {})) if (values.length > 0) out[`X-Remote-Extra-${headerKeyEscape(key)}`] = [...values];
  return out;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'authorization', 'host']);

/** An aggregated group's APIGroup document: versions by versionPriority, then version order (upstream's apiservice sort). */
export function aggregatedGroup(group: string, views: readonly ApiServiceView[]): JsonObject | undefined {
  const mine = views.filter((v) => v.group === group && v.service);
  if (mine.length === 0) return undefined;
  mine.sort((a, b) => b.versionPriority - a.versionPriority || compareVersionPriority(a.version, b.version) || a.version.localeCompare(b.version));
  const versions = mine.map((v) => ({groupVersion: `${group}/${v.version}`, version: v.version}));
  return {name: group, versions, preferredVersion: versions[0]!};
}

/** `/apis`: the local groups, then the groups only non-local APIServices serve, by groupPriorityMinimum (highest first), then name. */
export function mergeGroupList(local: JsonObject, views: readonly ApiServiceView[]): JsonObject {
  const groups = (Array.isArray(local.groups) ? local.groups : []).filter(isJsonObject);
  const known = new Set(groups.map((g) => g.name));
  const extra = [...new Set(views.filter((v) => v.service && !known.has(v.group)).map((v) => v.group))];
  const priority = (group: string) => Math.max(...views.filter((v) => v.group === group).map((v) => v.groupPriorityMinimum));
  extra.sort((a, b) => priority(b) - priority(a) || a.localeCompare(b));
  return {...local, groups: [...groups, ...extra.map((g) => aggregatedGroup(g, views) as JsonObject)]};
}
