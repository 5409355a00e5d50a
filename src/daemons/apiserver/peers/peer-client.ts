/**
 * Talking to a peer API server (upstream's peer proxy transport, BuildPeerProxy): TLS verified
 * with `--peer-ca-file` (the system roots without it) for the server name
 * `<default service>.default.svc`, the proxy client certificate (`--proxy-client-cert-file`/
 * `--proxy-client-key-file`) and the user in the front-proxy X-Remote-* headers, as the aggregator
 * sends them (aggregator/apiservices.ts proxyHeaders). Every request carries
 * `x-kubernetes-peer-proxied: true`.
 *
 * Two uses: the proxied request itself (streamed both ways by rest/proxy.ts forward), and the
 * discovery of what a peer serves. Upstream (1.33 on) reads the peer's aggregated discovery
 * (`/api`, `/apis` as APIGroupDiscoveryList); orch serves no aggregated discovery, so the same set
 * is read from the peer's unaggregated documents: `/api`, `/apis` and each version's resource list.
 */
import {request as httpsRequest} from 'node:https';
import type {ConnectionOptions} from 'node:tls';
import {names} from '../../../api/names.js';
import {proxyHeaders} from '../aggregator/apiservices.js';
import {forward} from '../rest/proxy.js';
import type {ApiRequest, ApiResponse, UserInfo} from '../rest/types.js';
import {gvrKey, PEER_PROXIED_HEADER} from './routing.js';

export interface PeerCredentials {
  /** `--peer-ca-file`'s bundle; undefined: the system roots. */
  ca?: string;
  /** The proxy client certificate and key. */
  cert: string;
  key: string;
}

/** upstream asks peers for discovery as system:apiserver in system:authenticated. */
const DISCOVERY_USER: UserInfo = {name: 'system:apiserver', uid: 'system:apiserver', groups: ['system:authenticated']};
const DISCOVERY_TIMEOUT_MS = 5000;

function splitHostPort(address: string): {host: string; port: number} {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(address);
  if (!match) throw new Error(`invalid peer address ${JSON.stringify(address)}`);
  return {host: match[1] ?? match[2]!, port: Number(match[3])};
}

export class PeerClient {
  constructor(private readonly credentials: PeerCredentials) {}

  private tls(): ConnectionOptions {
    // upstream's transport verifies the peer as the default service's in-cluster name, whatever IP it dials.
    return {ca: this.credentials.ca, cert: this.credentials.cert, key: this.credentials.key, servername: `${names().defaultService}.default.svc`, rejectUnauthorized: true};
  }

  /** Proxies the request to the peer at `address` as `user`, streaming the answer back. */
  proxy(req: ApiRequest, res: ApiResponse, address: string, user: UserInfo): Promise<void> {
    const {host, port} = splitHostPort(address);
    const headers = {...proxyHeaders(req.headers, user), [PEER_PROXIED_HEADER]: 'true'};
    return forward(req, res, {scheme: 'https', host, port}, req.url ?? '/', undefined, {headers, tls: this.tls(), timeoutMs: 0, plainTextErrors: true});
  }

  /** The group/version/resources (gvrKey) the peer at `address` serves, from its discovery. */
  async served(address: string): Promise<Set<string>> {
    const served = new Set<string>();
    const add = (group: string, version: string, list: {resources?: {name?: string}[]}) => {
      // Subresources (`pods/log`) route with their resource.
      for (const r of list.resources ?? []) if (r.name && !r.name.includes('/')) served.add(gvrKey({group, version, resource: r.name}));
    };
    const core = (await this.get(address, '/api')) as {versions?: string[]};
    const groups = (await this.get(address, '/apis')) as {groups?: {name: string; versions?: {version: string}[]}[]};
    const lists: Promise<void>[] = [
      ...(core.versions ?? []).map(async (v) => add('', v, (await this.get(address, `/api/${v}`)) as never)),
      ...(groups.groups ?? []).flatMap((g) => (g.versions ?? []).map(async (v) => add(g.name, v.version, (await this.get(address, `/apis/${g.name}/${v.version}`)) as never))),
    ];
    await Promise.all(lists);
    return served;
  }

  private get(address: string, path: string): Promise<unknown> {
    const {host, port} = splitHostPort(address);
    const headers = {...proxyHeaders({accept: 'application/json'}, DISCOVERY_USER), [PEER_PROXIED_HEADER]: 'true'};
    return new Promise((resolve, reject) => {
      const request = httpsRequest({host, port, path, method: 'GET', headers, timeout: DISCOVERY_TIMEOUT_MS, ...this.tls()}, (reply) => {
        const chunks: Buffer[] = [];
        reply.on('data', (chunk: Buffer) => chunks.push(chunk));
        reply.on('error', reject);
        reply.on('end', () => {
          if (reply.statusCode !== 200) return reject(new Error(`discovery request ${path} failed with status: ${reply.statusCode}`));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (error) {
            reject(new Error(`error decoding discovery response ${path}: ${(error as Error).message}`));
          }
        });
      });
      request.on('timeout', () => request.destroy(new Error(`discovery request ${path} timed out`)));
      request.on('error', reject);
      request.end();
    });
  }
}
