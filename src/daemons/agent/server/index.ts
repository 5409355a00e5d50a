/** The node agent's servers: the HTTPS API (10250), the read-only port (10255) and the health port (10248). */
export {AgentServers, type AgentServersOptions, type BoundPorts, type ListenerName} from './servers.js';
export {serverConfigFromOptions, unsupportedServerSettings} from './config.js';
export {AgentMetrics, type AgentMetricsOptions} from './metrics.js';
export type {AgentServerConfig, AgentServerProviders, RunningContainerState, RunningPod, ServedContainerStatus, ServedPod} from './types.js';
export type {ContainerStats, CPUStats, FsStats, MemoryStats, NetworkStats, NodeStats, PodReference, PodStats, RlimitStats, RuntimeStats, Summary, SwapStats} from './summary.js';
export {onlyCpuAndMemory} from './summary.js';
export {parseContainerLogQuery, type ContainerLogOptions} from './log-options.js';
export {formatTimestamp, parseCriLine, renderContainerLog, tailStart, type CriRecord, type RenderOptions} from './cri-log.js';
export {routeRequest, DEBUGGING_PATHS, type Route} from './routes.js';
export {podList, runningPodList, type PodListDocument} from './pod-list.js';
export {generatedCertificateNames, loadServingCertificate, tlsServerOptions, type ServingCertificate} from './tls.js';
