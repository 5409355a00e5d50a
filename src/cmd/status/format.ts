/**
 * The text of `orch status`: one row per component and a leader line, shared by the printed
 * table and the live view (src/ui/status-view.tsx). Pure.
 */
import {humanDuration} from '../../ui/components/duration.js';
import type {ComponentStatus, LeaderStatus, ProbeResult, StatusReport} from './report.js';

export type ProbeCell = 'ok' | 'failed' | '-';

export interface StatusRow {
  component: string;
  endpoint: string;
  livez: ProbeCell;
  readyz: ProbeCell;
  /** Names of the failing checks of both probes, each once, in order. */
  failing: string;
  detail: string;
  ready: boolean;
}

export const STATUS_HEADERS = ['COMPONENT', 'ENDPOINT', 'LIVEZ', 'READYZ', 'FAILING CHECKS', 'DETAIL'] as const;

function probeCell(probe: ProbeResult | null): ProbeCell {
  if (!probe) return '-';
  return probe.ok ? 'ok' : 'failed';
}

function failingChecks(c: ComponentStatus): {name: string; reason?: string}[] {
  const seen = new Map<string, string | undefined>();
  for (const probe of [c.livez, c.readyz]) {
    for (const check of probe?.checks ?? []) {
      if (!check.ok && (!seen.has(check.name) || seen.get(check.name) === undefined)) seen.set(check.name, check.reason);
    }
  }
  return [...seen].map(([name, reason]) => ({name, reason}));
}

/**
 * What a person needs next to the checks: the error when unreachable; else why checks fail (their
 * reasons), or that a probe failed without naming a check (an HTTP status), and the body's warnings.
 */
function detailOf(c: ComponentStatus): string {
  if (c.error !== undefined) return c.error;
  const parts = failingChecks(c)
    .filter((f) => f.reason)
    .map((f) => `${f.name}: ${f.reason}`);
  for (const [label, probe] of [['livez', c.livez], ['readyz', c.readyz]] as const) {
    if (probe && !probe.ok && !probe.checks.some((check) => !check.ok)) parts.push(`${label}: HTTP ${probe.httpStatus}`);
  }
  const warnings = new Set([...(c.livez?.warnings ?? []), ...(c.readyz?.warnings ?? [])]);
  return [...parts, ...warnings].join('; ');
}

export function statusRows(report: StatusReport): StatusRow[] {
  return report.components.map((c) => ({
    component: c.name,
    endpoint: c.url,
    livez: probeCell(c.livez),
    readyz: probeCell(c.readyz),
    failing: failingChecks(c)
      .map((f) => f.name)
      .join(','),
    detail: detailOf(c),
    ready: c.ready,
  }));
}

/** RFC 3339 renew time and its age at `now`; the raw text when it does not parse. */
function renewedText(renewTime: string, now: number): string {
  const at = Date.parse(renewTime);
  return Number.isNaN(at) ? `renewed ${renewTime}` : `renewed ${humanDuration(now - at)} ago`;
}

/** `Leader: cp-1_6f1c (renewed 3s ago, 2 transitions)`, or why there is no leader to show. */
export function leaderLine(leader: LeaderStatus | null, note: string | undefined, now: number): string {
  if (!leader) return `Leader: none${note ? ` (${note})` : ''}`;
  const transitions = `${leader.transitions} transition${leader.transitions === 1 ? '' : 's'}`;
  const renewed = leader.renewTime ? `${renewedText(leader.renewTime, now)}, ` : '';
  if (leader.holder === null) return `Leader: none (lease released; ${renewed}${transitions})`;
  return `Leader: ${leader.holder} (${renewed}${transitions})`;
}

/** Columns as wide as their widest cell, two spaces apart, as kubectl prints tables. */
export function alignColumns(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0))) ?? [];
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd());
}

/** The whole printed report: the table, the leader line, and the verdict. */
export function formatStatusTable(report: StatusReport, now: number): string {
  const rows = statusRows(report).map((r) => [r.component, r.endpoint, r.livez, r.readyz, r.failing, r.detail]);
  return [
    ...alignColumns([[...STATUS_HEADERS], ...rows]),
    '',
    leaderLine(report.leader, report.leaderNote, now),
    `Ready: ${report.ready ? 'yes' : 'no'}`,
    '',
  ].join('\n');
}
