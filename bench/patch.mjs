// Patch engine throughput and scaling, and cold `orch patch --local` start against `node -e 0`.
//  - patches/s of a strategic patch on a realistic Deployment, and of merge and JSON patches
//  - the time of a strategic merge of a 2,000-container list against a 200-container list
//    (target: ratio <= 12, i.e. no quadratic merging)
//  - cold `orch patch --local -o json` wall time against `node -e 0` (target <= 2.0x)
// Runs against the built bundle (npm run build first).
import {spawnSync} from 'node:child_process';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {dirname, join} from 'node:path';
import {readdirSync} from 'node:fs';
import {build} from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Bundle the engine on its own so the benchmark measures it, not the CLI around it.
const out = join(root, 'dist', 'bench-engine.mjs');
await build({entryPoints: [join(root, 'src/patch/index.ts')], bundle: true, format: 'esm', platform: 'node', outfile: out, logLevel: 'error'});
const {applyPatch} = await import(pathToFileURL(out).href);

function deployment(containers) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {name: 'web', namespace: 'prod', labels: {app: 'web', tier: 'front'}, annotations: {'deployment.orch.io/revision': '3'}},
    spec: {
      replicas: 3,
      selector: {matchLabels: {app: 'web'}},
      template: {
        metadata: {labels: {app: 'web'}},
        spec: {
          containers: Array.from({length: containers}, (_, i) => ({
            name: `c${i}`,
            image: `registry.example/app:${i}`,
            ports: [{containerPort: 8000 + (i % 1000), protocol: 'TCP'}],
            env: [{name: 'A', value: '1'}, {name: 'B', value: '2'}],
            resources: {requests: {cpu: '100m', memory: '64Mi'}},
          })),
          volumes: [{name: 'data', emptyDir: {}}],
        },
      },
    },
  };
}

function rate(label, fn, minMs = 1500) {
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < minMs) {
    fn();
    n++;
  }
  const ms = performance.now() - start;
  console.log(`${label.padEnd(48)} ${(n / (ms / 1000)).toFixed(0).padStart(8)} patches/s`);
  return ms / n;
}

const realistic = deployment(3);
const strategicPatch = {
  metadata: {labels: {release: 'canary'}},
  spec: {replicas: 5, template: {spec: {containers: [{name: 'c1', image: 'registry.example/app:new', env: [{name: 'C', value: '3'}]}]}}},
};
rate('strategic, realistic Deployment', () => applyPatch({object: realistic, patch: strategicPatch, type: 'strategic'}));
rate('merge, realistic Deployment', () => applyPatch({object: realistic, patch: {spec: {replicas: 5}}, type: 'merge'}));
rate('json, realistic Deployment', () =>
  applyPatch({object: realistic, patch: [{op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'x'}], type: 'json'}),
);

// Scaling: patch every 10th container of a big list, so the patch grows with the list too.
const scale = (n) => {
  const object = deployment(n);
  const patch = {spec: {template: {spec: {containers: Array.from({length: n / 10}, (_, i) => ({name: `c${i * 10}`, image: 'new'}))}}}};
  return rate(`strategic, ${n}-container list`, () => applyPatch({object, patch, type: 'strategic'}), 2000);
};
const t200 = scale(200);
const t2000 = scale(2000);
const scaling = t2000 / t200;
console.log(`time at 2,000 / time at 200: ${scaling.toFixed(2)} (target <= 12; linear would be 10)`);

// Cold CLI start against node -e 0, interleaved.
const pod = join(root, 'bench', 'fixtures', 'pod.json');
const runs = Number(process.env.RUNS ?? 15);
const cmds = {
  node: ['-e', '0'],
  patch: [join(root, 'bin', 'run.js'), 'patch', '--local', '-f', pod, '-p', '{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}', '-o', 'json'],
};
const times = {node: [], patch: []};
for (let i = 0; i < runs + 2; i++) {
  for (const [k, argv] of Object.entries(cmds)) {
    const s = process.hrtime.bigint();
    const r = spawnSync(process.execPath, argv, {encoding: 'utf8'});
    if (r.status !== 0) throw new Error(r.stderr);
    if (i >= 2) times[k].push(Number(process.hrtime.bigint() - s) / 1e6);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const coldRatio = median(times.patch) / median(times.node);
console.log(`cold orch patch --local (strategic, -o json): ${median(times.patch).toFixed(1)} ms, ${coldRatio.toFixed(2)}x node -e 0 (target <= 2.0)`);
process.exitCode = scaling <= 12 && coldRatio <= 2.0 ? 0 : process.env.BENCH_NO_FAIL ? 0 : 1;
