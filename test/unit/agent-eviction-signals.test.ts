import { describe, expect, it } from '@jest/globals';
import os from 'node:os';
import { parseEvictionDurations, parseEvictionQuantities, parseEvictionThresholds } from '../../src/options/value-eviction.js';
import {
  INITIAL_EVICTION_STATE,
  buildEvictionConfig,
  collectSignals,
  evaluate,
  formatBinarySI,
  formatDecimalSI,
  memoryFromMeminfo,
  taskCountFromLoadavg,
  type FsStats,
} from '../../src/daemons/agent/eviction/index.js';
import { Gi, Ki, podOf } from './agent-eviction-fixtures.js';

const MEMINFO = `MemTotal:       24684084 kB
MemFree:        22513332 kB
MemAvailable:   23219916 kB
Buffers:           40824 kB
Cached:           758576 kB
Inactive(file):   429592 kB
HugePages_Total:       0
`;

describe('signal parsing', () => {
  it('memory.available is capacity minus working set (usage less inactive file cache), not MemAvailable', () => {
    // working set = (24684084 - 22513332 - 429592) kB; available = MemFree + Inactive(file).
    expect(memoryFromMeminfo(MEMINFO)).toEqual({ available: (22513332 + 429592) * Ki, capacity: 24684084 * Ki });
  });

  it('refuses a meminfo without MemTotal', () => {
    expect(() => memoryFromMeminfo('MemFree: 1 kB\n')).toThrow('MemTotal');
  });

  it.each([
    ['1.36 3.49 4.53 2/3518 3715089\n', 3518],
    ['0.00 0.00 0.00 1/1 1', 1],
  ])('task count from loadavg %j', (text, count) => {
    expect(taskCountFromLoadavg(text)).toBe(count);
  });

  it.each([[0, '0'], [1023, '1023'], [1024, '1Ki'], [1025, '1025'], [800 * 1024 ** 2, '800Mi'], [1536 * 1024 ** 2, '1536Mi'], [3 * Gi, '3Gi']])(
    'binary SI %d -> %s',
    (amount, text) => expect(formatBinarySI(amount)).toBe(text),
  );

  it.each([[0, '0'], [900, '900'], [1000, '1k'], [32000, '32k'], [16310930, '16310930'], [2_000_000, '2M']])('decimal SI %d -> %s', (amount, text) =>
    expect(formatDecimalSI(amount)).toBe(text),
  );
});

describe('collectSignals with injected sources', () => {
  const files: Record<string, string> = {
    '/proc/meminfo': MEMINFO,
    '/proc/sys/kernel/pid_max': '32768\n',
    '/proc/sys/kernel/threads-max': '192730\n',
    '/proc/loadavg': '7.42 6.33 5.37 3/138 17222\n',
  };
  const readFile = async (file: string) => {
    if (!(file in files)) throw new Error(`ENOENT ${file}`);
    return files[file];
  };
  const stats: FsStats = { bsize: 4096, blocks: 1000, bavail: 250, files: 5000, ffree: 4000 };

  it('measures every signal, imagefs and containerfs being the root dir filesystem', async () => {
    const seen: string[] = [];
    const result = await collectSignals({
      rootDir: '/var/lib/agent',
      readFile,
      statfs: async (dir) => (seen.push(dir), stats),
      now: () => 42,
      pods: { allocatableMemoryBytes: 6 * Gi, workingSetBytes: 2 * Gi },
    });
    expect(seen).toEqual(['/var/lib/agent']);
    expect(result.errors).toEqual({});
    const o = result.observations;
    expect(o['pid.available']).toEqual({ available: 32768 - 138, capacity: 32768, time: 42 });
    for (const fs of ['nodefs', 'imagefs', 'containerfs'] as const) {
      expect(o[`${fs}.available`]).toEqual({ available: 250 * 4096, capacity: 1000 * 4096, time: 42 });
      expect(o[`${fs}.inodesFree`]).toEqual({ available: 4000, capacity: 5000, time: 42 });
    }
    expect(o['allocatableMemory.available']).toEqual({ available: 4 * Gi, capacity: 6 * Gi, time: 42 });
  });

  it('skips what it cannot measure and says why; counts tasks in /proc without loadavg', async () => {
    const { '/proc/loadavg': _, '/proc/meminfo': __, ...rest } = files;
    const tree: Record<string, string[]> = { '/proc': ['1', '2', 'self', 'meminfo'], '/proc/1/task': ['1'], '/proc/2/task': ['2', '3', '4'] };
    const result = await collectSignals({
      rootDir: '/r',
      readFile: async (f) => rest[f] ?? Promise.reject(new Error(`ENOENT ${f}`)),
      statfs: async () => ({ ...stats, files: 0, ffree: 0 }),
      readdir: async (d) => tree[d] ?? Promise.reject(new Error('ENOENT')),
    });
    expect(result.observations['memory.available']).toBeUndefined();
    expect(result.errors.memory).toContain('ENOENT');
    expect(result.observations['pid.available']?.available).toBe(32768 - 4);
    expect(result.observations['nodefs.inodesFree']).toBeUndefined(); // no inode stats on this filesystem
    expect(result.observations['allocatableMemory.available']).toBeUndefined();
  });
});

describe('configuration', () => {
  const ids = (config: ReturnType<typeof buildEvictionConfig>) => config.thresholds.map((t) => t.id);
  it('defaults apply when --eviction-hard is never set, with the allocatable copy', () => {
    const config = buildEvictionConfig({});
    expect(ids(config)).toEqual([
      'hard:memory.available',
      'hard:nodefs.available',
      'hard:nodefs.inodesFree',
      'hard:imagefs.available',
      'hard:imagefs.inodesFree',
      'hard:allocatableMemory.available',
    ]);
    expect(config.pressureTransitionPeriodMs).toBe(300_000);
    expect(config.maxPodGracePeriodSeconds).toBe(0);
  });

  it('setting --eviction-hard replaces the defaults, unless merging', () => {
    const hard = parseEvictionThresholds('memory.available<1Gi,nodefs.available<0%');
    expect(ids(buildEvictionConfig({ hard, enforceNodeAllocatablePods: false }))).toEqual(['hard:memory.available']);
    expect(ids(buildEvictionConfig({ hard, enforceNodeAllocatablePods: false, mergeDefaultEvictionSettings: true }))).toEqual([
      'hard:memory.available',
      'hard:nodefs.inodesFree',
      'hard:imagefs.available',
      'hard:imagefs.inodesFree',
    ]);
  });

  it('attaches grace periods and minimum reclaim; soft without grace is refused', () => {
    const config = buildEvictionConfig({
      hard: parseEvictionThresholds('memory.available<1Gi'),
      soft: parseEvictionThresholds('memory.available<1.5Gi'),
      softGracePeriods: parseEvictionDurations('memory.available=1m30s'),
      minimumReclaim: parseEvictionQuantities('memory.available=500Mi'),
      enforceNodeAllocatablePods: false,
    });
    expect(config.thresholds.map((t) => [t.id, t.gracePeriodMs, t.minReclaim?.quantity?.text])).toEqual([
      ['hard:memory.available', 0, '500Mi'],
      ['soft:memory.available', 90_000, '500Mi'],
    ]);
    expect(() => buildEvictionConfig({ soft: parseEvictionThresholds('nodefs.available<20%') })).toThrow(
      'grace period must be specified for the soft eviction threshold nodefs.available',
    );
  });
});

describe('on this machine', () => {
  it('collectSignals returns sane values', async () => {
    const before = Date.now();
    const { observations: o, errors, time } = await collectSignals({ rootDir: os.tmpdir() });
    expect(errors).toEqual({});
    expect(time).toBeGreaterThanOrEqual(before);
    const memory = o['memory.available']!;
    expect(memory.capacity).toBe(os.totalmem());
    expect(memory.available).toBeGreaterThan(0);
    expect(memory.available).toBeLessThanOrEqual(memory.capacity);
    // Available to unprivileged users is what upstream watches, at least what os.freemem() calls free.
    expect(memory.available).toBeGreaterThanOrEqual(os.freemem() * 0.5);
    const disk = o['nodefs.available']!;
    expect(disk.available).toBeGreaterThan(0);
    expect(disk.available).toBeLessThanOrEqual(disk.capacity);
    const pids = o['pid.available']!;
    expect(pids.capacity).toBeGreaterThanOrEqual(300);
    expect(pids.available).toBeGreaterThan(0);
    expect(pids.available).toBeLessThan(pids.capacity);
    expect(o['imagefs.available']).toEqual(disk);
  });

  it('thresholds just above the current values trip every pressure condition; far below, none', async () => {
    const { observations } = await collectSignals({ rootDir: os.tmpdir() });
    const above = (signal: 'memory.available' | 'nodefs.available' | 'pid.available', extra: number) =>
      `${signal}<${observations[signal]!.available + extra}`;
    const tripping = buildEvictionConfig({
      hard: parseEvictionThresholds([above('memory.available', Gi), above('nodefs.available', Gi), above('pid.available', 1000)].join(',')),
      enforceNodeAllocatablePods: false,
    });
    const pods = [podOf('best-effort', { memory: 64 * 1024 ** 2 }), podOf('guaranteed', { memoryRequest: '1Gi', memory: 64 * 1024 ** 2 })];
    const decision = evaluate(INITIAL_EVICTION_STATE, observations, tripping, Date.now(), pods);
    expect(decision.conditions).toEqual({ MemoryPressure: true, DiskPressure: true, PIDPressure: true });
    expect(decision.evict?.pod.name).toBe('best-effort');
    expect(decision.evict?.message).toMatch(/^The node was low on resource: memory\. Threshold quantity: \S+, available: \S+\. Container app was using 64Mi, request is 0, has larger consumption of memory\. $/);

    const quiet = buildEvictionConfig({ hard: parseEvictionThresholds('memory.available<1,nodefs.available<1,pid.available<1'), enforceNodeAllocatablePods: false });
    const calm = evaluate(INITIAL_EVICTION_STATE, observations, quiet, Date.now(), pods);
    expect(calm.conditions).toEqual({ MemoryPressure: false, DiskPressure: false, PIDPressure: false });
    expect(calm.evict).toBeUndefined();
  });
});
