/**
 * What `orch status` found, and the JSON document it prints with `-o json`. Pure.
 *
 * The JSON schema is a contract for CI scripts: keys appear in the order below, optional keys are
 * omitted rather than null, and new keys may be added but none removed or retyped.
 *
 *   {
 *     "components": [                      // in the order apiserver, controller-manager, agent (selected ones only)
 *       {
 *         "name": "apiserver" | "controller-manager" | "agent",
 *         "url": string,                   // the base URL probed
 *         "reachable": boolean,            // an HTTP answer came back from the livez probe
 *         "ready": boolean,                // reachable, and livez and readyz both passed
 *         "livez":  Probe | null,          // null when not reachable
 *         "readyz": Probe | null,
 *         "error"?: string                 // why it is unreachable or not usable (connection error, HTTP 401...)
 *       }
 *     ],
 *     "leader": {                          // Lease orch-system/orch-controller-manager; null when absent or unreadable
 *       "holder": string | null,           // null once the holder released the lease
 *       "renewTime": string | null,        // RFC 3339 (MicroTime) as stored
 *       "transitions": number,
 *       "leaseDurationSeconds": number | null
 *     } | null,
 *     "ready": boolean                     // every listed component ready; the exit code is 0 exactly when true
 *   }
 *
 *   Probe = {"path": string, "httpStatus": number, "ok": boolean,
 *            "checks": [{"name": string, "ok": boolean, "reason"?: string}]}
 *
 * A check is ok when it passed or was excluded. `reason` is read from the single-check endpoint
 * (`/readyz/<name>`) for failing checks, since the verbose root body withholds it; it is absent
 * when that endpoint would not say. The agent has no /livez or /readyz: both probes read its
 * /healthz (the probe's `path` says so).
 */
import type {ParsedHealthBody} from './health-body.js';

export const COMPONENTS = ['apiserver', 'controller-manager', 'agent'] as const;
export type ComponentName = (typeof COMPONENTS)[number];

export interface CheckResult {
  name: string;
  ok: boolean;
  reason?: string;
}

export interface ProbeResult {
  path: string;
  httpStatus: number;
  ok: boolean;
  checks: CheckResult[];
  /** `warn:` lines of the body; shown in the table, not part of the JSON document. */
  warnings: string[];
}

export interface ComponentStatus {
  name: ComponentName;
  url: string;
  reachable: boolean;
  ready: boolean;
  livez: ProbeResult | null;
  readyz: ProbeResult | null;
  error?: string;
}

export interface LeaderStatus {
  holder: string | null;
  renewTime: string | null;
  transitions: number;
  leaseDurationSeconds: number | null;
}

export interface StatusReport {
  components: ComponentStatus[];
  leader: LeaderStatus | null;
  /** Why `leader` is null (no lease, API server unreachable...); for the table only. */
  leaderNote?: string;
  ready: boolean;
}

/**
 * A probe's result from the HTTP status and the parsed body. It passes only on a 200 whose body
 * says so: a 200 from something that is not a health endpoint (a proxy's page) must not count.
 */
export function probeResult(path: string, httpStatus: number, body: ParsedHealthBody): ProbeResult {
  return {
    path,
    httpStatus,
    ok: httpStatus === 200 && body.verdict === 'passed',
    checks: body.checks.map((c) => ({name: c.name, ok: c.state !== 'failed', ...(c.reason ? {reason: c.reason} : {})})),
    warnings: body.warnings,
  };
}

/** A component is ready when it answered and both its probes passed. */
export function componentReady(c: Pick<ComponentStatus, 'reachable' | 'livez' | 'readyz' | 'error'>): boolean {
  return c.reachable && c.error === undefined && c.livez?.ok === true && c.readyz?.ok === true;
}

/** The whole report: ready only if at least one component was checked and every one is ready. */
export function buildReport(components: ComponentStatus[], leader: LeaderStatus | null, leaderNote?: string): StatusReport {
  return {
    components,
    leader,
    ...(leaderNote !== undefined ? {leaderNote} : {}),
    ready: components.length > 0 && components.every((c) => c.ready),
  };
}

export function exitCodeOf(report: StatusReport): 0 | 1 {
  return report.ready ? 0 : 1;
}

function probeDocument(probe: ProbeResult | null) {
  if (!probe) return null;
  return {
    path: probe.path,
    httpStatus: probe.httpStatus,
    ok: probe.ok,
    checks: probe.checks.map((c) => ({name: c.name, ok: c.ok, ...(c.reason !== undefined ? {reason: c.reason} : {})})),
  };
}

/** The `-o json` document, built key by key so its shape never follows internal fields. */
export function statusDocument(report: StatusReport) {
  return {
    components: report.components.map((c) => ({
      name: c.name,
      url: c.url,
      reachable: c.reachable,
      ready: c.ready,
      livez: probeDocument(c.livez),
      readyz: probeDocument(c.readyz),
      ...(c.error !== undefined ? {error: c.error} : {}),
    })),
    leader: report.leader && {
      holder: report.leader.holder,
      renewTime: report.leader.renewTime,
      transitions: report.leader.transitions,
      leaseDurationSeconds: report.leader.leaseDurationSeconds,
    },
    ready: report.ready,
  };
}

export function formatStatusJson(report: StatusReport): string {
  return JSON.stringify(statusDocument(report), null, 2) + '\n';
}
