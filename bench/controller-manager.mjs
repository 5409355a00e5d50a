// `orch controller-manager` (the built CLI, in its own processes) against one `orch apiserver` (SQLite):
// (a) a ReplicationController of 1,000 replicas: time from its creation until 1,000 pods exist and its
//     status says so, with the default client limits (--orch-api-qps 20, burst 30) unless RC_QPS /
//     RC_BURST say otherwise, and leader election on (its renewals share the process with the creates);
// (b) CPU and resident memory of a controller manager running nodelifecycle over 1,000 simulated nodes
//     (Nodes and Leases written here, the Leases renewed every 10 s), sampled from /proc each second for
//     NODES_SECONDS (30);
// (c) failover: FAILOVERS (5) times kill -9 of the leader of three controller managers with a 2 s lease
//     (1.5 s renew deadline, 0.5 s retry period); each time from the kill until a standby acquires the
//     lease and starts its controllers, and the median against lease duration + retry period.
// Environment: PARTS (a,b,c) picks parts ((c) runs over (b)'s nodes when both run); RC_QPS, RC_BURST,
// RC_TIMEOUT_SECONDS (75), NODES (1000), NODES_SECONDS (30), FAILOVERS (5); FAILOVER_ARGS adds flags to
// (c)'s processes, and DEBUG_RENEWALS=1 with FAILOVER_ARGS=-v=5 prints each killed leader's last renewals.
// Linux only (/proc). Run `npm run build` first. Whole run: about 2 minutes on 2 CPUs.
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs';
import {cpus} from 'node:os';
import {dirname, join} from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {build} from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const RC_REPLICAS = 1000;
const RC_TIMEOUT_MS = Number(process.env.RC_TIMEOUT_SECONDS ?? 75) * 1000;
const RC_QPS = process.env.RC_QPS;
const RC_BURST = process.env.RC_BURST;
const NODES = Number(process.env.NODES ?? 1000);
const NODES_SECONDS = Number(process.env.NODES_SECONDS ?? 30);
const LEASE_RENEW_MS = 10_000;
const FAILOVERS = Number(process.env.FAILOVERS ?? 5);
const CONCURRENCY = 64;
const PARTS = new Set((process.env.PARTS ?? 'a,b,c').split(','));
const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ, the unit of utime/stime in /proc/<pid>/stat on Linux

if (!existsSync(join(root, 'dist', 'main.js'))) throw new Error('build first: npm run build');
const lib = await loadHelpers();
const {sleep} = lib;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const microTime = (ms) => new Date(ms).toISOString().replace(/Z$/, '000Z');

console.log(`orch controller-manager bench: ${cpus().length} CPU(s), node ${process.version}, API server on SQLite`);
const server = await lib.startApiServerProcess({engine: 'sqlite'});
const started = [];
// The Lease renewer of (b)'s simulated nodes, kept running through (c).
let renewing = false;
let renewer;
try {
  if (PARTS.has('a')) await benchReplicationController();
  if (PARTS.has('b')) await benchNodes();
  if (PARTS.has('c')) await benchFailover();
} finally {
  renewing = false;
  await renewer;
  await Promise.all(started.map((cm) => cm.stop()));
  await server.stop();
}

/** The TypeScript test helpers, bundled for this run. */
async function loadHelpers() {
  // One level under node_modules: the bundles find packages there, and the helpers' own
  // `<file>/../..` resolves to the repository root as it does from test/helpers.
  mkdirSync(join(root, 'node_modules'), {recursive: true});
  const out = mkdtempSync(join(root, 'node_modules', '.orch-bench-cm-'));
  try {
    await build({
      entryPoints: {apiserver: join(root, 'test/helpers/apiserver.ts'), cm: join(root, 'test/helpers/controller-manager.ts')},
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      outdir: out,
      packages: 'external',
      logLevel: 'error',
    });
    const apiserver = await import(pathToFileURL(join(out, 'apiserver.js')).href);
    const cm = await import(pathToFileURL(join(out, 'cm.js')).href);
    return {...apiserver, ...cm};
  } finally {
    rmSync(out, {recursive: true, force: true});
  }
}

async function startManager(name, args) {
  const cm = await lib.startControllerManager({name, orchconfigPath: server.orchconfigPath, args});
  started.push(cm);
  return cm;
}

/** Runs `work` over `items` with at most CONCURRENCY in flight. */
async function pool(items, work) {
  let next = 0;
  await Promise.all(
    Array.from({length: Math.min(CONCURRENCY, items.length)}, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

async function must(what, response) {
  const r = await response;
  if (r.status >= 300) throw new Error(`${what}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
  return r.body;
}

// --- (a) ---------------------------------------------------------------------------------------

async function benchReplicationController() {
  const limits = [...(RC_QPS ? [`--orch-api-qps=${RC_QPS}`] : []), ...(RC_BURST ? [`--orch-api-burst=${RC_BURST}`] : [])];
  let cm;
  try {
    cm = await startManager('rc', ['--controllers=replicationcontroller', ...limits]);
  } catch (error) {
    if (/unknown controller/.test(String(error))) {
      console.log('\n(a) replicationcontroller: not available (--controllers=replicationcontroller is refused as unknown)');
      return;
    }
    throw error;
  }
  await cm.waitForLine(/"Starting controller" name="replicationcontroller"/, 20_000);
  const client = server.client;
  const path = '/api/v1/namespaces/default/replicationcontrollers';
  // Pods counted as they are created (a watch), the RC's status read once a second.
  const podWatch = client.watch('/api/v1/namespaces/default/pods?watch=1&labelSelector=app%3Dbench');
  const created = () => podWatch.events.filter((e) => e.type === 'ADDED').length;
  const t0 = Date.now();
  await must(
    'create rc',
    client.post(path, {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: {name: 'bench'},
      spec: {replicas: RC_REPLICAS, selector: {app: 'bench'}, template: {metadata: {labels: {app: 'bench'}}, spec: {containers: [{name: 'app', image: 'nginx:1.27'}]}}},
    }),
  );
  const marks = new Map();
  let statusReplicas = 0;
  let statusAt;
  let lastStatusRead = 0;
  while (statusAt === undefined && Date.now() - t0 < RC_TIMEOUT_MS && !cm.exit()) {
    await sleep(50);
    for (const mark of [100, 500, RC_REPLICAS]) if (created() >= mark && !marks.has(mark)) marks.set(mark, Date.now() - t0);
    if (Date.now() - lastStatusRead >= 1000 || marks.has(RC_REPLICAS)) {
      lastStatusRead = Date.now();
      statusReplicas = (await must('get rc', client.get(`${path}/bench`))).status?.replicas ?? 0;
      if (statusReplicas >= RC_REPLICAS) statusAt = Date.now() - t0;
    }
  }
  podWatch.close();
  const pods = (await must('list pods', client.get('/api/v1/namespaces/default/pods?labelSelector=app%3Dbench'))).items.length;
  const qps = RC_QPS ?? '20 (default)';
  const s = (ms) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);
  console.log(`\n(a) replicationcontroller 0 -> ${RC_REPLICAS} pods (--orch-api-qps ${qps}, burst ${RC_BURST ?? '30 (default)'}, leader election on)`);
  console.log(`    pods created: 100 after ${s(marks.get(100))}, 500 after ${s(marks.get(500))}, ${RC_REPLICAS} after ${s(marks.get(RC_REPLICAS))}; status.replicas ${RC_REPLICAS} after ${s(statusAt)}; pods listed at the end: ${pods}`);
  if (!RC_QPS) console.log(`    (the client rate limiter alone allows no less than ~${((RC_REPLICAS - 30) / 20).toFixed(0)} s for ${RC_REPLICAS} creates at 20 qps)`);
  if (statusAt === undefined) {
    console.log(`    NOT DONE: status.replicas ${statusReplicas}, ${created()} pods created after ${s(Date.now() - t0)}`);
    process.exitCode = 1;
  }
  const exit = cm.exit();
  if (exit) {
    console.log(`    the controller manager exited (${exit.code ?? exit.signal}) during the run:\n${cm.output().split('\n').slice(-8).join('\n')}`);
    process.exitCode = 1;
  } else if (cm.lines.some((l) => /failed to renew lease|leaderelection lost/.test(l.text))) {
    console.log('    the controller manager failed to renew its lease during the run');
    process.exitCode = 1;
  }
  await cm.signal('SIGTERM');
  // Clear the pods so that (b) watches nodes only.
  await client.delete(path + '/bench');
  await client.delete('/api/v1/namespaces/default/pods?labelSelector=app%3Dbench', {timeoutMs: 60_000});
}

// --- (b) ---------------------------------------------------------------------------------------

async function benchNodes() {
  const client = server.client;
  const names = Array.from({length: NODES}, (_, i) => `sim-${String(i).padStart(4, '0')}`);
  const ns = await client.post('/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'orch-node-lease'}});
  if (ns.status >= 300 && ns.status !== 409) throw new Error(`namespace orch-node-lease: ${ns.status}`);
  const createStart = Date.now();
  await pool(names, async (name, i = Number(name.slice(4))) => {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const status = {conditions: [{type: 'Ready', status: 'True', reason: 'AgentReady', message: 'simulated', lastHeartbeatTime: now, lastTransitionTime: now}]};
    const node = await must(`node ${name}`, client.post('/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name, labels: {'topology.orch.io/zone': `zone-${i % 3}`}}, status}));
    if (!node.status?.conditions?.length) await must(`status ${name}`, client.put(`/api/v1/nodes/${name}/status`, {...node, status}));
    await must(
      `lease ${name}`,
      client.post('/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases', {
        apiVersion: 'coordination.orch.io/v1',
        kind: 'Lease',
        metadata: {name, namespace: 'orch-node-lease'},
        spec: {holderIdentity: name, leaseDurationSeconds: 40, renewTime: microTime(Date.now())},
      }),
    );
  });
  const createMs = Date.now() - createStart;

  renewing = true;
  renewer = (async () => {
    while (renewing) {
      const batchStart = Date.now();
      const renewTime = microTime(batchStart);
      await pool(names, (name) =>
        client.patch(`/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases/${name}`, {spec: {renewTime}}, 'application/merge-patch+json').catch(() => undefined),
      );
      while (renewing && Date.now() - batchStart < LEASE_RENEW_MS) await sleep(100);
    }
  })();

  const launched = Date.now();
  const cm = await startManager('nodes', ['--no-leader-elect', '--controllers=nodelifecycle']);
  // The first monitor pass runs once the informers hold every node, lease and pod.
  const firstPass = await cm.waitForLine(/"Initializing eviction metric for zone"/, 60_000);
  const syncMs = firstPass.at - launched;

  const read = () => {
    const stat = readFileSync(`/proc/${cm.pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    const ticks = Number(stat[11]) + Number(stat[12]); // utime + stime (fields 14 and 15)
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${cm.pid}/status`, 'utf8'))[1]);
    return {at: Date.now(), cpuMs: (ticks * 1000) / CLOCK_TICKS_PER_SECOND, rssMb: rssKb / 1024};
  };
  const samples = [read()];
  while (samples.length <= NODES_SECONDS) {
    await sleep(1000);
    samples.push(read());
  }
  const first = samples[0];
  const last = samples.at(-1);
  const cpuPercent = (100 * (last.cpuMs - first.cpuMs)) / (last.at - first.at);
  const perSecond = samples.slice(1).map((s, i) => (100 * (s.cpuMs - samples[i].cpuMs)) / (s.at - samples[i].at));
  const rss = samples.map((s) => s.rssMb);

  const nodes = (await must('list nodes', client.get('/api/v1/nodes'))).items;
  const notReady = nodes.filter((n) => n.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True').length;
  const tainted = nodes.filter((n) => (n.spec?.taints ?? []).length > 0).length;

  console.log(`\n(b) nodelifecycle over ${NODES} simulated nodes (Leases renewed every ${LEASE_RENEW_MS / 1000} s; default --node-monitor-period 5s)`);
  console.log(`    ${NODES} Nodes + Leases written in ${(createMs / 1000).toFixed(1)} s; controller manager start to first monitor pass: ${(syncMs / 1000).toFixed(1)} s`);
  console.log(
    `    over ${((last.at - first.at) / 1000).toFixed(0)} s: CPU ${cpuPercent.toFixed(1)}% of one core on average (1 s samples: median ${median(perSecond).toFixed(1)}%, max ${Math.max(...perSecond).toFixed(1)}%)`,
  );
  console.log(`    RSS ${rss[0].toFixed(0)} MB at the start, ${rss.at(-1).toFixed(0)} MB at the end, ${Math.max(...rss).toFixed(0)} MB at most`);
  console.log(`    after the run: ${notReady} node(s) not Ready, ${tainted} tainted (expected 0 and 0)`);
  if (notReady > 0 || tainted > 0) process.exitCode = 1;
  await cm.signal('SIGTERM');
}

// --- (c) ---------------------------------------------------------------------------------------

async function benchFailover() {
  const {leaseDurationMs, retryPeriodMs} = lib.SHORT_LEASE;
  const args = [...lib.SHORT_LEASE_ARGS, '--controllers=nodelifecycle', ...(process.env.FAILOVER_ARGS ? process.env.FAILOVER_ARGS.split(' ') : [])];
  let n = 0;
  const managers = await Promise.all([0, 1, 2].map(() => startManager(`fo-${n++}`, args)));
  const acquired = (cm, since) => cm.lines.find((l) => l.at >= since && /successfully acquired lease/.test(l.text));
  const leaderSince = async (since, candidates, timeoutMs) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = candidates.map((cm) => ({cm, line: acquired(cm, since)})).filter((x) => x.line).sort((a, b) => a.line.at - b.line.at)[0];
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no standby acquired the lease within ${timeoutMs} ms`);
      await sleep(10);
    }
  };
  let {cm: leader} = await leaderSince(0, managers, 20_000);
  await leader.waitForLine(/"Starting controller"/, 5000);
  const rounds = [];
  for (let round = 0; round < FAILOVERS; round++) {
    // A fresh standby joins each round; give it time to see the current lease.
    await sleep(1500);
    const standbys = managers.filter((m) => m !== leader && !m.exit());
    const killedAt = Date.now();
    await leader.signal('SIGKILL');
    const next = await leaderSince(killedAt, standbys, 15_000);
    const controllers = await next.cm.waitForLine(/"Starting controller"/, 5000, killedAt);
    rounds.push({acquire: next.line.at - killedAt, controllers: controllers.at - killedAt});
    if (process.env.DEBUG_RENEWALS) {
      const renewals = leader.lines.filter((l) => /successfully renewed|successfully acquired/.test(l.text)).map((l) => l.at);
      console.log(`    [debug] killed leader's last renewals before the kill (ms before): ${renewals.slice(-6).map((t) => killedAt - t).join(', ')}`);
    }
    leader = next.cm;
    managers.push(await startManager(`fo-${n++}`, args));
  }
  const nominal = leaseDurationMs + retryPeriodMs;
  console.log(`\n(c) failover after kill -9 of the leader, 3 controller managers, lease ${leaseDurationMs} ms, renew deadline ${lib.SHORT_LEASE.renewDeadlineMs} ms, retry ${retryPeriodMs} ms`);
  rounds.forEach((r, i) => console.log(`    kill ${i + 1}: lease acquired by a standby after ${r.acquire} ms, its controllers starting after ${r.controllers} ms`));
  const m = median(rounds.map((r) => r.controllers));
  console.log(`    median ${m} ms against lease duration + retry period = ${nominal} ms (${(m / nominal).toFixed(2)}x); the acquire loop's jitter lets a standby poll up to 2.2 retry periods apart`);
}
