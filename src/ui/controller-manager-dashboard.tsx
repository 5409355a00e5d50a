/**
 * The live terminal view of `orch controller-manager`: log lines scroll above (printed once), and
 * below them a panel drawn from the manager's snapshot: who holds the lease and until when, the
 * controllers with their queues, and node lifecycle per zone and per node.
 *
 * Snapshots arrive only on change, so the times that move on their own (lease expiry, ages) are
 * computed here from the snapshot's time and a local one-second ticker (useNow).
 */
import {Box, Text, render} from 'ink';
import type {ControllerManagerSnapshot} from '../daemons/controller-manager/state.js';
import type {ElectionState, ElectionStateName} from '../daemons/shared/leader-election/index.js';
import type {ControllerSnapshot} from '../daemons/controller-manager/controllers/types.js';
import type {NodeLifecycleSnapshot, NodeSnapshot, ZoneSnapshot} from '../daemons/controller-manager/node-lifecycle/controller.js';
import type {ZoneState} from '../daemons/controller-manager/node-lifecycle/zones.js';
import {zoneDisplayName} from '../daemons/controller-manager/node-lifecycle/zones.js';
import {systemClock, type Clock} from '../daemons/shared/clock.js';
import type {StateEmitter} from './state-emitter.js';
import type {LogBuffer} from './components/log-buffer.js';
import type {DashboardHandle} from './apiserver-dashboard.js';
import {KeyValue} from './components/key-value.js';
import {LogPane} from './components/log-pane.js';
import {Table, type Cell} from './components/table.js';
import {humanDuration} from './components/duration.js';
import {Uptime} from './components/uptime.js';
import {useNow} from './components/use-now.js';
import {useSnapshot} from './components/use-snapshot.js';

export interface ControllerManagerDashboardProps {
  emitter: StateEmitter<ControllerManagerSnapshot>;
  logs: LogBuffer;
  /** Drives the countdowns between snapshots; a FakeClock in tests. */
  clock?: Clock;
}

/** Width of the labels of the key/value rows ("Transitions" is the longest). */
const LABEL_WIDTH = 13;
/** Nodes listed by name; the rest (the least interesting, see byAttention) are counted. */
const MAX_NODE_ROWS = 20;

const ELECTION_COLOR: Record<ElectionStateName, string> = {
  candidate: 'yellow',
  leader: 'green',
  lost: 'red',
  stopped: 'gray',
};

const ZONE_COLOR: Record<ZoneState, string> = {
  Initial: 'cyan',
  Normal: 'green',
  PartialDisruption: 'yellow',
  FullDisruption: 'red',
};

const READY_COLOR: Record<string, string> = {True: 'green', False: 'red', Unknown: 'yellow'};

// ---- pure view logic ----

/**
 * Milliseconds until the observed lease expires at `now`: the snapshot says how long was left at its
 * own time `at`, and time has moved since. Undefined when no lease was observed.
 */
export function leaseRemainingMs(election: ElectionState, at: number, now: number): number | undefined {
  if (election.expiresInMs === undefined) return undefined;
  return at + election.expiresInMs - now;
}

/** "in 14s" (whole seconds rounded up, so a full 15 s lease reads 15s) or "expired 3s ago". */
export function formatExpiry(remainingMs: number): string {
  if (remainingMs > 0) return `in ${humanDuration(Math.ceil(remainingMs / 1000) * 1000)}`;
  return `expired ${humanDuration(-remainingMs)} ago`;
}

/** Epoch ms as the API shows lease times (RFC 3339, seconds), with its age at `now`. */
export function formatTimeWithAge(ms: number, now: number): string {
  const iso = new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  return `${iso} (${humanDuration(now - ms)} ago)`;
}

/** Nodes per second, as small as the secondary rate (0.01/s) without noise digits; 0 means evictions stop. */
export function formatEvictionRate(perSecond: number): string {
  if (!(perSecond > 0)) return 'stopped';
  return `${Number(perSecond.toPrecision(2))}/s`;
}

/** `key value · key value` from a controller's free-form figures. */
export function formatDetails(details: ControllerSnapshot['details']): string {
  return Object.entries(details ?? {})
    .map(([key, value]) => `${key} ${value}`)
    .join(' · ');
}

/** 0 for a node that needs a look (not ready, evictions pending or queued, tainted), 1 otherwise. */
function attention(node: NodeSnapshot): number {
  const troubled = node.ready !== 'True' || node.pendingEvictions > 0 || node.queuedForTainting || node.taints.length > 0;
  return troubled ? 0 : 1;
}

/**
 * The nodes worth a row first, then by name: with a thousand nodes the terminal shows the ones in
 * trouble, not the first twenty alphabetically. Stable, so rows do not jump between snapshots.
 */
export function byAttention(nodes: readonly NodeSnapshot[]): NodeSnapshot[] {
  return [...nodes].sort((a, b) => attention(a) - attention(b) || a.name.localeCompare(b.name));
}

// ---- components ----

function Header({s, now}: {s: ControllerManagerSnapshot; now: number}) {
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>orch controller-manager</Text> <Text dimColor>{s.version}</Text> <Text color="cyan">{s.servingUrl}</Text> <Uptime since={s.startedAt} now={now} />
      </Text>
      <KeyValue label="Identity" width={LABEL_WIDTH}>
        {s.identity}
      </KeyValue>
      <KeyValue label="API server" width={LABEL_WIDTH}>
        {s.server}
      </KeyValue>
    </Box>
  );
}

/** A lost lease is a badge with its consequence spelled out; the other states are a colored word and what it means. */
function StateLine({election, lease}: {election: ElectionState; lease?: string}) {
  const color = ELECTION_COLOR[election.state];
  if (election.state === 'lost') {
    return (
      <KeyValue label="State" width={LABEL_WIDTH}>
        <Text bold inverse color={color}>
          {' LEADERSHIP LOST '}
        </Text>{' '}
        <Text color={color}>another process may lead now: controllers stopped, exiting</Text>
      </KeyValue>
    );
  }
  const note =
    election.state === 'candidate'
      ? 'waiting to acquire the lease'
      : election.state === 'leader'
        ? lease === undefined
          ? 'leader election disabled: running controllers'
          : 'running controllers'
        : 'not running';
  return (
    <KeyValue label="State" width={LABEL_WIDTH}>
      <Text bold color={color}>
        {election.state}
      </Text>{' '}
      <Text dimColor>{note}</Text>
    </KeyValue>
  );
}

function Holder({election}: {election: ElectionState}) {
  const {holder} = election;
  let value;
  if (holder === undefined) value = <Text dimColor>not seen yet</Text>;
  else if (holder === '') value = <Text dimColor>none (released)</Text>;
  else if (holder === election.identity && election.state === 'leader')
    value = (
      <Text bold color="green">
        {holder} <Text>(this process)</Text>
      </Text>
    );
  // The record still names us but we stopped leading (renewals failed): say so, not green.
  else if (holder === election.identity)
    value = (
      <Text color="yellow">
        {holder} <Text>(this process, no longer renewing)</Text>
      </Text>
    );
  else value = <Text>{holder}</Text>;
  return (
    <KeyValue label="Holder" width={LABEL_WIDTH}>
      {value}
    </KeyValue>
  );
}

function Expiry({election, at, now}: {election: ElectionState; at: number; now: number}) {
  const remaining = leaseRemainingMs(election, at, now);
  if (remaining === undefined || election.holder === '') return null;
  return (
    <KeyValue label="Expires" width={LABEL_WIDTH}>
      <Text color={remaining > 0 ? undefined : 'red'}>{formatExpiry(remaining)}</Text>
    </KeyValue>
  );
}

function LeaderElection({s, now}: {s: ControllerManagerSnapshot; now: number}) {
  const e = s.election;
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>Leader election</Text>{' '}
        {s.lease === undefined ? <Text dimColor>disabled (--leader-elect=false)</Text> : <Text dimColor>lease {s.lease}</Text>}
      </Text>
      <StateLine election={e} lease={s.lease} />
      {s.lease === undefined ? null : (
        <>
          <Holder election={e} />
          {e.acquireTime !== undefined ? (
            <KeyValue label="Acquired" width={LABEL_WIDTH}>
              {formatTimeWithAge(e.acquireTime, now)}
            </KeyValue>
          ) : null}
          {e.renewTime !== undefined ? (
            <KeyValue label="Renewed" width={LABEL_WIDTH}>
              {formatTimeWithAge(e.renewTime, now)}
            </KeyValue>
          ) : null}
          {e.transitions !== undefined ? (
            <KeyValue label="Transitions" width={LABEL_WIDTH}>
              {e.transitions}
            </KeyValue>
          ) : null}
          <Expiry election={e} at={s.at} now={now} />
        </>
      )}
    </Box>
  );
}

function Controllers({controllers, state}: {controllers: readonly ControllerSnapshot[]; state: ElectionStateName}) {
  if (controllers.length === 0) {
    const why = state === 'lost' ? 'stopped with the lost lease' : state === 'leader' ? 'none running' : 'they start once this process leads';
    return (
      <Text>
        <Text bold>Controllers</Text> <Text dimColor>{why}</Text>
      </Text>
    );
  }
  const rows: Cell[][] = [...controllers]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((c) => [c.name, String(c.workers), {text: String(c.queueDepth), bold: c.queueDepth > 0}, formatDetails(c.details)]);
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>Controllers</Text> <Text dimColor>{controllers.length} running</Text>
      </Text>
      <Table
        columns={[{header: 'NAME'}, {header: 'WORKERS', align: 'right'}, {header: 'QUEUE', align: 'right'}, {header: 'DETAILS'}]}
        rows={rows}
      />
    </Box>
  );
}

function zoneRow(z: ZoneSnapshot): Cell[] {
  return [
    z.displayName,
    {text: z.state, color: ZONE_COLOR[z.state]},
    String(z.nodesReady),
    {text: String(z.nodesNotReady), color: z.nodesNotReady > 0 ? 'red' : undefined},
    {text: formatEvictionRate(z.evictionRate), dimColor: z.evictionRate > 0 ? undefined : true},
    String(z.queuedNodes),
  ];
}

function nodeRow(n: NodeSnapshot, zoneNames: ReadonlyMap<string, string>, elapsedMs: number): Cell[] {
  const heartbeat = n.lastHeartbeatAgeMs === null ? {text: '-', dimColor: true} : `${humanDuration(n.lastHeartbeatAgeMs + elapsedMs)} ago`;
  const evictions = n.queuedForTainting ? `${n.pendingEvictions} (queued for taint)` : String(n.pendingEvictions);
  return [
    n.name,
    zoneNames.get(n.zone) ?? zoneDisplayName(n.zone),
    {text: n.ready, color: READY_COLOR[n.ready] ?? 'yellow'},
    heartbeat,
    {text: evictions, color: n.pendingEvictions > 0 || n.queuedForTainting ? 'red' : undefined},
    n.taints.length === 0 ? {text: '<none>', dimColor: true} : {text: n.taints.join(', '), color: 'yellow'},
  ];
}

function NodeLifecycle({nl, now}: {nl: NodeLifecycleSnapshot; now: number}) {
  const zoneNames = new Map(nl.zones.map((z) => [z.zone, z.displayName]));
  const zones = [...nl.zones].sort((a, b) => a.displayName.localeCompare(b.displayName));
  const nodes = byAttention(nl.nodes);
  const shown = nodes.slice(0, MAX_NODE_ROWS);
  const hidden = nodes.slice(MAX_NODE_ROWS);
  // Heartbeat ages were measured at the pass (nl.at); they grow with the ticker until the next one.
  const elapsed = Math.max(0, now - nl.at);
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>Node lifecycle</Text>{' '}
        <Text dimColor>
          {nl.zones.length} {nl.zones.length === 1 ? 'zone' : 'zones'}, {nl.nodes.length} {nl.nodes.length === 1 ? 'node' : 'nodes'}
        </Text>
      </Text>
      {nl.allZonesFullyDisrupted ? (
        <Text bold color="red">
          All zones fully disrupted: evictions stopped everywhere
        </Text>
      ) : null}
      {zones.length > 0 ? (
        <Table
          columns={[
            {header: 'ZONE'},
            {header: 'STATE'},
            {header: 'READY', align: 'right'},
            {header: 'NOT READY', align: 'right'},
            {header: 'EVICTION RATE', align: 'right'},
            {header: 'QUEUED'},
          ]}
          rows={zones.map(zoneRow)}
        />
      ) : null}
      {shown.length > 0 ? (
        <Box marginTop={1} flexDirection="column">
          <Table
            columns={[
              {header: 'NODE', maxWidth: 40},
              {header: 'ZONE', maxWidth: 30},
              {header: 'READY'},
              {header: 'HEARTBEAT', align: 'right'},
              {header: 'EVICTIONS'},
              {header: 'TAINTS'},
            ]}
            rows={shown.map((n) => nodeRow(n, zoneNames, elapsed))}
          />
          {hidden.length > 0 ? (
            <Text dimColor>
              +{hidden.length} more {hidden.every((n) => attention(n) === 1) ? '(all ready, untainted)' : ''}
            </Text>
          ) : null}
        </Box>
      ) : null}
    </Box>
  );
}

/** The live panel for one snapshot at time `now`. */
export function ControllerManagerPanel({s, now}: {s: ControllerManagerSnapshot; now: number}) {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={ELECTION_COLOR[s.election.state]} paddingX={1}>
      <Header s={s} now={now} />
      <Box marginTop={1}>
        <LeaderElection s={s} now={now} />
      </Box>
      <Box marginTop={1}>
        <Controllers controllers={s.controllers} state={s.election.state} />
      </Box>
      {s.nodeLifecycle ? (
        <Box marginTop={1}>
          <NodeLifecycle nl={s.nodeLifecycle} now={now} />
        </Box>
      ) : null}
    </Box>
  );
}

export function ControllerManagerDashboard({emitter, logs, clock = systemClock}: ControllerManagerDashboardProps) {
  const snapshot = useSnapshot(emitter);
  const ticked = useNow(clock);
  // A snapshot newer than the last tick is the better "now" (never count down from before it).
  const now = snapshot ? Math.max(ticked, snapshot.at) : ticked;
  return (
    <>
      <LogPane buffer={logs} />
      {snapshot ? <ControllerManagerPanel s={snapshot} now={now} /> : <Text dimColor>orch controller-manager starting…</Text>}
    </>
  );
}

/**
 * Mounts the dashboard on the terminal (the caller checks that stdout is a TTY). Ctrl-C is left to
 * the process's SIGINT handler, which releases the lease and stops the controllers.
 */
export function renderControllerManagerDashboard(emitter: StateEmitter<ControllerManagerSnapshot>, logs: LogBuffer): DashboardHandle {
  const app = render(<ControllerManagerDashboard emitter={emitter} logs={logs} />, {exitOnCtrlC: false});
  return {unmount: () => app.unmount(), waitUntilExit: () => app.waitUntilExit()};
}
