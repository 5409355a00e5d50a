/**
 * The mixed version proxy's decision (upstream's peerProxyHandler.WrapHandler, k8s.io/apiserver
 * pkg/util/peerproxy, gate UnknownVersionInteroperabilityProxy): serve a request here, proxy it to
 * a peer API server that serves its group/version/resource, or answer 503. Pure: the caller passes
 * what this server serves, what each peer serves, and the time.
 *
 * Upstream's order, kept here: non-resource requests, requests a peer already proxied (the
 * `x-kubernetes-peer-proxied: true` header, the loop guard), and every request before the peer
 * caches have synced are served locally; then a group/version/resource this server serves is
 * local; else the peers that serve it are the candidates. None: local (the normal 404). Candidates
 * but none with a usable address: 503. Else one of them, at random.
 */

/** upstream's PeerProxiedHeader: set on every proxied request; a server that sees it never proxies again. */
export const PEER_PROXIED_HEADER = 'x-kubernetes-peer-proxied';

/** upstream's message when no candidate's address can be used. */
export const NO_PEER_ADDRESS_MESSAGE = 'Error getting ip and port info of the remote server while proxying';

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** `group/version/resource`, the key of a served set. */
export function gvrKey(gvr: GroupVersionResource): string {
  return `${gvr.group}/${gvr.version}/${gvr.resource}`;
}

/** A peer as its identity lease and its discovery show it. */
export interface PeerView {
  /** The identity lease's name (upstream's server ID). */
  id: string;
  /** `<ip>:<port>` from the lease's peer-advertise-address annotation, if any. */
  address?: string;
  /** When the lease runs out (renewTime + leaseDurationSeconds), ms since the epoch. */
  expiresAt: number;
  /** The group/version/resources its discovery lists (gvrKey). */
  served: ReadonlySet<string>;
}

export interface RouteInput {
  /** The resource asked for; undefined for a non-resource request (discovery, /healthz, ...). */
  gvr?: GroupVersionResource;
  /** The request carries `x-kubernetes-peer-proxied: true`. */
  rerouted: boolean;
  /** The lease informer and the first peer discovery pass are done. */
  synced: boolean;
  /** This server serves the gvr (built-ins left on, custom resources, aggregated APIs). */
  servedLocally: boolean;
  /** This server's own identity lease name: never a candidate. */
  self: string;
  peers: readonly PeerView[];
  now: number;
  /** Picks one of n candidates (upstream: rand.Intn). */
  pick?: (n: number) => number;
}

export type RouteDecision =
  | {action: 'local'; why: 'non-resource' | 'rerouted' | 'not-synced' | 'served-locally' | 'no-peer'}
  | {action: 'proxy'; peer: string; address: string}
  | {action: 'unavailable'; message: string};

/** `host:port` with a port, as Go's net.SplitHostPort accepts it (IPv6 bracketed). */
export function validHostPort(address: string | undefined): boolean {
  if (!address) return false;
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(address);
  if (!match) return false;
  const port = Number(match[3]);
  return port >= 0 && port <= 65535;
}

export function routeRequest(input: RouteInput): RouteDecision {
  if (!input.gvr) return {action: 'local', why: 'non-resource'};
  if (input.rerouted) return {action: 'local', why: 'rerouted'};
  if (!input.synced) return {action: 'local', why: 'not-synced'};
  if (input.servedLocally) return {action: 'local', why: 'served-locally'};
  const key = gvrKey(input.gvr);
  // Upstream drops a peer from its cache when its lease goes; here an expired lease counts as gone too.
  const candidates = input.peers.filter((p) => p.id !== input.self && p.expiresAt > input.now && p.served.has(key));
  if (candidates.length === 0) return {action: 'local', why: 'no-peer'};
  const reachable = candidates.filter((p) => validHostPort(p.address));
  if (reachable.length === 0) return {action: 'unavailable', message: NO_PEER_ADDRESS_MESSAGE};
  const chosen = reachable[(input.pick ?? ((n) => Math.floor(Math.random() * n)))(reachable.length)] ?? reachable[0]!;
  return {action: 'proxy', peer: chosen.id, address: chosen.address!};
}
