/**
 * The live terminal view of `orch agent`: log lines scroll above (printed once), and below them a
 * panel drawn from the agent's snapshot: the node and how it is served, the isolation note, the
 * registration and API server link, the pod sources, every pod with its containers, and eviction
 * (signals against thresholds, soft grace timers, pressure conditions, the last evictions).
 *
 * Snapshots arrive only on change, so the times that move on their own (grace deadlines, condition
 * transitions, ages, "running 5m") are computed here from absolute times and a local one-second
 * ticker (useNow).
 */
import {Box, Text, render} from 'ink';
import type {
  AgentContainerSnapshot,
  AgentPodSnapshot,
  AgentSnapshot,
  ApiServerLink,
  ContainerState,
  PodPhase,
  PodSources,
  ProbeKind,
} from '../daemons/agent/state.js';
import type {ConditionSnapshot, EvictionRecord, EvictionSnapshot, SignalSnapshot, ThresholdSnapshot} from '../daemons/agent/eviction/snapshot.js';
import {systemClock, type Clock} from '../daemons/shared/clock.js';
import type {StateEmitter} from './state-emitter.js';
import type {LogBuffer} from './components/log-buffer.js';
import type {DashboardHandle} from './apiserver-dashboard.js';
import {KeyValue} from './components/key-value.js';
import {LogPane} from './components/log-pane.js';
import {Table, type Cell, type StyledCell} from './components/table.js';
import {humanDuration} from './components/duration.js';
import {Uptime} from './components/uptime.js';
import {useNow} from './components/use-now.js';
import {useSnapshot} from './components/use-snapshot.js';

export interface AgentDashboardProps {
  emitter: StateEmitter<AgentSnapshot>;
  logs: LogBuffer;
  /** Drives the countdowns between snapshots; a FakeClock in tests. */
  clock?: Clock;
}

/** Width of the labels of the key/value rows ("Registration" is the longest). */
const LABEL_WIDTH = 14;
/** Pods listed with their containers; the rest (the least interesting, see podsByAttention) are counted. */
const MAX_POD_ROWS = 20;
/** Evictions listed, newest first. */
const MAX_EVICTIONS = 5;
/** Pod and probe failure messages listed under the pods. */
const MAX_PROBLEMS = 5;

const PHASE_COLOR: Record<PodPhase, string> = {
  Pending: 'yellow',
  Running: 'green',
  Succeeded: 'gray',
  Failed: 'red',
  Unknown: 'yellow',
};

/** Probes in the order they gate each other: startup first, then liveness and readiness. */
const PROBE_ORDER: readonly ProbeKind[] = ['startup', 'liveness', 'readiness'];

/**
 * Said plainly and always (issue 6): a pod here is not a container. The runtime's cgroup support
 * decides the second half.
 */
export function isolationNote(cgroups: boolean | undefined): string {
  const base = 'Pods run as local processes, not containers: no filesystem, network, user or PID isolation. Each pod has its own process groups';
  if (cgroups === true) return `${base} and a cgroup enforcing its cpu and memory limits.`;
  if (cgroups === false) return `${base}; cpu and memory limits are not enforced (no writable cgroup v2).`;
  return `${base}.`;
}

// ---- pure view logic ----

const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const DECIMAL_SUFFIXES = ['', 'k', 'M', 'G', 'T', 'P', 'E'];

/**
 * A measured amount in the notation of the thresholds it is read against (`100Mi`, `32k`), rounded
 * for the eye: bytes in powers of 1024, counts in powers of 1000, one decimal below 10. Byte
 * formatters (pretty-bytes and the like) print `GiB`/`kB`, which would not match `--eviction-hard`.
 */
export function formatAmount(amount: number, unit: 'bytes' | 'count'): string {
  const base = unit === 'bytes' ? 1024 : 1000;
  const suffixes = unit === 'bytes' ? BINARY_SUFFIXES : DECIMAL_SUFFIXES;
  let value = Math.max(0, amount);
  let exponent = 0;
  while (value >= base && exponent < suffixes.length - 1) {
    value /= base;
    exponent += 1;
  }
  const digits = exponent > 0 && value < 10 ? Number(value.toFixed(1)) : Math.round(value);
  return `${digits}${suffixes[exponent]}`;
}

/** "in 14s" (whole seconds rounded up, so a full 30 s grace reads 30s), "now" once due. */
export function formatCountdown(remainingMs: number): string {
  if (remainingMs <= 0) return 'now';
  return `in ${humanDuration(Math.ceil(remainingMs / 1000) * 1000)}`;
}

/** "3s ago" at `now`. */
export function formatAgo(at: number, now: number): string {
  return `${humanDuration(now - at)} ago`;
}

/** "100Mi", or "10% (1.5Gi)" once a percentage is resolved against the signal's capacity. */
export function thresholdValue(t: ThresholdSnapshot, unit: 'bytes' | 'count'): string {
  if (t.value.endsWith('%') && t.quantity !== undefined) return `${t.value} (${formatAmount(t.quantity, unit)})`;
  return t.value;
}

/** A threshold as a table cell: its value, and whether it is met, counting down, or evicting. */
export function thresholdCell(t: ThresholdSnapshot | undefined, unit: 'bytes' | 'count', now: number): StyledCell {
  if (t === undefined) return {text: '-', dimColor: true};
  const value = thresholdValue(t, unit);
  const hard = t.gracePeriodMs === 0;
  if (t.actionable) return {text: `${value} met: evicting`, color: 'red', bold: true};
  if (t.met && !hard && t.deadline !== undefined) {
    const remaining = t.deadline - now;
    const when = remaining > 0 ? `evicts ${formatCountdown(remaining)}` : 'grace over';
    return {text: `${value} met: ${when}`, color: 'yellow'};
  }
  if (t.met) return {text: `${value} met`, color: hard ? 'red' : 'yellow'};
  return {text: hard ? value : `${value} grace ${humanDuration(t.gracePeriodMs)}`};
}

/** Observed available amount against capacity, colored by the worst threshold it crosses. */
export function availableCell(s: SignalSnapshot): StyledCell {
  // The reason is listed under the table: an error message would widen the column for every row.
  if (s.available === undefined) return s.error ? {text: 'unmeasured', color: 'red'} : {text: 'unmeasured', dimColor: true};
  const text = s.capacity === undefined ? formatAmount(s.available, s.unit) : `${formatAmount(s.available, s.unit)} of ${formatAmount(s.capacity, s.unit)}`;
  if (s.hard?.met) return {text, color: 'red'};
  if (s.soft?.met) return {text, color: 'yellow'};
  return {text};
}

function podKey(p: AgentPodSnapshot): string {
  return `${p.namespace}/${p.name}`;
}

function appContainers(p: AgentPodSnapshot): AgentContainerSnapshot[] {
  return p.containers.filter((c) => !c.init);
}

/** 0 for a pod that needs a look (not running or done, a container not ready, restarts, failing probes), 1 otherwise. */
function attention(p: AgentPodSnapshot): number {
  if (p.phase === 'Succeeded') return 1;
  if (p.phase !== 'Running') return 0;
  const troubled = p.containers.some(
    (c) =>
      (!c.init && !c.ready) ||
      c.state.waiting !== undefined ||
      c.restartCount > 0 ||
      Object.values(c.probes).some((probe) => probe?.result === 'failure'),
  );
  return troubled ? 0 : 1;
}

/** Pods in trouble first, then by namespace/name; stable, so rows do not jump between snapshots. */
export function podsByAttention(pods: readonly AgentPodSnapshot[]): AgentPodSnapshot[] {
  return [...pods].sort((a, b) => attention(a) - attention(b) || podKey(a).localeCompare(podKey(b)));
}

/** Waiting reasons that are a normal step of starting a pod, not a problem. */
const BENIGN_WAITING = new Set(['ContainerCreating', 'PodInitializing']);

/**
 * A container's state in a few words, as kubectl's STATUS column: `Running 5m`, `CrashLoopBackOff`,
 * `Completed exit 0`, `Error exit 137`. The why (back-off, last exit code, messages) goes to the
 * problems listed under the table, so the column stays narrow enough for the probes beside it.
 */
export function containerStateCell(c: {state: ContainerState}, now: number): StyledCell {
  const {waiting, running, terminated} = c.state;
  if (running) {
    const started = Date.parse(running.startedAt);
    return {text: Number.isNaN(started) ? 'Running' : `Running ${humanDuration(now - started)}`, color: 'green'};
  }
  if (terminated) {
    return {text: `${terminated.reason ?? 'Terminated'} exit ${terminated.exitCode}`, color: terminated.exitCode === 0 ? undefined : 'red', dimColor: terminated.exitCode === 0 || undefined};
  }
  if (waiting) {
    const reason = waiting.reason ?? 'Waiting';
    if (BENIGN_WAITING.has(reason)) return {text: reason, color: 'yellow'};
    return {text: reason, color: 'red', bold: reason === 'CrashLoopBackOff' || undefined};
  }
  return {text: '-', dimColor: true};
}

/** `CrashLoopBackOff (last exit code 3): back-off 20s restarting failed container=...`, for a container stuck waiting. */
function waitingProblem(c: AgentContainerSnapshot): string | undefined {
  const waiting = c.state.waiting;
  if (!waiting || BENIGN_WAITING.has(waiting.reason ?? '')) return undefined;
  const exit = c.lastState?.terminated;
  const reason = `${waiting.reason ?? 'Waiting'}${exit ? ` (last exit code ${exit.exitCode})` : ''}`;
  return waiting.message ? `${reason}: ${waiting.message.trim()}` : reason;
}

const PROBE_MARK = {success: '✓', failure: '✗', unknown: '?'} as const;

/** `startup ✓ liveness ✓ readiness ✗`, red if any fails, yellow while any is unknown. */
export function probesCell(probes: AgentContainerSnapshot['probes']): StyledCell {
  const present = PROBE_ORDER.filter((kind) => probes[kind] !== undefined);
  if (present.length === 0) return {text: '-', dimColor: true};
  const results = present.map((kind) => probes[kind]!.result);
  const color = results.includes('failure') ? 'red' : results.includes('unknown') ? 'yellow' : 'green';
  return {text: present.map((kind) => `${kind} ${PROBE_MARK[probes[kind]!.result]}`).join(' '), color};
}

/** Why pods are unwell, in words: pod-level failures (Evicted, CommandRequired), stuck containers, failing probes. */
export function podProblems(pods: readonly AgentPodSnapshot[]): string[] {
  const problems: string[] = [];
  for (const p of pods) {
    if (p.reason !== undefined || p.message !== undefined) {
      problems.push(`${podKey(p)}: ${[p.reason, p.message?.trim()].filter(Boolean).join(': ')}`);
    }
    for (const c of p.containers) {
      const waiting = waitingProblem(c);
      if (waiting) problems.push(`${podKey(p)} ${c.name}: ${waiting}`);
      for (const kind of PROBE_ORDER) {
        const probe = c.probes[kind];
        if (probe?.result === 'failure') problems.push(`${podKey(p)} ${c.name}: ${kind} probe failed${probe.message ? `: ${probe.message}` : ''}`);
      }
    }
  }
  return problems;
}

function podRows(p: AgentPodSnapshot, now: number): Cell[][] {
  const app = appContainers(p);
  const ready = app.filter((c) => c.ready).length;
  const restarts = app.reduce((sum, c) => sum + c.restartCount, 0);
  const phase = p.reason ? `${p.phase} (${p.reason})` : p.phase;
  const head: Cell[] = [
    {text: podKey(p), bold: true},
    p.source,
    {text: phase, color: PHASE_COLOR[p.phase]},
    {text: `${ready}/${app.length}`, color: ready < app.length && p.phase === 'Running' ? 'yellow' : undefined},
    {text: String(restarts), color: restarts > 0 ? 'yellow' : undefined},
    '',
  ];
  const containers = p.containers.map((c): Cell[] => [
    `  ${c.name}${c.init ? ' (init)' : ''}`,
    '',
    containerStateCell(c, now),
    c.init ? {text: '-', dimColor: true} : c.ready ? {text: '✓', color: 'green'} : {text: '✗', color: 'red'},
    {text: String(c.restartCount), color: c.restartCount > 0 ? 'yellow' : undefined},
    probesCell(c.probes),
  ]);
  return [head, ...containers];
}

// ---- components ----

function Header({s, now}: {s: AgentSnapshot; now: number}) {
  const serving = s.serving.map((e) => (e.name === 'server' ? e.url : `${e.name} ${e.url}`)).join(' · ');
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>orch agent</Text> <Text dimColor>{s.version}</Text> <Text color="cyan">{s.nodeName}</Text> <Uptime since={s.startedAt} now={now} />
      </Text>
      <KeyValue label="Mode" width={LABEL_WIDTH}>
        {s.mode === 'apiserver' ? (
          <>
            API server <Text color="cyan">{s.server}</Text>
          </>
        ) : (
          <>
            standalone <Text dimColor>static pods only, no API server</Text>
          </>
        )}
      </KeyValue>
      <KeyValue label="Serving" width={LABEL_WIDTH}>
        {serving === '' ? <Text dimColor>off</Text> : serving}
      </KeyValue>
    </Box>
  );
}

function IsolationNote({cgroups}: {cgroups?: boolean}) {
  return (
    <Text color="yellow">
      <Text bold>Note:</Text> {isolationNote(cgroups)}
    </Text>
  );
}

function ApiServer({link, now}: {link: ApiServerLink; now: number}) {
  return (
    <Box flexDirection="column">
      <KeyValue label="Registration" width={LABEL_WIDTH}>
        {!link.registerNode ? (
          <Text dimColor>off (--register-node=false)</Text>
        ) : link.registered ? (
          <Text color="green">registered</Text>
        ) : (
          <Text color="yellow">registering…</Text>
        )}
      </KeyValue>
      <KeyValue label="Connection" width={LABEL_WIDTH}>
        {link.connected ? (
          <Text color="green">ok</Text>
        ) : (
          <Text color="red">
            failing{link.lastErrorAt !== undefined ? ` (${formatAgo(link.lastErrorAt, now)})` : ''}
            {link.lastError ? `: ${link.lastError}` : ''}
          </Text>
        )}
      </KeyValue>
      <KeyValue label="Node status" width={LABEL_WIDTH}>
        {link.lastStatusAt === undefined ? <Text dimColor>not posted yet</Text> : `posted ${formatAgo(link.lastStatusAt, now)}`}
      </KeyValue>
      <KeyValue label="Lease" width={LABEL_WIDTH}>
        {link.lastLeaseRenewAt === undefined ? <Text dimColor>not renewed yet</Text> : `renewed ${formatAgo(link.lastLeaseRenewAt, now)}`}
      </KeyValue>
    </Box>
  );
}

function checked(lastCheckAt: number | undefined, pods: number | undefined, now: number): string {
  const parts = [lastCheckAt === undefined ? 'not checked yet' : `checked ${formatAgo(lastCheckAt, now)}`];
  if (pods !== undefined) parts.push(`${pods} ${pods === 1 ? 'pod' : 'pods'}`);
  return parts.join(' · ');
}

function Sources({sources, nodeName, now}: {sources: PodSources; nodeName: string; now: number}) {
  const {api, file, http} = sources;
  const none = !api && !file && !http;
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>Pod sources</Text> {none ? <Text dimColor>none configured</Text> : null}
      </Text>
      {api ? (
        <KeyValue label="  api" width={LABEL_WIDTH}>
          {api.watching ? <Text color="green">watching pods bound to {nodeName}</Text> : <Text color="yellow">not watching</Text>}
          {api.error ? <Text color="red"> {api.error}</Text> : null}
        </KeyValue>
      ) : null}
      {file ? (
        <KeyValue label="  file" width={LABEL_WIDTH}>
          {file.path} <Text dimColor>{checked(file.lastCheckAt, file.pods, now)}</Text>
          {file.error ? <Text color="red"> {file.error}</Text> : null}
        </KeyValue>
      ) : null}
      {http ? (
        <KeyValue label="  http" width={LABEL_WIDTH}>
          {http.url} <Text dimColor>{checked(http.lastCheckAt, http.pods, now)}</Text>
          {http.error ? <Text color="red"> last error: {http.error}</Text> : null}
        </KeyValue>
      ) : null}
    </Box>
  );
}

function Pods({pods, maxPods, now}: {pods: readonly AgentPodSnapshot[]; maxPods?: number; now: number}) {
  const running = pods.filter((p) => p.phase === 'Running').length;
  const count = maxPods === undefined ? `${pods.length}` : `${pods.length} of ${maxPods}`;
  const ordered = podsByAttention(pods);
  const shown = ordered.slice(0, MAX_POD_ROWS);
  const hidden = ordered.slice(MAX_POD_ROWS);
  const problems = podProblems(shown);
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>Pods</Text> <Text dimColor>{pods.length === 0 ? 'none' : `${count}, ${running} running`}</Text>
      </Text>
      {shown.length > 0 ? (
        <Table
          columns={[
            {header: 'POD / CONTAINER', maxWidth: 50},
            {header: 'SOURCE'},
            {header: 'STATE', maxWidth: 50},
            {header: 'READY'},
            {header: 'RESTARTS', align: 'right'},
            {header: 'PROBES'},
          ]}
          rows={shown.flatMap((p) => podRows(p, now))}
        />
      ) : null}
      {hidden.length > 0 ? (
        <Text dimColor>
          +{hidden.length} more {hidden.every((p) => attention(p) === 1) ? '(all running and ready)' : ''}
        </Text>
      ) : null}
      {problems.slice(0, MAX_PROBLEMS).map((problem, i) => (
        <Text key={i} color="red">
          {problem}
        </Text>
      ))}
      {problems.length > MAX_PROBLEMS ? <Text dimColor>+{problems.length - MAX_PROBLEMS} more problems</Text> : null}
    </Box>
  );
}

function signalRow(s: SignalSnapshot, now: number): Cell[] {
  return [s.signal, availableCell(s), thresholdCell(s.hard, s.unit, now), thresholdCell(s.soft, s.unit, now)];
}

function conditionRow(c: ConditionSnapshot, now: number): Cell[] {
  if (!c.active) return [c.type, {text: 'False', color: 'green'}, {text: '-', dimColor: true}];
  const clears = c.clearsAt === undefined ? '' : `clears ${formatCountdown(c.clearsAt - now)}`;
  const note = c.observedNow ? `met now · ${clears} unless met again` : `${clears} unless met again`;
  return [c.type, {text: 'True', color: 'red', bold: true}, {text: note.trim(), color: 'yellow'}];
}

function evictionRow(e: EvictionRecord, now: number): Cell[] {
  return [
    formatAgo(e.at, now),
    `${e.namespace}/${e.name}`,
    e.signal,
    e.error ? {text: `kill failed: ${e.error}`, color: 'red'} : {text: e.message.trim(), dimColor: true},
  ];
}

function Eviction({ev, now}: {ev: EvictionSnapshot; now: number}) {
  const evictions = ev.evictions.slice(0, MAX_EVICTIONS);
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>Eviction</Text>{' '}
        {ev.lastSyncError ? (
          <Text color="red">last check failed: {ev.lastSyncError}</Text>
        ) : ev.lastSyncAt !== undefined ? (
          <Text dimColor>checked {formatAgo(ev.lastSyncAt, now)}</Text>
        ) : (
          <Text dimColor>not checked yet</Text>
        )}
      </Text>
      {ev.signals.length > 0 ? (
        <Table
          columns={[{header: 'SIGNAL'}, {header: 'AVAILABLE'}, {header: 'HARD (evict below)'}, {header: 'SOFT (after grace)'}]}
          rows={ev.signals.map((s) => signalRow(s, now))}
        />
      ) : (
        <Text dimColor>no signals observed and no thresholds set</Text>
      )}
      {ev.signals
        .filter((s) => s.available === undefined && s.error)
        .map((s) => (
          <Text key={s.signal} color="red" wrap="truncate-end">
            {s.signal}: cannot measure: {s.error}
          </Text>
        ))}
      <Box marginTop={1}>
        <Table columns={[{header: 'CONDITION'}, {header: 'STATUS'}, {header: 'TRANSITION'}]} rows={ev.conditions.map((c) => conditionRow(c, now))} />
      </Box>
      <Box marginTop={1} flexDirection="column">
        <Text>
          <Text bold>Last evictions</Text>{' '}
          {ev.evictions.length === 0 ? <Text dimColor>none</Text> : <Text dimColor>{ev.evictions.length} in total</Text>}
        </Text>
        {evictions.length > 0 ? (
          <Table columns={[{header: 'WHEN'}, {header: 'POD'}, {header: 'SIGNAL'}, {header: 'MESSAGE'}]} rows={evictions.map((e) => evictionRow(e, now))} />
        ) : null}
      </Box>
    </Box>
  );
}

/** Red while the API server is unreachable, yellow under node pressure, green otherwise. */
function borderColor(s: AgentSnapshot): string {
  if (s.apiServer && !s.apiServer.connected) return 'red';
  if (s.eviction?.conditions.some((c) => c.active)) return 'yellow';
  return 'green';
}

/** The live panel for one snapshot at time `now`. */
export function AgentPanel({s, now}: {s: AgentSnapshot; now: number}) {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={borderColor(s)} paddingX={1}>
      <Header s={s} now={now} />
      <IsolationNote cgroups={s.cgroups} />
      {s.apiServer ? (
        <Box marginTop={1}>
          <ApiServer link={s.apiServer} now={now} />
        </Box>
      ) : null}
      <Box marginTop={1}>
        <Sources sources={s.sources} nodeName={s.nodeName} now={now} />
      </Box>
      <Box marginTop={1}>
        <Pods pods={s.pods} maxPods={s.maxPods} now={now} />
      </Box>
      <Box marginTop={1}>
        {s.eviction ? (
          <Eviction ev={s.eviction} now={now} />
        ) : (
          <Text>
            <Text bold>Eviction</Text> <Text dimColor>waiting for the first check</Text>
          </Text>
        )}
      </Box>
    </Box>
  );
}

export function AgentDashboard({emitter, logs, clock = systemClock}: AgentDashboardProps) {
  const snapshot = useSnapshot(emitter);
  const ticked = useNow(clock);
  // A snapshot newer than the last tick is the better "now" (never count down from before it).
  const now = snapshot ? Math.max(ticked, snapshot.at) : ticked;
  return (
    <>
      <LogPane buffer={logs} />
      {snapshot ? (
        <AgentPanel s={snapshot} now={now} />
      ) : (
        <Box flexDirection="column">
          <Text dimColor>orch agent starting…</Text>
          <IsolationNote />
        </Box>
      )}
    </>
  );
}

/** Mounts the dashboard on the terminal (the caller checks that stdout is a TTY). Ctrl-C is left to the process's SIGINT handler. */
export function renderAgentDashboard(emitter: StateEmitter<AgentSnapshot>, logs: LogBuffer): DashboardHandle {
  const app = render(<AgentDashboard emitter={emitter} logs={logs} />, {exitOnCtrlC: false});
  return {unmount: () => app.unmount(), waitUntilExit: () => app.waitUntilExit()};
}
