/**
 * Measures the eviction signals on this machine (reference/eviction.md §1). All I/O is injected so the
 * parsing can be tested on recorded /proc files and the collector on a fake filesystem.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Observations, SignalObservation } from './types.js';

/** The fields of fs.statfs the signals need. */
export interface FsStats {
  bsize: number;
  blocks: number;
  bavail: number;
  files: number;
  ffree: number;
}

export interface SignalSources {
  /** The agent's --root-dir: its filesystem is nodefs (and, for the process runtime, imagefs and containerfs). */
  rootDir: string;
  /** Where procfs is mounted (default /proc). */
  procDir?: string;
  readFile?: (file: string) => Promise<string>;
  statfs?: (dir: string) => Promise<FsStats>;
  /** Only for counting tasks when /proc/loadavg cannot be read. */
  readdir?: (dir: string) => Promise<string[]>;
  now?: () => number;
  /**
   * The pods' memory, for allocatableMemory.available: the memory allocatable to pods (capacity minus
   * reserved) and the sum of the pods' working sets. Without it that signal is not observed.
   */
  pods?: { allocatableMemoryBytes: number; workingSetBytes: number };
}

export interface CollectedSignals {
  observations: Observations;
  /** Signals that could not be measured, with why (upstream logs and skips them). */
  errors: Partial<Record<string, string>>;
  time: number;
}

const defaultReadFile = (file: string) => fs.readFile(file, 'utf8');
const defaultStatfs = (dir: string) => fs.statfs(dir);
const defaultReaddir = (dir: string) => fs.readdir(dir);

export async function collectSignals(sources: SignalSources): Promise<CollectedSignals> {
  const procDir = sources.procDir ?? '/proc';
  const readFile = sources.readFile ?? defaultReadFile;
  const statfs = sources.statfs ?? defaultStatfs;
  const readdir = sources.readdir ?? defaultReaddir;
  const time = (sources.now ?? Date.now)();
  const observations: Observations = {};
  const errors: Partial<Record<string, string>> = {};
  const attempt = async (name: string, measure: () => Promise<void>) => {
    try {
      await measure();
    } catch (error) {
      errors[name] = (error as Error).message;
    }
  };

  await Promise.all([
    attempt('memory', async () => {
      observations['memory.available'] = { ...memoryFromMeminfo(await readFile(path.join(procDir, 'meminfo'))), time };
    }),
    attempt('fs', async () => {
      const stats = await statfs(sources.rootDir);
      const bytes: SignalObservation = { available: stats.bavail * stats.bsize, capacity: stats.blocks * stats.bsize, time };
      const inodes: SignalObservation = { available: stats.ffree, capacity: stats.files, time };
      // The process runtime keeps images (none) and writable dirs under --root-dir: one filesystem for all.
      for (const prefix of ['nodefs', 'imagefs', 'containerfs'] as const) {
        observations[`${prefix}.available`] = { ...bytes };
        // Filesystems without inodes (btrfs reports 0 files) have no inode stats, as upstream skips them.
        if (stats.files > 0) observations[`${prefix}.inodesFree`] = { ...inodes };
      }
    }),
    attempt('pid', async () => {
      observations['pid.available'] = { ...(await measurePids(procDir, readFile, readdir)), time };
    }),
  ]);
  if (sources.pods) {
    const { allocatableMemoryBytes, workingSetBytes } = sources.pods;
    // Upstream: the pods cgroup's available bytes (limit - working set) over available + working set.
    const available = Math.max(0, allocatableMemoryBytes - workingSetBytes);
    observations['allocatableMemory.available'] = { available, capacity: available + workingSetBytes, time };
  }
  return { observations, errors, time };
}

/** Fields of /proc/meminfo in bytes. */
export function parseMeminfo(text: string): Record<string, number> {
  const fields: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^([^:]+):\s+(\d+)(?:\s+kB)?\s*$/.exec(line);
    if (match) fields[match[1]] = Number(match[2]) * (line.trimEnd().endsWith('kB') ? 1024 : 1);
  }
  return fields;
}

/**
 * memory.available = capacity - working set, the node's usage minus its inactive file cache (what can
 * be dropped without reclaiming anything that matters). Computed from /proc/meminfo as the container
 * runtime library does for the root cgroup (usage = MemTotal - MemFree), so no cgroup access is needed.
 * This is deliberately not MemAvailable: upstream's signal differs from `free` and so does ours.
 */
export function memoryFromMeminfo(text: string): { available: number; capacity: number } {
  const fields = parseMeminfo(text);
  const total = fields.MemTotal;
  const free = fields.MemFree;
  if (total === undefined || free === undefined) throw new Error('/proc/meminfo lacks MemTotal or MemFree');
  const inactiveFile = fields['Inactive(file)'] ?? 0;
  const workingSet = Math.max(0, total - free - inactiveFile);
  return { available: total - workingSet, capacity: total };
}

/**
 * pid.available: capacity = min(pid_max, threads-max) (both bound the tasks of the system), used =
 * the kernel's count of tasks from /proc/loadavg (its 4th field, `running/total`), which upstream prefers
 * to sysinfo(2) because the latter truncates above 65535. Falls back to counting /proc/<pid>/task entries.
 */
async function measurePids(
  procDir: string,
  readFile: (file: string) => Promise<string>,
  readdir: (dir: string) => Promise<string[]>,
): Promise<{ available: number; capacity: number }> {
  const limits: number[] = [];
  for (const name of ['pid_max', 'threads-max']) {
    try {
      const limit = Number.parseInt((await readFile(path.join(procDir, 'sys/kernel', name))).trim(), 10);
      if (Number.isFinite(limit)) limits.push(limit);
    } catch {
      // Either file alone still bounds the tasks.
    }
  }
  if (limits.length === 0) throw new Error('neither kernel.pid_max nor kernel.threads-max is readable');
  const capacity = Math.min(...limits);
  let tasks: number;
  try {
    tasks = taskCountFromLoadavg(await readFile(path.join(procDir, 'loadavg')));
  } catch {
    tasks = await countTasks(procDir, readdir);
  }
  return { available: capacity - tasks, capacity };
}

/** `1.36 3.49 4.53 2/3518 3715089` -> 3518. */
export function taskCountFromLoadavg(text: string): number {
  const fields = text.trim().split(/\s+/);
  const total = fields.length >= 5 ? /^\d+\/(\d+)$/.exec(fields[3])?.[1] : undefined;
  if (total === undefined) throw new Error(`cannot parse /proc/loadavg: ${JSON.stringify(text)}`);
  return Number(total);
}

async function countTasks(procDir: string, readdir: (dir: string) => Promise<string[]>): Promise<number> {
  const pids = (await readdir(procDir)).filter((name) => /^\d+$/.test(name));
  let tasks = 0;
  for (const pid of pids) {
    try {
      tasks += (await readdir(path.join(procDir, pid, 'task'))).length;
    } catch {
      tasks += 1; // The process exited between the two reads, or its tasks are hidden: count it once.
    }
  }
  return tasks;
}
