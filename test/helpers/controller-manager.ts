/**
 * `orch controller-manager` as a user runs it, for integration tests: the built CLI as a child
 * process pointed at an API server's admin orchconfig, its stderr klog lines kept with the time
 * each line arrived here (one clock for every process a test starts), and its HTTPS endpoint at
 * hand. Plus the pure pieces a leader election test needs: who ran controllers when, and whether
 * two ever did at once.
 *
 * Build first (`npm run build`).
 */
import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync} from 'node:fs';
import {Agent, request as httpsRequest} from 'node:https';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {type ApiClient, freePort, sleep} from './apiserver.js';
import {orchBin, repoRoot} from './run-orch.js';
import {spawnDaemon, type Exit, type LogLine} from './daemon-process.js';

const START_TIMEOUT_MS = 20_000;

/** Lease settings short enough for tests: 2 s lease, 1.5 s renew deadline, 0.5 s retry period. */
export const SHORT_LEASE = {leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 500} as const;

export const SHORT_LEASE_ARGS = [
  `--leader-elect-lease-duration=${SHORT_LEASE.leaseDurationMs}ms`,
  `--leader-elect-renew-deadline=${SHORT_LEASE.renewDeadlineMs}ms`,
  `--leader-elect-retry-period=${SHORT_LEASE.retryPeriodMs}ms`,
];

export type {Exit, LogLine} from './daemon-process.js';

export interface ControllerManagerProcess {
  /** A short label for messages (`cm-1`). */
  readonly name: string;
  /** Its leader election identity, from its "Serving securely" line. */
  readonly identity: string;
  readonly pid: number;
  /** https://127.0.0.1:<port> */
  readonly url: string;
  /** Its stderr lines so far, with arrival times. */
  readonly lines: readonly LogLine[];
  /** Resolves when the process exits (never rejects). */
  readonly exited: Promise<Exit>;
  /** The exit, once it happened. */
  exit(): Exit | undefined;
  output(): string;
  /** The first line at or after `since` (arrival time) matching `pattern`; rejects after timeoutMs or when the process exits first. */
  waitForLine(pattern: RegExp, timeoutMs?: number, since?: number): Promise<LogLine>;
  /** GET on its own HTTPS endpoint. */
  get(path: string, timeoutMs?: number): Promise<{status: number; text: string}>;
  /** Sends `signal` and waits (bounded) for the exit; SIGKILL after timeoutMs. */
  signal(signal: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
  /** The exit within timeoutMs, else undefined (the process keeps running). */
  waitForExit(timeoutMs: number): Promise<Exit | undefined>;
  /** SIGKILL if still running, then removes its certificate directory. */
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  orchconfigPath: string;
  /** Extra flags (controllers, lease and node lifecycle settings). */
  args?: string[];
}

/** Starts the CLI and resolves once it serves (its "Serving securely" line names its identity). */
export async function startControllerManager(options: StartOptions): Promise<ControllerManagerProcess> {
  await waitForBuild();
  const certDir = mkdtempSync(join(tmpdir(), 'orch-cm-'));
  const port = await freePort();
  const args = [
    orchBin, 'controller-manager',
    '--orchconfig', options.orchconfigPath,
    '--secure-port', String(port),
    '--bind-address', '127.0.0.1',
    '--cert-dir', certDir,
    '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
    ...(options.args ?? []),
  ];
  const {child, lines, exited, exit, output, waitForLine} = spawnDaemon(options.name, args);

  const signal = async (sig: NodeJS.Signals, timeoutMs = 10_000): Promise<Exit> => {
    const done = exit();
    if (done) return done;
    child.kill(sig);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const result = await exited;
    clearTimeout(timer);
    return result;
  };

  let identity: string;
  try {
    const serving = await waitForLine(/"Serving securely"/, START_TIMEOUT_MS);
    identity = /identity="?([^"\s]+)"?/.exec(serving.text)?.[1] ?? '';
    if (!identity) throw new Error(`${options.name}: no identity in ${serving.text}`);
  } catch (error) {
    await signal('SIGKILL');
    rmSync(certDir, {recursive: true, force: true});
    throw error;
  }
  const url = `https://127.0.0.1:${port}`;
  return {
    name: options.name,
    identity,
    pid: child.pid!,
    url,
    lines,
    exited,
    exit,
    output,
    waitForLine,
    get: (path, timeoutMs = 5000) => httpsGet(url + path, timeoutMs),
    signal,
    waitForExit: (timeoutMs) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve(undefined), timeoutMs);
        void exited.then((exit) => {
          clearTimeout(timer);
          resolve(exit);
        });
      }),
    async stop() {
      await signal('SIGKILL');
      rmSync(certDir, {recursive: true, force: true});
    },
  };
}

/**
 * The controller manager serves with a self-signed certificate made in its --cert-dir; these tests
 * check what it answers, not its TLS identity, so the certificate is not verified.
 */
function httpsGet(url: string, timeoutMs: number): Promise<{status: number; text: string}> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, {method: 'GET', rejectUnauthorized: false, timeout: timeoutMs}, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({status: res.statusCode ?? 0, text}));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** The value of `leader_election_master_status{name="<lease>"}` in a /metrics text; undefined when absent. */
export function leaderStatusMetric(metricsText: string, leaseName = 'orch-controller-manager'): number | undefined {
  const line = metricsText.split('\n').find((l) => l.startsWith(`leader_election_master_status{name="${leaseName}"} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

// ---------------------------------------------------------------------------------------------
// Who ran controllers when (pure)

/** A stretch of time during which one process ran controllers; `end` is Infinity while it still does. */
export interface ActivityInterval {
  who: string;
  start: number;
  end: number;
}

/**
 * The stretches during which a process ran controllers, from its log: each "Starting controller"
 * opens (or extends) a stretch, "Stopped controller" closes it once every started controller has
 * stopped. A process that exited (killed with -9, say) without those lines stopped at its exit.
 */
export function controllerActivity(who: string, lines: readonly LogLine[], exitAt?: number): ActivityInterval[] {
  const intervals: ActivityInterval[] = [];
  let open: ActivityInterval | undefined;
  let running = 0;
  for (const line of lines) {
    if (/"Starting controller"/.test(line.text)) {
      if (!open) intervals.push((open = {who, start: line.at, end: Infinity}));
      running++;
    } else if (/"Stopped controller"/.test(line.text) && open) {
      running--;
      if (running <= 0) {
        open.end = line.at;
        open = undefined;
        running = 0;
      }
    }
  }
  if (open && exitAt !== undefined) open.end = exitAt;
  return intervals;
}

/** Pairs of stretches of different processes that share some moment. */
export function overlappingActivity(intervals: readonly ActivityInterval[]): Array<[ActivityInterval, ActivityInterval]> {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  const overlaps: Array<[ActivityInterval, ActivityInterval]> = [];
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j].start < sorted[i].end; j++) {
      if (sorted[j].who !== sorted[i].who) overlaps.push([sorted[i], sorted[j]]);
    }
  }
  return overlaps;
}

/** Who ran controllers at time `t`. */
export function runningAt(intervals: readonly ActivityInterval[], t: number): string[] {
  return [...new Set(intervals.filter((i) => i.start <= t && t < i.end).map((i) => i.who))];
}

// ---------------------------------------------------------------------------------------------
// A watch whose events carry the time they arrived

export interface TimedEvent {
  at: number;
  type: string;
  object: any;
}

export interface TimedWatch {
  readonly events: readonly TimedEvent[];
  close(): void;
}

/**
 * Opens `path` (with `watch=1`) as the admin and keeps each event with its arrival time: the tests
 * measure paces (evictions per second), which ApiClient.watch's untimed events cannot show.
 */
export function timedWatch(client: ApiClient, path: string): TimedWatch {
  const events: TimedEvent[] = [];
  const req = httpsRequest(
    new URL(path, client.credentials.server),
    // Its own connection, as ApiClient.watch does: a stream must not hold a keep-alive socket.
    {method: 'GET', headers: {accept: 'application/json'}, agent: new Agent({...client.agent.options, keepAlive: false})},
    (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const at = Date.now();
        buffer += chunk;
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline).trim();
          buffer = buffer.slice(newline + 1);
          if (line) events.push({at, ...(JSON.parse(line) as {type: string; object: unknown})});
        }
      });
      res.on('error', () => undefined);
    },
  );
  req.on('error', () => undefined);
  req.end();
  return {events, close: () => req.destroy()};
}

// ---------------------------------------------------------------------------------------------
// Small pieces

/** The built CLI; waits a little, as a concurrent `npm run build` empties dist/ for a moment. */
export async function waitForBuild(timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(join(repoRoot, 'dist', 'main.js')) || !existsSync(join(repoRoot, 'oclif.manifest.json'))) {
    if (Date.now() > deadline) throw new Error('build the CLI first: npm run build');
    await sleep(200);
  }
}

/**
 * The pid of the `orch apiserver` child serving `dataDir` (test/helpers/apiserver.ts does not hand
 * it out), so a test can SIGSTOP and SIGCONT that one process: a child of this process. Linux /proc only.
 */
export function apiServerPid(dataDir: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const at = argv.indexOf('--data-dir');
    if (!argv.includes('apiserver') || at < 0 || argv[at + 1] !== dataDir) continue;
    // Only a child of this process: never signal anything a test did not start.
    const parent = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
    if (parent === process.pid) return Number(entry);
  }
  throw new Error(`no orch apiserver process serves ${dataDir}`);
}
