import {describe, expect, it} from '@jest/globals';
import {BOLD, GREEN, RED, YELLOW, plain, stylesOf} from '../helpers/ink-frames.js';
import type {AgentPodSnapshot, AgentSnapshot} from '../../src/daemons/agent/state.js';
import type {EvictionSnapshot, SignalSnapshot, ThresholdSnapshot} from '../../src/daemons/agent/eviction/snapshot.js';
import type {PodSnapshot as RuntimePodSnapshot} from '../../src/daemons/agent/runtime/runtime.js';

// Colors say what is wrong here (a crash loop in red, a soft threshold counting down in yellow), so
// Ink's chalk must emit them: it reads FORCE_COLOR once, when first loaded, hence the dynamic imports.
const hadForceColor = 'FORCE_COLOR' in process.env;
process.env.FORCE_COLOR = '1';
const {render} = await import('ink-testing-library');
const {FakeClock} = await import('../../src/daemons/shared/clock.js');
const {AgentDashboard, containerStateCell, formatAmount, isolationNote, podsByAttention, probesCell, thresholdCell} = await import(
  '../../src/ui/agent-dashboard.js'
);
const {podFromRuntime} = await import('../../src/daemons/agent/state.js');
const {LogBuffer} = await import('../../src/ui/components/log-buffer.js');
const {StateEmitter} = await import('../../src/ui/state-emitter.js');
if (!hadForceColor) delete process.env.FORCE_COLOR;


function lineWith(frame: string, text: string): string {
  return frame.split('\n').find((l) => l.includes(text)) ?? '';
}

/** The frame as one line of words: long rows wrap inside the panel's border at the test's 100 columns. */
function joined(frame: string): string {
  return frame.replace(/[│╭╮╰╯─]/g, '').replace(/\s+/g, ' ');
}

const tick = () => new Promise((r) => setTimeout(r, 30));

/** 2024-05-01T10:00:00Z. */
const T0 = Date.UTC(2024, 4, 1, 10, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();
const GI = 1024 ** 3;
const MI = 1024 ** 2;

const webPod: AgentPodSnapshot = {
  uid: 'u-web',
  namespace: 'default',
  name: 'web',
  source: 'api',
  phase: 'Running',
  containers: [
    {name: 'migrate', init: true, state: {terminated: {exitCode: 0, reason: 'Completed'}}, restartCount: 0, ready: false, probes: {}},
    {
      name: 'app',
      init: false,
      state: {running: {startedAt: iso(T0 - 5 * 60_000)}},
      restartCount: 0,
      ready: true,
      probes: {liveness: {result: 'success'}, readiness: {result: 'success'}},
    },
  ],
};

const crashPod: AgentPodSnapshot = {
  uid: 'u-crash',
  namespace: 'default',
  name: 'crasher',
  source: 'file',
  phase: 'Running',
  containers: [
    {
      name: 'loop',
      init: false,
      state: {waiting: {reason: 'CrashLoopBackOff', message: 'back-off 20s restarting failed container=loop pod=crasher_default(u-crash)'}},
      lastState: {terminated: {exitCode: 3, reason: 'Error'}},
      restartCount: 4,
      ready: false,
      probes: {},
    },
  ],
};

const probeFailingPod: AgentPodSnapshot = {
  uid: 'u-api',
  namespace: 'shop',
  name: 'api',
  source: 'api',
  phase: 'Running',
  containers: [
    {
      name: 'server',
      init: false,
      state: {running: {startedAt: iso(T0 - 30_000)}},
      restartCount: 0,
      ready: false,
      probes: {liveness: {result: 'success'}, readiness: {result: 'failure', message: 'HTTP probe failed with statuscode: 503'}},
    },
  ],
};

const failedPod: AgentPodSnapshot = {
  uid: 'u-img',
  namespace: 'default',
  name: 'image-only',
  source: 'http',
  phase: 'Failed',
  reason: 'CommandRequired',
  message: 'container "nginx" (image nginx:1.27) has no command',
  containers: [{name: 'nginx', init: false, state: {terminated: {exitCode: 128, reason: 'StartError'}}, restartCount: 0, ready: false, probes: {}}],
};

function threshold(overrides: Partial<ThresholdSnapshot> = {}): ThresholdSnapshot {
  return {id: 'hard:memory.available', value: '100Mi', quantity: 100 * MI, gracePeriodMs: 0, met: false, actionable: false, ...overrides};
}

function memorySignal(overrides: Partial<SignalSnapshot> = {}): SignalSnapshot {
  return {
    signal: 'memory.available',
    unit: 'bytes',
    available: 1.2 * GI,
    capacity: 16 * GI,
    observedAt: T0,
    hard: threshold(),
    // Met 10 s ago with a 40 s grace: evicts 30 s from T0.
    soft: threshold({id: 'soft:memory.available', value: '1.5Gi', quantity: 1.5 * GI, gracePeriodMs: 40_000, met: true, firstObservedAt: T0 - 10_000, deadline: T0 + 30_000}),
    ...overrides,
  };
}

function eviction(overrides: Partial<EvictionSnapshot> = {}): EvictionSnapshot {
  return {
    at: T0,
    lastSyncAt: T0 - 2_000,
    signals: [
      memorySignal(),
      {
        signal: 'nodefs.available',
        unit: 'bytes',
        available: 40 * GI,
        capacity: 100 * GI,
        observedAt: T0,
        hard: threshold({id: 'hard:nodefs.available', value: '10%', quantity: 10 * GI}),
      },
      {signal: 'pid.available', unit: 'count', error: 'cannot read /proc/sys/kernel/pid_max', hard: undefined, soft: undefined},
    ],
    conditions: [
      // Last seen met 10 s ago, 5 min transition period.
      {type: 'MemoryPressure', active: true, observedNow: false, lastObservedAt: T0 - 10_000, clearsAt: T0 + 290_000},
      {type: 'DiskPressure', active: false, observedNow: false},
      {type: 'PIDPressure', active: false, observedNow: false},
    ],
    evictions: [
      {
        at: T0 - 65_000,
        namespace: 'batch',
        name: 'hog',
        uid: 'u-hog',
        signal: 'memory.available',
        resource: 'memory',
        thresholdId: 'hard:memory.available',
        gracePeriodSeconds: 0,
        message: 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 84772Ki. ',
      },
    ],
    ...overrides,
  };
}

function snapshot(overrides: Partial<AgentSnapshot> = {}): AgentSnapshot {
  return {
    version: 'v0.1.0',
    nodeName: 'node-1',
    mode: 'apiserver',
    server: 'https://127.0.0.1:6443',
    serving: [
      {name: 'server', url: 'https://0.0.0.0:10250'},
      {name: 'read-only', url: 'http://0.0.0.0:10255'},
      {name: 'healthz', url: 'http://127.0.0.1:10248/healthz'},
    ],
    apiServer: {registerNode: true, registered: true, connected: true, lastStatusAt: T0 - 3_000, lastLeaseRenewAt: T0 - 1_000},
    sources: {
      api: {watching: true},
      file: {path: '/etc/orch/manifests', lastCheckAt: T0 - 4_000, pods: 1},
      http: {url: 'http://config.local/pods.yaml', lastCheckAt: T0 - 15_000, error: 'GET returned 404'},
    },
    pods: [webPod, crashPod],
    maxPods: 110,
    cgroups: true,
    eviction: eviction(),
    startedAt: T0 - 5_000,
    at: T0,
    ...overrides,
  };
}

function mount(initial?: AgentSnapshot) {
  const clock = new FakeClock(T0);
  const emitter = new StateEmitter<AgentSnapshot>({clock});
  const logs = new LogBuffer();
  if (initial) emitter.update(initial);
  const app = render(<AgentDashboard emitter={emitter} logs={logs} clock={clock} />);
  /** Moves time on, lets the ticker and the emitter fire, and waits for Ink to redraw. */
  const advance = async (ms: number) => {
    await clock.advance(ms);
    await tick();
  };
  return {clock, emitter, logs, advance, ...app, frame: () => plain(app.lastFrame() ?? ''), raw: () => app.lastFrame() ?? ''};
}

describe('the agent dashboard', () => {
  it('shows it is live when nothing changes: the uptime moves every second', async () => {
    const {frame, advance, unmount} = mount(snapshot());
    expect(frame()).toContain('orch agent v0.1.0 node-1 up 5s');
    await advance(1000);
    expect(frame()).toContain('orch agent v0.1.0 node-1 up 6s');
    await advance(120_000);
    expect(frame()).toContain('up 2m6s');
    unmount();
  });

  it('says it is starting (with the isolation note) until the first snapshot, then shows the header', async () => {
    const {frame, emitter, unmount} = mount();
    expect(frame()).toContain('orch agent starting');
    expect(frame()).toContain('Pods run as local processes, not containers');
    emitter.update(snapshot());
    await tick();
    const f = frame();
    expect(f).toContain('orch agent v0.1.0 node-1');
    expect(lineWith(f, 'Mode')).toContain('API server https://127.0.0.1:6443');
    expect(joined(f)).toContain('Serving https://0.0.0.0:10250 · read-only http://0.0.0.0:10255 · healthz http://127.0.0.1:10248/healthz');
    unmount();
  });

  it('shows registration and the API server link, and follows a connection failure', async () => {
    const {frame, raw, emitter, advance, unmount} = mount(snapshot());
    expect(lineWith(frame(), 'Registration')).toContain('registered');
    expect(lineWith(frame(), 'Connection')).toContain('ok');
    expect(lineWith(frame(), 'Node status')).toContain('posted 3s ago');
    expect(lineWith(frame(), 'Lease')).toContain('renewed 1s ago');

    await advance(2000);
    expect(lineWith(frame(), 'Node status')).toContain('posted 5s ago');
    const failing = snapshot({
      apiServer: {registerNode: true, registered: true, connected: false, lastError: 'connect ECONNREFUSED 127.0.0.1:6443', lastErrorAt: T0 + 1_000, lastStatusAt: T0 - 3_000},
      at: T0 + 2000,
    });
    emitter.update(failing);
    await tick();
    expect(lineWith(frame(), 'Connection')).toContain('failing (1s ago): connect ECONNREFUSED 127.0.0.1:6443');
    expect(stylesOf(raw(), 'failing')).toContain(RED);
    expect(lineWith(frame(), 'Lease')).toContain('not renewed yet');
    unmount();
  });

  it.each<[string, Partial<AgentSnapshot>, string]>([
    ['registering', {apiServer: {registerNode: true, registered: false, connected: true}}, 'registering…'],
    ['not registering', {apiServer: {registerNode: false, registered: false, connected: true}}, 'off (--register-node=false)'],
  ])('says when the node is %s', (_name, overrides, text) => {
    const {frame, unmount} = mount(snapshot(overrides));
    expect(lineWith(frame(), 'Registration')).toContain(text);
    unmount();
  });

  it('shows standalone mode without registration, and the pod sources with their last checks', async () => {
    const {frame, advance, unmount} = mount(snapshot({mode: 'standalone', server: undefined, apiServer: undefined, sources: snapshot().sources}));
    const f = frame();
    expect(lineWith(f, 'Mode')).toContain('standalone static pods only, no API server');
    expect(f).not.toContain('Registration');
    expect(lineWith(f, '  api')).toContain('watching pods bound to node-1');
    expect(lineWith(f, '  file')).toContain('/etc/orch/manifests checked 4s ago · 1 pod');
    expect(joined(f)).toContain('http http://config.local/pods.yaml checked 15s ago last error: GET returned 404');
    await advance(1000);
    expect(lineWith(frame(), '  file')).toContain('checked 5s ago');
    unmount();
  });

  it('says when no pod source is configured', () => {
    const {frame, unmount} = mount(snapshot({sources: {}}));
    expect(lineWith(frame(), 'Pod sources')).toContain('none configured');
    unmount();
  });

  it('lists every pod with its containers, their states, readiness, restarts and probes', async () => {
    const {frame, advance, unmount} = mount(snapshot({pods: [webPod, failedPod]}));
    const f = frame();
    expect(lineWith(f, '│ Pods ')).toContain('2 of 110, 1 running');
    expect(lineWith(f, 'POD / CONTAINER')).toMatch(/POD \/ CONTAINER +SOURCE +STATE +READY +RESTARTS +PROBES/);
    expect(lineWith(f, 'default/web')).toMatch(/default\/web +api +Running +1\/1 +0/);
    expect(lineWith(f, 'migrate (init)')).toMatch(/migrate \(init\) +Completed exit 0 +- +0 +-/);
    expect(lineWith(f, '  app')).toMatch(/app +Running 5m +✓ +0 +liveness ✓ readiness ✓/);
    expect(lineWith(f, 'default/image-only')).toMatch(/default\/image-only +http +Failed \(CommandRequired\) +0\/1 +0/);
    expect(lineWith(f, '  nginx')).toMatch(/nginx +StartError exit 128 +✗/);
    expect(f).toContain('default/image-only: CommandRequired: container "nginx" (image nginx:1.27) has no command');
    // The failed pod needs a look first.
    expect(f.indexOf('default/image-only')).toBeLessThan(f.indexOf('default/web'));
    await advance(60_000);
    expect(lineWith(frame(), '  app')).toContain('Running 6m');
    unmount();
  });

  it('shows a crash loop in red with its back-off and the last exit code', () => {
    const {frame, raw, unmount} = mount(snapshot());
    const f = frame();
    expect(lineWith(f, 'default/crasher')).toMatch(/default\/crasher +file +Running +0\/1 +4/);
    expect(lineWith(f, '  loop')).toMatch(/loop +CrashLoopBackOff +✗ +4/);
    expect(joined(f)).toContain('default/crasher loop: CrashLoopBackOff (last exit code 3): back-off 20s restarting failed container=loop pod=crasher_default(u-crash)');
    expect(stylesOf(raw(), 'CrashLoopBackOff')).toEqual(expect.arrayContaining([BOLD, RED]));
    expect(f.indexOf('default/crasher')).toBeLessThan(f.indexOf('default/web'));
    unmount();
  });

  it('names a failing probe and why it fails', () => {
    const {frame, raw, unmount} = mount(snapshot({pods: [probeFailingPod]}));
    expect(lineWith(frame(), '  server')).toMatch(/server +Running 30s +✗ +0 +liveness ✓ readiness ✗/);
    expect(stylesOf(raw(), 'liveness ✓ readiness ✗')).toContain(RED);
    expect(frame()).toContain('shop/api server: readiness probe failed: HTTP probe failed with statuscode: 503');
    unmount();
  });

  it('lists at most twenty pods, those in trouble first, and counts the rest', () => {
    const healthy = Array.from({length: 24}, (_, i) => ({...webPod, uid: `u${i}`, name: `w${String(i).padStart(2, '0')}`}));
    const {frame, unmount} = mount(snapshot({pods: [...healthy, crashPod]}));
    const f = frame();
    expect(f).toContain('default/crasher');
    expect(f).toContain('default/w18');
    expect(f).not.toContain('default/w19');
    expect(f).toContain('+5 more (all running and ready)');
    unmount();
  });

  it('shows each signal against its hard and soft thresholds', () => {
    const {frame, raw, unmount} = mount(snapshot());
    const f = frame();
    expect(lineWith(f, 'SIGNAL')).toMatch(/SIGNAL +AVAILABLE +HARD \(evict below\) +SOFT \(after grace\)/);
    expect(lineWith(f, 'memory.available  ')).toMatch(/memory\.available +1\.2Gi of 16Gi +100Mi +1\.5Gi met: evicts in 30s/);
    expect(stylesOf(raw(), '1.2Gi of 16Gi')).toContain(YELLOW);
    expect(lineWith(f, 'nodefs.available')).toMatch(/nodefs\.available +40Gi of 100Gi +10% \(10Gi\) +-/);
    expect(lineWith(f, 'pid.available  ')).toMatch(/pid\.available +unmeasured +- +-/);
    expect(f).toContain('pid.available: cannot measure: cannot read /proc/sys/kernel/pid_max');
    unmount();
  });

  it('counts the soft grace period and the pressure transition down every second', async () => {
    const {frame, raw, advance, unmount} = mount(snapshot());
    expect(lineWith(frame(), 'MemoryPressure')).toMatch(/MemoryPressure +True +clears in 4m50s unless met again/);
    expect(lineWith(frame(), 'DiskPressure')).toMatch(/DiskPressure +False +-/);
    expect(stylesOf(raw(), 'False')).toContain(GREEN);

    await advance(1000);
    expect(lineWith(frame(), 'memory.available  ')).toContain('1.5Gi met: evicts in 29s');
    expect(lineWith(frame(), 'MemoryPressure')).toContain('clears in 4m49s');
    expect(lineWith(frame(), 'Eviction')).toContain('checked 3s ago');

    await advance(9000);
    expect(lineWith(frame(), 'memory.available  ')).toContain('1.5Gi met: evicts in 20s');
    expect(lineWith(frame(), 'MemoryPressure')).toContain('clears in 4m40s');

    await advance(21_000);
    expect(lineWith(frame(), 'memory.available  ')).toContain('1.5Gi met: grace over');
    unmount();
  });

  it('restarts the countdowns from a new snapshot, and says when a threshold is evicting', async () => {
    const {frame, raw, emitter, advance, unmount} = mount(snapshot());
    await advance(5000);
    const hardMet = memorySignal({available: 80 * MI, hard: threshold({met: true, actionable: true, firstObservedAt: T0 + 5000})});
    emitter.update(
      snapshot({
        at: T0 + 5000,
        eviction: eviction({
          at: T0 + 5000,
          lastSyncAt: T0 + 5000,
          signals: [hardMet],
          conditions: [{type: 'MemoryPressure', active: true, observedNow: true, lastObservedAt: T0 + 5000, clearsAt: T0 + 305_000}],
        }),
      }),
    );
    await tick();
    expect(lineWith(frame(), 'memory.available  ')).toMatch(/80Mi of 16Gi +100Mi met: evicting/);
    expect(stylesOf(raw(), '100Mi met: evicting')).toEqual(expect.arrayContaining([BOLD, RED]));
    expect(lineWith(frame(), 'MemoryPressure')).toContain('met now · clears in 5m unless met again');
    unmount();
  });

  it('lists the last evictions, newest first, with their message', async () => {
    const {frame, advance, unmount} = mount(snapshot());
    expect(lineWith(frame(), 'Last evictions')).toContain('1 in total');
    expect(lineWith(frame(), 'batch/hog')).toMatch(/65s ago +batch\/hog +memory\.available +The node was low on resource: memory\./);
    await advance(1000);
    expect(lineWith(frame(), 'batch/hog')).toContain('66s ago');
    unmount();
  });

  it('says when the eviction manager has not run yet, or when its check failed', () => {
    const waiting = mount(snapshot({eviction: undefined}));
    expect(lineWith(waiting.frame(), 'Eviction')).toContain('waiting for the first check');
    waiting.unmount();
    const failed = mount(snapshot({eviction: eviction({lastSyncError: 'statfs /var/lib/orch: ENOENT', evictions: []})}));
    expect(lineWith(failed.frame(), 'Eviction')).toContain('last check failed: statfs /var/lib/orch: ENOENT');
    expect(lineWith(failed.frame(), 'Last evictions')).toContain('none');
    failed.unmount();
  });

  it.each<[boolean | undefined, string]>([
    [true, 'and a cgroup enforcing its cpu and memory limits.'],
    [false, 'cpu and memory limits are not enforced (no writable cgroup v2).'],
  ])('always shows the isolation note (cgroups %s)', (cgroups, tail) => {
    const {frame, raw, unmount} = mount(snapshot({cgroups, pods: []}));
    const text = joined(frame());
    expect(text).toContain('Note: Pods run as local processes, not containers: no filesystem, network, user or PID isolation.');
    expect(text).toContain(tail);
    expect(stylesOf(raw(), 'Note:')).toContain(YELLOW);
    unmount();
  });

  it('draws the border red while the API server is unreachable, yellow under pressure', () => {
    const pressure = mount(snapshot());
    expect(stylesOf(pressure.raw(), '╭')).toContain(YELLOW);
    pressure.unmount();
    const down = mount(snapshot({apiServer: {registerNode: true, registered: true, connected: false, lastError: 'EOF'}}));
    expect(stylesOf(down.raw(), '╭')).toContain(RED);
    down.unmount();
  });

  it('prints log lines once, above the panel', async () => {
    const {frame, logs, emitter, advance, unmount} = mount(snapshot());
    logs.append('I0501 10:00:00.000000       1 agent.ts:1] "Started pod" pod="default/web"\n');
    await tick();
    await advance(1000);
    emitter.update(snapshot({at: T0 + 1000, pods: [webPod]}));
    await tick();
    const f = frame();
    expect(f.split('Started pod').length - 1).toBe(1);
    expect(f.indexOf('Started pod')).toBeLessThan(f.indexOf('orch agent v0.1.0'));
    unmount();
  });
});

describe('agent dashboard view logic', () => {
  it.each<[number, 'bytes' | 'count', string]>([
    [512, 'bytes', '512'],
    [100 * MI, 'bytes', '100Mi'],
    [1.5 * GI, 'bytes', '1.5Gi'],
    [1.26 * GI, 'bytes', '1.3Gi'],
    [15.6 * GI, 'bytes', '16Gi'],
    [84772 * 1024, 'bytes', '83Mi'],
    [32768, 'count', '33k'],
    [4_194_304, 'count', '4.2M'],
    [-5, 'count', '0'],
  ])('formatAmount(%d, %s) -> %s', (amount, unit, text) => {
    expect(formatAmount(amount, unit)).toBe(text);
  });

  const soft = threshold({value: '1.5Gi', quantity: 1.5 * GI, gracePeriodMs: 90_000});
  it.each<[string, ThresholdSnapshot | undefined, string, string | undefined]>([
    ['absent', undefined, '-', undefined],
    ['hard, not met', threshold(), '100Mi', undefined],
    ['hard, met', threshold({met: true}), '100Mi met', 'red'],
    ['hard, actionable', threshold({met: true, actionable: true}), '100Mi met: evicting', 'red'],
    ['percentage', threshold({value: '10%', quantity: 10 * GI}), '10% (10Gi)', undefined],
    ['soft, not met', soft, '1.5Gi grace 90s', undefined],
    ['soft, in grace', {...soft, met: true, deadline: T0 + 61_500}, '1.5Gi met: evicts in 62s', 'yellow'],
    ['soft, past its deadline', {...soft, met: true, deadline: T0 - 1}, '1.5Gi met: grace over', 'yellow'],
    ['soft, actionable', {...soft, met: true, actionable: true}, '1.5Gi met: evicting', 'red'],
  ])('thresholdCell: %s', (_name, t, text, color) => {
    const cell = thresholdCell(t, 'bytes', T0);
    expect(cell.text).toBe(text);
    expect(cell.color).toBe(color);
  });

  it.each<[string, Parameters<typeof containerStateCell>[0], string, string | undefined]>([
    ['running', {state: {running: {startedAt: iso(T0 - 125_000)}}}, 'Running 2m5s', 'green'],
    ['creating', {state: {waiting: {reason: 'ContainerCreating'}}}, 'ContainerCreating', 'yellow'],
    ['config error', {state: {waiting: {reason: 'CreateContainerConfigError', message: 'secret "x" not found'}}}, 'CreateContainerConfigError', 'red'],
    ['crash loop', {state: {waiting: {reason: 'CrashLoopBackOff', message: 'back-off 5m0s restarting failed container=a'}}}, 'CrashLoopBackOff', 'red'],
    ['completed', {state: {terminated: {exitCode: 0, reason: 'Completed'}}}, 'Completed exit 0', undefined],
    ['error', {state: {terminated: {exitCode: 1, reason: 'Error'}}}, 'Error exit 1', 'red'],
    ['no state yet', {state: {}}, '-', undefined],
  ])('containerStateCell: %s', (_name, c, text, color) => {
    const cell = containerStateCell(c, T0);
    expect(cell.text).toBe(text);
    expect(cell.color).toBe(color);
  });

  it.each<[string, Parameters<typeof probesCell>[0], string, string | undefined]>([
    ['none', {}, '-', undefined],
    ['all passing, in gating order', {readiness: {result: 'success'}, startup: {result: 'success'}}, 'startup ✓ readiness ✓', 'green'],
    ['one unknown', {liveness: {result: 'success'}, readiness: {result: 'unknown'}}, 'liveness ✓ readiness ?', 'yellow'],
    ['one failing', {liveness: {result: 'failure'}, readiness: {result: 'unknown'}}, 'liveness ✗ readiness ?', 'red'],
  ])('probesCell: %s', (_name, probes, text, color) => {
    const cell = probesCell(probes);
    expect(cell.text).toBe(text);
    expect(cell.color).toBe(color);
  });

  it('puts pods in trouble first, then by namespace/name', () => {
    const done: AgentPodSnapshot = {...webPod, name: 'done', phase: 'Succeeded', containers: []};
    const pending: AgentPodSnapshot = {...webPod, name: 'zz-pending', phase: 'Pending', containers: []};
    const order = podsByAttention([webPod, done, crashPod, probeFailingPod, pending]).map((p) => `${p.namespace}/${p.name}`);
    expect(order).toEqual(['default/crasher', 'default/zz-pending', 'shop/api', 'default/done', 'default/web']);
  });

  it('words the isolation note without cgroup knowledge too', () => {
    expect(isolationNote(undefined)).toBe(
      'Pods run as local processes, not containers: no filesystem, network, user or PID isolation. Each pod has its own process groups.',
    );
  });

  it("reduces the runtime's pod snapshot to what the dashboard shows", () => {
    const runtimePod = {
      uid: 'u1',
      namespace: 'default',
      name: 'web',
      status: {phase: 'Running', reason: undefined, message: undefined, conditions: [], hostIP: '', hostIPs: [], podIP: '', podIPs: [], startTime: '', containerStatuses: []},
      containers: [
        {
          name: 'app',
          init: false,
          pid: 42,
          status: {
            name: 'app',
            state: {waiting: {reason: 'CrashLoopBackOff'}},
            lastState: {terminated: {exitCode: 2}},
            ready: false,
            restartCount: 3,
            image: '',
            imageID: '',
            started: false,
          },
          probes: {liveness: {result: 'failure', message: 'exit 1'}},
        },
        {
          name: 'side',
          init: false,
          status: {name: 'side', state: {running: {startedAt: iso(T0)}}, lastState: {}, ready: true, restartCount: 0, image: '', imageID: '', started: true},
          probes: {},
        },
      ],
    } as unknown as RuntimePodSnapshot;
    expect(podFromRuntime(runtimePod, 'file')).toEqual({
      uid: 'u1',
      namespace: 'default',
      name: 'web',
      source: 'file',
      phase: 'Running',
      reason: undefined,
      message: undefined,
      containers: [
        {
          name: 'app',
          init: false,
          state: {waiting: {reason: 'CrashLoopBackOff'}},
          lastState: {terminated: {exitCode: 2}},
          restartCount: 3,
          ready: false,
          probes: {liveness: {result: 'failure', message: 'exit 1'}},
        },
        {name: 'side', init: false, state: {running: {startedAt: iso(T0)}}, lastState: undefined, restartCount: 0, ready: true, probes: {}},
      ],
    });
  });
});
