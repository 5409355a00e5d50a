import {describe, expect, it} from '@jest/globals';
import {GREEN, RED, YELLOW, plain, stylesOf} from '../helpers/ink-frames.js';
import type {ControllerManagerSnapshot} from '../../src/daemons/controller-manager/state.js';
import type {NodeLifecycleSnapshot} from '../../src/daemons/controller-manager/node-lifecycle/controller.js';
import type {ElectionState} from '../../src/daemons/shared/leader-election/index.js';

// Colors are part of what this dashboard says (zone and election states), so Ink's chalk must emit
// them: it reads FORCE_COLOR once, when first loaded, hence the dynamic imports after setting it.
// Jest gives each test file its own process.env, and it is put back once the modules are loaded.
const hadForceColor = 'FORCE_COLOR' in process.env;
process.env.FORCE_COLOR = '1';
const {render} = await import('ink-testing-library');
const {FakeClock} = await import('../../src/daemons/shared/clock.js');
const {ControllerManagerDashboard, byAttention, formatEvictionRate, formatExpiry, leaseRemainingMs} = await import(
  '../../src/ui/controller-manager-dashboard.js'
);
const {LogBuffer} = await import('../../src/ui/components/log-buffer.js');
const {StateEmitter} = await import('../../src/ui/state-emitter.js');
const {humanDuration} = await import('../../src/ui/components/duration.js');
const {columnWidths} = await import('../../src/ui/components/table.js');
if (!hadForceColor) delete process.env.FORCE_COLOR;


const tick = () => new Promise((r) => setTimeout(r, 30));

/** 2024-05-01T10:00:00Z: the fake clock starts here so lease times print as real dates. */
const T0 = Date.UTC(2024, 4, 1, 10, 0, 0);
const ME = 'cp-1_6f1c2a';
const OTHER = 'cp-2_9b7e41';

function election(overrides: Partial<ElectionState> = {}): ElectionState {
  return {
    identity: ME,
    state: 'leader',
    holder: ME,
    acquireTime: T0 - 125_000,
    renewTime: T0 - 2_000,
    transitions: 3,
    observedAt: T0,
    expiresInMs: 15_000,
    ...overrides,
  };
}

function nodeLifecycle(overrides: Partial<NodeLifecycleSnapshot> = {}): NodeLifecycleSnapshot {
  const eu = 'eu:\x00:eu-1a';
  const us = 'us:\x00:us-1b';
  return {
    at: T0,
    allZonesFullyDisrupted: false,
    zones: [
      {zone: eu, displayName: 'eu/eu-1a', state: 'Normal', nodesReady: 3, nodesNotReady: 0, evictionRate: 0.1, queuedNodes: 0},
      {zone: us, displayName: 'us/us-1b', state: 'PartialDisruption', nodesReady: 1, nodesNotReady: 3, evictionRate: 0.01, queuedNodes: 2},
    ],
    nodes: [
      {name: 'node-a', zone: eu, ready: 'True', lastHeartbeatAgeMs: 4_000, taints: [], queuedForTainting: false, pendingEvictions: 0},
      {
        name: 'node-z',
        zone: us,
        ready: 'Unknown',
        lastHeartbeatAgeMs: 65_000,
        taints: ['node.orch.io/unreachable:NoExecute'],
        queuedForTainting: false,
        pendingEvictions: 4,
      },
    ],
    ...overrides,
  };
}

function snapshot(overrides: Partial<ControllerManagerSnapshot> = {}): ControllerManagerSnapshot {
  return {
    version: 'v0.1.0',
    identity: ME,
    server: 'https://127.0.0.1:6443',
    servingUrl: 'https://127.0.0.1:10257',
    lease: 'orch-system/orch-controller-manager',
    election: election(),
    controllers: [
      {name: 'replicaset', workers: 5, queueDepth: 12, details: {replicasets: 40, pods: 120}},
      {name: 'namespace', workers: 10, queueDepth: 0},
    ],
    nodeLifecycle: nodeLifecycle(),
    startedAt: T0 - 61_000,
    at: T0,
    ...overrides,
  };
}

function lineWith(frame: string, text: string): string {
  return frame.split('\n').find((l) => l.includes(text)) ?? '';
}

function mount(initial?: ControllerManagerSnapshot) {
  const clock = new FakeClock(T0);
  const emitter = new StateEmitter<ControllerManagerSnapshot>({clock});
  const logs = new LogBuffer();
  if (initial) emitter.update(initial);
  const app = render(<ControllerManagerDashboard emitter={emitter} logs={logs} clock={clock} />);
  /** Moves time on, lets the ticker and the emitter fire, and waits for Ink to redraw. */
  const advance = async (ms: number) => {
    await clock.advance(ms);
    await tick();
  };
  return {clock, emitter, logs, advance, ...app, frame: () => plain(app.lastFrame() ?? ''), raw: () => app.lastFrame() ?? ''};
}

describe('the controller-manager dashboard', () => {
  it('shows it is live when nothing changes: the uptime moves every second', async () => {
    const {frame, advance, unmount} = mount(snapshot());
    expect(frame()).toMatch(/orch controller-manager \S+ \S+ up 61s/);
    await advance(1000);
    expect(frame()).toMatch(/orch controller-manager \S+ \S+ up 62s/);
    unmount();
  });

  it('says it is starting until the first snapshot, then shows the header', async () => {
    const {frame, emitter, unmount} = mount();
    expect(frame()).toContain('orch controller-manager starting');
    emitter.update(snapshot());
    await tick();
    expect(frame()).toContain('orch controller-manager v0.1.0 https://127.0.0.1:10257');
    expect(lineWith(frame(), 'Identity')).toContain(ME);
    expect(lineWith(frame(), 'API server')).toContain('https://127.0.0.1:6443');
    unmount();
  });

  it('shows the lease, its holder marked as this process, the times and transitions', () => {
    const {frame, raw, unmount} = mount(snapshot());
    const f = frame();
    expect(stylesOf(raw(), `${ME} (this process)`)).toEqual(expect.arrayContaining(['1', GREEN]));
    expect(lineWith(f, 'Leader election')).toContain('lease orch-system/orch-controller-manager');
    expect(lineWith(f, 'State')).toMatch(/leader running controllers/);
    expect(lineWith(f, 'Holder')).toContain(`${ME} (this process)`);
    expect(lineWith(f, 'Acquired')).toContain('2024-05-01T09:57:55Z (2m5s ago)');
    expect(lineWith(f, 'Renewed')).toContain('2024-05-01T09:59:58Z (2s ago)');
    expect(lineWith(f, 'Transitions')).toMatch(/Transitions +3/);
    expect(lineWith(f, 'Expires')).toContain('in 15s');
    unmount();
  });

  it('follows the state and the holder as they change', async () => {
    const {frame, emitter, advance, unmount} = mount(
      snapshot({election: election({state: 'candidate', holder: OTHER, acquireTime: T0 - 60_000}), controllers: [], nodeLifecycle: undefined}),
    );
    expect(lineWith(frame(), 'State')).toMatch(/candidate waiting to acquire the lease/);
    expect(lineWith(frame(), 'Holder')).toContain(OTHER);
    expect(frame()).not.toContain('(this process)');
    expect(lineWith(frame(), 'Controllers')).toContain('they start once this process leads');

    await advance(1000);
    emitter.update(snapshot({election: election({acquireTime: T0 + 1000, transitions: 4}), at: T0 + 1000}));
    await tick();
    expect(lineWith(frame(), 'State')).toMatch(/leader running controllers/);
    expect(lineWith(frame(), 'Holder')).toContain(`${ME} (this process)`);
    expect(lineWith(frame(), 'Transitions')).toMatch(/Transitions +4/);
    expect(frame()).not.toContain('candidate');
    unmount();
  });

  it('counts the lease expiry down every second between snapshots, and keeps the ages moving', async () => {
    const {frame, advance, unmount} = mount(snapshot({election: election({state: 'candidate', holder: OTHER})}));
    expect(lineWith(frame(), 'Expires')).toContain('in 15s');
    await advance(1000);
    expect(lineWith(frame(), 'Expires')).toContain('in 14s');
    expect(lineWith(frame(), 'Renewed')).toContain('(3s ago)');
    expect(lineWith(frame(), 'node-a')).toContain('5s ago');
    await advance(3000);
    expect(lineWith(frame(), 'Expires')).toContain('in 11s');
    await advance(13_000);
    expect(lineWith(frame(), 'Expires')).toContain('expired 2s ago');
    unmount();
  });

  it('restarts the countdown from a renewal', async () => {
    const {frame, emitter, advance, unmount} = mount(snapshot());
    await advance(2000);
    expect(lineWith(frame(), 'Expires')).toContain('in 13s');
    emitter.update(snapshot({election: election({renewTime: T0 + 2000, observedAt: T0 + 2000}), at: T0 + 2000}));
    await tick();
    expect(lineWith(frame(), 'Expires')).toContain('in 15s');
    expect(lineWith(frame(), 'Renewed')).toContain('(0s ago)');
    unmount();
  });

  it('shows a lost leadership plainly: a badge, the consequence, no controllers', async () => {
    const {frame, raw, emitter, advance, unmount} = mount(snapshot());
    await advance(1000);
    emitter.update(snapshot({election: election({state: 'lost', holder: OTHER, expiresInMs: 14_000}), controllers: [], at: T0 + 1000}));
    await tick();
    const f = frame();
    expect(lineWith(f, 'State')).toContain('LEADERSHIP LOST');
    expect(stylesOf(raw(), ' LEADERSHIP LOST ')).toEqual(expect.arrayContaining(['7', RED]));
    expect(lineWith(f, 'State')).toContain('controllers stopped, exiting');
    expect(lineWith(f, 'Holder')).toContain(OTHER);
    expect(f).not.toContain('(this process)');
    expect(lineWith(f, 'Controllers')).toContain('stopped with the lost lease');
    expect(f).not.toContain('replicaset');
    unmount();
  });

  it('does not call a lost leader that the lease still names "this process" in green', async () => {
    const {frame, raw, emitter, advance, unmount} = mount(snapshot());
    await advance(1000);
    emitter.update(snapshot({election: election({state: 'lost'}), at: T0 + 1000}));
    await tick();
    expect(lineWith(frame(), 'Holder')).toContain(`${ME} (this process, no longer renewing)`);
    expect(stylesOf(raw(), ME)).not.toContain(GREEN);
    expect(stylesOf(raw(), ME)).toContain(YELLOW);
    unmount();
  });

  it('says when leader election is disabled and when the lease was released', async () => {
    const disabled = mount(snapshot({lease: undefined, election: {identity: ME, state: 'leader'}}));
    expect(lineWith(disabled.frame(), 'Leader election')).toContain('disabled (--leader-elect=false)');
    expect(disabled.frame()).not.toContain('Holder');
    disabled.unmount();

    const released = mount(snapshot({election: election({state: 'stopped', holder: ''}), controllers: []}));
    expect(lineWith(released.frame(), 'State')).toMatch(/stopped not running/);
    expect(lineWith(released.frame(), 'Holder')).toContain('none (released)');
    expect(released.frame()).not.toContain('Expires');
    released.unmount();
  });

  it('lists the controllers with workers, queue depth and details', () => {
    const {frame, unmount} = mount(snapshot());
    const f = frame();
    expect(lineWith(f, 'Controllers')).toContain('2 running');
    expect(lineWith(f, 'WORKERS')).toMatch(/NAME +WORKERS +QUEUE +DETAILS/);
    expect(lineWith(f, 'replicaset')).toMatch(/replicaset +5 +12 +replicasets 40 · pods 120/);
    expect(lineWith(f, 'namespace')).toMatch(/namespace +10 +0/);
    // Sorted by name.
    expect(f.indexOf('namespace')).toBeLessThan(f.indexOf('replicaset '));
    unmount();
  });

  it('shows each zone with its state, ready counts, eviction rate and queue, and the nodes', () => {
    const {frame, unmount} = mount(snapshot());
    const f = frame();
    expect(lineWith(f, 'Node lifecycle')).toContain('2 zones, 2 nodes');
    expect(lineWith(f, 'eu/eu-1a  ')).toMatch(/eu\/eu-1a +Normal +3 +0 +0\.1\/s +0/);
    expect(lineWith(f, 'us/us-1b  ')).toMatch(/us\/us-1b +PartialDisruption +1 +3 +0\.01\/s +2/);
    // The node in trouble comes first, with its zone by name, heartbeat age, taint and evictions.
    expect(f.indexOf('node-z')).toBeLessThan(f.indexOf('node-a'));
    expect(lineWith(f, 'node-z')).toMatch(/node-z +us\/us-1b +Unknown +65s ago +4 +node\.orch\.io\/unreachable:NoExecute/);
    expect(lineWith(f, 'node-a')).toMatch(/node-a +eu\/eu-1a +True +4s ago +0 +<none>/);
    unmount();
  });

  it.each([
    ['Normal', GREEN],
    ['PartialDisruption', YELLOW],
    ['FullDisruption', RED],
  ] as const)('draws the zone state %s in its color', (state, color) => {
    const zone = {zone: '', displayName: '(cluster)', state, nodesReady: 2, nodesNotReady: 2, evictionRate: 0.1, queuedNodes: 0};
    const {raw, unmount} = mount(snapshot({nodeLifecycle: nodeLifecycle({zones: [zone], nodes: []})}));
    expect(stylesOf(raw(), state)).toContain(color);
    unmount();
  });

  it.each([
    ['leader', GREEN],
    ['candidate', YELLOW],
  ] as const)('draws the election state %s in its color', (state, color) => {
    const {raw, unmount} = mount(snapshot({election: election({state, holder: state === 'leader' ? ME : OTHER})}));
    expect(stylesOf(raw(), state)).toContain(color);
    unmount();
  });

  it('says when every zone is fully disrupted and evictions stopped', () => {
    const full = nodeLifecycle({
      allZonesFullyDisrupted: true,
      zones: [{zone: '', displayName: '(cluster)', state: 'FullDisruption', nodesReady: 0, nodesNotReady: 4, evictionRate: 0, queuedNodes: 4}],
      nodes: [],
    });
    const {frame, unmount} = mount(snapshot({nodeLifecycle: full}));
    expect(frame()).toContain('All zones fully disrupted: evictions stopped everywhere');
    expect(lineWith(frame(), '(cluster)')).toMatch(/FullDisruption +0 +4 +stopped +4/);
    unmount();
  });

  it('lists at most twenty nodes and counts the rest', () => {
    const nodes = Array.from({length: 25}, (_, i) => ({
      name: `n${String(i).padStart(2, '0')}`,
      zone: '',
      ready: 'True',
      lastHeartbeatAgeMs: 1000,
      taints: [],
      queuedForTainting: false,
      pendingEvictions: 0,
    }));
    const nl = nodeLifecycle({zones: [{zone: '', displayName: '(cluster)', state: 'Normal', nodesReady: 25, nodesNotReady: 0, evictionRate: 0.1, queuedNodes: 0}], nodes});
    const {frame, unmount} = mount(snapshot({nodeLifecycle: nl}));
    expect(frame()).toContain('n19');
    expect(frame()).not.toContain('n20');
    expect(frame()).toContain('+5 more (all ready, untainted)');
    unmount();
  });

  it('prints log lines once, above the panel', async () => {
    const {frame, logs, emitter, advance, unmount} = mount(snapshot());
    logs.append('I0501 10:00:00.000000       1 leaderelection.ts:1] "Attempting to acquire leader lease"\n');
    await tick();
    await advance(1000);
    emitter.update(snapshot({at: T0 + 1000, controllers: []}));
    await tick();
    const f = frame();
    expect(f.split('Attempting to acquire').length - 1).toBe(1);
    expect(f.indexOf('Attempting to acquire')).toBeLessThan(f.indexOf('orch controller-manager'));
    unmount();
  });
});

describe('controller-manager dashboard view logic', () => {
  it.each<[number, string]>([
    [15_000, 'in 15s'],
    [14_001, 'in 15s'],
    [14_000, 'in 14s'],
    [150_000, 'in 2m30s'],
    [0, 'expired 0s ago'],
    [-3_500, 'expired 3s ago'],
  ])('formatExpiry(%d) -> %s', (ms, text) => {
    expect(formatExpiry(ms)).toBe(text);
  });

  it('computes the time left from the snapshot time and now', () => {
    expect(leaseRemainingMs(election({expiresInMs: 10_000}), 1000, 4000)).toBe(7000);
    expect(leaseRemainingMs({identity: ME, state: 'candidate'}, 1000, 4000)).toBeUndefined();
  });

  it.each<[number, string]>([
    [0, 'stopped'],
    [0.01, '0.01/s'],
    [0.1, '0.1/s'],
    [1 / 3, '0.33/s'],
    [10, '10/s'],
  ])('formatEvictionRate(%d) -> %s', (rate, text) => {
    expect(formatEvictionRate(rate)).toBe(text);
  });

  it.each<[number, string]>([
    [-5_000, '0s'],
    [999, '0s'],
    [119_000, '119s'],
    [125_000, '2m5s'],
    [180_000, '3m'],
    [25 * 60_000, '25m'],
    [(4 * 60 + 10) * 60_000, '4h10m'],
    [20 * 3_600_000, '20h'],
    [(3 * 24 + 5) * 3_600_000, '3d5h'],
    [30 * 24 * 3_600_000, '30d'],
    [(3 * 365 + 2) * 24 * 3_600_000, '3y2d'],
    [10 * 365 * 24 * 3_600_000, '10y'],
  ])('humanDuration(%d) -> %s (kubectl AGE)', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });

  it('puts nodes in trouble first, the rest by name', () => {
    const base = {zone: '', lastHeartbeatAgeMs: 0, taints: [] as string[], queuedForTainting: false, pendingEvictions: 0};
    const order = byAttention([
      {...base, name: 'a', ready: 'True'},
      {...base, name: 'd', ready: 'True', queuedForTainting: true},
      {...base, name: 'b', ready: 'False'},
      {...base, name: 'c', ready: 'True', taints: ['x:NoSchedule']},
    ]).map((n) => n.name);
    expect(order).toEqual(['b', 'c', 'd', 'a']);
  });

  it('sizes table columns to the widest cell, capped', () => {
    expect(columnWidths([{header: 'NAME'}, {header: 'Z', maxWidth: 3}], [['replicaset', 'abcdef'], [{text: 'ns'}, 'ab']])).toEqual([10, 3]);
  });
});
