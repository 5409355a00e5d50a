export {StatsCollector, type StatsCollectorOptions, type StatsPod, type NodeSignals} from './collector.js';
export {CpuRates, type CpuRate, type CpuSample} from './cpu-rate.js';
export {parseProcessStat, parseMachineCpu, usageByGroup, readProcessStats, type ProcessStat, type ProcReader} from './proc.js';
export {resourceMetrics} from './resource-metrics.js';
