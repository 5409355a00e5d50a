import {describe, expect, it} from '@jest/globals';
import {render} from 'ink-testing-library';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import type {ApiServerSnapshot} from '../../src/daemons/apiserver/state.js';
import {ApiServerDashboard} from '../../src/ui/apiserver-dashboard.js';
import {LogBuffer} from '../../src/ui/components/log-buffer.js';
import {StateEmitter} from '../../src/ui/state-emitter.js';

const tick = () => new Promise((r) => setTimeout(r, 30));

function snapshot(overrides: Partial<ApiServerSnapshot> = {}): ApiServerSnapshot {
  return {
    url: 'https://127.0.0.1:6443',
    version: 'v0.1.0',
    orchconfigPath: '/home/me/.orch/admin.orchconfig',
    store: {engine: 'sqlite', location: '/home/me/.orch/state.db', revision: 1234, reachable: true, cachesSynced: true},
    livez: [
      {name: 'ping', ok: true},
      {name: 'kvstore', ok: true},
    ],
    readyz: [
      {name: 'ping', ok: true},
      {name: 'informer-sync', ok: true},
    ],
    requests: {
      total: 1532,
      ratePerSecond: 12.5,
      inFlightReadOnly: 3,
      inFlightMutating: 1,
      latencyMs: {p50: 1.25, p99: 42},
      byCode: {'2xx': 1500, '4xx': 30, '5xx': 2},
    },
    watches: {open: 12, byResource: {pods: 5, nodes: 3, configmaps: 2, leases: 1, services: 1}},
    shutdown: {phase: 'serving normally', inFlight: 0, longRunning: 0},
    startedAt: -3_000,
    at: 0,
    ...overrides,
  };
}

/** The line of the frame holding `text` (checks are listed one per line). */
function lineWith(frame: string, text: string): string {
  return frame.split('\n').find((l) => l.includes(text)) ?? '';
}

function mount(initial?: ApiServerSnapshot) {
  const clock = new FakeClock(0);
  const emitter = new StateEmitter<ApiServerSnapshot>({clock, ignoreKeys: ['at']});
  const logs = new LogBuffer();
  if (initial) emitter.update(initial);
  const app = render(<ApiServerDashboard emitter={emitter} logs={logs} clock={clock} />);
  return {clock, emitter, logs, ...app, frame: () => app.lastFrame() ?? ''};
}

describe('the apiserver dashboard', () => {
  it('shows it is live when nothing changes: the uptime moves every second', async () => {
    const {frame, clock, unmount} = mount(snapshot());
    await tick();
    expect(frame()).toContain('orch apiserver v0.1.0 https://127.0.0.1:6443 up 3s');
    await clock.advance(1000);
    await tick();
    expect(frame()).toContain('https://127.0.0.1:6443 up 4s');
    unmount();
  });

  it('says it is starting until the first snapshot', async () => {
    const {frame, emitter, unmount} = mount();
    expect(frame()).toContain('starting');
    emitter.update(snapshot());
    await tick();
    expect(frame()).toContain('orch apiserver v0.1.0 https://127.0.0.1:6443');
    unmount();
  });

  it("shows priority and fairness's busy levels: seats in use of their limit and queued requests", async () => {
    const idle = {exempt: false, seatsInUse: 0, queued: 0};
    const {frame, emitter, clock, unmount} = mount(snapshot({priorityLevels: [
      {name: 'catch-all', limit: 13, ...idle},
      {name: 'exempt', exempt: true, seatsInUse: 2, limit: 0, queued: 0},
      {name: 'global-default', exempt: false, seatsInUse: 49, limit: 49, queued: 7},
      {name: 'workload-low', limit: 245, ...idle},
    ]}));
    await tick();
    expect(lineWith(frame(), 'Priority')).toMatch(/exempt 2 · global-default 49\/49 7 queued · 2 idle/);
    emitter.update(snapshot({priorityLevels: [{name: 'global-default', exempt: false, seatsInUse: 3, limit: 49, queued: 0}]}));
    await clock.advance(1000);
    await tick();
    expect(lineWith(frame(), 'Priority')).toMatch(/Priority +global-default 3\/49 +│/);
    unmount();
  });

  it('has no priority line when priority and fairness is off', () => {
    const {frame, unmount} = mount(snapshot());
    expect(lineWith(frame(), 'Priority')).toBe('');
    unmount();
  });

  it('shows the header, the store, requests and the busiest watches', () => {
    const {frame, unmount} = mount(snapshot());
    const f = frame();
    expect(f).toContain('kubectl --kubeconfig /home/me/.orch/admin.orchconfig get ns');
    expect(lineWith(f, 'Store')).toMatch(/sqlite .*state\.db revision 1234 +✓ reachable +✓ caches synced/);
    expect(lineWith(f, 'Requests')).toMatch(/13\/s .* total 1532/);
    expect(lineWith(f, 'In flight')).toContain('3 read-only  1 mutating');
    expect(lineWith(f, 'Latency')).toContain('p50 1.3 ms  p99 42 ms');
    expect(lineWith(f, 'Codes')).toContain('2xx 1500  4xx 30  5xx 2');
    expect(lineWith(f, 'Watches')).toContain('12 open  pods 5 · nodes 3 · configmaps 2 · leases 1 · +1 more');
    unmount();
  });

  it('says on the store line why writes fail while reads work', () => {
    const store = {...snapshot().store, writeFailure: 'database or disk is full (since 2026-11-25T18:20:00.000Z)'};
    const {frame, unmount} = mount(snapshot({store}));
    expect(lineWith(frame(), 'Writes')).toMatch(/✗ failing: database or disk is full \(since 2026-11-25T18:20:00.000Z\)/);
    unmount();
    const healthy = mount(snapshot());
    expect(healthy.frame()).not.toContain('Writes');
    healthy.unmount();
  });

  it('shows each livez and readyz check with its live state, and the reason of a failing one', async () => {
    const {frame, emitter, clock, unmount} = mount(snapshot());
    expect(lineWith(frame(), 'informer-sync')).toMatch(/✓ informer-sync/);
    expect(frame()).toMatch(/readyz ok/);

    await clock.advance(300);
    emitter.update(snapshot({readyz: [{name: 'ping', ok: true}, {name: 'informer-sync', ok: false, reason: 'informers not started yet'}]}));
    await tick();
    expect(lineWith(frame(), 'informer-sync')).toMatch(/✗ informer-sync informers not started yet/);
    expect(frame()).toMatch(/readyz 1 failing/);
    expect(lineWith(frame(), 'kvstore')).toMatch(/✓ kvstore/);

    await clock.advance(300);
    emitter.update(snapshot());
    await tick();
    expect(lineWith(frame(), 'informer-sync')).toMatch(/✓ informer-sync/);
    expect(frame()).not.toContain('informers not started yet');
    unmount();
  });

  it('holds back a change that comes within the throttle interval, then shows the last state', async () => {
    const {frame, emitter, clock, unmount} = mount(snapshot());
    await clock.advance(100);
    emitter.update(snapshot({store: {...snapshot().store, revision: 1300}}));
    emitter.update(snapshot({store: {...snapshot().store, revision: 1301}}));
    await tick();
    expect(frame()).toContain('revision 1234');
    await clock.advance(150);
    await tick();
    expect(frame()).toContain('revision 1301');
    unmount();
  });

  it.each([
    ['delaying termination', /delaying termination .*4 in flight, 2 long-running/],
    ['graceful termination', /graceful termination .*4 in flight, 2 long-running/],
    ['stopped', /Phase +stopped/],
  ] as const)('highlights the shutdown phase %s', async (phase, line) => {
    const {frame, emitter, clock, unmount} = mount(snapshot());
    expect(lineWith(frame(), 'Phase')).toMatch(/serving normally/);
    await clock.advance(300);
    emitter.update(snapshot({shutdown: {phase, inFlight: 4, longRunning: 2}}));
    await tick();
    expect(lineWith(frame(), 'Phase')).toMatch(line);
    expect(frame()).not.toContain('serving normally');
    unmount();
  });

  it('prints log lines once, above the live panel, including those logged before it mounted', async () => {
    const clock = new FakeClock(0);
    const emitter = new StateEmitter<ApiServerSnapshot>({clock});
    const logs = new LogBuffer();
    logs.append('I0101 00:00:00.000000       1 server.ts:1] "Starting"\n');
    emitter.update(snapshot());
    const {lastFrame, unmount} = render(<ApiServerDashboard emitter={emitter} logs={logs} />);
    await tick();
    logs.append('W0101 00:00:01.000000       1 server.ts:2] "Slow"\n');
    await tick();
    await clock.advance(300);
    emitter.update(snapshot({store: {...snapshot().store, revision: 1240}}));
    await tick();
    const frame = lastFrame() ?? '';
    const count = (s: string) => frame.split(s).length - 1;
    expect(count('"Starting"')).toBe(1);
    expect(count('"Slow"')).toBe(1);
    expect(frame.indexOf('"Starting"')).toBeLessThan(frame.indexOf('"Slow"'));
    expect(frame.indexOf('"Slow"')).toBeLessThan(frame.indexOf('orch apiserver'));
    expect(frame).toContain('revision 1240');
    unmount();
  });
});
