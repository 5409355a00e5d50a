// Scale of `orch apiserver` against upstream's scalability SLOs (issue 16), on each engine in turn:
// the built CLI's `orch apiserver`, `orch controller-manager` (workload controllers, node lifecycle,
// scheduler) and `orch fleet` (simulated nodes renewing their Leases every 10 s and "running" the
// pods bound to them), each in its own process. The bench creates Deployments totalling the pods at a
// steady rate, waits until every pod runs, then measures during the steady phase (fleet and
// controllers still running) and prints each figure with its target and the ratio to the target:
// - p99 of mutating calls (create, patch, delete of ConfigMaps; patch of pods) and of single-object
//   reads (GET of a pod, a node, a ConfigMap): <= 1 s;
// - p99 of namespace-scoped lists (the pods, ConfigMaps of one namespace): <= 5 s;
// - p99 of cluster-scoped lists (all nodes, all pods, all deployments): <= 30 s;
// - watch fan-out: 1,000 watchers of pods in one namespace, one pod created at a time: p99 from the
//   create being sent until each watcher has its ADDED event: <= 100 ms, the p99 of every delivery of
//   100 writes (of 5, as before, one write caught by a pause of the server was a fifth of the samples
//   and so set the p99 alone); the note gives the p99 of each write (median, worst) and the
//   collections (nodejs_gc_duration_seconds) the server made meanwhile;
// - the API server's resident memory (VmRSS) against 2 x the JSON size of every stored object (each
//   item of each list, as the server returns it) + 200 MB;
// - kill -9 of the API server while the bench creates pods and renews Leases of its own: time until
//   /readyz passes again (<= 60 s), every pod it created (acknowledged) listed exactly once, every
//   acknowledged Lease renewal reflected (renewTime at least the acknowledged one), every pod of the
//   deployments still there once, and the fleet's Leases renewed again.
// Sizes: --quick (50 nodes / 500 pods, well under a minute per engine; CI runs it), --size medium
// (1,000 / 30,000), --size full (5,000 / 150,000). Options: --engines sqlite,etcd (both by default;
// etcd from Debian's etcd-server, skipped with a note when not installed), --pod-rate N (pods/s the
// deployments are created at), --steady-seconds N. Run `npm run build` first. Linux only (/proc).
// Exit code 1 when a figure misses its target or something was lost.
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync} from 'node:fs';
import {Agent, request} from 'node:https';
import {cpus, loadavg} from 'node:os';
import {dirname, join} from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {parseArgs} from 'node:util';
import {build} from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const SIZES = {
  quick: {nodes: 50, pods: 500, podRate: 100, steadySeconds: 5, watchers: 1000, watchWrites: 3},
  medium: {nodes: 1000, pods: 30_000, podRate: 100, steadySeconds: 30, watchers: 1000, watchWrites: 100},
  full: {nodes: 5000, pods: 150_000, podRate: 100, steadySeconds: 60, watchers: 1000, watchWrites: 100},
};
/** Upstream's load test mixes small, medium and big deployments; replicas cycle through these. */
const DEPLOYMENT_SIZES = [5, 30, 250];
/** Pods per namespace at most (namespace-scoped lists read one namespace). */
const PODS_PER_NAMESPACE = 1000;
const TARGETS = {mutating: 1000, read: 1000, namespaceList: 5000, clusterList: 30_000, watch: 100, ready: 60_000};
const LEDGER_LEASES = 50;

const {values: flags} = parseArgs({
  options: {
    size: {type: 'string', default: 'medium'},
    quick: {type: 'boolean', default: false},
    engines: {type: 'string', default: 'sqlite,etcd'},
    'pod-rate': {type: 'string'},
    'steady-seconds': {type: 'string'},
  },
});
const sizeName = flags.quick ? 'quick' : flags.size;
const SIZE = SIZES[sizeName];
if (!SIZE) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}, not "${flags.size}"`);
const POD_RATE = Number(flags['pod-rate'] ?? SIZE.podRate);
const STEADY_MS = Number(flags['steady-seconds'] ?? SIZE.steadySeconds) * 1000;
if (!(POD_RATE > 0)) throw new Error(`--pod-rate must be a positive number, not "${flags['pod-rate']}"`);
if (!(STEADY_MS > 0)) throw new Error(`--steady-seconds must be a positive number, not "${flags['steady-seconds']}"`);
const ENGINES = flags.engines.split(',').filter(Boolean);
for (const e of ENGINES) if (e !== 'sqlite' && e !== 'etcd') throw new Error(`--engines takes sqlite and etcd, not "${e}"`);

if (!existsSync(join(root, 'dist', 'main.js'))) throw new Error('build first: npm run build');
const lib = await loadHelpers();
// The server's product names (API groups, the node lease namespace), as orch's own code spells them.
const N = lib.names();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const say = (m) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);


// ---------------------------------------------------------------------------------------------

async function runEngine(engine) {
  console.log(`\n== ${engine} ==`);
  const rows = [];
  const started = [];
  let etcd;
  let server;
  try {
    // etcd's default 2 GiB quota is below 150,000 pods with their recent history (upstream's
    // scale tests raise it too); 8 GiB is etcd's suggested maximum.
    if (engine === 'etcd') etcd = await lib.startEtcd(['--quota-backend-bytes', String(8 * 2 ** 30)]);
    server = await lib.startApiServerProcess({engine, etcdEndpoint: etcd?.endpoint});
    say(`API server pid ${server.pid} on ${engine}`);
    const fleet = startFleet(server.orchconfigPath);
    started.push(fleet);
    await fleet.waitForLine(/"Nodes registered"/, 30_000 + SIZE.nodes * 20);
    say(`fleet: ${SIZE.nodes} nodes registered`);
    // The client limits of the controller manager are sized to the rate: each pod costs it a create,
    // a binding and two events, and the deployment/replica set status updates come on top.
    const qps = Math.max(100, POD_RATE * 6);
    const cm = await lib.startControllerManager({
      name: 'cm',
      orchconfigPath: server.orchconfigPath,
      args: ['--controllers=*,scheduler', `--orch-api-qps=${qps}`, `--orch-api-burst=${qps * 2}`, '--concurrent-deployment-syncs=10', '--concurrent-replicaset-syncs=10'],
    });
    started.push(cm);

    const namespaces = plan(SIZE.pods);
    const created = await createDeployments(server.client, namespaces);
    rows.push({name: 'pods created (deployments, steady rate)', value: `${created.pods} in ${(created.ms / 1000).toFixed(1)} s`, note: `${(created.pods / (created.ms / 1000)).toFixed(0)}/s (asked ${POD_RATE}/s)`});
    const running = await waitRunning(server.client, namespaces, created.pods);
    rows.push({name: 'pods running (creation start -> all Ready)', value: `${((running - created.startedAt) / 1000).toFixed(1)} s`, note: `${(created.pods / ((running - created.startedAt) / 1000)).toFixed(0)} pods/s end to end`});

    say('steady phase');
    const steady = await steadyPhase(server.client, namespaces);
    rows.push(latencyRow('mutating calls p99', steady.mutating, TARGETS.mutating));
    rows.push(latencyRow('single-object reads p99', steady.read, TARGETS.read));
    rows.push(latencyRow('namespace-scoped lists p99', steady.namespaceList, TARGETS.namespaceList));
    rows.push(latencyRow('cluster-scoped lists p99', steady.clusterList, TARGETS.clusterList));

    say(`watch fan-out: ${SIZE.watchers} watchers`);
    const gcBefore = await gcFigures(server.client);
    const fanout = await watchFanout(server.client);
    const gc = gcDelta(gcBefore, await gcFigures(server.client));
    const perWrite = fanout.perWrite.map(p99).sort((a, b) => a - b);
    rows.push({
      ...latencyRow(`watch delivery p99 (${SIZE.watchers} watchers)`, fanout.latencies, TARGETS.watch),
      note: `${fanout.latencies.length}/${fanout.expected} deliveries; p99 per write: median ${perWrite[perWrite.length >> 1]?.toFixed(1)} ms, worst ${perWrite.at(-1)?.toFixed(1)} ms; server GC meanwhile: ${gc}`,
      ok: fanout.latencies.length === fanout.expected && p99(fanout.latencies) <= TARGETS.watch,
    });

    const memory = await memoryFigure(server);
    rows.push(memory);

    say('kill -9 of the API server');
    const recovery = await killAndRecover(server, namespaces, created.pods);
    rows.push(...recovery);
    // What the fleet said, when it did not carry on (its last lines name the failing calls).
    if (recovery.at(-1).ok === false) console.log(fleet.lines.slice(-40).map((l) => `  fleet: ${l.text}`).join('\n'));
  } finally {
    await Promise.all(started.map((p) => p.stop().catch(() => undefined)));
    await server?.stop();
    await etcd?.stop();
  }
  return rows;
}

/** Namespaces and the deployments in each: replicas cycling through DEPLOYMENT_SIZES, PODS_PER_NAMESPACE each at most. */
function plan(pods) {
  const count = Math.max(2, Math.ceil(pods / PODS_PER_NAMESPACE));
  const namespaces = [];
  let left = pods;
  for (let n = 0; n < count; n++) {
    let inNamespace = Math.min(left, Math.ceil(pods / count));
    left -= inNamespace;
    const deployments = [];
    for (let d = 0; inNamespace > 0; d++) {
      const replicas = Math.min(inNamespace, DEPLOYMENT_SIZES[d % DEPLOYMENT_SIZES.length]);
      deployments.push({name: `load-${d}`, replicas});
      inNamespace -= replicas;
    }
    namespaces.push({name: `scale-${n}`, deployments});
  }
  return namespaces;
}

function deployment(name, replicas) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {name, labels: {app: name}},
    spec: {
      replicas,
      selector: {matchLabels: {app: name}},
      template: {
        metadata: {labels: {app: name}},
        spec: {containers: [{name: 'app', image: 'registry.k8s.io/pause:3.10', resources: {requests: {cpu: '10m', memory: '10Mi'}}}]},
      },
    },
  };
}

async function must(what, response) {
  const r = await response;
  if (r.status >= 300) throw new Error(`${what}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
  return r.body;
}

/** Each deployment when its pods are due at POD_RATE (the next one waits for the pods before it). */
async function createDeployments(client, namespaces) {
  for (const ns of namespaces) await must(`namespace ${ns.name}`, client.post('/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: ns.name}}));
  const startedAt = Date.now();
  let pods = 0;
  for (const ns of namespaces) {
    for (const d of ns.deployments) {
      const due = startedAt + (pods / POD_RATE) * 1000;
      if (due > Date.now()) await sleep(due - Date.now());
      await must(`deployment ${ns.name}/${d.name}`, client.post(`/apis/apps/v1/namespaces/${ns.name}/deployments`, deployment(d.name, d.replicas)));
      pods += d.replicas;
    }
  }
  // The last deployment's pods are due over replicas/rate too, as the others were.
  const end = startedAt + (pods / POD_RATE) * 1000;
  if (end > Date.now()) await sleep(end - Date.now());
  return {pods, startedAt, ms: Date.now() - startedAt};
}

/** Until every deployment reports all its replicas ready; the time it happened. */
async function waitRunning(client, namespaces, total) {
  const deadline = Date.now() + 120_000 + (total / POD_RATE) * 4000;
  let last = '';
  for (;;) {
    const list = await must('deployments', client.get('/apis/apps/v1/deployments', {timeoutMs: 120_000}));
    const ready = list.items.reduce((sum, d) => sum + (d.status?.readyReplicas ?? 0), 0);
    if (ready >= total) return Date.now();
    const line = `${ready}/${total} pods ready`;
    if (line !== last) say(line);
    last = line;
    if (Date.now() > deadline) throw new Error(`only ${line} after ${((Date.now() - deadline) / 1000 + 120).toFixed(0)} s`);
    await sleep(2000);
  }
}

/** The time a request takes, in ms; a status >= 300 is an error (counted, not timed). */
async function timed(samples, errors, call) {
  const t0 = performance.now();
  try {
    const r = await call();
    if (r.status >= 300) errors.push(`${r.status} ${r.text.slice(0, 120)}`);
    else samples.push(performance.now() - t0);
  } catch (error) {
    errors.push(String(error.message ?? error));
  }
}

/**
 * STEADY_MS of calls from several clients at once, each class at its own pace: mutating calls and
 * reads back to back from 8 clients, namespace lists from 2, cluster lists from 1 (they are heavy: at
 * full size a list of all pods is hundreds of MB).
 */
async function steadyPhase(client, namespaces) {
  const s = {mutating: [], read: [], namespaceList: [], clusterList: [], errors: []};
  const end = Date.now() + STEADY_MS;
  const ns = (i) => namespaces[i % namespaces.length].name;
  const pods = await must('pods of one namespace', client.get(`/api/v1/namespaces/${ns(0)}/pods?limit=50`));
  const podNames = pods.items.map((p) => p.metadata.name);
  let seq = 0;
  const loop = async (body) => {
    while (Date.now() < end) await body(seq++);
  };
  const mutator = (worker) =>
    loop(async (i) => {
      const namespace = ns(worker);
      const name = `steady-${worker}-${i}`;
      const path = `/api/v1/namespaces/${namespace}/configmaps`;
      await timed(s.mutating, s.errors, () => client.post(path, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name}, data: {n: String(i)}}));
      await timed(s.mutating, s.errors, () => client.patch(`${path}/${name}`, {data: {n: `${i}+`}}, 'application/merge-patch+json'));
      await timed(s.read, s.errors, () => client.get(`${path}/${name}`));
      await timed(s.mutating, s.errors, () => client.delete(`${path}/${name}`));
      const pod = podNames[i % podNames.length];
      await timed(s.mutating, s.errors, () => client.patch(`/api/v1/namespaces/${ns(0)}/pods/${pod}`, {metadata: {annotations: {[`bench.${N.domain}/touched`]: String(i)}}}, 'application/merge-patch+json'));
      await timed(s.read, s.errors, () => client.get(`/api/v1/namespaces/${ns(0)}/pods/${pod}`));
      await timed(s.read, s.errors, () => client.get(`/api/v1/nodes/fleet-${i % SIZE.nodes}`));
    });
  const nsLister = (worker) =>
    loop(async (i) => {
      await timed(s.namespaceList, s.errors, () => client.get(`/api/v1/namespaces/${ns(i + worker)}/pods`, {timeoutMs: 60_000}));
      await timed(s.namespaceList, s.errors, () => client.get(`/api/v1/namespaces/${ns(i + worker)}/configmaps`, {timeoutMs: 60_000}));
    });
  const clusterLister = () =>
    loop(async (i) => {
      const paths = ['/api/v1/nodes', '/apis/apps/v1/deployments', '/api/v1/pods'];
      await timed(s.clusterList, s.errors, () => drain(client, paths[i % paths.length], 120_000));
    });
  // Each list class runs at least once even when its first call outlasts the phase.
  await Promise.all([...Array.from({length: 8}, (_, w) => mutator(w)), nsLister(0), nsLister(1), clusterLister()]);
  if (s.clusterList.length < 3) for (const path of ['/api/v1/nodes', '/apis/apps/v1/deployments', '/api/v1/pods']) await timed(s.clusterList, s.errors, () => drain(client, path, 120_000));
  if (s.errors.length) say(`steady phase: ${s.errors.length} failed call(s), e.g. ${s.errors[0]}`);
  return s;
}

/**
 * SIZE.watchers watches of the pods of one namespace, each on its own connection; then one pod
 * created at a time: the time from sending the create until each watcher has the ADDED event.
 */
const ADDED_NAME = /^\{"type":"ADDED","object":\{.*?"metadata":\{"name":"([^"]+)"/;

async function watchFanout(client) {
  const namespace = 'scale-watch';
  await must('namespace', client.post('/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: namespace}}));
  const {credentials} = client;
  const agent = new Agent({keepAlive: false, maxSockets: Infinity, ca: credentials.caPem, cert: credentials.certPem, key: credentials.keyPem});
  const arrivals = new Map(); // pod name -> arrival times
  const requests = [];
  const open = (i) =>
    new Promise((resolve, reject) => {
      const req = request(new URL(`/api/v1/namespaces/${namespace}/pods?watch=1&allowWatchBookmarks=false`, credentials.server), {agent, headers: {accept: 'application/json'}}, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`watch ${i}: HTTP ${res.statusCode}`));
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          const at = performance.now();
          buffer += chunk;
          let nl;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            // The name read off the line, not a JSON.parse of each pod: the bench is one process
            // reading 1,000 streams, and parsing each would add its own time to the later ones.
            const name = ADDED_NAME.exec(line)?.[1];
            if (name !== undefined) arrivals.get(name)?.push(at);
          }
        });
        res.on('error', () => undefined);
        resolve();
      });
      req.on('error', (e) => (requests.length ? undefined : reject(e)));
      req.end();
      requests.push(req);
    });
  try {
    // Opened 50 at a time: 1,000 TLS handshakes at once would measure the handshakes.
    for (let i = 0; i < SIZE.watchers; i += 50) await Promise.all(Array.from({length: Math.min(50, SIZE.watchers - i)}, (_, j) => open(i + j)));
    await sleep(500);
    const latencies = [];
    const perWrite = [];
    for (let w = 0; w < SIZE.watchWrites; w++) {
      const name = `fanout-${w}`;
      const times = [];
      arrivals.set(name, times);
      const t0 = performance.now();
      await must('fan-out pod', client.post(`/api/v1/namespaces/${namespace}/pods`, {apiVersion: 'v1', kind: 'Pod', metadata: {name}, spec: {containers: [{name: 'app', image: 'registry.k8s.io/pause:3.10'}]}}));
      const deadline = Date.now() + 10_000;
      while (times.length < SIZE.watchers && Date.now() < deadline) await sleep(10);
      latencies.push(...times.map((t) => t - t0));
      perWrite.push(times.map((t) => t - t0));
      await sleep(300);
    }
    return {latencies, perWrite, expected: SIZE.watchers * SIZE.watchWrites};
  } finally {
    for (const req of requests) req.destroy();
    agent.destroy();
  }
}

/** Resources whose objects the bench and the daemons store (lists of each, item by item). */
const STORED = () => [
  '/api/v1/pods', '/api/v1/nodes', '/api/v1/namespaces', '/api/v1/events', '/api/v1/configmaps', '/api/v1/secrets',
  '/api/v1/serviceaccounts', '/api/v1/services', '/api/v1/endpoints', '/apis/apps/v1/deployments', '/apis/apps/v1/replicasets',
  `/apis/${N.groups.coordination}/v1/leases`, `/apis/${N.groups.discovery}/v1/endpointslices`,
  ...['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings'].map((r) => `/apis/${N.groups.rbac}/v1/${r}`),
];

async function memoryFigure(server) {
  let jsonBytes = 0;
  for (const path of STORED()) {
    const r = await pagedList(server.client, path);
    if (r.status !== 200) continue;
    for (const item of r.items) jsonBytes += Buffer.byteLength(JSON.stringify(item));
  }
  // Then whole (unpaged) lists of the biggest resources, as informers start: the server's memory as it
  // serves them, the worst moment in a steady cluster.
  for (const path of ['/api/v1/pods', '/api/v1/events', '/api/v1/nodes']) await drain(server.client, path, 300_000);
  const rss = rssBytes(server.pid);
  const heap = await heapFigures(server.client);
  if (process.env.SCALE_HEAP_SNAPSHOT) await heapSnapshot(server.pid);
  const limit = 2 * jsonBytes + 200 * 2 ** 20;
  return {
    name: 'API server RSS', value: mb(rss), target: `<= 2 x ${mb(jsonBytes)} + 200 MB = ${mb(limit)}`, ratio: rss / limit, ok: rss <= limit,
    note: `heap ${mb(heap.heapUsed)} used of ${mb(heap.heapTotal)}, off-heap (cache bytes, buffers) ${mb(heap.external)}`,
  };
}

/**
 * Every item of a list, read in pages (limit/continue) as clients of big clusters do: at full size an
 * unpaged list of all pods is beyond the length of one JavaScript string.
 */
async function pagedList(client, path) {
  const items = [];
  let token = '';
  do {
    const sep = path.includes('?') ? '&' : '?';
    const r = await client.get(`${path}${sep}limit=5000${token ? `&continue=${encodeURIComponent(token)}` : ''}`, {timeoutMs: 300_000});
    if (r.status !== 200) return {status: r.status, items};
    for (const item of r.body.items) items.push(item);
    token = r.body.metadata?.continue ?? '';
  } while (token);
  return {status: 200, items};
}

/** GET whose body is counted as it arrives, never held (an unpaged list of all pods at full size). */
function drain(client, path, timeoutMs) {
  const {credentials} = client;
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, credentials.server), {agent: client.agent, headers: {accept: 'application/json'}, timeout: timeoutMs}, (res) => {
      let bytes = 0;
      let head = '';
      res.on('data', (chunk) => {
        if (head.length < 300) head += chunk.toString('utf8', 0, 300);
        bytes += chunk.length;
      });
      res.on('error', reject);
      res.on('end', () => resolve({status: res.statusCode ?? 0, bytes, text: head}));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * SCALE_HEAP_SNAPSHOT=1 (with NODE_OPTIONS=--heapsnapshot-signal=SIGUSR2, which the server inherits):
 * a heap snapshot of the API server at the memory figure, in the repository root, for finding what holds memory.
 */
async function heapSnapshot(pid) {
  const snapshots = () => readdirSync(root).filter((f) => f.endsWith('.heapsnapshot'));
  const before = new Set(snapshots());
  process.kill(pid, 'SIGUSR2');
  for (let size = -1; ; ) {
    await sleep(2000);
    const fresh = snapshots().find((f) => !before.has(f));
    if (!fresh) continue;
    const now = statSync(join(root, fresh)).size;
    if (now === size) return say(`heap snapshot ${fresh} (${mb(now)}); RSS after it ${mb(rssBytes(pid))}`);
    size = now;
  }
}

/** The server's collections so far by kind (nodejs_gc_duration_seconds): count, seconds, count over 50 ms. */
async function gcFigures(client) {
  const r = await client.request('GET', '/metrics', {headers: {accept: 'text/plain'}});
  const figures = {};
  for (const m of r.text.matchAll(/^nodejs_gc_duration_seconds_(count|sum)\{kind="(\w+)"\} (\S+)$/gm)) (figures[m[2]] ??= {count: 0, sum: 0, over50: 0})[m[1]] = Number(m[3]);
  for (const m of r.text.matchAll(/^nodejs_gc_duration_seconds_bucket\{le="0\.05",kind="(\w+)"\} (\S+)$/gm)) if (figures[m[1]]) figures[m[1]].over50 = figures[m[1]].count - Number(m[2]);
  return figures;
}

function gcDelta(before, after) {
  const parts = Object.entries(after).map(([kind, a]) => {
    const b = before[kind] ?? {count: 0, sum: 0, over50: 0};
    return `${kind} ${a.count - b.count} (${((a.sum - b.sum) * 1000).toFixed(0)} ms, ${a.over50 - b.over50} over 50 ms)`;
  });
  return parts.join(', ') || 'none reported';
}

/** The server's heap and off-heap (external) memory from its /metrics. */
async function heapFigures(client) {
  const r = await client.request('GET', '/metrics', {headers: {accept: 'text/plain'}});
  const value = (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(r.text)?.[1] ?? NaN);
  return {heapUsed: value('nodejs_heap_size_used_bytes'), heapTotal: value('nodejs_heap_size_total_bytes'), external: value('nodejs_external_memory_bytes')};
}

function rssBytes(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line.split(/\s+/)[1]) * 1024;
}

/**
 * kill -9 while pods are created and Leases renewed by the bench (the acknowledged ones are
 * recorded); then the time until /readyz passes, and what survived.
 */
async function killAndRecover(server, namespaces, deploymentPods) {
  const client = server.client;
  const namespace = 'scale-ledger';
  await must('namespace', client.post('/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: namespace}}));
  const leasePath = `/apis/${N.groups.coordination}/v1/namespaces/${namespace}/leases`;
  const acked = {pods: [], leases: new Map()};
  for (let i = 0; i < LEDGER_LEASES; i++) {
    const lease = await must('lease', client.post(leasePath, {apiVersion: `${N.groups.coordination}/v1`, kind: 'Lease', metadata: {name: `ledger-${i}`}, spec: {holderIdentity: 'bench', leaseDurationSeconds: 40, renewTime: microTime(Date.now())}}));
    acked.leases.set(lease.metadata.name, lease.spec.renewTime);
  }
  let writing = true;
  // A few writers until the kill: pods created and Leases renewed, each recorded once acknowledged.
  const writer = async (w) => {
    for (let i = 0; writing; i++) {
      try {
        if (i % 2 === 0) {
          const name = `ledger-pod-${w}-${i}`;
          const r = await client.post(`/api/v1/namespaces/${namespace}/pods`, {apiVersion: 'v1', kind: 'Pod', metadata: {name}, spec: {containers: [{name: 'app', image: 'registry.k8s.io/pause:3.10'}]}}, {timeoutMs: 5000});
          if (r.status === 201) acked.pods.push(name);
        } else {
          const name = `ledger-${(w * 7 + i) % LEDGER_LEASES}`;
          const renewTime = microTime(Date.now());
          const r = await client.patch(`${leasePath}/${name}`, {spec: {renewTime}}, 'application/merge-patch+json', {timeoutMs: 5000});
          if (r.status === 200) acked.leases.set(name, r.body.spec.renewTime);
        }
      } catch {
        // the connection died with the server: not acknowledged
      }
    }
  };
  const writers = Array.from({length: 4}, (_, w) => writer(w));
  await sleep(1500);
  await server.kill9();
  const killedAt = Date.now();
  writing = false;
  await Promise.all(writers);
  await server.restart();
  const readyMs = Date.now() - killedAt;
  const after = server.client;
  const rows = [{name: 'kill -9 -> ready', ...ratioFields(readyMs, TARGETS.ready, 's')}];

  const podList = await must('pods after restart', after.get(`/api/v1/namespaces/${namespace}/pods`));
  const listed = podList.items.map((p) => p.metadata.name);
  const counts = new Map();
  for (const n of listed) counts.set(n, (counts.get(n) ?? 0) + 1);
  const missing = acked.pods.filter((n) => !counts.has(n));
  const doubled = [...counts].filter(([, c]) => c > 1).map(([n]) => n);
  rows.push({name: 'acknowledged pods listed once', value: `${acked.pods.length - missing.length}/${acked.pods.length}`, target: 'all, none twice', note: doubled.length ? `${doubled.length} listed twice` : '', ok: missing.length === 0 && doubled.length === 0 && acked.pods.length > 0});

  const leases = await must('leases after restart', after.get(leasePath));
  const byName = new Map(leases.items.map((l) => [l.metadata.name, l.spec.renewTime]));
  const stale = [...acked.leases].filter(([n, t]) => !(byName.get(n) >= t));
  rows.push({name: 'acknowledged lease renewals kept', value: `${acked.leases.size - stale.length}/${acked.leases.size}`, target: 'all', note: stale.length ? `e.g. ${stale[0][0]}: ${byName.get(stale[0][0])} < ${stale[0][1]}` : '', ok: stale.length === 0});

  // The deployments' pods: each once (a lost pod would be replaced by a new name, a doubled one listed twice).
  const all = await pagedList(after, '/api/v1/pods');
  if (all.status !== 200) throw new Error(`all pods: HTTP ${all.status}`);
  const keys = new Set();
  let dup = 0;
  let ours = 0;
  for (const p of all.items) {
    const k = `${p.metadata.namespace}/${p.metadata.name}`;
    if (keys.has(k)) dup++;
    keys.add(k);
    if (namespaces.some((n) => n.name === p.metadata.namespace)) ours++;
  }
  rows.push({name: 'deployment pods after restart', value: `${ours}/${deploymentPods}`, target: 'all, none twice', note: dup ? `${dup} listed twice` : '', ok: ours === deploymentPods && dup === 0});

  // The fleet and the controllers carry on: every node's Lease renewed after the restart.
  const fleetStart = Date.now();
  const deadline = fleetStart + 60_000;
  let fresh = 0;
  while (Date.now() < deadline) {
    const nodeLeases = await must('node leases', after.get(`/apis/${N.groups.coordination}/v1/namespaces/${N.namespaces.nodeLease}/leases`, {timeoutMs: 60_000}));
    fresh = nodeLeases.items.filter((l) => Date.parse(l.spec.renewTime) >= Date.now() - 10_500 - (Date.now() - fleetStart) && Date.parse(l.spec.renewTime) > killedAt).length;
    if (fresh >= SIZE.nodes) break;
    await sleep(1000);
  }
  rows.push({name: 'fleet leases renewed after restart', value: `${fresh}/${SIZE.nodes} in ${((Date.now() - fleetStart) / 1000).toFixed(1)} s`, target: 'all', ok: fresh >= SIZE.nodes});
  return rows;
}

function startFleet(orchconfigPath) {
  const proc = lib.spawnDaemon('fleet', [join(root, 'bin', 'run.js'), 'fleet', '--orchconfig', orchconfigPath, '--nodes', String(SIZE.nodes), '--workers', '32']);
  return {
    ...proc,
    async stop() {
      if (proc.exit()) return;
      proc.child.kill('SIGKILL');
      await proc.exited;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Figures

function p99(xs) {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

function latencyRow(name, samples, targetMs) {
  const value = p99(samples);
  return {name, ...ratioFields(value, targetMs, 'ms'), note: `${samples.length} calls`, ok: samples.length > 0 && value <= targetMs};
}

function ratioFields(ms, targetMs, unit) {
  const fmt = (v) => (unit === 's' ? `${(v / 1000).toFixed(1)} s` : `${v.toFixed(1)} ms`);
  return {value: fmt(ms), target: `<= ${fmt(targetMs)}`, ratio: ms / targetMs, ok: ms <= targetMs};
}

const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const microTime = (ms) => new Date(ms).toISOString().replace(/Z$/, '000Z');

/** The table of one engine; returns how many figures missed their target. */
function printRows(engine, rows) {
  console.log(`\n${engine}, ${sizeName} (${SIZE.nodes} nodes / ${SIZE.pods} pods):`);
  const w = Math.max(...rows.map((r) => r.name.length));
  for (const r of rows) {
    const ratio = r.ratio === undefined ? '' : `ratio ${r.ratio.toFixed(3)}`;
    const mark = r.ok === undefined ? '  ' : r.ok ? 'ok' : 'NO';
    console.log(`  ${mark} ${r.name.padEnd(w)}  ${String(r.value).padStart(14)}  ${(r.target ?? '').padEnd(14)} ${ratio.padEnd(12)} ${r.note ?? ''}`);
  }
  return rows.filter((r) => r.ok === false).length;
}

/** The TypeScript test helpers (API server, controller manager, daemon processes, etcd), bundled for this run. */
async function loadHelpers() {
  mkdirSync(join(root, 'node_modules'), {recursive: true});
  // One level under node_modules: the bundles find packages there, and the helpers' `<file>/../..` is the repository root.
  const out = mkdtempSync(join(root, 'node_modules', '.orch-bench-scale-'));
  try {
    await build({
      entryPoints: {
        apiserver: join(root, 'test/helpers/apiserver.ts'),
        cm: join(root, 'test/helpers/controller-manager.ts'),
        daemon: join(root, 'test/helpers/daemon-process.ts'),
        etcd: join(root, 'test/helpers/etcd.ts'),
        names: join(root, 'src/api/names.ts'),
      },
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      outdir: out,
      packages: 'external',
      logLevel: 'error',
    });
    const modules = await Promise.all(['apiserver', 'cm', 'daemon', 'etcd', 'names'].map((m) => import(pathToFileURL(join(out, `${m}.js`)).href)));
    return Object.assign({}, ...modules);
  } finally {
    rmSync(out, {recursive: true, force: true});
  }
}

async function main() {
  console.log(
    `orch scale bench (${sizeName}): ${SIZE.nodes} nodes, ${SIZE.pods} pods at ${POD_RATE}/s; ${cpus().length} CPU(s), node ${process.version}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  );
  let failures = 0;
  for (const engine of ENGINES) {
    if (engine === 'etcd') {
      try {
        lib.etcdBinary();
      } catch (error) {
        console.log(`\netcd: skipped (${error.message})`);
        continue;
      }
    }
    const rows = await runEngine(engine);
    failures += printRows(engine, rows);
  }
  console.log(`\nload after the run: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  if (failures > 0) {
    console.log(`${failures} figure(s) missed their target`);
    process.exitCode = 1;
  }
}
await main();
