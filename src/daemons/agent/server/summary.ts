/**
 * The `/stats/summary` document, upstream's statsapi.Summary (pkg/kubelet/apis/stats/v1alpha1): the
 * node's and each pod's resource usage. Times are RFC3339 strings; absent numbers are left out, as
 * upstream's optional pointers are.
 */

export interface CPUStats {
  time: string;
  usageNanoCores?: number;
  usageCoreNanoSeconds?: number;
}

export interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

export interface SwapStats {
  time: string;
  swapAvailableBytes?: number;
  swapUsageBytes?: number;
}

export interface FsStats {
  time: string;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes?: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}

export interface NetworkStats {
  time: string;
  name?: string;
  rxBytes?: number;
  rxErrors?: number;
  txBytes?: number;
  txErrors?: number;
}

export interface RuntimeStats {
  imageFs?: FsStats;
  containerFs?: FsStats;
}

export interface RlimitStats {
  time: string;
  maxpid?: number;
  curproc?: number;
}

export interface ContainerStats {
  name: string;
  startTime: string;
  cpu?: CPUStats;
  memory?: MemoryStats;
  rootfs?: FsStats;
  logs?: FsStats;
  swap?: SwapStats;
}

export interface PodReference {
  name: string;
  namespace: string;
  uid: string;
}

export interface PodStats {
  podRef: PodReference;
  startTime: string;
  containers: ContainerStats[];
  cpu?: CPUStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  'ephemeral-storage'?: FsStats;
  process_stats?: {process_count?: number};
  swap?: SwapStats;
}

export interface NodeStats {
  nodeName: string;
  systemContainers?: ContainerStats[];
  startTime: string;
  cpu?: CPUStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  fs?: FsStats;
  runtime?: RuntimeStats;
  rlimit?: RlimitStats;
  swap?: SwapStats;
}

export interface Summary {
  node: NodeStats;
  pods: PodStats[];
}

function pick<T extends object, K extends keyof T>(value: T, keys: readonly K[]): Pick<T, K> {
  const picked = {} as Pick<T, K>;
  for (const key of keys) if (value[key] !== undefined) picked[key] = value[key];
  return picked;
}

const CONTAINER_CPU_AND_MEMORY = ['name', 'startTime', 'cpu', 'memory', 'swap'] as const;

/**
 * `?only_cpu_and_memory=true`: the fields upstream's GetCPUAndMemoryStats fills (the metrics
 * pipeline's lighter request); file systems, network and process counts are left out.
 */
export function onlyCpuAndMemory(summary: Summary): Summary {
  const container = (c: ContainerStats) => pick(c, CONTAINER_CPU_AND_MEMORY);
  const node: NodeStats = pick(summary.node, ['nodeName', 'startTime', 'cpu', 'memory', 'swap']);
  if (summary.node.systemContainers) node.systemContainers = summary.node.systemContainers.map(container);
  return {
    node,
    pods: summary.pods.map((pod) => ({...pick(pod, ['podRef', 'startTime', 'cpu', 'memory', 'swap']), containers: pod.containers.map(container)})),
  };
}
