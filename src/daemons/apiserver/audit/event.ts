/**
 * Audit events (`audit.<domain>/v1` Event, as upstream's k8s.io/apiserver/pkg/apis/audit/v1) and their
 * two log encodings: JSON lines, and upstream's "legacy" one-line text (plugin/pkg/audit/log EventString).
 * Pure.
 */
import type {Level, Stage} from './policy.js';

export interface AuditUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

export interface ResponseStatus {
  metadata: Record<string, never>;
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code: number;
}

export interface AuditEvent {
  kind: 'Event';
  apiVersion: string;
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: AuditUser;
  impersonatedUser?: AuditUser;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

/** metav1.MicroTime: RFC 3339 with six fractional digits, UTC. `micros` is the sub-millisecond part. */
export function microTime(ms: number, micros = 0): string {
  // Every audit event carries two of these: the date and time up to the second are formatted once a
  // second (Date's ISO formatting was a visible share of an event's cost), the fraction each time.
  const second = Math.floor(ms / 1000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 19); // 2006-01-02T15:04:05
  }
  const fraction = (ms - second * 1000) * 1000 + Math.max(0, Math.min(999, Math.floor(micros)));
  return `${cachedPrefix}.${String(fraction).padStart(6, '0')}Z`;
}

let cachedSecond = NaN;
let cachedPrefix = '';

/** Events under the version the options ask for (`--audit-log-version`); only the group's v1 exists. */
export function withApiVersion(event: AuditEvent, apiVersion: string): AuditEvent {
  return event.apiVersion === apiVersion ? event : {...event, apiVersion};
}

/** Go's %q for the strings we print: JSON's escaping is the same for printable text. */
const q = (s: string) => JSON.stringify(s);
const quotedList = (list: string[]) => list.map(q).join(',');

/** Upstream's legacy log line: `<time> AUDIT: id="..." stage="..." ip="..." method="..." user="..." ...`. */
export function legacyLine(ev: AuditEvent): string {
  let username = '<none>';
  let groups = '<none>';
  if (ev.user.username) {
    username = ev.user.username;
    if (ev.user.groups?.length) groups = quotedList(ev.user.groups);
  }
  let asUser = '<self>';
  let asGroups = '<lookup>';
  if (ev.impersonatedUser) {
    asUser = ev.impersonatedUser.username;
    if (ev.impersonatedUser.groups) asGroups = quotedList(ev.impersonatedUser.groups);
  }
  const namespace = ev.objectRef?.namespace || '<none>';
  const response = ev.responseStatus ? String(ev.responseStatus.code) : '<deferred>';
  const ip = ev.sourceIPs?.[0] ?? '<unknown>';
  return `${ev.requestReceivedTimestamp} AUDIT: id=${q(ev.auditID)} stage=${q(ev.stage)} ip=${q(ip)} method=${q(ev.verb)} user=${q(username)} groups=${q(groups)} as=${q(asUser)} asgroups=${q(asGroups)} user-agent=${q(ev.userAgent ?? '')} namespace=${q(namespace)} uri=${q(ev.requestURI)} response="${response}"`;
}

export type LogFormat = 'json' | 'legacy';

export function encodeEvent(ev: AuditEvent, format: LogFormat): string {
  return format === 'legacy' ? legacyLine(ev) : JSON.stringify(ev);
}

/**
 * Upstream's truncating backend: an event over the limit first loses its request and response
 * objects (annotated `audit.<domain>/truncated: "true"`), and is dropped (undefined) if still too big.
 */
export function truncateEvent(ev: AuditEvent, maxEventBytes: number, truncatedAnnotation: string): AuditEvent | undefined {
  if (Buffer.byteLength(JSON.stringify(ev)) <= maxEventBytes) return ev;
  const smaller: AuditEvent = {...ev, annotations: {...ev.annotations, [truncatedAnnotation]: 'true'}};
  delete smaller.requestObject;
  delete smaller.responseObject;
  return Buffer.byteLength(JSON.stringify(smaller)) <= maxEventBytes ? smaller : undefined;
}
