/**
 * Leader election as users run it: one `orch apiserver` and three `orch controller-manager`
 * processes with a 2 s lease (1.5 s renew deadline, 0.5 s retry period). Every controller
 * manager's "Starting controller" / "Stopped controller" lines are kept with their arrival times,
 * and the Lease is sampled all along; the last test checks that at no moment two processes ran
 * controllers and that the Lease never named someone other than the one running.
 *
 * The phases run in order and share the processes: kill -9 of the leader, a clean stop (SIGTERM)
 * of the next leader, and a leader cut off from a frozen (SIGSTOP) API server. A new controller
 * manager joins after each departure so three always campaign.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {startApiServerProcess, sleep, type ServerProcess, type WatchStream} from '../helpers/apiserver.js';
import {
  SHORT_LEASE,
  SHORT_LEASE_ARGS,
  apiServerPid,
  controllerActivity,
  leaderStatusMetric,
  overlappingActivity,
  runningAt,
  startControllerManager,
  type ControllerManagerProcess,
} from '../helpers/controller-manager.js';

const {leaseDurationMs, renewDeadlineMs, retryPeriodMs} = SHORT_LEASE;
const LEASE_PATH = '/apis/coordination.orch.io/v1/namespaces/orch-system/leases/orch-controller-manager';
/**
 * The acquire loop waits a retry period stretched by up to 1.2x (upstream's JitterUntil factor), so
 * a standby notices the last renewal, and later the expiry, each up to 1.2 retry periods later than
 * a plain retry period would.
 */
const JITTER_MS = 1.2 * retryPeriodMs;
/** Process scheduling, log pipes and HTTP round trips on a busy CI machine. */
const SCHEDULING_ALLOWANCE_MS = 500;

let server: ServerProcess;
const managers: ControllerManagerProcess[] = [];
let nextName = 1;
const leaseSamples: Array<{sent: number; received: number; holder: string}> = [];
let sampling = true;
let sampler: Promise<void> | undefined;
/** Measured times (ms), printed at the end for the report. */
const figures: Record<string, number> = {};

async function addManager(): Promise<ControllerManagerProcess> {
  const cm = await startControllerManager({
    name: `cm-${nextName++}`,
    orchconfigPath: server.orchconfigPath,
    args: [...SHORT_LEASE_ARGS, '--controllers=nodelifecycle'],
  });
  managers.push(cm);
  return cm;
}

const alive = () => managers.filter((m) => !m.exit());
const nameOf = (identity: string) => managers.find((m) => m.identity === identity)?.name ?? JSON.stringify(identity);

/** Every stretch of controller activity of every process so far. */
function allActivity() {
  return managers.flatMap((m) => controllerActivity(m.name, m.lines, m.exit()?.at));
}

/** The one process running controllers now; fails when none or several do. */
function currentLeader(): ControllerManagerProcess {
  const running = runningAt(allActivity(), Date.now());
  expect(running).toHaveLength(1);
  return managers.find((m) => m.name === running[0])!;
}

/** The first "Starting controller" of any of `candidates` after `since`, bounded. */
async function nextLeader(candidates: ControllerManagerProcess[], since: number, timeoutMs: number) {
  const started = await Promise.any(candidates.map((c) => c.waitForLine(/"Starting controller"/, timeoutMs, since).then((line) => ({cm: c, at: line.at}))));
  return started;
}

async function holder(): Promise<string> {
  const r = await server.client.get(LEASE_PATH, {timeoutMs: 2000});
  expect(r.status).toBe(200);
  return r.body.spec.holderIdentity ?? '';
}

async function sampleLease(): Promise<void> {
  while (sampling) {
    const sent = Date.now();
    try {
      const r = await server.client.get(LEASE_PATH, {timeoutMs: 1000});
      if (r.status === 200) leaseSamples.push({sent, received: Date.now(), holder: r.body.spec?.holderIdentity ?? ''});
    } catch {
      // a frozen or restarting server: no sample
    }
    await sleep(150);
  }
}

beforeAll(async () => {
  server = await startApiServerProcess({engine: 'sqlite'});
  await Promise.all([addManager(), addManager(), addManager()]);
  sampler = sampleLease();
}, 60_000);

afterAll(async () => {
  sampling = false;
  await sampler;
  // A frozen server must be running again before its graceful stop.
  try {
    process.kill(apiServerPid(server.dataDir), 'SIGCONT');
  } catch {
    // already gone
  }
  await Promise.all(managers.map((m) => m.stop()));
  await server?.stop();
}, 30_000);

describe('orch controller-manager leader election (three processes, one API server)', () => {
  it('elects exactly one leader, named by the Lease, and each process reports its role on /healthz and /metrics', async () => {
    const first = await nextLeader(managers, 0, 15_000);
    // Several retry periods later the standbys still wait.
    await sleep(3 * retryPeriodMs);
    expect(currentLeader()).toBe(first.cm);
    expect(nameOf(await holder())).toBe(first.cm.name);

    for (const cm of managers) {
      const expectedStatus = cm === first.cm ? 1 : 0;
      for (const path of ['/healthz', '/livez', '/readyz']) {
        const r = await cm.get(path);
        expect({cm: cm.name, path, status: r.status, text: r.text}).toEqual({cm: cm.name, path, status: 200, text: 'ok'});
      }
      const verbose = await cm.get('/healthz?verbose');
      expect(verbose.text).toContain('[+]leaderElection ok');
      expect(verbose.text).toContain('healthz check passed');
      expect({cm: cm.name, leader: leaderStatusMetric((await cm.get('/metrics')).text)}).toEqual({cm: cm.name, leader: expectedStatus});
      // Paths outside --authorization-always-allow-paths are refused.
      expect((await cm.get('/debug/pprof')).status).toBe(403);
    }
  }, 30_000);

  it('after kill -9 of the leader, a standby leads once the lease expires, within lease duration + retry period', async () => {
    const leader = currentLeader();
    const standbys = alive().filter((m) => m !== leader);
    const killedAt = Date.now();
    const exit = await leader.signal('SIGKILL');
    expect(exit.signal).toBe('SIGKILL');

    const bound = leaseDurationMs + retryPeriodMs + 2 * JITTER_MS + SCHEDULING_ALLOWANCE_MS;
    const next = await nextLeader(standbys, killedAt, bound + 2000);
    const failoverMs = next.at - killedAt;
    figures['kill -9 -> new leader running controllers'] = failoverMs;
    // The standby respected the lease: the last renewal was at most a retry period (and the
    // renewal's round trip) before the kill.
    expect(failoverMs).toBeGreaterThanOrEqual(leaseDurationMs - retryPeriodMs - 200);
    expect(failoverMs).toBeLessThanOrEqual(bound);
    expect(nameOf(await holder())).toBe(next.cm.name);
    await addManager();
  }, 30_000);

  it('after a clean stop (SIGTERM) of the leader, the lease is released and a standby leads at once', async () => {
    const leader = currentLeader();
    const standbys = alive().filter((m) => m !== leader);
    const watch: WatchStream = server.client.watch('/apis/coordination.orch.io/v1/namespaces/orch-system/leases?watch=1');
    try {
      await watch.next((e) => e.object?.metadata?.name === 'orch-controller-manager', 5000);
      const stoppedAt = Date.now();
      const exit = await leader.signal('SIGTERM');
      expect({code: exit.code, signal: exit.signal}).toEqual({code: 0, signal: null});
      await leader.waitForLine(/"Stopped"$/, 1000);

      // Standbys poll every retry period (jittered); a released lease is taken on the next poll.
      const next = await nextLeader(standbys, stoppedAt, 5000);
      figures['SIGTERM -> new leader running controllers'] = next.at - stoppedAt;
      expect(next.at - stoppedAt).toBeLessThanOrEqual(retryPeriodMs + JITTER_MS + SCHEDULING_ALLOWANCE_MS);
      expect(next.at - stoppedAt).toBeLessThan(leaseDurationMs);

      // The Lease went from the old leader to '' (released) and only then to the new one.
      await watch.next((e) => e.object?.spec?.holderIdentity === next.cm.identity, 5000);
      const holders = watch.events.filter((e) => e.object?.metadata?.name === 'orch-controller-manager').map((e) => nameOf(e.object.spec.holderIdentity ?? ''));
      const changes = holders.filter((h, i) => i === 0 || h !== holders[i - 1]);
      expect(changes).toEqual([leader.name, '""', next.cm.name]);
    } finally {
      watch.close();
    }
    await addManager();
  }, 30_000);

  it('a leader that cannot reach the API server stops its controllers after the renew deadline and exits 1; a standby leads once it is back', async () => {
    const leader = currentLeader();
    const standbys = alive().filter((m) => m !== leader);
    const apiPid = apiServerPid(server.dataDir);
    const frozenAt = Date.now();
    process.kill(apiPid, 'SIGSTOP');
    let stopped;
    let exit;
    try {
      stopped = await leader.waitForLine(/"Stopped controller"/, renewDeadlineMs + 5000, frozenAt);
      exit = await leader.waitForExit(renewDeadlineMs + 5000);
      // Nobody may lead while the API server is unreachable.
      expect(runningAt(allActivity(), Date.now())).toEqual([]);
    } finally {
      process.kill(apiPid, 'SIGCONT');
    }
    const resumedAt = Date.now();
    // Its last renewal was at most one retry period before the freeze; a renewal round gives up
    // after the renew deadline and rounds start a retry period apart.
    const lostAfterMs = stopped.at - frozenAt;
    figures['API server frozen -> leader stopped its controllers'] = lostAfterMs;
    if (exit) figures['API server frozen -> leader exited'] = exit.at - frozenAt;
    expect(lostAfterMs).toBeGreaterThanOrEqual(renewDeadlineMs - retryPeriodMs);
    expect(lostAfterMs).toBeLessThanOrEqual(renewDeadlineMs + retryPeriodMs + SCHEDULING_ALLOWANCE_MS);
    expect(leader.lines.some((l) => l.at >= frozenAt && /failed to renew lease/.test(l.text))).toBe(true);
    expect(exit).toBeDefined();
    expect(exit!.code).toBe(1);
    expect(leader.output()).toContain('leaderelection lost');

    // The standbys saw the lease unchanged for longer than its duration: the next poll takes it.
    const next = await nextLeader(standbys, resumedAt, leaseDurationMs + retryPeriodMs + 2 * JITTER_MS + 5000);
    figures['API server resumed -> new leader running controllers'] = next.at - resumedAt;
    expect(nameOf(await holder())).toBe(next.cm.name);
    const metrics = await next.cm.get('/metrics');
    expect(leaderStatusMetric(metrics.text)).toBe(1);
  }, 40_000);

  it('at no moment did two processes run controllers, and the Lease named whoever ran them', () => {
    const activity = allActivity();
    // Each process led at most once here, and four different processes led in turn.
    expect(new Set(activity.map((a) => a.who)).size).toBe(4);
    expect(overlappingActivity(activity)).toEqual([]);

    // A sample read the Lease at some moment between sending and receiving; it contradicts the log
    // when one and the same process ran controllers that whole time and the Lease named another.
    const contradictions = leaseSamples.filter((s) => {
      const atSend = runningAt(activity, s.sent);
      const atReceive = runningAt(activity, s.received);
      return atSend.length === 1 && atReceive.length === 1 && atSend[0] === atReceive[0] && nameOf(s.holder) !== atSend[0];
    });
    expect(leaseSamples.length).toBeGreaterThan(20);
    expect(contradictions).toEqual([]);
    console.log(`leader election figures (lease ${leaseDurationMs} ms, renew deadline ${renewDeadlineMs} ms, retry ${retryPeriodMs} ms):\n${Object.entries(figures).map(([k, v]) => `  ${k}: ${v} ms`).join('\n')}`);
  });
});

// The checker the last test relies on, on its own.
describe('controller activity from log lines', () => {
  const line = (at: number, text: string) => ({at, text: `I0101 00:00:00.000000 1 manager.ts:1] "${text}" name="x"`});
  it.each([
    {case: 'start then stop', lines: [line(10, 'Starting controller'), line(20, 'Stopped controller')], exitAt: undefined, expected: [{who: 'a', start: 10, end: 20}]},
    {case: 'still running', lines: [line(10, 'Starting controller')], exitAt: undefined, expected: [{who: 'a', start: 10, end: Infinity}]},
    {case: 'killed while running', lines: [line(10, 'Starting controller')], exitAt: 15, expected: [{who: 'a', start: 10, end: 15}]},
    {
      case: 'two controllers: stopped once both are',
      lines: [line(10, 'Starting controller'), line(11, 'Starting controller'), line(20, 'Stopped controller'), line(21, 'Stopped controller')],
      exitAt: undefined,
      expected: [{who: 'a', start: 10, end: 21}],
    },
  ])('$case', ({lines, exitAt, expected}) => {
    expect(controllerActivity('a', lines, exitAt)).toEqual(expected);
  });

  it.each([
    {case: 'one after the other', intervals: [{who: 'a', start: 0, end: 10}, {who: 'b', start: 10, end: 20}], overlaps: 0},
    {case: 'sharing a moment', intervals: [{who: 'a', start: 0, end: 10}, {who: 'b', start: 9, end: 20}], overlaps: 1},
    {case: 'one still running', intervals: [{who: 'a', start: 0, end: Infinity}, {who: 'b', start: 50, end: 60}], overlaps: 1},
  ])('overlaps: $case', ({intervals, overlaps}) => {
    expect(overlappingActivity(intervals)).toHaveLength(overlaps);
  });
});
