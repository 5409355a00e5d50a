import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  acquireLockFile,
  checkCgroupV1,
  checkKernelDefaults,
  checkSwap,
  contentionPath,
  lockContention,
  nodeLockDeps,
  validateNodeLabels,
  waitForLockFile,
  watchLockContention,
} from '../../src/daemons/agent/config/index.js';

describe('--node-labels', () => {
  const accepted: Array<[string, string]> = [
    ['team', 'a'],
    ['example.com/rack', 'r1'],
    ['agent.orch.io/role', 'edge'],
    ['sub.agent.orch.io/x', ''],
    ['node.orch.io/exclude-from-lb', 'true'],
    ['orch.io/hostname', 'n1'],
    ['orch.io/arch', 'amd64'],
    ['beta.orch.io/os', 'linux'],
    ['failure-domain.beta.orch.io/zone', 'z1'],
    ['topology.orch.io/region', 'eu'],
    ['node.orch.io/instance-type', 'm5'],
    ['kubernetes.io/hostname', 'n1'], // upstream's domain is not reserved in orch
  ];
  it.each(accepted)('accepts %s=%s', (key, value) => {
    expect(validateNodeLabels({ [key]: value })).toBeUndefined();
  });

  const refused = ['node-role.orch.io/worker', 'orch.io/role', 'app.orch.io/name', 'topology.orch.io/rack', 'node-restriction.orch.io/x'];
  it.each(refused)('refuses %s with the allowed prefixes and names', (key) => {
    expect(validateNodeLabels({ [key]: 'v' })).toBe(
      `unknown 'orch.io' labels specified with --node-labels: [${key}]\n` +
        "--node-labels in the 'orch.io' namespace must begin with an allowed prefix (agent.orch.io, node.orch.io) or be in the specifically allowed set " +
        '(beta.orch.io/arch, beta.orch.io/instance-type, beta.orch.io/os, failure-domain.beta.orch.io/region, failure-domain.beta.orch.io/zone, ' +
        'orch.io/arch, orch.io/hostname, orch.io/os, node.orch.io/instance-type, topology.orch.io/region, topology.orch.io/zone)',
    );
  });

  it('lists every refused key, sorted', () => {
    expect(validateNodeLabels({ 'z.orch.io/a': '', 'a.orch.io/b': '', ok: '' })).toMatch(/^unknown 'orch.io' labels specified with --node-labels: \[a\.orch\.io\/b z\.orch\.io\/a\]\n/);
  });

  it.each([
    ['bad key', { 'a/b/c': 'v' }, "invalid node labels: 'a/b/c' - "],
    ['bad value', { team: 'not valid!' }, "invalid node labels: 'not valid!' - "],
  ])('refuses a %s', (_name, labels, message) => {
    expect(validateNodeLabels(labels)).toContain(message);
  });
});

const reader = (files: Record<string, string>) => (path: string) => files[path];

describe('--fail-swap-on', () => {
  const header = 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n';
  it.each([
    ['header only: swap off', header, true, undefined],
    ['an active swap partition', `${header}/dev/nvme0n1p3    partition\t2097472\t\t0\t\t-2\n`, true, 'running with swap on is not supported, please disable swap or set --fail-swap-on flag to false'],
    ['swap on but the check is off', `${header}/swap.img  file  3954684  1451840 -1\n`, false, undefined],
  ])('%s', (_name, content, failSwapOn, expected) => {
    expect(checkSwap(failSwapOn, reader({ '/proc/swaps': content }))).toBe(expected);
  });

  it('treats a missing /proc/swaps as swap off', () => {
    expect(checkSwap(true, reader({}))).toBeUndefined();
  });
});

describe('--fail-cgroupv1', () => {
  it('passes on cgroup v2 (cgroup.controllers at the root)', () => {
    expect(checkCgroupV1(true, (p) => p === '/sys/fs/cgroup/cgroup.controllers')).toBeUndefined();
  });
  it('refuses cgroup v1, naming the option', () => {
    expect(checkCgroupV1(true, () => false)).toMatch(/^agent is configured to not run on a host using cgroup v1\..*set --fail-cgroupv1 flag to false$/);
  });
  it('lets cgroup v1 through when the check is off', () => {
    expect(checkCgroupV1(false, () => false)).toBeUndefined();
  });
});

describe('--protect-kernel-defaults', () => {
  const good: Record<string, string> = {
    '/proc/sys/vm/overcommit_memory': '1\n',
    '/proc/sys/vm/panic_on_oom': '0\n',
    '/proc/sys/kernel/panic': '10\n',
    '/proc/sys/kernel/panic_on_oops': '1\n',
    '/proc/sys/kernel/keys/root_maxkeys': '1000000\n',
    '/proc/sys/kernel/keys/root_maxbytes': '25000000\n',
  };
  it('passes when every tunable has the expected value', () => {
    expect(checkKernelDefaults(true, reader(good))).toBeUndefined();
  });
  it('names the one tunable that differs and the option', () => {
    expect(checkKernelDefaults(true, reader({ ...good, '/proc/sys/vm/overcommit_memory': '0\n' }))).toBe(
      'invalid kernel flag: vm.overcommit_memory, expected value: 1, actual value: 0; please set them with sysctl or set --protect-kernel-defaults flag to false',
    );
  });
  it('lists several as an aggregate', () => {
    const message = checkKernelDefaults(true, reader({ ...good, '/proc/sys/kernel/panic': '0', '/proc/sys/kernel/keys/root_maxbytes': '20000' }));
    expect(message).toMatch(/^\[invalid kernel flag: kernel\.panic, expected value: 10, actual value: 0, invalid kernel flag: kernel\.keys\.root_maxbytes, expected value: 25000000, actual value: 20000\]/);
  });
  it('reports a tunable it cannot read', () => {
    const { ['/proc/sys/kernel/panic']: _gone, ...rest } = good;
    expect(checkKernelDefaults(true, reader(rest))).toContain('cannot read kernel flag kernel.panic from /proc/sys/kernel/panic');
  });
  it('does nothing when the option is off', () => {
    expect(checkKernelDefaults(false, reader({}))).toBeUndefined();
  });
});

describe('--lock-file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agent-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Real files, with a chosen pid and a chosen set of live processes. */
  const depsFor = (pid: number, alive: number[]) => ({ ...nodeLockDeps(), pid, isProcessAlive: (p: number) => alive.includes(p) });

  it('creates the lock file with the pid and removes it on release', () => {
    const path = join(dir, 'agent.lock');
    const lock = acquireLockFile(path, depsFor(100, [100]));
    expect(lock.acquired).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('100\n');
    if (lock.acquired) lock.release();
    expect(() => readFileSync(path)).toThrow();
  });

  it('refuses while a live process holds it', () => {
    const path = join(dir, 'agent.lock');
    acquireLockFile(path, depsFor(100, [100, 200]));
    const second = acquireLockFile(path, depsFor(200, [100, 200]));
    expect(second).toMatchObject({ acquired: false, holderPid: 100 });
    if (!second.acquired) expect(second.message).toContain(`unable to acquire file lock on "${path}": it is held by running process 100`);
  });

  it('takes over a lock left by a dead process', () => {
    const path = join(dir, 'agent.lock');
    writeFileSync(path, '100\n');
    expect(acquireLockFile(path, depsFor(200, [200])).acquired).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('200\n');
  });

  it.each([
    ['no request, lock ours', '100\n', undefined, [100], undefined],
    ['a live process asks for the lock', '100\n', '200\n', [100, 200], 'process 200 asked for the lock file'],
    ['a dead process asked', '100\n', '200\n', [100], undefined],
    ['the lock file was removed', undefined, undefined, [100], 'the lock file was removed'],
    ['the lock file was taken over', '300\n', undefined, [100, 300], 'the lock file now belongs to process 300'],
  ])('contention: %s', (_name, lockText, requestText, alive, expected) => {
    expect(lockContention(100, lockText, requestText, (p) => alive.includes(p))).toBe(expected);
  });

  it('--exit-on-lock-contention: the waiting agent asks, the holder is told, the waiter gets the lock', async () => {
    const path = join(dir, 'agent.lock');
    const alive = [100, 200];
    const holder = acquireLockFile(path, depsFor(100, alive));
    if (!holder.acquired) throw new Error('holder should have the lock');
    const told = new Promise<string>((done) => {
      watchLockContention(path, (reason) => {
        holder.release(); // what the agent does before exiting
        done(reason);
      }, { intervalMs: 10, deps: depsFor(100, alive) });
    });
    const waiter = waitForLockFile(path, { intervalMs: 10, deps: depsFor(200, alive) });
    expect(await told).toBe('process 200 asked for the lock file');
    const lock = await waiter;
    expect(lock.acquired).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('200\n');
    expect(() => readFileSync(contentionPath(path))).toThrow();
  });
});
