/**
 * The AgentConfiguration file (`apiVersion: agent.config.orch.io/v1beta1`) as its JSON shape: durations
 * as Go duration strings (`1m0s`), quantities as strings (`10Mi`), maps as objects. The comment on each
 * field names the flag that overrides it. Generated from ./schema.ts (the option table plus the
 * config-only fields); keep the two in step.
 */

export interface ConfigTaint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

export interface ConfigMemoryReservation {
  numaNode: number;
  /** `memory` and `hugepages-<size>` quantities. */
  limits: Record<string, string>;
}

export interface ConfigVmoduleEntry {
  filePattern: string;
  verbosity: number;
}

export interface AgentConfiguration {
  /** `agent.config.orch.io/v1beta1` AgentConfiguration, or `kubelet.config.k8s.io/v1beta1` KubeletConfiguration with upstream's names. */
  apiVersion: string;
  kind: string;
  address?: string; // --address
  agentCgroups?: string; // --agent-cgroups
  allowedUnsafeSysctls?: string[]; // --allowed-unsafe-sysctls
  authentication?: {
    anonymous?: {
      enabled?: boolean; // --anonymous-auth
    };
    webhook?: {
      cacheTTL?: string; // --authentication-token-webhook-cache-ttl
      enabled?: boolean; // --authentication-token-webhook
    };
    x509?: {
      clientCAFile?: string; // --client-ca-file
    };
  };
  authorization?: {
    mode?: string; // --authorization-mode
    webhook?: {
      cacheAuthorizedTTL?: string; // --authorization-webhook-cache-authorized-ttl
      cacheUnauthorizedTTL?: string; // --authorization-webhook-cache-unauthorized-ttl
    };
  };
  cgroupDriver?: string; // --cgroup-driver
  cgroupRoot?: string; // --cgroup-root
  cgroupsPerQOS?: boolean; // --cgroups-per-qos
  clusterDNS?: string[]; // --cluster-dns
  clusterDomain?: string; // --cluster-domain
  configMapAndSecretChangeDetectionStrategy?: string; // config only
  containerLogMaxFiles?: number; // --container-log-max-files
  containerLogMaxSize?: string; // --container-log-max-size
  containerLogMaxWorkers?: number; // config only
  containerLogMonitorInterval?: string; // config only
  containerRuntimeEndpoint?: string; // --container-runtime-endpoint
  contentType?: string; // --orch-api-content-type
  cpuCFSQuota?: boolean; // --cpu-cfs-quota
  cpuCFSQuotaPeriod?: string; // --cpu-cfs-quota-period
  cpuManagerPolicy?: string; // --cpu-manager-policy
  cpuManagerPolicyOptions?: Record<string, string>; // --cpu-manager-policy-options
  cpuManagerReconcilePeriod?: string; // --cpu-manager-reconcile-period
  enableContentionProfiling?: boolean; // --contention-profiling
  enableControllerAttachDetach?: boolean; // --enable-controller-attach-detach
  enableDebugFlagsHandler?: boolean; // config only
  enableDebuggingHandlers?: boolean; // --enable-debugging-handlers
  enableProfilingHandler?: boolean; // config only
  enableServer?: boolean; // --enable-server
  enableSystemLogHandler?: boolean; // config only
  enforceNodeAllocatable?: string[]; // --enforce-node-allocatable
  eventBurst?: number; // --event-burst
  eventRecordQPS?: number; // --event-qps
  evictionHard?: Record<string, string>; // --eviction-hard
  evictionMaxPodGracePeriod?: number; // --eviction-max-pod-grace-period
  evictionMinimumReclaim?: Record<string, string>; // --eviction-minimum-reclaim
  evictionPressureTransitionPeriod?: string; // --eviction-pressure-transition-period
  evictionSoft?: Record<string, string>; // --eviction-soft
  evictionSoftGracePeriod?: Record<string, string>; // --eviction-soft-grace-period
  failCgroupV1?: boolean; // --fail-cgroupv1
  failSwapOn?: boolean; // --fail-swap-on
  featureGates?: Record<string, boolean>; // --feature-gates
  fileCheckFrequency?: string; // --file-check-frequency
  hairpinMode?: string; // --hairpin-mode
  healthzBindAddress?: string; // --healthz-bind-address
  healthzPort?: number; // --healthz-port
  httpCheckFrequency?: string; // --http-check-frequency
  imageGCHighThresholdPercent?: number; // --image-gc-high-threshold
  imageGCLowThresholdPercent?: number; // --image-gc-low-threshold
  imageMaximumGCAge?: string; // config only
  imageMinimumGCAge?: string; // --minimum-image-ttl-duration
  imageServiceEndpoint?: string; // --image-service-endpoint
  kernelMemcgNotification?: boolean; // --kernel-memcg-notification
  localStorageCapacityIsolation?: boolean; // --local-storage-capacity-isolation
  logging?: {
    flushFrequency?: string; // --log-flush-frequency
    format?: string; // --logging-format
    options?: {
      text?: {
        infoBufferSize?: string; // --log-text-info-buffer-size
        splitStream?: boolean; // --log-text-split-stream
      };
    };
    verbosity?: number; // --v
    vmodule?: ConfigVmoduleEntry[]; // --vmodule
  };
  makeIPTablesUtilChains?: boolean; // --make-iptables-util-chains
  maxOpenFiles?: number; // --max-open-files
  maxParallelImagePulls?: number; // config only
  maxPods?: number; // --max-pods
  memoryManagerPolicy?: string; // --memory-manager-policy
  memoryThrottlingFactor?: number; // config only
  mergeDefaultEvictionSettings?: boolean; // config only
  nodeLeaseDurationSeconds?: number; // config only
  nodeStatusMaxImages?: number; // --node-status-max-images
  nodeStatusReportFrequency?: string; // config only
  nodeStatusUpdateFrequency?: string; // --node-status-update-frequency
  oomScoreAdj?: number; // --oom-score-adj
  orchAPIBurst?: number; // --orch-api-burst
  orchAPIQPS?: number; // --orch-api-qps
  orchReserved?: Record<string, string>; // --orch-reserved
  orchReservedCgroup?: string; // --orch-reserved-cgroup
  podCIDR?: string; // --pod-cidr
  podPidsLimit?: number; // --pod-max-pids
  podsPerCore?: number; // --pods-per-core
  port?: number; // --port
  protectKernelDefaults?: boolean; // --protect-kernel-defaults
  providerID?: string; // --provider-id
  qosReserved?: Record<string, string>; // --qos-reserved
  readOnlyPort?: number; // --read-only-port
  registerNode?: boolean; // --register-node
  registerWithTaints?: ConfigTaint[]; // --register-with-taints
  registryBurst?: number; // --registry-burst
  registryPullQPS?: number; // --registry-qps
  reservedMemory?: ConfigMemoryReservation[]; // --reserved-memory
  reservedSystemCPUs?: string; // --reserved-cpus
  resolvConf?: string; // --resolv-conf
  rotateCertificates?: boolean; // --rotate-certificates
  runOnce?: boolean; // --runonce
  runtimeRequestTimeout?: string; // --runtime-request-timeout
  seccompDefault?: boolean; // --seccomp-default
  serializeImagePulls?: boolean; // --serialize-image-pulls
  serverTLSBootstrap?: boolean; // --rotate-server-certificates
  shutdownGracePeriod?: string; // config only
  shutdownGracePeriodCriticalPods?: string; // config only
  staticPodPath?: string; // --pod-manifest-path
  staticPodURL?: string; // --manifest-url
  staticPodURLHeader?: Record<string, string[]>; // --manifest-url-header
  streamingConnectionIdleTimeout?: string; // --streaming-connection-idle-timeout
  syncFrequency?: string; // --sync-frequency
  systemCgroups?: string; // --system-cgroups
  systemReserved?: Record<string, string>; // --system-reserved
  systemReservedCgroup?: string; // --system-reserved-cgroup
  tlsCertFile?: string; // --tls-cert-file
  tlsCipherSuites?: string[]; // --tls-cipher-suites
  tlsMinVersion?: string; // --tls-min-version
  tlsPrivateKeyFile?: string; // --tls-private-key-file
  topologyManagerPolicy?: string; // --topology-manager-policy
  topologyManagerPolicyOptions?: Record<string, string>; // --topology-manager-policy-options
  topologyManagerScope?: string; // --topology-manager-scope
  volumePluginDir?: string; // --volume-plugin-dir
  volumeStatsAggPeriod?: string; // --volume-stats-agg-period
}
