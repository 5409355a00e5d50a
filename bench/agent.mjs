// `orch agent` (the built CLI, its own process) with 100 static pods:
// (a) the time from writing PODS (100) static pod files, each `sh -c 'sleep 600'`, into its
//     --pod-manifest-path until PODS container processes run (counted from the agent's read-only
//     /pods, each pid checked in /proc), with --file-check-frequency=60s so only the file-system
//     events can find them;
// (b) the agent's CPU and resident memory with those pods running, sampled from /proc each second for
//     SAMPLE_SECONDS (20), without polling the agent meanwhile;
// (c) the time from deleting the files until no container process is left.
// MODES (standalone,apiserver) runs it without an API server, and with `orch apiserver` (SQLite),
// where each static pod also gets a mirror pod and its status written. Every process started here is
// stopped at the end (the agent on SIGTERM stops its pods; any left are killed by process group).
// MODES also has `streams` (bench/agent-streams.mjs): exec round trip as a ratio to `kubectl get pod`,
// port-forward throughput as a ratio to a direct TCP copy, through `orch up`.
// Linux only (/proc). Run `npm run build` first. Whole run: about 110 s on 2 CPUs.
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs';
import {cpus} from 'node:os';
import {dirname, join} from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {build} from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PODS = Number(process.env.PODS ?? 100);
const SAMPLE_SECONDS = Number(process.env.SAMPLE_SECONDS ?? 20);
const MODES = (process.env.MODES ?? 'standalone,apiserver,streams').split(',');
const START_TIMEOUT_MS = 60_000;
const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ, the unit of utime/stime in /proc/<pid>/stat on Linux

if (!existsSync(join(root, 'dist', 'main.js'))) throw new Error('build first: npm run build');
const lib = await loadHelpers();
const {sleep} = lib;

console.log(`orch agent bench: ${cpus().length} CPU(s), node ${process.version}, ${PODS} static pods of sh -c 'sleep 600'`);
for (const mode of MODES) {
  if (mode === 'streams') await (await import('./agent-streams.mjs')).benchStreams();
  else await benchMode(mode);
}

async function benchMode(mode) {
  let server;
  let agent;
  const pids = new Set();
  try {
    if (mode === 'apiserver') server = await lib.startApiServerProcess({engine: 'sqlite'});
    agent = await lib.startAgent({
      nodeName: `bench-${mode}`,
      manifests: true,
      orchconfigPath: server?.orchconfigPath,
      args: ['--file-check-frequency=60s', `--max-pods=${PODS + 10}`],
    });
    const rssIdle = rssKb(agent.pid);

    // (a) files to processes
    const t0 = performance.now();
    for (let i = 0; i < PODS; i++) lib.writeManifest(agent.manifestDir, `pod-${i}.yaml`, lib.shellPod(`sleeper-${i}`, 'sleep 600'));
    const written = performance.now() - t0;
    let running = 0;
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (running < PODS) {
      if (Date.now() > deadline) throw new Error(`only ${running}/${PODS} pods running after ${START_TIMEOUT_MS} ms`);
      const live = (await agent.pods()).map((p) => lib.runningPid(p)).filter((pid) => pid !== undefined && lib.processAlive(pid));
      live.forEach((pid) => pids.add(pid));
      running = live.length;
      if (running < PODS) await sleep(20);
    }
    const allRunning = performance.now() - t0;

    // (b) CPU and memory with the pods running
    const samples = [];
    let before = cpuTicks(agent.pid);
    for (let s = 0; s < SAMPLE_SECONDS; s++) {
      await sleep(1000);
      const now = cpuTicks(agent.pid);
      samples.push({cpu: (now - before) / CLOCK_TICKS_PER_SECOND, rss: rssKb(agent.pid)});
      before = now;
    }
    const cpuAvg = samples.reduce((a, s) => a + s.cpu, 0) / samples.length;
    const cpuMax = Math.max(...samples.map((s) => s.cpu));
    const rssAvg = samples.reduce((a, s) => a + s.rss, 0) / samples.length;
    const rssMax = Math.max(...samples.map((s) => s.rss));

    let mirrors = '';
    if (server) {
      const list = await server.client.get('/api/v1/namespaces/default/pods');
      const items = list.body?.items ?? [];
      mirrors = `, mirror pods in the API server: ${items.length} (${items.filter((p) => p.status?.phase === 'Running').length} Running)`;
    }

    // (c) files deleted to processes gone
    const t1 = performance.now();
    for (let i = 0; i < PODS; i++) rmSync(join(agent.manifestDir, `pod-${i}.yaml`));
    while ([...pids].some((pid) => lib.processAlive(pid))) {
      if (performance.now() - t1 > START_TIMEOUT_MS) throw new Error('pods still running a minute after their files were deleted');
      await sleep(20);
    }
    const allGone = performance.now() - t1;

    console.log(`\n[${mode}]`);
    console.log(`  files written:                    ${written.toFixed(0)} ms`);
    console.log(`  files -> ${PODS} processes running:  ${allRunning.toFixed(0)} ms`);
    console.log(`  agent CPU with ${PODS} pods (${SAMPLE_SECONDS} s):   avg ${(cpuAvg * 100).toFixed(1)}% of a core, max ${(cpuMax * 100).toFixed(1)}%`);
    console.log(`  agent RSS: idle ${(rssIdle / 1024).toFixed(0)} MiB; with ${PODS} pods avg ${(rssAvg / 1024).toFixed(0)} MiB, max ${(rssMax / 1024).toFixed(0)} MiB${mirrors}`);
    console.log(`  files deleted -> 0 processes:     ${allGone.toFixed(0)} ms`);
  } finally {
    await agent?.dispose();
    for (const pid of pids) lib.killGroupIfLeader(pid);
    const left = [...pids].filter((pid) => lib.processAlive(pid)).length;
    if (left > 0) console.log(`  WARNING: ${left} container processes were still alive after the agent stopped (killed now)`);
    await server?.stop();
  }
}

/** utime + stime of a process, in clock ticks. */
function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function rssKb(pid) {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
}

/** The TypeScript test helpers, bundled for this run. */
async function loadHelpers() {
  // One level under node_modules: the bundles find packages there, and the helpers' own
  // `<file>/../..` resolves to the repository root as it does from test/helpers.
  mkdirSync(join(root, 'node_modules'), {recursive: true});
  const out = mkdtempSync(join(root, 'node_modules', '.orch-bench-agent-'));
  try {
    await build({
      entryPoints: {apiserver: join(root, 'test/helpers/apiserver.ts'), agent: join(root, 'test/helpers/agent.ts')},
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      outdir: out,
      packages: 'external',
      logLevel: 'error',
    });
    const apiserver = await import(pathToFileURL(join(out, 'apiserver.js')).href);
    const agent = await import(pathToFileURL(join(out, 'agent.js')).href);
    return {...apiserver, ...agent};
  } finally {
    rmSync(out, {recursive: true, force: true});
  }
}
