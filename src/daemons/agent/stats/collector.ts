/**
 * The agent's summary statistics (/stats/summary, upstream's statsapi.Summary) with CPU and memory
 * of each pod's and container's processes and of the node, read from procfs when asked. CPU rates
 * need two samples: the first request for a new series samples twice, a short span apart; later
 * ones use the kept baseline (./cpu-rate.ts), so they cost one read of /proc.
 */
import type {ContainerStats, CPUStats, PodStats, Summary} from '../server/summary.js';
import {CpuRates, type CpuRate} from './cpu-rate.js';
import {readMachineCpu, readProcessStats, usageByGroup, type GroupUsage, type ProcReader, type ProcessStat} from './proc.js';

export interface StatsPod {
  uid: string;
  name: string;
  namespace: string;
  startTime?: string;
  containers: {name: string; pid?: number; startTime?: string}[];
}

export interface NodeSignals {
  time: number;
  memory?: {available: number; capacity: number};
  fs?: {available: number; capacity: number};
  inodes?: {available: number; capacity: number};
}

export interface StatsCollectorOptions {
  nodeName: string;
  /** When the agent started (RFC 3339): the node's and the system's start time. */
  startTime: string;
  /** The pods the runtime runs now, with each container's process (the leader of its group). */
  pods: () => readonly StatsPod[];
  /** The node's memory and file system, as the eviction manager measures them. */
  signals: () => Promise<NodeSignals>;
  proc?: ProcReader;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  rates?: CpuRates;
}

interface Sample {
  at: number;
  machineNanos: number;
  processes: ProcessStat[];
}

export class StatsCollector {
  private readonly rates: CpuRates;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: StatsCollectorOptions) {
    this.rates = options.rates ?? new CpuRates();
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  async summary(): Promise<Summary> {
    const pods = this.options.pods();
    const ids = seriesIds(pods);
    let sample = await this.sample();
    if (ids.some((id) => !this.rates.ready(id, sample.at))) {
      // A series seen for the first time: take its baseline now and a second sample a moment later.
      this.observe(pods, sample);
      await this.sleep(this.rates.minSpanMs);
      sample = await this.sample();
    }
    const rates = this.observe(pods, sample);
    this.rates.retain(new Set(ids));
    return this.build(pods, sample, rates, await this.options.signals());
  }

  private async sample(): Promise<Sample> {
    const [processes, machineNanos] = await Promise.all([readProcessStats(this.options.proc), readMachineCpu(this.options.proc)]);
    return {at: this.now(), machineNanos, processes};
  }

  /** Feeds every series of a sample to the rate keeper; returns each series' rate and usage. */
  private observe(pods: readonly StatsPod[], sample: Sample): Map<string, {rate?: CpuRate; usage?: GroupUsage}> {
    const groups = new Set(pods.flatMap((p) => p.containers.flatMap((c) => (c.pid !== undefined ? [c.pid] : []))));
    const byGroup = usageByGroup(sample.processes, groups);
    const out = new Map<string, {rate?: CpuRate; usage?: GroupUsage}>();
    out.set(NODE, {rate: this.rates.observe(NODE, {nanos: sample.machineNanos, at: sample.at})});
    for (const pod of pods) {
      const podUsage: GroupUsage = {cpuNanos: 0, rssBytes: 0, processes: 0};
      for (const c of pod.containers) {
        const usage = c.pid !== undefined ? byGroup.get(c.pid) : undefined;
        if (!usage) continue;
        podUsage.cpuNanos += usage.cpuNanos;
        podUsage.rssBytes += usage.rssBytes;
        podUsage.processes += usage.processes;
        out.set(containerId(pod, c.name), {usage, rate: this.rates.observe(containerId(pod, c.name), {nanos: usage.cpuNanos, at: sample.at})});
      }
      out.set(podId(pod), {usage: podUsage, rate: this.rates.observe(podId(pod), {nanos: podUsage.cpuNanos, at: sample.at})});
    }
    return out;
  }

  private build(pods: readonly StatsPod[], sample: Sample, series: Map<string, {rate?: CpuRate; usage?: GroupUsage}>, signals: NodeSignals): Summary {
    const at = new Date(sample.at).toISOString();
    const cpu = (nanos: number, rate?: CpuRate): CPUStats => ({time: at, ...(rate ? {usageNanoCores: rate.usageNanoCores} : {}), usageCoreNanoSeconds: Math.round(nanos)});
    const memory = (bytes: number) => ({time: at, usageBytes: bytes, workingSetBytes: bytes, rssBytes: bytes});
    const podStats: PodStats[] = pods.map((pod) => {
      const podSeries = series.get(podId(pod));
      const containers: ContainerStats[] = pod.containers.map((c) => {
        const s = series.get(containerId(pod, c.name));
        const stats: ContainerStats = {name: c.name, startTime: c.startTime ?? pod.startTime ?? at};
        if (s?.usage) Object.assign(stats, {cpu: cpu(s.usage.cpuNanos, s.rate), memory: memory(s.usage.rssBytes)});
        return stats;
      });
      const usage = podSeries?.usage ?? {cpuNanos: 0, rssBytes: 0, processes: 0};
      return {
        podRef: {name: pod.name, namespace: pod.namespace, uid: pod.uid},
        startTime: pod.startTime ?? at,
        containers,
        cpu: cpu(usage.cpuNanos, podSeries?.rate),
        memory: memory(usage.rssBytes),
        process_stats: {process_count: usage.processes},
      };
    });
    const {memory: mem, fs, inodes} = signals;
    const signalsAt = new Date(signals.time).toISOString();
    return {
      node: {
        nodeName: this.options.nodeName,
        startTime: this.options.startTime,
        cpu: cpu(sample.machineNanos, series.get(NODE)?.rate),
        ...(mem
          ? {memory: {time: signalsAt, availableBytes: mem.available, usageBytes: mem.capacity - mem.available, workingSetBytes: mem.capacity - mem.available}}
          : {}),
        ...(fs
          ? {fs: {time: signalsAt, availableBytes: fs.available, capacityBytes: fs.capacity, usedBytes: fs.capacity - fs.available, ...(inodes ? {inodesFree: inodes.available, inodes: inodes.capacity, inodesUsed: inodes.capacity - inodes.available} : {})}}
          : {}),
      },
      pods: podStats,
    };
  }
}

const NODE = 'node';
const podId = (pod: StatsPod) => `pod/${pod.uid}`;
const containerId = (pod: StatsPod, name: string) => `container/${pod.uid}/${name}`;

function seriesIds(pods: readonly StatsPod[]): string[] {
  return [NODE, ...pods.flatMap((p) => [podId(p), ...p.containers.filter((c) => c.pid !== undefined).map((c) => containerId(p, c.name))])];
}
