// GET latency while a big unpaged LIST is served (issue 16): the API handler (in this process, real
// HTTP on 127.0.0.1, the in-memory store of the tests) holds N ConfigMaps of ~2.3 KB (the size of a
// pod in bench/scale.mjs; 30,000 by default, ~69 MB of list JSON). One client LISTs them all while
// another sends GETs of one object back to back. Printed: each GET latency percentile as a ratio to
// the LIST's duration measured in the same run (a GET held behind the whole encoding is ~1.0), and to
// the idle GET latency of this run. Target: GET p99 during the LIST <= 0.1 x the LIST's duration.
// Environment: ITEMS (30000), ROUNDS (3).
import {get} from 'node:http';
import {mkdtempSync, rmSync} from 'node:fs';
import {loadavg} from 'node:os';
import {dirname, join} from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {build} from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ITEMS = Number(process.env.ITEMS ?? 30000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
// Bundled under dist/ so that the bundle finds the built data files (dist/data) as the CLI does.
const out = mkdtempSync(join(root, 'dist', 'bench-list-stream-'));
await build({entryPoints: [join(root, 'test/helpers/memory-store.ts')], bundle: true, platform: 'node', format: 'esm', outfile: join(out, 'm.mjs'), logLevel: 'error',
  banner: {js: "import {createRequire} from 'node:module'; const require = createRequire(import.meta.url);"}});
const {startTestApi} = await import(pathToFileURL(join(out, 'm.mjs')).href);
const api = await startTestApi();
const port = Number(new URL(api.url).port);
const CMS = '/api/v1/namespaces/default/configmaps';
const payload = 'x'.repeat(2000);
for (let i = 0; i < ITEMS; i++) {
  const name = `cm-${String(i).padStart(6, '0')}`;
  await api.store.create(`${'/registry/configmaps/default/'}${name}`, JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, namespace: 'default', uid: `u-${i}`, creationTimestamp: '2024-01-01T00:00:00Z', labels: {app: 'bench'}}, data: {payload}}));
}
const fetchRaw = (path) => new Promise((resolve, reject) => {
  const started = performance.now();
  get({host: '127.0.0.1', port, path}, (res) => {
    let bytes = 0;
    res.on('data', (c) => (bytes += c.length));
    res.on('end', () => resolve({ms: performance.now() - started, bytes}));
  }).on('error', reject);
});
const pct = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];
const one = `${CMS}/cm-${String(ITEMS - 1).padStart(6, '0')}`;
const idle = [];
for (let i = 0; i < 200; i++) idle.push((await fetchRaw(one)).ms);
const during = [];
const lists = [];
for (let r = 0; r < ROUNDS; r++) {
  let done = false;
  const listing = fetchRaw(CMS).then((x) => ((done = true), x));
  while (!done) during.push((await fetchRaw(one)).ms);
  lists.push(await listing);
}
const listMs = pct(lists.map((l) => l.ms), 50);
console.log(`list-stream bench: ${ITEMS} items, ${(lists[0].bytes / 1e6).toFixed(1)} MB per LIST, ${ROUNDS} LISTs, ${during.length} GETs during them; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`  LIST duration (median)             ${listMs.toFixed(0)} ms`);
console.log(`  idle GET p50/p99                   ${pct(idle, 50).toFixed(1)} / ${pct(idle, 99).toFixed(1)} ms`);
for (const p of [50, 99]) {
  const v = pct(during, p);
  console.log(`  GET p${p} during LIST  ${v.toFixed(1).padStart(8)} ms   ratio to LIST ${(v / listMs).toFixed(3)}   to idle GET p${p} ${(v / pct(idle, p)).toFixed(1)}x`);
}
const ok = pct(during, 99) <= 0.1 * listMs;
console.log(`  ${ok ? 'ok' : 'NO'} GET p99 during LIST <= 0.1 x LIST duration`);
await api.close();
rmSync(out, {recursive: true, force: true});
