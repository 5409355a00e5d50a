/**
 * A cgroup v2 per pod carrying the pod's cpu and memory limits, where the host lets the agent create
 * one (a unified hierarchy with a writable subtree_control). Elsewhere pods run without limits and
 * one log line says so. The limits follow upstream's pod cgroup: the sum of the app containers'
 * limits, or the largest init container's when that is larger, and no limit when any app container
 * sets none.
 */
import fs from 'node:fs';
import path from 'node:path';
import {parseQuantity} from '../../../options/quantity.js';
import type {Container, Pod} from './types.js';

export interface PodLimits {
  /** CPU cores (0.5 = 500m); undefined for no limit. */
  cpu?: number;
  /** Bytes; undefined for no limit. */
  memory?: number;
}

function sumLimits(containers: Container[], resource: 'cpu' | 'memory'): number | undefined {
  let total = 0;
  for (const c of containers) {
    const text = c.resources?.limits?.[resource];
    if (text === undefined) return undefined;
    total += parseQuantity(text).value;
  }
  return total;
}

export function podLimits(pod: Pod): PodLimits {
  const limit = (resource: 'cpu' | 'memory'): number | undefined => {
    const apps = sumLimits(pod.spec.containers, resource);
    if (apps === undefined) return undefined;
    const inits = (pod.spec.initContainers ?? []).map((c) => sumLimits([c], resource));
    if (inits.some((v) => v === undefined)) return undefined;
    return Math.max(apps, ...(inits as number[]));
  };
  return {cpu: limit('cpu'), memory: limit('memory')};
}

export const CFS_PERIOD_US = 100_000;

/** The cpu.max line for a CPU limit: quota and period in microseconds (minimum quota 1 ms, as upstream). */
export function cpuMax(cores: number | undefined): string {
  if (cores === undefined) return `max ${CFS_PERIOD_US}`;
  return `${Math.max(1000, Math.ceil(cores * CFS_PERIOD_US))} ${CFS_PERIOD_US}`;
}

export function memoryMax(bytes: number | undefined): string {
  return bytes === undefined ? 'max' : String(Math.floor(bytes));
}

export interface CgroupAvailability {
  available: boolean;
  /** Why not, for the one log line. */
  reason?: string;
}

/**
 * Creates `<root>/<parent>/pod<uid>` cgroups. `root` is where cgroup2 is mounted
 * (/sys/fs/cgroup); tests point it at a plain directory laid out like one.
 */
export class PodCgroups {
  readonly parentDir: string;

  constructor(private readonly root = '/sys/fs/cgroup', parent = 'orch-pods') {
    this.parentDir = path.join(root, parent);
  }

  check(): CgroupAvailability {
    const controllers = path.join(this.root, 'cgroup.controllers');
    const subtree = path.join(this.root, 'cgroup.subtree_control');
    if (!fs.existsSync(controllers) || !fs.existsSync(subtree)) {
      return {available: false, reason: `no cgroup v2 hierarchy at ${this.root}`};
    }
    try {
      fs.accessSync(subtree, fs.constants.W_OK);
    } catch {
      return {available: false, reason: `${subtree} is not writable`};
    }
    const offered = fs.readFileSync(controllers, 'utf8').split(/\s+/);
    const missing = ['cpu', 'memory'].filter((c) => !offered.includes(c));
    if (missing.length > 0) return {available: false, reason: `controllers not available: ${missing.join(', ')}`};
    return {available: true};
  }

  /** Makes the parent cgroup, enabling cpu and memory for its children. */
  prepare(): void {
    enableControllers(path.join(this.root, 'cgroup.subtree_control'));
    fs.mkdirSync(this.parentDir, {recursive: true});
    enableControllers(path.join(this.parentDir, 'cgroup.subtree_control'));
  }

  podDir(uid: string): string {
    return path.join(this.parentDir, `pod${uid}`);
  }

  /** Creates (or updates) the pod's cgroup with its limits. */
  ensurePod(uid: string, limits: PodLimits): string {
    const dir = this.podDir(uid);
    fs.mkdirSync(dir, {recursive: true});
    fs.writeFileSync(path.join(dir, 'cpu.max'), cpuMax(limits.cpu));
    fs.writeFileSync(path.join(dir, 'memory.max'), memoryMax(limits.memory));
    return dir;
  }

  /** Moves a process into the pod's cgroup; its later children are born there. */
  addProcess(uid: string, pid: number): void {
    fs.writeFileSync(path.join(this.podDir(uid), 'cgroup.procs'), `${pid}\n`, {flag: 'a'});
  }

  /** The pod's oom_kill count (memory.events); 0 when unreadable. */
  oomKills(uid: string): number {
    try {
      const events = fs.readFileSync(path.join(this.podDir(uid), 'memory.events'), 'utf8');
      return Number(/^oom_kill (\d+)$/m.exec(events)?.[1] ?? 0);
    } catch {
      return 0;
    }
  }

  /** Removes an empty pod cgroup (after its processes are gone). */
  removePod(uid: string): void {
    try {
      fs.rmdirSync(this.podDir(uid));
    } catch {
      // Still busy or already gone: nothing to do for a best-effort cleanup.
    }
  }
}

function enableControllers(subtreeControl: string): void {
  const enabled = fs.existsSync(subtreeControl) ? fs.readFileSync(subtreeControl, 'utf8').split(/\s+/) : [];
  const wanted = ['cpu', 'memory'].filter((c) => !enabled.includes(c));
  if (wanted.length > 0) fs.writeFileSync(subtreeControl, wanted.map((c) => `+${c}`).join(' '));
}
