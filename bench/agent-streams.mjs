// Streams through `orch up` (the built CLI; API server -> agent), each against a baseline measured in
// the same run:
// (a) exec round trip: `kubectl exec POD -- true` against `kubectl get pod POD` (both start a kubectl
//     process and make one request; the ratio is what the upgrade, the proxy and the process cost),
//     RUNS (10) of each, medians;
// (b) port-forward throughput: BYTES (64 MiB) read from a pod's TCP server through
//     `kubectl port-forward`, with the default kubectl (WebSocket tunnel) and kubectl 1.27 (SPDY),
//     against reading them from the same server directly over loopback (the target: at
//     least 0.3x) and against the reference relay (bench/reference-relay.mjs): the same bytes over
//     the same hops (a client in kubectl's place, TLS to an API server's part, TLS to an agent's
//     part on the same thread, TCP to the pod) through Node's TLS byte pipes and no protocol, which
//     is what those hops cost in Node at least. COPIES (3) interleaved rounds, medians, and the CPU
//     per copy of each process. The last lines set the 0.3x budget against the CPU kubectl alone
//     and the reference's two TLS hops need per copy: on a quiet 2-CPU machine the direct copy
//     takes about 23 ms (a budget of about 77 ms) and kubectl alone (TLS, framing, a local socket)
//     needs more than that, so no API server and agent reach 0.3x there. On a loaded machine the
//     direct copy slows down as much as the rest and the wall-clock ratios say little; CPU per
//     copy is the figure to compare.
// FORWARDS (ws,spdy) picks the kubectls; RUNS=0 skips (a). UP_NODE_ARGS passes node flags to
// `orch up` (--cpu-prof, --trace-gc), UP_LOG keeps its output in a file.
// Run `npm run build` first. Whole run: about 40 s on 2 CPUs.
import {execFileSync, spawn} from 'node:child_process';
import {mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync} from 'node:fs';
import net from 'node:net';
import {tmpdir} from 'node:os';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {startReferenceRelay} from './reference-relay.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.RUNS ?? 10);
const BYTES = Number(process.env.BYTES ?? 64 * 1024 * 1024);
const COPIES = Number(process.env.COPIES ?? 3);
/** Which kubectl port-forwards to measure: ws (the default kubectl), spdy (kubectl 1.27). */
const FORWARDS = (process.env.FORWARDS ?? 'ws,spdy').split(',');
const kubectlDir = dirname(realpathSync(execFileSync('sh', ['-c', 'command -v kubectl']).toString().trim()));

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const {port} = s.address();
      s.close(() => resolve(port));
    });
  });
}

function kubectl(binary, kubeconfig, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['--kubeconfig', kubeconfig, ...args], {stdio: ['ignore', 'pipe', 'pipe']});
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`kubectl ${args.join(' ')}: ${code}: ${out}`))));
  });
}

async function until(what, fn, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** utime + stime of a process in ms (Linux /proc; USER_HZ 100). */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** The API server's certificate directory under `orch up`'s data directory (the one with apiserver.crt). */
function findCertDir(dataDir) {
  const found = readdirSync(dataDir, {recursive: true}).find((f) => f.endsWith('apiserver.crt'));
  if (!found) throw new Error(`no apiserver.crt under ${dataDir}`);
  return dirname(join(dataDir, found));
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Reads everything a TCP server at port sends; resolves with the milliseconds it took. */
function readAll(port, expected) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let got = 0;
    const socket = net.connect({host: '127.0.0.1', port});
    socket.on('data', (d) => (got += d.length));
    socket.on('error', reject);
    socket.on('close', () => (got === expected ? resolve(performance.now() - t0) : reject(new Error(`read ${got} of ${expected} bytes`))));
  });
}

export async function benchStreams() {
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-streams-'));
  const [api, cm, agent, readOnly, healthz, podPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
  const nodeArgs = (process.env.UP_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const up = spawn(process.execPath, [
    ...nodeArgs, join(root, 'bin', 'run.js'), 'up', '--data-dir', join(dir, 'data'),
    '--apiserver-arg', `secure-port=${api}`, '--apiserver-arg', 'bind-address=127.0.0.1',
    '--controller-manager-arg', `secure-port=${cm}`, '--controller-manager-arg', 'bind-address=127.0.0.1',
    '--agent-arg', `port=${agent}`, '--agent-arg', `read-only-port=${readOnly}`, '--agent-arg', `healthz-port=${healthz}`, '--agent-arg', 'address=127.0.0.1',
  ], {stdio: ['ignore', 'pipe', 'pipe']});
  let log = '';
  up.stdout.on('data', (d) => (log += d));
  up.stderr.on('data', (d) => (log += d));
  const kubeconfig = join(dir, 'data', 'apiserver', 'admin.orchconfig');
  const k = join(kubectlDir, 'kubectl');
  try {
    await until('orch up', async () => log.includes('orch is up'));
    // The pod: a TCP server that sends BYTES to each connection, then closes it.
    const server = `const b=Buffer.alloc(1<<20,7);require('net').createServer(s=>{let n=${BYTES};const w=()=>{while(n>0){n-=b.length;if(!s.write(b))return s.once('drain',w)}s.end()};w()}).listen(${podPort},'127.0.0.1')`;
    const pod = {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'bench'}, spec: {containers: [{name: 'main', image: 'none', command: [process.execPath, '-e', server]}]}};
    writeFileSync(join(dir, 'pod.json'), JSON.stringify(pod));
    await until('the node', async () => (await kubectl(k, kubeconfig, ['get', 'nodes', '-o', 'name'])).trim());
    await kubectl(k, kubeconfig, ['create', '-f', join(dir, 'pod.json')]);
    await until('the pod', async () => (await kubectl(k, kubeconfig, ['get', 'pod', 'bench', '-o', 'jsonpath={.status.phase}'])) === 'Running');
    await until('the pod to listen', () => readAll(podPort, BYTES).then(() => true));

    // (a) exec round trip against get
    const time = async (args) => {
      const t0 = performance.now();
      await kubectl(k, kubeconfig, args);
      return performance.now() - t0;
    };
    const gets = [];
    const execs = [];
    for (let i = 0; i < RUNS; i++) {
      gets.push(await time(['get', 'pod', 'bench']));
      execs.push(await time(['exec', 'bench', '--', 'true']));
    }
    console.log(`\n[streams] (orch up, kubectl ${execFileSync(k, ['version', '--client', '-o', 'json']).toString().match(/"gitVersion":\s*"([^"]+)"/)?.[1]})`);
    if (RUNS > 0) {
      const [getMs, execMs] = [median(gets), median(execs)];
      console.log(`  kubectl get pod (median of ${RUNS}):        ${getMs.toFixed(0)} ms`);
      console.log(`  kubectl exec -- true (median of ${RUNS}):   ${execMs.toFixed(0)} ms   ratio exec/get ${(execMs / getMs).toFixed(2)}x`);
    }

    // (b) port-forward throughput against a direct copy and against the reference relay (Node TLS byte
    // pipes over the same hops, bench/reference-relay.mjs), interleaved: each of COPIES rounds copies
    // once each way, so that a machine whose load changes meanwhile weighs on all of them alike.
    const mib = BYTES / 1024 / 1024;
    const ways = [{label: 'direct TCP copy', port: podPort, pids: [], ms: [], cpu: []}];
    const reference = await startReferenceRelay(podPort, findCertDir(join(dir, 'data')));
    ways.push({label: 'reference relay', port: reference.port, pids: [reference.relayPid, reference.clientPid], ms: [], cpu: []});
    const forwards = [];
    try {
      const kubectls = {ws: ['WebSocket tunnel', k], spdy: ['SPDY, kubectl 1.27', join(kubectlDir, 'kubectl.1.27')]};
      for (const [label, binary] of FORWARDS.map((f) => kubectls[f])) {
        const local = await freePort();
        const forward = spawn(binary, ['--kubeconfig', kubeconfig, 'port-forward', 'pod/bench', `${local}:${podPort}`], {stdio: ['ignore', 'pipe', 'pipe']});
        forwards.push(forward);
        let out = '';
        forward.stdout.on('data', (d) => (out += d));
        await until('the forward', async () => out.includes('Forwarding from'));
        ways.push({label: `port-forward (${label})`, port: local, pids: [up.pid, forward.pid], ms: [], cpu: []});
      }
      for (const way of ways) await readAll(way.port, BYTES); // warm-up: connections, JIT
      for (let round = 0; round < COPIES; round++) {
        for (const way of ways) {
          const before = way.pids.map(cpuMs);
          way.ms.push(await readAll(way.port, BYTES));
          way.cpu.push(way.pids.map((pid, i) => cpuMs(pid) - before[i]));
        }
      }
    } finally {
      for (const forward of forwards) forward.kill('SIGTERM');
      reference.stop();
    }
    const [direct, ref] = ways.map((w) => median(w.ms));
    const cpu = (way, i) => median(way.cpu.map((c) => c[i])).toFixed(0);
    const pad = (label) => label + ' '.repeat(Math.max(1, 38 - label.length));
    console.log(`  ${mib} MiB from a pod's TCP server, median of ${COPIES} rounds (each way once per round):`);
    for (const way of ways) {
      const ms = median(way.ms);
      let line = `  ${pad(way.label + ':')}${ms.toFixed(0).padStart(5)} ms ${(mib / (ms / 1000)).toFixed(0).padStart(5)} MiB/s`;
      if (way.port !== podPort) line += `   ratio to direct ${(direct / ms).toFixed(2)}x`;
      if (way.label.startsWith('port-forward')) line += ` (target >= 0.3x), to the reference ${(ref / ms).toFixed(2)}x`;
      console.log(line);
      if (way.label === 'reference relay') console.log(`    CPU per copy: relay (API server + agent part) ${cpu(way, 0)} ms, client (kubectl's part) ${cpu(way, 1)} ms`);
      else if (way.pids.length) console.log(`    CPU per copy: orch (API server + agent) ${cpu(way, 0)} ms, kubectl ${cpu(way, 1)} ms`);
    }
    const kubectlCpu = ways.filter((w) => w.label.startsWith('port-forward')).map((w) => cpu(w, 1));
    console.log(`  0.3x of the direct copy leaves ${(direct / 0.3).toFixed(0)} ms per copy; kubectl alone spends ${kubectlCpu.join(' / ')} ms of CPU on one,`);
    console.log(`  the reference relay's two TLS hops ${cpu(ways[1], 0)} ms and its client ${cpu(ways[1], 1)} ms (2 CPUs, shared).`);
  } finally {
    up.kill('SIGTERM');
    await Promise.race([new Promise((r) => up.once('exit', r)), new Promise((r) => setTimeout(r, 15_000))]);
    if (up.exitCode === null) up.kill('SIGKILL');
    if (process.env.UP_LOG) writeFileSync(process.env.UP_LOG, log);
    rmSync(dir, {recursive: true, force: true});
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStreams();
