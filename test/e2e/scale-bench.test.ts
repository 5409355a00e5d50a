/**
 * bench/scale.mjs --quick keeps working (issue 16): the whole benchmark at its tiny size (50
 * simulated nodes, 500 pods, the controller manager, 1,000 watchers, kill -9 of the API server) on
 * each engine, every figure printed with its target. Times are not asserted (a shared machine); what
 * must hold whatever the load is asserted: nothing acknowledged lost, every pod listed once, the
 * fleet carrying on after the API server's restart.
 */
import {describe, expect, it} from '@jest/globals';
import {spawn} from 'node:child_process';
import {join} from 'node:path';
import {repoRoot} from '../helpers/run-orch.js';
import {etcdBinary} from '../helpers/etcd.js';

const FIGURES = [
  'pods created (deployments, steady rate)',
  'pods running (creation start -> all Ready)',
  'mutating calls p99',
  'single-object reads p99',
  'namespace-scoped lists p99',
  'cluster-scoped lists p99',
  'watch delivery p99 (1000 watchers)',
  'API server RSS',
  'kill -9 -> ready',
  'acknowledged pods listed once',
  'acknowledged lease renewals kept',
  'deployment pods after restart',
  'fleet leases renewed after restart',
];
/** Figures about correctness, not speed: they hold on any machine. */
const MUST_HOLD = ['acknowledged pods listed once', 'acknowledged lease renewals kept', 'deployment pods after restart', 'fleet leases renewed after restart'];

function engines(): string[] {
  try {
    etcdBinary();
    return ['sqlite', 'etcd'];
  } catch {
    return ['sqlite'];
  }
}

function runBench(args: string[]): Promise<{code: number | null; output: string}> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(repoRoot, 'bench', 'scale.mjs'), ...args], {cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe']});
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => resolve({code, output}));
  });
}

describe('bench/scale.mjs --quick', () => {
  it('runs to the end on each engine and prints every figure with its target; nothing is lost', async () => {
    const list = engines();
    const {code, output} = await runBench(['--quick', '--engines', list.join(',')]);
    // 0: every target met; 1: some figure missed its target (printed). Anything else, or no final line, is a crash.
    if (code !== 0 && code !== 1) throw new Error(`exit ${code}:\n${output.slice(-4000)}`);
    expect(output).toMatch(/load after the run/);
    for (const engine of list) {
      const section = output.split(`\n${engine}, quick (50 nodes / 500 pods):\n`)[1]?.split('\n\n')[0];
      if (section === undefined) throw new Error(`no table for ${engine}:\n${output.slice(-4000)}`);
      for (const figure of FIGURES) {
        const row = section.split('\n').find((line) => line.includes(figure));
        if (!row) throw new Error(`${engine}: no row "${figure}":\n${section}`);
        if (MUST_HOLD.includes(figure) && !/^\s+ok /.test(row)) throw new Error(`${engine}: ${figure} does not hold:\n${section}\n${output.slice(-3000)}`);
      }
      // Latency rows carry their target and ratio.
      expect(section).toMatch(/mutating calls p99\s+[\d.]+ ms\s+<= 1000\.0 ms\s+ratio [\d.]+/);
    }
  }, 480_000);
});
