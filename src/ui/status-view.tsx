/**
 * The live view of `orch status --watch`: the components table (livez/readyz in color), what is
 * wrong (errors, failing checks with their reasons), the leader, and how fresh it all is. Rows and
 * texts come from the same pure functions as the printed table (src/cmd/status/format.ts), so both
 * always say the same.
 */
import {Box, Text, render} from 'ink';
import type {StatusSnapshot} from '../cmd/status/main.js';
import {leaderLine, statusRows, STATUS_HEADERS, type ProbeCell} from '../cmd/status/format.js';
import {systemClock, type Clock} from '../daemons/shared/clock.js';
import type {StateEmitter} from './state-emitter.js';
import type {DashboardHandle} from './apiserver-dashboard.js';
import {CheckMark} from './components/check-list.js';
import {humanDuration} from './components/duration.js';
import {Table, type Cell} from './components/table.js';
import {useNow} from './components/use-now.js';
import {useSnapshot} from './components/use-snapshot.js';

export interface StatusViewProps {
  emitter: StateEmitter<StatusSnapshot>;
  /** Drives the ages between snapshots; a FakeClock in tests. */
  clock?: Clock;
}

const PROBE_COLOR: Record<ProbeCell, string> = {ok: 'green', failed: 'red', '-': 'gray'};

/** The printed table's columns but DETAIL, which the problem lines below give in full. */
const COLUMNS = STATUS_HEADERS.filter((h) => h !== 'DETAIL').map((header) => ({header}));

function probe(cell: ProbeCell): Cell {
  return {text: cell, color: PROBE_COLOR[cell]};
}

/**
 * What is wrong, one line each, in full (the table would cut it at the terminal's edge): a
 * component's error, else its failing checks with the reason when the server gave it.
 */
function Problems({snapshot}: {snapshot: StatusSnapshot}) {
  const lines = snapshot.report.components.flatMap((c) => {
    if (c.error !== undefined) return [{key: c.name, component: c.name, what: '', reason: c.error}];
    const seen = new Set<string>();
    return [c.livez, c.readyz].flatMap((p) =>
      (p?.checks ?? [])
        .filter((check) => !check.ok && !seen.has(check.name) && seen.add(check.name))
        .map((check) => ({key: `${c.name}/${check.name}`, component: c.name, what: ` ${check.name}`, reason: check.reason})),
    );
  });
  if (lines.length === 0) return null;
  return (
    <Box flexDirection="column" marginTop={1}>
      {lines.map(({key, component, what, reason}) => (
        <Text key={key}>
          <CheckMark ok={false} /> {component}
          {what}
          {reason ? <Text dimColor> {reason}</Text> : null}
        </Text>
      ))}
    </Box>
  );
}

export function StatusView({emitter, clock = systemClock}: StatusViewProps) {
  const snapshot = useSnapshot(emitter);
  const now = useNow(clock);
  if (!snapshot) return <Text dimColor>Checking…</Text>;
  const {report} = snapshot;
  const rows = statusRows(report).map((r): Cell[] => [
    {text: r.component, bold: true},
    r.endpoint,
    probe(r.livez),
    probe(r.readyz),
    {text: r.failing, color: 'red'},
  ]);
  return (
    <Box flexDirection="column">
      <Table columns={COLUMNS} rows={rows} />
      <Problems snapshot={snapshot} />
      <Box marginTop={1}>
        <Text>{leaderLine(report.leader, report.leaderNote, now)}</Text>
      </Box>
      <Text>
        Ready: {report.ready ? <Text color="green">yes</Text> : <Text color="red">no</Text>}
        <Text dimColor>
          {'  '}checked {humanDuration(now - snapshot.at)} ago, every second · Ctrl-C to quit
        </Text>
      </Text>
    </Box>
  );
}

/** Mounts the view on the terminal (the caller checks for a TTY); Ctrl-C unmounts it, which ends waitUntilExit. */
export function renderStatusView(emitter: StateEmitter<StatusSnapshot>): DashboardHandle {
  const app = render(<StatusView emitter={emitter} />, {exitOnCtrlC: true});
  return {unmount: () => app.unmount(), waitUntilExit: () => app.waitUntilExit()};
}
