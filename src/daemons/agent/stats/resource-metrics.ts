/**
 * The agent's /metrics/resource: upstream's resource metrics collector (pkg/kubelet/metrics/
 * collectors/resource_metrics.go), the Prometheus text metrics-server scrapes, computed from the same
 * summary as /stats/summary. Families in name order, each sample with its timestamp in ms, numbers
 * written as Go's strconv 'g' writes them (what client_golang prints). Pure.
 */
import type {ContainerStats, CPUStats, MemoryStats, Summary} from '../server/summary.js';

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: {labels?: Record<string, string>; value: number; at?: number}[];
}

/** A float as Go's strconv.FormatFloat(v, 'g', -1, 64) writes it: `1.5`, `1e+06`, `1.234e-05`. */
export function goFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return '0';
  const [mantissa, exponent] = v.toExponential().split('e') as [string, string];
  const exp = Number(exponent);
  // Shortest 'g': exponent form when the decimal exponent is below -4 or at least 6.
  if (exp >= -4 && exp < 6) return String(v);
  return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

const escape = (value: string) => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function render(families: Family[]): string {
  let out = '';
  for (const f of [...families].sort((a, b) => a.name.localeCompare(b.name))) {
    out += `# HELP ${f.name} ${f.help}\n# TYPE ${f.name} ${f.type}\n`;
    for (const s of f.samples) {
      const labels = s.labels ? `{${Object.entries(s.labels).map(([k, v]) => `${k}="${escape(v)}"`).join(',')}}` : '';
      out += `${f.name}${labels} ${goFloat(s.value)}${s.at !== undefined ? ` ${s.at}` : ''}\n`;
    }
  }
  return out;
}

const cpuSeconds = (cpu?: CPUStats) => (cpu?.usageCoreNanoSeconds !== undefined ? {value: cpu.usageCoreNanoSeconds / 1e9, at: Date.parse(cpu.time)} : undefined);
const workingSet = (memory?: MemoryStats) => (memory?.workingSetBytes !== undefined ? {value: memory.workingSetBytes, at: Date.parse(memory.time)} : undefined);

/** The exposition of a summary; `scrapeError` when the summary could not be had. */
export function resourceMetrics(summary: Summary | undefined): string {
  const family = (name: string, type: Family['type'], help: string): Family => ({name, type, help, samples: []});
  const nodeCpu = family('node_cpu_usage_seconds_total', 'counter', '[STABLE] Cumulative cpu time consumed by the node in core-seconds');
  const nodeMemory = family('node_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the node in bytes');
  const containerCpu = family('container_cpu_usage_seconds_total', 'counter', '[STABLE] Cumulative cpu time consumed by the container in core-seconds');
  const containerMemory = family('container_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the container in bytes');
  const containerStart = family('container_start_time_seconds', 'gauge', '[STABLE] Start time of the container since unix epoch in seconds');
  const podCpu = family('pod_cpu_usage_seconds_total', 'counter', '[STABLE] Cumulative cpu time consumed by the pod in core-seconds');
  const podMemory = family('pod_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the pod in bytes');
  const scrapeError = family('resource_scrape_error', 'gauge', '[STABLE] 1 if there was an error while getting container metrics, 0 otherwise');
  scrapeError.samples.push({value: summary ? 0 : 1});
  if (summary) {
    const push = (f: Family, sample: {value: number; at: number} | undefined, labels?: Record<string, string>) => {
      if (sample) f.samples.push({...sample, labels});
    };
    push(nodeCpu, cpuSeconds(summary.node.cpu));
    push(nodeMemory, workingSet(summary.node.memory));
    for (const pod of summary.pods) {
      const podLabels = {namespace: pod.podRef.namespace, pod: pod.podRef.name};
      push(podCpu, cpuSeconds(pod.cpu), podLabels);
      push(podMemory, workingSet(pod.memory), podLabels);
      for (const c of pod.containers as ContainerStats[]) {
        const labels = {container: c.name, ...podLabels};
        push(containerCpu, cpuSeconds(c.cpu), labels);
        push(containerMemory, workingSet(c.memory), labels);
        if (c.cpu || c.memory) containerStart.samples.push({labels, value: Date.parse(c.startTime) / 1000});
      }
    }
  }
  return render([nodeCpu, nodeMemory, containerCpu, containerMemory, containerStart, podCpu, podMemory, scrapeError]);
}
