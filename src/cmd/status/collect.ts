/**
 * One round of `orch status`: probe each selected component's livez and readyz, read the reasons of
 * failing checks, and look up the leader lease, all concurrently. The HTTP side is injected
 * (`FetchText`), so the whole round runs in unit tests against canned answers.
 */
import {parseCheckReason, parseHealthBody} from './health-body.js';
import {leaderFromLeaseResponse, leaderLeasePath, leaseCandidates, type LeaderLookup} from './leader.js';
import {buildReport, componentReady, probeResult, type ComponentName, type ComponentStatus, type ProbeResult, type StatusReport} from './report.js';

/** Where and how to reach one server. */
export interface Endpoint {
  /** Base URL; a path in it (a proxy prefix) is kept before the health paths. */
  url: string;
  /** PEM of the CAs to trust; unset with `verify: false` for self-signed servers. */
  ca?: string;
  cert?: string;
  key?: string;
  /** Whether the server certificate is checked. */
  verify: boolean;
  servername?: string;
  /** Credentials and impersonation headers (sent to the API server only). */
  headers: Record<string, string | string[]>;
}

export interface TextResponse {
  statusCode: number;
  body: string;
}

/** GET `path` (with its query) on the endpoint; rejects with a message for the user when no answer came. */
export type FetchText = (endpoint: Endpoint, path: string) => Promise<TextResponse>;

/** A component to probe: its endpoint, or why none could be worked out (a broken orchconfig). */
export interface StatusTarget {
  name: ComponentName;
  url: string;
  endpoint?: Endpoint;
  configError?: string;
}

/** The health roots per component: the agent serves only /healthz, so both probes read it (upstream's kubelet does the same). */
export const HEALTH_ROOTS: Record<ComponentName, {livez: string; readyz: string}> = {
  apiserver: {livez: '/livez', readyz: '/readyz'},
  'controller-manager': {livez: '/livez', readyz: '/readyz'},
  agent: {livez: '/healthz', readyz: '/healthz'},
};

/** Reasons are read for this many failing checks per probe at most: a broken server must not cost a request per hook. */
const MAX_REASON_LOOKUPS = 8;

/** An error answer in one line: a Status object's message, else the first line of the body. */
function answerText(response: TextResponse): string {
  try {
    const status = JSON.parse(response.body) as {message?: unknown};
    if (typeof status.message === 'string') return status.message;
  } catch {
    // not JSON
  }
  const line = response.body.trim().split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/** Health roots answer 200 or 500; anything else (401, 403, 404) means the endpoint could not be used. */
function unusableAnswer(path: string, response: TextResponse): string | undefined {
  if (response.statusCode === 200 || response.statusCode === 500) return undefined;
  const text = answerText(response);
  return `GET ${path}: HTTP ${response.statusCode}${text ? `: ${text}` : ''}`;
}

async function withReasons(probe: ProbeResult, root: string, endpoint: Endpoint, fetch: FetchText): Promise<ProbeResult> {
  const failing = probe.checks.filter((c) => !c.ok && c.reason === undefined).slice(0, MAX_REASON_LOOKUPS);
  if (failing.length === 0) return probe;
  const reasons = new Map<string, string>();
  await Promise.all(
    failing.map(async (check) => {
      try {
        const response = await fetch(endpoint, `${root}/${check.name}`);
        const reason = parseCheckReason(response.statusCode, response.body);
        if (reason !== undefined) reasons.set(check.name, reason);
      } catch {
        // The reason is a bonus; the check still shows as failing without it.
      }
    }),
  );
  return {...probe, checks: probe.checks.map((c) => (reasons.has(c.name) ? {...c, reason: reasons.get(c.name)} : c))};
}

function status(target: StatusTarget, fields: Omit<ComponentStatus, 'name' | 'url' | 'ready'>): ComponentStatus {
  const c = {name: target.name, url: target.url, ...fields};
  return {name: c.name, url: c.url, reachable: c.reachable, ready: componentReady(c), livez: c.livez, readyz: c.readyz, ...(c.error !== undefined ? {error: c.error} : {})};
}

/** Probes livez, then readyz (one request when both are the same root), then the failing checks' reasons. */
export async function probeComponent(target: StatusTarget, fetch: FetchText): Promise<ComponentStatus> {
  const endpoint = target.endpoint;
  if (!endpoint) return status(target, {reachable: false, livez: null, readyz: null, error: target.configError ?? 'no address'});
  const roots = HEALTH_ROOTS[target.name];
  const probe = async (root: string): Promise<{probe: ProbeResult; unusable?: string}> => {
    const path = `${root}?verbose`;
    const response = await fetch(endpoint, path);
    const result = probeResult(path, response.statusCode, parseHealthBody(response.body));
    return {probe: await withReasons(result, root, endpoint, fetch), unusable: unusableAnswer(path, response)};
  };

  let livez: Awaited<ReturnType<typeof probe>>;
  try {
    livez = await probe(roots.livez);
  } catch (error) {
    return status(target, {reachable: false, livez: null, readyz: null, error: (error as Error).message});
  }
  let readyz = livez;
  if (roots.readyz !== roots.livez) {
    try {
      readyz = await probe(roots.readyz);
    } catch (error) {
      return status(target, {reachable: true, livez: livez.probe, readyz: null, error: (error as Error).message});
    }
  }
  const error = livez.unusable ?? readyz.unusable;
  return status(target, {reachable: true, livez: livez.probe, readyz: readyz.probe, ...(error !== undefined ? {error} : {})});
}

/** The leader lease through the API server; null with a note when there is no API server to ask or no lease. */
export async function lookupLeader(apiserver: StatusTarget | undefined, fetch: FetchText): Promise<LeaderLookup> {
  if (!apiserver?.endpoint) return {leader: null, note: `lease not read: ${apiserver?.configError ?? 'no API server address'}`};
  try {
    let first: LeaderLookup | undefined;
    for (const n of leaseCandidates()) {
      const response = await fetch(apiserver.endpoint, leaderLeasePath(n));
      let body: unknown;
      try {
        body = JSON.parse(response.body);
      } catch {
        body = undefined;
      }
      const lookup = leaderFromLeaseResponse(response.statusCode, body, n);
      // A 404 under one name set may be a server of the other set's names: try that one too.
      if (response.statusCode !== 404) return lookup;
      first ??= lookup;
    }
    return first!;
  } catch (error) {
    return {leader: null, note: `lease not read: ${(error as Error).message}`};
  }
}

export interface StatusPlan {
  /** The selected components, in display order. */
  targets: StatusTarget[];
  /** The API server, for the lease (whether or not it is among the targets). */
  apiserver: StatusTarget;
}

export async function collectStatus(plan: StatusPlan, fetch: FetchText): Promise<StatusReport> {
  const [components, leader] = await Promise.all([Promise.all(plan.targets.map((t) => probeComponent(t, fetch))), lookupLeader(plan.apiserver, fetch)]);
  return buildReport(components, leader.leader, leader.note);
}
