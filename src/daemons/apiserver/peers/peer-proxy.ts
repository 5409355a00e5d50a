/**
 * The mixed version proxy in the request path (gate UnknownVersionInteroperabilityProxy): a
 * resource request for a group/version/resource this server does not serve (turned off by
 * --runtime-config, or not known to this release) but a live peer does is proxied to that peer
 * (routing.ts decides; peer-client.ts talks to the peer; peer-discovery.ts knows the peers).
 *
 * Where it sits, as upstream: kube-apiserver wraps the API handler itself with the peer proxy
 * (`apiHandler = peerProxy.WrapHandler(apiHandler)` before the default filter chain), so the
 * request has been authenticated, audited, impersonated, admitted by priority and fairness and
 * authorized here first; this server authorizes the request before proxying it, the peer again as
 * the user the X-Remote-* headers name.
 *
 * Peer discovery follows upstream's 1.33+ line (the peers' discovery documents, read when a peer's
 * identity lease appears or changes holder), not the 1.28-1.32 StorageVersion objects.
 */
import {readFile} from 'node:fs/promises';
import {ApiError, failureStatus} from '../../../api/status.js';
import {UserError} from '../../../lib/errors.js';
import type {Clock} from '../../shared/clock.js';
import type {MetricsRegistry} from '../../shared/metrics/registry.js';
import {parseCertificateBundle} from '../../shared/authentication/x509.js';
import {authorizeResourceRequest} from '../aggregator/handler.js';
import {proxyClientCredentials, type AggregatorConfig} from '../aggregator/setup.js';
import {writeError} from '../rest/http-io.js';
import {parseRequestInfo} from '../rest/request-info.js';
import type {ApiRequest, ApiResponse, RequestContext} from '../rest/types.js';
import type {Store} from '../storage/store.js';
import {PeerClient, type PeerCredentials} from './peer-client.js';
import {PeerDiscovery} from './peer-discovery.js';
import {PEER_PROXIED_HEADER, routeRequest, type GroupVersionResource} from './routing.js';

export interface PeerProxyOptions {
  store: Store;
  keyPrefix: string;
  /** This server's identity lease name. */
  self: string;
  credentials: PeerCredentials;
  /** Whether this server serves the resource (the request's path also names an aggregated API's group version). */
  servedLocally: (gvr: GroupVersionResource, path: string) => boolean;
  clock: Clock;
  onError?: (message: string, error: unknown) => void;
  /** The first retry pause of a failed peer discovery read (tests shorten it). */
  discoveryRetryMs?: number;
  /** Where upstream's apiserver_rerouted_request_total is registered (the server's /metrics). */
  metrics?: MetricsRegistry;
}

export class PeerProxy {
  private readonly discovery: PeerDiscovery;
  private readonly client: PeerClient;
  private readonly rerouted?: ReturnType<MetricsRegistry['counter']>;

  constructor(private readonly o: PeerProxyOptions) {
    this.client = new PeerClient(o.credentials);
    this.rerouted = o.metrics?.counter({
      name: 'apiserver_rerouted_request_total',
      help: `Total number of requests that were proxied to a peer kube-apiserver because the local apiserver was not capable of serving it, broken down by 'group', 'version', and 'resource' indicating the GVR of the request. If all three are empty (""), the request is a discovery request.`,
      labelNames: ['code', 'group', 'version', 'resource'],
    });
    this.discovery = new PeerDiscovery({
      store: o.store, keyPrefix: o.keyPrefix, self: o.self, clock: o.clock, onError: o.onError, retryMs: o.discoveryRetryMs,
      served: (address) => this.client.served(address),
    });
  }

  start(): void {
    this.discovery.start();
  }

  stop(): void {
    this.discovery.stop();
  }

  /** Proxies the request, or answers 503, and returns true; false when this server serves it. */
  async serve(req: ApiRequest, res: ApiResponse, ctx: RequestContext): Promise<boolean> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const info = parseRequestInfo((req.method ?? 'GET').toUpperCase(), url.pathname, url.searchParams);
    const gvr = info.type === 'resource' ? {group: info.apiGroup, version: info.apiVersion, resource: info.resource} : undefined;
    const decision = routeRequest({
      gvr,
      rerouted: req.headers[PEER_PROXIED_HEADER] === 'true',
      synced: this.discovery.synced,
      servedLocally: gvr ? this.o.servedLocally(gvr, url.pathname) : true,
      self: this.o.self,
      peers: this.discovery.peers(),
      now: this.o.clock.now(),
    });
    if (decision.action === 'local' || info.type !== 'resource') return false;
    const pretty = url.searchParams.get('pretty') === 'true';
    try {
      await authorizeResourceRequest(ctx, info);
      if (decision.action === 'unavailable') throw new ApiError(failureStatus(503, 'ServiceUnavailable', decision.message, {}));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      writeError(res, error, pretty);
      return true;
    }
    await this.client.proxy(req, res, decision.address, ctx.user);
    // (The response is the server's ServerResponse, which knows the status it wrote.)
    this.rerouted?.inc({code: String((res as {statusCode?: number}).statusCode ?? 0), group: info.apiGroup, version: info.apiVersion, resource: info.resource});
    return true;
  }
}

/**
 * The peer proxy from the options (with the gate on): upstream's BuildPeerProxy needs the proxy
 * client certificate; `--peer-ca-file` must be a readable certificate bundle. Problems stop the start.
 */
export async function createPeerProxy(
  options: {peerCaFile?: string; aggregator?: AggregatorConfig} & Omit<PeerProxyOptions, 'credentials'>,
): Promise<PeerProxy> {
  const {peerCaFile, aggregator, ...rest} = options;
  const client = await proxyClientCredentials(aggregator ?? {routing: false, rejectForwardingRedirect: true});
  if (!client) {
    throw new UserError('error building peer proxy handler, proxy-cert-file not specified: the UnknownVersionInteroperabilityProxy feature gate needs --proxy-client-cert-file and --proxy-client-key-file');
  }
  let ca: string | undefined;
  if (peerCaFile) {
    try {
      ca = await readFile(peerCaFile, 'utf8');
      parseCertificateBundle(ca, `--peer-ca-file ${peerCaFile}`);
    } catch (error) {
      const message = (error as Error).message;
      throw new UserError(message.startsWith('--peer-ca-file') ? message : `--peer-ca-file ${peerCaFile}: ${message}`);
    }
  }
  return new PeerProxy({...rest, credentials: {...client, ca}});
}
