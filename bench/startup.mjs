// Start-up time of orch against `node -e 0`, measured in the same run: the commands are run
// interleaved (so machine noise hits all of them alike) and the medians compared.
// Targets: `orch --version` <= 1.6x, `orch patch --local ... -o json` <= 2.0x.
import {spawnSync} from 'node:child_process';
import {fileURLToPath} from 'node:url';
import {dirname, join} from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const orch = join(root, 'bin', 'run.js');
const pod = join(root, 'bench', 'fixtures', 'pod.json');
const runs = Number(process.env.RUNS ?? 25);

const cases = [
  {name: 'node -e 0', argv: ['-e', '0']},
  {name: 'orch --version', argv: [orch, '--version'], target: 1.6},
  {
    name: 'orch patch --local -o json',
    argv: [orch, 'patch', '--local', '-f', pod, '--type', 'merge', '-p', '{"metadata":{"labels":{"tier":"front"}}}', '-o', 'json'],
    target: 2.0,
  },
];

const times = new Map(cases.map((c) => [c.name, []]));
for (let i = 0; i < runs + 2; i++) {
  for (const c of cases) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, c.argv, {encoding: 'utf8'});
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`${c.name} failed: ${r.stderr}`);
    if (i >= 2) times.get(c.name).push(ms); // the first two rounds warm the file cache
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(times.get('node -e 0'));
let ok = true;
console.log(`runs per command: ${runs}`);
for (const c of cases) {
  const m = median(times.get(c.name));
  const ratio = m / base;
  const verdict = c.target ? (ratio <= c.target ? `ok (target <= ${c.target}x)` : `OVER target ${c.target}x`) : 'baseline';
  if (c.target && ratio > c.target) ok = false;
  console.log(`${c.name.padEnd(30)} median ${m.toFixed(1).padStart(6)} ms  ratio ${ratio.toFixed(2)}x  ${verdict}`);
}
process.exitCode = ok || process.env.BENCH_NO_FAIL ? 0 : 1;
