/**
 * The debug dumps (upstream's apf_controller_debug.go): `/debug/api_priority_and_fairness/dump_*`,
 * comma-and-tab separated rows aligned as Go's tabwriter (minwidth 8, padding 1) aligns them: one
 * row per priority level, per queue, or per waiting request (`?includeRequestDetails=1` adds who and
 * what).
 */
import type {FlowControl} from './flow-control.js';

export const DEBUG_PREFIX = '/debug/api_priority_and_fairness/';
const NONE = '<none>';

/** The dump a path names, or undefined. */
export function debugDump(flowControl: FlowControl, path: string, query: URLSearchParams, now: number): string | undefined {
  switch (path) {
    case `${DEBUG_PREFIX}dump_priority_levels`:
      return dumpPriorityLevels(flowControl);
    case `${DEBUG_PREFIX}dump_queues`:
      return dumpQueues(flowControl);
    case `${DEBUG_PREFIX}dump_requests`:
      return dumpRequests(flowControl, (query.get('includeRequestDetails') ?? '').length > 0, now);
    default:
      return undefined;
  }
}

function sortedLevels(flowControl: FlowControl) {
  return [...flowControl.levels.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function dumpPriorityLevels(flowControl: FlowControl): string {
  const rows: string[][] = [['PriorityLevelName', 'ActiveQueues', 'IsIdle', 'IsQuiescing', 'WaitingRequests', 'ExecutingRequests', 'DispatchedRequests', 'RejectedRequests', 'TimedoutRequests', 'CancelledRequests']];
  for (const level of sortedLevels(flowControl)) {
    const queues = level.queues;
    if (!queues) {
      rows.push([level.name, ...Array<string>(9).fill(NONE)]);
      continue;
    }
    const active = queues.queueStates().filter((q) => q.waiting.length > 0).length;
    const idle = queues.waitingRequests === 0 && queues.executing.size === 0;
    const r = level.rejected;
    rows.push([level.name, String(active), String(idle), 'false', String(queues.waitingRequests), String(queues.executing.size), String(level.dispatched), String(r['queue-full'] + r['concurrency-limit']), String(r['time-out']), String(r.cancelled)]);
  }
  return tabulate(rows);
}

function dumpQueues(flowControl: FlowControl): string {
  const rows: string[][] = [['PriorityLevelName', 'Index', 'PendingRequests', 'ExecutingRequests', 'SeatsInUse', 'NextDispatchR', 'InitialSeatsSum', 'MaxSeatsSum', 'TotalWorkSum']];
  for (const level of sortedLevels(flowControl)) {
    if (!level.queues) {
      rows.push([level.name, ...Array<string>(8).fill(NONE)]);
      continue;
    }
    level.queues.queueStates().forEach((q, i) => {
      rows.push([level.name, String(i), String(q.waiting.length), String(q.executing), String(q.seatsInUse), seatSeconds(q.nextDispatchR), String(q.waitingSeats), String(q.waitingSeats), seatSeconds(q.waitingSeats * 0.003)]);
    });
  }
  return tabulate(rows);
}

function dumpRequests(flowControl: FlowControl, details: boolean, _now: number): string {
  const header = ['PriorityLevelName', 'FlowSchemaName', 'QueueIndex', 'RequestIndexInQueue', 'FlowDistingsher', 'ArriveTime', 'InitialSeats', 'FinalSeats', 'AdditionalLatency'];
  if (details) header.push('UserName', 'Verb', 'APIPath', 'Namespace', 'Name', 'APIVersion', 'Resource', 'SubResource');
  const rows: string[][] = [header];
  for (const level of sortedLevels(flowControl)) {
    level.queues?.queueStates().forEach((q, iq) => {
      q.waiting.forEach((w, ir) => {
        const d = w.info.describe;
        const row = [level.name, d?.flowSchema ?? '', String(iq), String(ir), d?.flowDistinguisher ?? '', new Date(w.arrivedAt).toISOString(), String(w.info.seats), '0', '0s'];
        if (details) row.push(d?.user ?? '', d?.verb ?? '', d?.path ?? '', d?.namespace ?? '', d?.name ?? '', d?.apiVersion ?? '', d?.resource ?? '', d?.subresource ?? '');
        rows.push(row);
      });
    });
  }
  return tabulate(rows);
}

/** Upstream prints SeatSeconds with 8 decimals and the unit `ss`. */
function seatSeconds(value: number): string {
  return `${value.toFixed(8)}ss`;
}

/**
 * Cells joined by `,\t`, aligned as Go's tabwriter.NewWriter(w, 8, 0, 1, ' ', 0) aligns them: every
 * cell but a line's last is padded to its column's width (the widest cell + 1, at least 8).
 */
export function tabulate(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      if (i === row.length - 1) return;
      widths[i] = Math.max(widths[i] ?? 8, cell.length + 1 + 1);
    });
  }
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : `${cell},`.padEnd(widths[i]!))).join('')).join('\n') + '\n';
}
