/**
 * The live terminal view of `orch apiserver`: the server's log lines scroll above (printed once),
 * and below them a panel redrawn from the server's state snapshot, at most a few times a second.
 * It only reads snapshots (DESIGN.md: "the Ink dashboards only read the state snapshot").
 */
import {Box, Text, render} from 'ink';
import type {ApiServerSnapshot, ShutdownPhase} from '../daemons/apiserver/state.js';
import type {StateEmitter} from './state-emitter.js';
import type {LogBuffer} from './components/log-buffer.js';
import {CheckList, CheckMark} from './components/check-list.js';
import {KeyValue} from './components/key-value.js';
import {LogPane} from './components/log-pane.js';
import {Sparkline, useHistory} from './components/sparkline.js';
import {formatMs, formatRate, topEntries} from './components/format.js';
import {useSnapshot} from './components/use-snapshot.js';
import {useNow} from './components/use-now.js';
import {Uptime} from './components/uptime.js';
import {systemClock, type Clock} from '../daemons/shared/clock.js';

export interface ApiServerDashboardProps {
  emitter: StateEmitter<ApiServerSnapshot>;
  logs: LogBuffer;
  /** Drives the uptime between snapshots; a FakeClock in tests. */
  clock?: Clock;
}

/** Points in the request-rate sparkline: at 4 snapshots a second, the last ~10 seconds. */
const RATE_HISTORY = 40;
/** Resources listed by name under "Watches"; the rest are counted. */
const TOP_WATCHED = 4;

const PHASE_COLOR: Record<ShutdownPhase, string> = {
  starting: 'cyan',
  'serving normally': 'green',
  'delaying termination': 'yellow',
  'graceful termination': 'yellow',
  stopped: 'red',
};

const CODE_CLASS_COLOR: Record<string, string> = {'2xx': 'green', '3xx': 'cyan', '4xx': 'yellow', '5xx': 'red'};

function Header({s, now}: {s: ApiServerSnapshot; now: number}) {
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>orch apiserver</Text> <Text dimColor>{s.version}</Text> <Text color="cyan">{s.url}</Text> <Uptime since={s.startedAt} now={now} />
      </Text>
      <Text>
        <Text dimColor>orchconfig</Text> {s.orchconfigPath}
      </Text>
      <Text>
        <Text dimColor>try</Text> kubectl --kubeconfig {s.orchconfigPath} get ns
      </Text>
    </Box>
  );
}

/** Always shown; anything but "serving normally" is drawn as a badge so it cannot be missed. */
function ShutdownLine({shutdown}: {shutdown: ApiServerSnapshot['shutdown']}) {
  const color = PHASE_COLOR[shutdown.phase];
  if (shutdown.phase === 'serving normally') {
    return (
      <KeyValue label="Phase">
        <Text color={color}>{shutdown.phase}</Text>
      </KeyValue>
    );
  }
  const draining = shutdown.phase === 'delaying termination' || shutdown.phase === 'graceful termination';
  return (
    <KeyValue label="Phase">
      <Text bold inverse color={color}>
        {` ${shutdown.phase} `}
      </Text>
      {draining ? ` ${shutdown.inFlight} in flight, ${shutdown.longRunning} long-running` : ''}
    </KeyValue>
  );
}

function Store({store}: {store: ApiServerSnapshot['store']}) {
  return (
    <>
      <KeyValue label="Store">
        <Text bold>{store.engine}</Text> {store.location} <Text dimColor>revision</Text> {store.revision}{'  '}
        <CheckMark ok={store.reachable} /> {store.reachable ? 'reachable' : 'unreachable'}{'  '}
        <CheckMark ok={store.cachesSynced} /> {store.cachesSynced ? 'caches synced' : 'caches syncing'}
      </KeyValue>
      {store.writeFailure ? (
        <KeyValue label="Writes">
          <CheckMark ok={false} /> <Text color="red">failing: {store.writeFailure}</Text>
        </KeyValue>
      ) : null}
    </>
  );
}

function Codes({byCode}: {byCode: Record<string, number>}) {
  const classes = Object.keys(byCode).sort();
  if (classes.length === 0) return <Text dimColor>none yet</Text>;
  return (
    <>
      {classes.map((code, i) => (
        <Text key={code}>
          {i > 0 ? '  ' : ''}
          <Text color={CODE_CLASS_COLOR[code]}>{code}</Text> {byCode[code]}
        </Text>
      ))}
    </>
  );
}

function Watches({watches}: {watches: ApiServerSnapshot['watches']}) {
  const {top, others} = topEntries(watches.byResource, TOP_WATCHED);
  return (
    <KeyValue label="Watches">
      {watches.open} open
      {top.length > 0 ? <Text dimColor>{'  '}</Text> : null}
      {top.map(([resource, count], i) => (
        <Text key={resource}>
          {i > 0 ? <Text dimColor> · </Text> : null}
          {resource} {count}
        </Text>
      ))}
      {others > 0 ? <Text dimColor> · +{others} more</Text> : null}
    </KeyValue>
  );
}

function Requests({s, rates}: {s: ApiServerSnapshot; rates: number[]}) {
  const r = s.requests;
  return (
    <Box flexDirection="column">
      <KeyValue label="Requests">
        {formatRate(r.ratePerSecond)}/s <Sparkline values={rates} /> <Text dimColor>total</Text> {r.total}
      </KeyValue>
      <KeyValue label="In flight">
        {r.inFlightReadOnly} read-only  {r.inFlightMutating} mutating
      </KeyValue>
      {s.priorityLevels ? <PriorityLevels levels={s.priorityLevels} /> : null}
      <KeyValue label="Latency">
        <Text dimColor>p50</Text> {formatMs(r.latencyMs.p50)}  <Text dimColor>p99</Text> {formatMs(r.latencyMs.p99)}
      </KeyValue>
      <KeyValue label="Codes">
        <Codes byCode={r.byCode} />
      </KeyValue>
    </Box>
  );
}

/**
 * Priority and fairness: the busy levels' seats in use of their nominal limit and queued requests
 * (the exempt level counts requests; it has no limit); idle levels are only counted.
 */
function PriorityLevels({levels}: {levels: NonNullable<ApiServerSnapshot['priorityLevels']>}) {
  const busy = levels.filter((l) => l.seatsInUse > 0 || l.queued > 0);
  const idle = levels.length - busy.length;
  return (
    <KeyValue label="Priority">
      {busy.map((l, i) => (
        <Text key={l.name}>
          {i > 0 ? <Text dimColor> · </Text> : null}
          {l.name} {l.exempt ? `${l.seatsInUse}` : `${l.seatsInUse}/${l.limit}`}
          {l.queued > 0 ? <Text color="yellow"> {l.queued} queued</Text> : null}
        </Text>
      ))}
      {idle > 0 ? <Text dimColor>{busy.length > 0 ? ' · ' : ''}{idle} idle</Text> : null}
    </KeyValue>
  );
}

/** The live panel for one snapshot. */
export function ApiServerPanel({s, rates, now}: {s: ApiServerSnapshot; rates: number[]; now: number}) {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={PHASE_COLOR[s.shutdown.phase]} paddingX={1}>
      <Header s={s} now={now} />
      <Box marginTop={1} flexDirection="column">
        <ShutdownLine shutdown={s.shutdown} />
        <Store store={s.store} />
      </Box>
      <Box marginTop={1}>
        <Box width="50%" paddingRight={2}>
          <CheckList title="livez" checks={s.livez} />
        </Box>
        <Box width="50%">
          <CheckList title="readyz" checks={s.readyz} />
        </Box>
      </Box>
      <Box marginTop={1} flexDirection="column">
        <Requests s={s} rates={rates} />
        <Watches watches={s.watches} />
      </Box>
    </Box>
  );
}

export function ApiServerDashboard({emitter, logs, clock = systemClock}: ApiServerDashboardProps) {
  const snapshot = useSnapshot(emitter);
  const ticked = useNow(clock);
  const now = snapshot ? Math.max(ticked, snapshot.at) : ticked;
  const rates = useHistory(snapshot, snapshot?.requests.ratePerSecond, RATE_HISTORY);
  return (
    <>
      <LogPane buffer={logs} />
      {snapshot ? <ApiServerPanel s={snapshot} rates={rates} now={now} /> : <Text dimColor>orch apiserver starting…</Text>}
    </>
  );
}

export interface DashboardHandle {
  unmount(): void;
  waitUntilExit(): Promise<unknown>;
}

/**
 * Mounts the dashboard on the terminal (the caller checks that stdout is a TTY). Ctrl-C is left to
 * the process's SIGINT handler, which runs the graceful shutdown the dashboard then shows.
 */
export function renderApiServerDashboard(emitter: StateEmitter<ApiServerSnapshot>, logs: LogBuffer): DashboardHandle {
  const app = render(<ApiServerDashboard emitter={emitter} logs={logs} />, {exitOnCtrlC: false});
  return {unmount: () => app.unmount(), waitUntilExit: () => app.waitUntilExit()};
}
