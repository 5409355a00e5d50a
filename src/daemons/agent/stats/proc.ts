/**
 * CPU and memory of processes and of the machine, from procfs, as cAdvisor reports them for
 * containers. A container here is a process group (the runtime starts each container detached, so
 * its process leads a group its children join), so its usage is the sum over the group's live
 * members. Parsing is pure; reading takes an injected file reader, so tests run on recorded files.
 */
import {promises as fs} from 'node:fs';
import path from 'node:path';

/** Linux's USER_HZ: /proc reports CPU times in these ticks (100 on every architecture Node runs on). */
export const TICKS_PER_SECOND = 100;
const NANOS_PER_TICK = 1e9 / TICKS_PER_SECOND;
/** /proc/<pid>/stat's rss is in pages; 4 KiB on the x86-64 and arm64 kernels this runs on. */
export const PAGE_BYTES = 4096;

export interface ProcessStat {
  pid: number;
  /** Process group id. */
  pgrp: number;
  /** utime + stime + cutime + cstime: its own CPU and that of the children it has reaped, in ticks. */
  cpuTicks: number;
  rssBytes: number;
}

/**
 * One line of /proc/<pid>/stat. The command name (field 2) is in parentheses and may hold spaces
 * or parentheses itself, so fields are counted from the last `)`.
 */
export function parseProcessStat(text: string): ProcessStat | undefined {
  const close = text.lastIndexOf(')');
  const open = text.indexOf('(');
  if (close < 0 || open < 0) return undefined;
  const pid = Number.parseInt(text.slice(0, open), 10);
  // Fields after the name, numbered from 3 (state) as in proc(5).
  const rest = text.slice(close + 2).trim().split(/\s+/);
  const field = (n: number) => Number(rest[n - 3]);
  const values = [field(5), field(14), field(15), field(16), field(17), field(24)];
  if (!Number.isFinite(pid) || values.some((v) => !Number.isFinite(v))) return undefined;
  const [pgrp, utime, stime, cutime, cstime, rss] = values as [number, number, number, number, number, number];
  return {pid, pgrp, cpuTicks: utime + stime + cutime + cstime, rssBytes: rss * PAGE_BYTES};
}

export interface GroupUsage {
  /** Cumulative CPU of the group's live members (and what they reaped), in nanoseconds. */
  cpuNanos: number;
  rssBytes: number;
  processes: number;
}

/** Sums the processes of each asked-for process group. */
export function usageByGroup(stats: Iterable<ProcessStat>, groups: ReadonlySet<number>): Map<number, GroupUsage> {
  const out = new Map<number, GroupUsage>();
  for (const s of stats) {
    if (!groups.has(s.pgrp)) continue;
    const u = out.get(s.pgrp) ?? {cpuNanos: 0, rssBytes: 0, processes: 0};
    u.cpuNanos += s.cpuTicks * NANOS_PER_TICK;
    u.rssBytes += s.rssBytes;
    u.processes += 1;
    out.set(s.pgrp, u);
  }
  return out;
}

/**
 * The machine's cumulative busy CPU time in nanoseconds, from the aggregate `cpu` line of /proc/stat:
 * every state but idle and iowait (guest time is already inside user and nice).
 */
export function parseMachineCpu(text: string): number {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) throw new Error('/proc/stat has no aggregate cpu line');
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
  const busy = [user, nice, system, irq, softirq, steal].reduce<number>((sum, v) => sum + (v ?? 0), 0);
  return busy * NANOS_PER_TICK;
}

export interface ProcReader {
  procDir?: string;
  readFile?: (file: string) => Promise<string>;
  readdir?: (dir: string) => Promise<string[]>;
}

/** Every process's stat (those that end while being read are left out). */
export async function readProcessStats(reader: ProcReader = {}): Promise<ProcessStat[]> {
  const procDir = reader.procDir ?? '/proc';
  const readFile = reader.readFile ?? ((file: string) => fs.readFile(file, 'utf8'));
  const readdir = reader.readdir ?? ((dir: string) => fs.readdir(dir));
  const pids = (await readdir(procDir)).filter((name) => /^\d+$/.test(name));
  const stats = await Promise.all(
    pids.map(async (pid) => {
      try {
        return parseProcessStat(await readFile(path.join(procDir, pid, 'stat')));
      } catch {
        return undefined; // it ended
      }
    }),
  );
  return stats.filter((s): s is ProcessStat => s !== undefined);
}

export async function readMachineCpu(reader: ProcReader = {}): Promise<number> {
  const readFile = reader.readFile ?? ((file: string) => fs.readFile(file, 'utf8'));
  return parseMachineCpu(await readFile(path.join(reader.procDir ?? '/proc', 'stat')));
}
