// Traffic: many writes over every connection kind a client uses, against `orch apiserver` (the built
// CLI, in its own process, on SQLite), each write checked afterwards against a list: acknowledged
// (201), refused with a Status, or unknown (a connection error: the failure this bench exists for,
// issue 18). Prints, per client kind, connection count, body format and size: requests, failures
// (unknown outcomes and non-Status answers), refusals, p50 and p99; then what the final lists found
// (lost acknowledged writes, refused writes applied, duplicates), which must all be 0.
//
// - HTTP/1.1 keep-alive, HTTP/1.1 `Connection: close` and HTTP/2 (8 streams per connection), on
//   1, 4, 16 and 64 connections; bodies of 0 B (a 400), 100 B, 20 KB, 200 KB, 900 KB, 3 MB (read
//   whole and created: orch does not yet refuse a ConfigMap over upstream's 1 MiB) and over the 3 MiB
//   limit (413); JSON, plus YAML and protobuf at 20 KB;
// - real clients: @kubernetes/client-node and python3-kubernetes (/usr/bin/python3) with a watch open,
//   kubectl over HTTP/2 and HTTP/1.1;
// - then (long mode) 10,000 idle TLS connections, 500 clients sending their request head a byte a
//   second and 500 watches never read, while a usual client's GET p99 is measured and compared with
//   its p99 before they came, the server's memory (VmRSS) is sampled, and the idle connections must be
//   closed on the read-header timeout (32 s, upstream's).
//
// Long mode sends over 100,000 requests (several minutes; much longer on a busy machine); `--short`
// (or BENCH_SHORT=1) about 800, for CI (test/integration/traffic-bench.test.ts). Run `npm run build` first.
// Exit code 1 when any write failed or any list disagreed.
import {spawn} from 'node:child_process';
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs';
import {Agent, request} from 'node:https';
import {createServer as createNetServer} from 'node:net';
import {tmpdir} from 'node:os';
import {dirname, join} from 'node:path';
import {createInterface} from 'node:readline';
import {fileURLToPath} from 'node:url';
import {credentialsOf, runLoad} from '../test/helpers/traffic-load.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SHORT = process.argv.includes('--short') || process.env.BENCH_SHORT === '1';
const NS = 'default';

// [size, count per client kind at 1, 4, 16 and 64 connections]: most requests go where there is
// concurrency, so that the long run's 100,000 requests take minutes, not hours.
const SIZES = SHORT
  ? [[0, [5, 5]], [100, [40, 40]], [20_000, [30, 30]], [200_000, [8, 8]]]
  : [[0, [100, 100, 100, 100]], [100, [1000, 3000, 8000, 12_000]], [20_000, [500, 1500, 3000, 4000]], [200_000, [100, 200, 300, 400]], [900_000, [20, 20, 20, 20]], [3_000_000, [4, 4, 4, 4]], [3_200_000, [4, 4, 4, 4]]];
const CONNECTIONS = SHORT ? [1, 4] : [1, 4, 16, 64];
const KINDS = ['http1', 'http1-close', 'h2'];
const FORMAT_COUNT = SHORT ? 20 : 1000;
const CLIENT_COUNT = SHORT ? 10 : 300;

async function main() {
  if (!existsSync(join(root, 'dist', 'main.js'))) throw new Error('build first: npm run build');
  const server = await startServer();
  const rows = [];
  const verdicts = {lost: 0, unseen: 0, watchRestarts: 0, watchErrors: 0, appliedThoughRefused: 0, duplicated: 0};
  let prefixN = 0;
  try {
    const creds = credentialsOf(server.orchconfig);
    const admin = adminClient(creds);

    const account = async (prefix, results, extra = {}) => {
      const listed = await listNames(admin, prefix);
      const present = new Set(listed);
      const acknowledged = results.flatMap((r) => r.acknowledged);
      const refused = results.flatMap((r) => r.refused.map((x) => x.name));
      verdicts.lost += acknowledged.filter((n) => !present.has(n)).length;
      verdicts.appliedThoughRefused += refused.filter((n) => present.has(n)).length;
      verdicts.duplicated += listed.length - present.size;
      for (const r of results) rows.push({...r, ...extra});
      // Keep the store small: the objects of one combination go before the next.
      await admin('DELETE', `/api/v1/namespaces/${NS}/configmaps?labelSelector=traffic%3Dload`);
    };

    for (const protocol of KINDS) {
      for (const [c, connections] of CONNECTIONS.entries()) {
        for (const [size, counts] of SIZES) {
          const count = counts[c];
          const prefix = `t${prefixN++}`;
          const results = await runLoad({orchconfig: server.orchconfig, protocol, connections, count, sizes: [size], prefix, namespace: NS});
          await account(prefix, results);
          progress(results[0]);
        }
      }
      for (const format of ['yaml', 'protobuf']) {
        const prefix = `t${prefixN++}`;
        const results = await runLoad({orchconfig: server.orchconfig, protocol, connections: 4, count: FORMAT_COUNT, sizes: [20_000], format, prefix, namespace: NS});
        await account(prefix, results);
        progress(results[0]);
      }
      const prefix = `t${prefixN++}`;
      const watched = await runLoad({orchconfig: server.orchconfig, protocol, connections: 4, count: FORMAT_COUNT, sizes: [20_000], prefix, namespace: NS, watch: true});
      verdicts.lost += watched.reduce((n, r) => n + r.watchMissing.length, 0);
      verdicts.unseen += watched.reduce((n, r) => n + r.watchMissing.length, 0);
      verdicts.watchRestarts += watched.reduce((n, r) => n + (r.watchRestarts ?? 0), 0);
      verdicts.watchErrors += watched.reduce((n, r) => n + (r.watchErrors?.length ?? 0), 0);
      await account(prefix, watched, {protocol: `${protocol}+watch`});
      progress(watched[0]);
      process.stderr.write(`    watch: ${watched[0].watchMissing.length} unseen, ${watched[0].watchRestarts} re-watches, ${watched[0].watchErrors.length} ERROR events\n`);
    }

    rows.push(...(await realClients(server.orchconfig, admin)));

    const faults = SHORT ? undefined : await idleAndSlow(server, admin);
    printTable(rows);
    const requests = rows.reduce((n, r) => n + r.requests, 0);
    const failures = rows.reduce((n, r) => n + r.failures, 0);
    console.log(`\n${requests} requests, ${failures} failures; final lists: ${verdicts.lost - verdicts.unseen} lost, ${verdicts.unseen} unseen by a watch (${verdicts.watchRestarts} watches ended by the server and resumed, ${verdicts.watchErrors} ERROR events), ${verdicts.appliedThoughRefused} refused but applied, ${verdicts.duplicated} duplicated`);
    if (faults) console.log(faults.text);
    process.exitCode = failures + verdicts.lost + verdicts.appliedThoughRefused + verdicts.duplicated > 0 || (faults && !faults.ok) ? 1 : 0;
  } finally {
    server.stop();
  }
}

function progress(r) {
  process.stderr.write(`  ${r.protocol} x${r.connections} ${r.format} ${r.size} B: ${r.requests} requests, ${r.failures} failures, p99 ${r.p99Ms} ms\n`);
}

async function realClients(orchconfig, admin) {
  const rows = [];
  const parse = (out) => JSON.parse(out);
  const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  for (const [kind, command, args] of [
    ['client-node', process.execPath, [join(root, 'test/helpers/client-node-load.mjs'), orchconfig, NS, 'cn', String(CLIENT_COUNT), '100,20000,200000', '4']],
    ['python3-kubernetes', python, [join(root, 'test/helpers/python-load.py'), orchconfig, NS, 'py', String(CLIENT_COUNT), '100,20000,200000']],
  ]) {
    const started = Date.now();
    let results;
    try {
      const run = await runProcess(command, args, {timeoutMs: 600_000});
      if (run.code !== 0) throw new Error(`exited ${run.code}: ${run.stderr.slice(-500)}`);
      results = parse(run.stdout);
    } catch (error) {
      console.error(`${kind}: ${error.message.split('\n')[0]}`);
      rows.push({protocol: kind, connections: 1, format: 'json', size: 0, requests: 1, failures: 1, refused: [], p50Ms: 0, p99Ms: 0});
      continue;
    }
    const seconds = (Date.now() - started) / 1000;
    const prefix = kind === 'client-node' ? 'cn-' : 'py-';
    const listed = new Set(await listNames(admin, prefix));
    for (const r of results) {
      const failures = Object.values(r.errors).reduce((a, b) => a + b, 0) + r.acknowledged.filter((n) => !listed.has(n)).length + r.watchMissing.length;
      rows.push({protocol: kind, connections: kind === 'client-node' ? 4 : 1, format: 'json', size: r.size, requests: r.requests, failures, refused: [], p50Ms: NaN, p99Ms: NaN, note: `${(r.requests / seconds).toFixed(0)}/s over the run`});
      progress(rows.at(-1));
    }
    await admin('DELETE', `/api/v1/namespaces/${NS}/configmaps?labelSelector=traffic%3D${prefix}load`);
  }
  for (const [kind, env] of [['kubectl HTTP/2', {}], ['kubectl HTTP/1.1', {DISABLE_HTTP2: '1'}]]) {
    const count = SHORT ? 5 : 40;
    const prefix = kind.endsWith('2') ? 'kc2' : 'kc1';
    const manifests = Array.from({length: count}, (_, i) => JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: `${prefix}-${i}`, labels: {traffic: 'load'}}, data: {k: 'x'.repeat(200_000)}})).join('\n');
    let failures = 0;
    const run = await runProcess('kubectl', ['--kubeconfig', orchconfig, 'create', '-n', NS, '-f', '-'], {input: manifests, env: {...process.env, ...env}, timeoutMs: 300_000});
    if (run.code !== 0) {
      failures++;
      console.error(`${kind}: ${run.stderr.slice(0, 300)}`);
    }
    const listed = await listNames(admin, `${prefix}-`);
    failures += count - listed.length;
    rows.push({protocol: kind, connections: 1, format: 'json', size: 200_000, requests: count, failures, refused: [], p50Ms: NaN, p99Ms: NaN});
    progress(rows.at(-1));
    await admin('DELETE', `/api/v1/namespaces/${NS}/configmaps?labelSelector=traffic%3Dload`);
  }
  return rows;
}

/** 10,000 idle TLS connections and 1,000 slow clients; a usual client's p99 before and during. */
async function idleAndSlow(server, admin) {
  for (let i = 0; i < 20; i++) await admin('POST', `/api/v1/namespaces/${NS}/configmaps`, JSON.stringify({metadata: {name: `usual-${i}`}, data: {v: 'x'.repeat(1000)}}));
  const p99 = async (n) => {
    const times = [];
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      const r = await admin('GET', `/api/v1/namespaces/${NS}/configmaps/usual-${i % 20}`);
      if (r.status !== 200) throw new Error(`GET usual-${i % 20}: ${r.status}`);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    return times[Math.ceil(n * 0.99) - 1];
  };
  await p99(200);
  const unloaded = await p99(1000);
  const rssBefore = rssOf(server.pid);
  const clients = spawn(process.execPath, [join(root, 'test/helpers/idle-clients.mjs'), JSON.stringify({orchconfig: server.orchconfig, idle: 10_000, slowHeaders: 500, slowWatchers: 500, durationMs: 45_000, namespace: NS})], {cwd: root, stdio: ['ignore', 'pipe', 'inherit']});
  const lines = createInterface({input: clients.stdout});
  const messages = [];
  lines.on('line', (line) => messages.push(JSON.parse(line)));
  const until = async (n) => {
    while (messages.length < n) await new Promise((r) => setTimeout(r, 200));
    return messages[n - 1];
  };
  const ready = await until(1);
  const rssLoaded = rssOf(server.pid);
  const loaded = await p99(1000);
  let rssPeak = Math.max(rssLoaded, rssOf(server.pid));
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssOf(server.pid))), 500);
  const {report} = await until(2);
  clearInterval(sampler);
  clients.kill();
  const mb = (b) => `${(b / 1024 / 1024).toFixed(0)} MB`;
  const idleClosedOnTime = report.idle.closed === report.idle.opened && report.idle.minClosedAfterMs >= 31_000;
  const ok = loaded <= unloaded * 10 && idleClosedOnTime && report.slowHeaders.closed === report.slowHeaders.opened && report.slowWatchers.closed === 0;
  const text = [
    `idle and slow clients: opened ${JSON.stringify(ready.ready)}`,
    `  usual client's GET p99: ${unloaded.toFixed(1)} ms alone, ${loaded.toFixed(1)} ms with them (${(loaded / unloaded).toFixed(2)}x)`,
    `  server memory (VmRSS): ${mb(rssBefore)} before, ${mb(rssLoaded)} with them open, peak ${mb(rssPeak)}`,
    `  idle connections closed by the server: ${report.idle.closed} of ${report.idle.opened}, after ${report.idle.minClosedAfterMs}..${report.idle.maxClosedAfterMs} ms (read-header timeout 32 s)`,
    `  slow-header clients closed: ${report.slowHeaders.closed} of ${report.slowHeaders.opened}, after ${report.slowHeaders.minClosedAfterMs}..${report.slowHeaders.maxClosedAfterMs} ms`,
    `  unread watches cut: ${report.slowWatchers.closed} of ${report.slowWatchers.opened} (long-running: none expected)`,
    `  ${ok ? 'OK' : 'NOT OK'}`,
  ].join('\n');
  return {ok, text};
}

/**
 * Runs a client program to its end without blocking this process (a synchronous run froze the
 * bench's own keep-alive pool for minutes: it then reused connections the server had closed as
 * idle meanwhile, and failed with 'socket hang up').
 */
function runProcess(command, args, {input, env, timeoutMs}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {cwd: root, env: env ?? process.env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe']});
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({code, stdout, stderr});
    });
    if (input !== undefined) child.stdin.end(input);
  });
}

function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) * 1024;
}

function printTable(rows) {
  const header = ['client', 'conns', 'format', 'size', 'requests', 'failures', 'refused', 'p50 ms', 'p99 ms'];
  const lines = rows.map((r) => [r.protocol, String(r.connections), r.format, sizeText(r.size), String(r.requests), String(r.failures), refusedText(r.refused), Number.isNaN(r.p50Ms) ? '-' : String(r.p50Ms), Number.isNaN(r.p99Ms) ? '-' : String(r.p99Ms)]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells) => cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(fmt(header));
  for (const l of lines) console.log(fmt(l));
}

function refusedText(refused) {
  if (!refused.length) return '0';
  const codes = {};
  for (const r of refused) codes[r.code] = (codes[r.code] ?? 0) + 1;
  return Object.entries(codes).map(([c, n]) => `${n}x${c}`).join(',');
}

function sizeText(size) {
  return size >= 1_000_000 ? `${size / 1_000_000} MB` : size >= 1000 ? `${size / 1000} KB` : `${size} B`;
}

function adminClient(creds) {
  const agent = new Agent({keepAlive: true, maxSockets: 4, ca: creds.ca, cert: creds.cert, key: creds.key});
  return (method, path, body) =>
    new Promise((resolve, reject) => {
      const req = request(new URL(path, creds.server), {method, agent, headers: {accept: 'application/json', ...(body ? {'content-type': 'application/json'} : {})}, timeout: 120_000}, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({status: res.statusCode, body: Buffer.concat(chunks).toString()}));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.end(body);
    });
}

async function listNames(admin, prefix) {
  const names = [];
  let token = '';
  do {
    const r = await admin('GET', `/api/v1/namespaces/${NS}/configmaps?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
    if (r.status !== 200) throw new Error(`list: ${r.status} ${r.body.slice(0, 200)}`);
    const list = JSON.parse(r.body);
    for (const item of list.items) if (item.metadata.name.startsWith(prefix)) names.push(item.metadata.name);
    token = list.metadata.continue ?? '';
  } while (token);
  return names;
}

async function startServer() {
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-bench-traffic-'));
  const port = await freePort();
  const child = spawn(process.execPath, [join(root, 'bin/run.js'), 'apiserver', '--data-dir', dataDir, '--secure-port', String(port), '--bind-address', '127.0.0.1', '--kvstore-compaction-interval', '30s'], {cwd: root, stdio: ['ignore', 'ignore', 'pipe']});
  let log = '';
  child.stderr.on('data', (c) => (log = (log + c).slice(-5000)));
  const orchconfig = join(dataDir, 'admin.orchconfig');
  const deadline = Date.now() + 30_000;
  while (!existsSync(orchconfig)) {
    if (child.exitCode !== null) throw new Error(`orch apiserver exited:\n${log}`);
    if (Date.now() > deadline) throw new Error(`orch apiserver did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const admin = adminClient(credentialsOf(orchconfig));
  for (;;) {
    try {
      if ((await admin('GET', '/readyz')).status === 200) break;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`orch apiserver not ready:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    orchconfig,
    pid: child.pid,
    stop: () => {
      child.kill('SIGKILL');
      rmSync(dataDir, {recursive: true, force: true});
    },
  };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const {port} = s.address();
      s.close(() => resolve(port));
    });
  });
}

await main();
