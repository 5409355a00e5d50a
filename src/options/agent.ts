/**
 * Options of `orch agent` (the node agent), declared as data from seed 3 ("Node agent and patch
 * command"): every option table of that document except the client's tables (see ./patch.ts).
 *
 * Conventions of this table:
 * - Options the seed repeats (the Limits table restates several limits) are declared once, at their
 *   first appearance; `section` names that first table.
 * - `configKey` is the AgentConfiguration field the option overrides. Upstream spells the file's
 *   fields like its flags, so the orch renames of the flags apply to the fields too
 *   (`--orch-reserved` -> `orchReserved`, `--agent-cgroups` -> `agentCgroups`,
 *   `--orch-api-qps` -> `orchAPIQPS`). Nested fields are dotted paths (`authentication.webhook.cacheTTL`,
 *   `logging.format`). Flag-only options (process-level, never shared between nodes) have none.
 * - `default` is omitted where the seed says `none`/`empty` or describes a computed value, except where
 *   `none`/`None` is itself the value the option takes (the policy options).
 */
import {clientNamesOption} from './names-option.js';
import type { OptionTable } from './spec.js';

/** Deprecation note for the options that belong in the configuration file. */
const USE_CONFIG_FILE = 'set it in the --config file instead';
/** Deprecation note of the container garbage-collection options. */
const USE_EVICTION = 'use --eviction-hard or --eviction-soft instead';

const SERVING = 'Node agent: serving';
const SOURCES = 'Node agent: configuration and sources';
const REGISTRATION = 'Node agent: registration and API server connection';
const RUNTIME = 'Node agent: runtime, resources and pods';
const DIAGNOSTICS = 'Node agent: diagnostics';
const AUTHENTICATION = 'Authentication';
const EVENTS = 'Events';
const LIMITS = 'Limits';

export const agentOptions: OptionTable = [
  // ---- Node agent: serving ----
  {
    name: 'address', type: 'ip', seedType: 'string', seedDefault: '0.0.0.0', default: '0.0.0.0',
    help: 'IP address the agent server listens on; 0.0.0.0 or :: listens everywhere.',
    section: SERVING, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'address',
  },
  {
    // Upstream validation rejects port 0 for the main server (only the optional ports may be 0).
    name: 'port', type: 'int32', seedType: 'int32', seedDefault: '10250', default: '10250', min: 1, max: 65535,
    help: 'TCP port of the agent server.',
    section: SERVING, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'port',
  },
  {
    name: 'read-only-port', type: 'int32', seedType: 'int32', seedDefault: '10255', default: '10255', min: 0, max: 65535,
    help: 'Port of the unauthenticated read-only server; 0 turns it off.',
    section: SERVING, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'readOnlyPort',
  },
  {
    name: 'healthz-bind-address', type: 'ip', seedType: 'string', seedDefault: '127.0.0.1', default: '127.0.0.1',
    help: 'IP address the health endpoint listens on.',
    section: SERVING, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'healthzBindAddress',
  },
  {
    name: 'healthz-port', type: 'int32', seedType: 'int32', seedDefault: '10248', default: '10248', min: 0, max: 65535,
    help: 'Port of the local health endpoint; 0 turns it off.',
    section: SERVING, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'healthzPort',
  },
  {
    name: 'enable-server', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Run the agent server at all.',
    section: SERVING, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'enableServer',
  },
  {
    name: 'enable-debugging-handlers', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Serve the log, exec and run endpoints used for debugging containers.',
    section: SERVING, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'enableDebuggingHandlers',
  },
  {
    name: 'contention-profiling', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Also collect block profiles when profiling is on.',
    section: SERVING, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'enableContentionProfiling',
  },
  {
    name: 'tls-cert-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Serving certificate (PEM); without it and its key, a self-signed pair is made in --cert-dir.',
    section: SERVING, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'tlsCertFile',
  },
  {
    name: 'tls-private-key-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Private key (PEM) of --tls-cert-file.',
    section: SERVING, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'tlsPrivateKeyFile',
  },
  {
    name: 'tls-cipher-suites', type: 'cipherSuites', seedType: 'strings', seedDefault: 'runtime defaults',
    help: 'Cipher suites the server offers, comma-separated; the runtime defaults when unset.',
    section: SERVING, implemented: true, repeatable: true, configKey: 'tlsCipherSuites',
  },
  {
    name: 'tls-min-version', type: 'tlsVersion', seedType: 'string', seedDefault: 'none',
    help: 'Oldest TLS version the server accepts (VersionTLS10 to VersionTLS13).',
    section: SERVING, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'tlsMinVersion',
  },
  {
    name: 'cert-dir', type: 'string', seedType: 'string', seedDefault: '/var/lib/agent/pki', default: '/var/lib/agent/pki',
    help: 'Where TLS certificates are kept; unused when --tls-cert-file and its key are given.',
    section: SERVING, implemented: true,
  },
  {
    name: 'root-dir', type: 'string', seedType: 'string', seedDefault: '/var/lib/agent', default: '/var/lib/agent',
    help: 'State directory of the agent (volume mounts and other files).',
    section: SERVING, implemented: true,
  },

  // ---- Node agent: configuration and sources ----
  {
    name: 'config', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'AgentConfiguration file to start from; flags given on the command line win over it.',
    section: SOURCES, implemented: true,
  },
  {
    name: 'config-dir', type: 'string', seedType: 'string', seedDefault: 'empty',
    help: 'Directory of .conf drop-in files merged over the configuration, in lexical order.',
    section: SOURCES, implemented: true,
  },
  {
    name: 'feature-gates', type: 'featureGates', seedType: 'pairs `key=True|False`', seedDefault: 'none',
    help: 'Turn features on or off, as Name=true,Other=false.',
    section: SOURCES, implemented: false, repeatable: true, configKey: 'featureGates',
  },
  {
    name: 'pod-manifest-path', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Static pod file, or directory of them, that the agent runs (dot files are skipped).',
    section: SOURCES, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'staticPodPath',
  },
  {
    name: 'file-check-frequency', type: 'duration', seedType: 'duration', seedDefault: '20s', default: '20s',
    help: 'How often the static pod path is re-read.',
    section: SOURCES, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'fileCheckFrequency',
  },
  {
    name: 'manifest-url', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'URL that serves more pods for the agent to run.',
    section: SOURCES, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'staticPodURL',
  },
  {
    name: 'manifest-url-header', type: 'multimap', seedType: 'colonSeparatedMultimapStringString', seedDefault: 'none',
    help: 'HTTP header sent to --manifest-url, as name:value; repeat for more headers.',
    section: SOURCES, deprecated: USE_CONFIG_FILE, implemented: true, repeatable: true, configKey: 'staticPodURLHeader',
  },
  {
    name: 'http-check-frequency', type: 'duration', seedType: 'duration', seedDefault: '20s', default: '20s',
    help: 'How often --manifest-url is fetched again.',
    section: SOURCES, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'httpCheckFrequency',
  },
  {
    name: 'runonce', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Start the static and URL pods once, then exit (cannot be combined with --enable-server).',
    section: SOURCES, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'runOnce',
  },
  {
    name: 'sync-frequency', type: 'duration', seedType: 'duration', seedDefault: '1m0s', default: '1m0s',
    help: 'Longest wait between two reconciliations of running containers with their pods.',
    section: SOURCES, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'syncFrequency',
  },
  {
    name: 'lock-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'File the agent locks so only one agent runs (alpha).',
    section: SOURCES, implemented: true,
  },
  {
    name: 'exit-on-lock-contention', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Exit when another process wants the --lock-file.',
    section: SOURCES, implemented: true,
  },

  // ---- Node agent: registration and API server connection ----
  {
    name: 'orchconfig', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Orchconfig file for reaching the API server; without it the agent runs standalone.',
    section: REGISTRATION, implemented: true,
  },
  {
    name: 'bootstrap-orchconfig', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Orchconfig used to obtain a client certificate when the --orchconfig file is missing.',
    section: REGISTRATION, implemented: false,
  },
  {
    name: 'register-node', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Create this node\'s Node object in the API server.',
    section: REGISTRATION, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'registerNode',
  },
  {
    name: 'register-with-taints', type: 'taints', seedType: '[]Taint', seedDefault: 'none',
    help: 'Taints the node registers with, as key=value:Effect,...',
    section: REGISTRATION, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'registerWithTaints',
  },
  {
    name: 'node-labels', type: 'keyValue', seedType: 'key=value pairs', seedDefault: 'none',
    help: 'Labels the node registers with; labels in the reserved domain (orch.io) only with an allowed prefix or name.',
    section: REGISTRATION, implemented: true, repeatable: true,
  },
  {
    name: 'hostname-override', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Node name to use instead of the host name.',
    section: REGISTRATION, implemented: true,
  },
  {
    // One address or a dual-stack pair ("10.0.0.5,fd00::5"), and `::` as "prefer IPv6": more than the
    // `ip` type allows, so a plain list that the agent checks.
    name: 'node-ip', type: 'strings', seedType: 'string', seedDefault: 'none',
    help: 'Node address, or an IPv4,IPv6 pair; :: prefers the default IPv6 address.',
    section: REGISTRATION, implemented: true,
  },
  {
    name: 'provider-id', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Identifier of this machine at the cloud provider.',
    section: REGISTRATION, implemented: true, configKey: 'providerID',
  },
  {
    name: 'cloud-provider', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Cloud provider: empty for none, external for an out-of-process one.',
    section: REGISTRATION, implemented: false,
  },
  {
    name: 'node-status-update-frequency', type: 'duration', seedType: 'duration', seedDefault: '10s', default: '10s',
    help: 'How often the node status is computed and posted; keep it below the controller manager\'s grace period.',
    section: REGISTRATION, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'nodeStatusUpdateFrequency',
  },
  {
    name: 'node-status-max-images', type: 'int32', seedType: 'int32', seedDefault: '50', default: '50', min: -1,
    help: 'Most images listed in the node status; -1 lists all.',
    section: REGISTRATION, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'nodeStatusMaxImages',
  },
  {
    name: 'orch-api-qps', type: 'int32', seedType: 'int32', seedDefault: '50', default: '50', min: 0,
    help: 'Requests per second to the API server, events and heartbeats excluded; 0 means 50.',
    section: REGISTRATION, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'orchAPIQPS',
  },
  {
    name: 'orch-api-burst', type: 'int32', seedType: 'int32', seedDefault: '100', default: '100', min: 0,
    help: 'Burst of requests allowed above --orch-api-qps; 0 means 100.',
    section: REGISTRATION, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'orchAPIBurst',
  },
  {
    name: 'orch-api-content-type', type: 'string', seedType: 'string',
    seedDefault: 'application/vnd.orch.protobuf', default: 'application/vnd.orch.protobuf', namesDefault: (n) => n.protobufMediaType,
    help: 'Content type of the agent\'s requests to the API server.',
    section: REGISTRATION, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'contentType',
  },
  {
    name: 'rotate-certificates', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Renew the client certificate through the API server before it expires.',
    section: REGISTRATION, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'rotateCertificates',
  },
  {
    name: 'rotate-server-certificates', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Request and renew the serving certificate through approved signing requests.',
    section: REGISTRATION, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'serverTLSBootstrap',
  },

  // ---- Node agent: runtime, resources and pods ----
  {
    name: 'container-runtime-endpoint', type: 'string', seedType: 'string',
    seedDefault: 'a unix socket of the bundled runtime',
    help: 'Endpoint of the container runtime service (unix socket on Linux).',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'containerRuntimeEndpoint',
  },
  {
    name: 'image-service-endpoint', type: 'string', seedType: 'string', seedDefault: 'same as the runtime endpoint',
    help: 'Endpoint of the image service, when it differs from the runtime endpoint.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'imageServiceEndpoint',
  },
  {
    name: 'runtime-cgroups', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Absolute cgroup to create and run the container runtime in.',
    section: RUNTIME, implemented: false,
  },
  {
    name: 'runtime-request-timeout', type: 'duration', seedType: 'duration', seedDefault: '2m0s', default: '2m0s',
    help: 'Deadline of runtime calls other than pull, logs, exec and attach; late calls are retried.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'runtimeRequestTimeout',
  },
  {
    name: 'image-credential-provider-bin-dir', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Directory holding the image credential provider plugins.',
    section: RUNTIME, implemented: false,
  },
  {
    name: 'image-credential-provider-config', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Credential provider configuration file, or a directory of them.',
    section: RUNTIME, implemented: false,
  },
  {
    name: 'serialize-image-pulls', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Pull one image at a time.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'serializeImagePulls',
  },
  {
    name: 'registry-qps', type: 'int32', seedType: 'int32', seedDefault: '5', default: '5', min: 0,
    help: 'Image pulls per second; 0 removes the limit.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'registryPullQPS',
  },
  {
    name: 'registry-burst', type: 'int32', seedType: 'int32', seedDefault: '10', default: '10', min: 0,
    help: 'Pulls allowed in a burst above --registry-qps (only when that is above 0).',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'registryBurst',
  },
  {
    name: 'cgroup-driver', type: 'string', enum: ['cgroupfs', 'systemd'], seedType: 'string',
    seedDefault: 'cgroupfs', default: 'cgroupfs',
    help: 'How the agent manages cgroups on the host.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'cgroupDriver',
  },
  {
    name: 'cgroup-root', type: 'string', seedType: 'string', seedDefault: 'empty',
    help: 'Root cgroup for pods; unset leaves the choice to the runtime.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'cgroupRoot',
  },
  {
    name: 'cgroups-per-qos', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Create a cgroup per QoS class and per pod.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'cgroupsPerQOS',
  },
  {
    name: 'agent-cgroups', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Absolute cgroup the agent itself runs in.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'agentCgroups',
  },
  {
    name: 'system-cgroups', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Cgroup for host processes not yet in one; undoing it needs a reboot.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'systemCgroups',
  },
  {
    name: 'fail-cgroupv1', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Refuse to start on a cgroup v1 host.',
    section: RUNTIME, implemented: true, configKey: 'failCgroupV1',
  },
  {
    name: 'fail-swap-on', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Refuse to start while swap is on.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'failSwapOn',
  },
  {
    name: 'cpu-cfs-quota', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Enforce CPU limits with CFS quota.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'cpuCFSQuota',
  },
  {
    name: 'cpu-cfs-quota-period', type: 'duration', seedType: 'duration', seedDefault: '100ms', default: '100ms',
    help: 'CFS quota period; other values need the CustomCPUCFSQuotaPeriod gate.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'cpuCFSQuotaPeriod',
  },
  {
    name: 'cpu-manager-policy', type: 'string', enum: ['none', 'static'], seedType: 'string',
    seedDefault: 'none', default: 'none',
    help: 'CPU manager policy: none shares all CPUs, static pins exclusive CPUs.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'cpuManagerPolicy',
  },
  {
    name: 'cpu-manager-policy-options', type: 'keyValue', seedType: 'key=value pairs', seedDefault: 'none',
    help: 'Fine-tuning of the CPU manager policy, as key=value.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, repeatable: true, configKey: 'cpuManagerPolicyOptions',
  },
  {
    name: 'cpu-manager-reconcile-period', type: 'duration', seedType: 'duration', seedDefault: '10s', default: '10s',
    help: 'How often the CPU manager reconciles assignments (alpha).',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'cpuManagerReconcilePeriod',
  },
  {
    name: 'memory-manager-policy', type: 'string', enum: ['None', 'Static'], seedType: 'string',
    seedDefault: 'None', default: 'None',
    help: 'Memory manager policy: None, or Static for NUMA-aware reservations.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'memoryManagerPolicy',
  },
  {
    name: 'topology-manager-policy', type: 'string', enum: ['none', 'best-effort', 'restricted', 'single-numa-node'],
    seedType: 'string', seedDefault: 'none', default: 'none',
    help: 'How strictly pods are aligned to NUMA nodes.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'topologyManagerPolicy',
  },
  {
    name: 'topology-manager-policy-options', type: 'keyValue', seedType: 'key=value pairs', seedDefault: 'none',
    help: 'Fine-tuning of the topology manager policy, as key=value.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, repeatable: true, configKey: 'topologyManagerPolicyOptions',
  },
  {
    name: 'topology-manager-scope', type: 'string', enum: ['container', 'pod'], seedType: 'string',
    seedDefault: 'container', default: 'container',
    help: 'Whether topology alignment is decided per container or per pod.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'topologyManagerScope',
  },
  {
    name: 'reserved-cpus', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'CPU list (such as 0-1,6) kept for the system; overrides the cpu of the reserved options.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'reservedSystemCPUs',
  },
  {
    name: 'reserved-memory', type: 'reservedMemory', seedType: 'reserved-memory', seedDefault: 'none',
    help: 'Memory kept back per NUMA node, as 0:memory=1Gi,hugepages-1M=2Gi; repeat per node.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, repeatable: true, configKey: 'reservedMemory',
  },
  {
    name: 'orch-reserved', type: 'keyValue', seedType: 'key=value pairs', seedDefault: 'none',
    help: 'Resources kept for orch components, as cpu=200m,memory=500Mi,pid=1000,ephemeral-storage=1Gi.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, repeatable: true, configKey: 'orchReserved',
  },
  {
    name: 'orch-reserved-cgroup', type: 'string', seedType: 'string', seedDefault: 'empty',
    help: 'Top-level cgroup of the orch components that --orch-reserved accounts for.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'orchReservedCgroup',
  },
  {
    name: 'system-reserved', type: 'keyValue', seedType: 'key=value pairs', seedDefault: 'none',
    help: 'Resources kept for the operating system and other non-orch processes.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, repeatable: true, configKey: 'systemReserved',
  },
  {
    name: 'system-reserved-cgroup', type: 'string', seedType: 'string', seedDefault: 'empty',
    help: 'Top-level cgroup of the processes that --system-reserved accounts for.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'systemReservedCgroup',
  },
  {
    name: 'enforce-node-allocatable', type: 'strings', seedType: 'strings', seedDefault: 'pods', default: 'pods',
    help: 'Where allocatable limits are enforced: none, or pods and the reserved cgroups.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, repeatable: true, configKey: 'enforceNodeAllocatable',
  },
  {
    name: 'experimental-allocatable-ignore-eviction', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Leave hard eviction thresholds out of the allocatable computation.',
    section: RUNTIME, deprecated: 'will be removed in 1.25 or later', implemented: true,
  },
  {
    name: 'qos-reserved', type: 'percentPairs', seedType: 'key=percentage pairs', seedDefault: 'none',
    help: 'Share of memory requests reserved per QoS level, as memory=50% (alpha, QOSReserved gate).',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, repeatable: true, configKey: 'qosReserved',
  },
  {
    name: 'enable-controller-attach-detach', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Leave volume attach and detach to the controller manager.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'enableControllerAttachDetach',
  },
  {
    name: 'volume-plugin-dir', type: 'string', seedType: 'string',
    seedDefault: '/usr/libexec/orch/agent-plugins/volume/exec/', default: '/usr/libexec/orch/agent-plugins/volume/exec/',
    help: 'Where third-party volume plugins are looked up.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'volumePluginDir',
  },
  {
    name: 'experimental-mounter-path', type: 'string', seedType: 'string', seedDefault: 'empty',
    help: 'Mount binary to use instead of the default one.',
    section: RUNTIME, deprecated: 'use CSI instead; will be removed in 1.25 or later', implemented: false,
  },
  {
    name: 'local-storage-capacity-isolation', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Account and limit local ephemeral storage per pod.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'localStorageCapacityIsolation',
  },
  {
    name: 'volume-stats-agg-period', type: 'duration', seedType: 'duration', seedDefault: '1m0s', default: '1m0s',
    help: 'How often volume disk usage is measured; a negative value turns it off.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'volumeStatsAggPeriod',
  },
  {
    name: 'max-pods', type: 'int32', seedType: 'int32', seedDefault: '110', default: '110',
    help: 'Most pods this node runs.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'maxPods',
  },
  {
    name: 'pods-per-core', type: 'int32', seedType: 'int32', seedDefault: '0', default: '0', min: 0,
    help: 'Most pods per CPU core, never above --max-pods; 0 turns it off.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'podsPerCore',
  },
  {
    name: 'pod-max-pids', type: 'int', seedType: 'int', seedDefault: '-1', default: '-1', min: -1,
    help: 'Most processes in one pod; -1 uses the node\'s allocatable pids.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'podPidsLimit',
  },
  {
    name: 'pod-cidr', type: 'cidrs', seedType: 'string', seedDefault: 'none',
    help: 'Pod address range in standalone mode (the cluster assigns it otherwise).',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'podCIDR',
  },
  {
    name: 'cluster-dns', type: 'strings', seedType: 'strings', seedDefault: 'none',
    help: 'DNS server addresses given to ClusterFirst pods; all must serve the same records.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, repeatable: true, configKey: 'clusterDNS',
  },
  {
    name: 'cluster-domain', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Cluster domain added to the DNS search list of containers.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'clusterDomain',
  },
  {
    name: 'resolv-conf', type: 'string', seedType: 'string', seedDefault: '/etc/resolv.conf', default: '/etc/resolv.conf',
    help: 'Resolver file that container DNS settings start from.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'resolvConf',
  },
  {
    name: 'hairpin-mode', type: 'string', enum: ['promiscuous-bridge', 'hairpin-veth', 'none'], seedType: 'string',
    seedDefault: 'promiscuous-bridge', default: 'promiscuous-bridge',
    help: 'How hairpin NAT is set up so a pod can reach itself through its Service.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'hairpinMode',
  },
  {
    name: 'make-iptables-util-chains', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Make sure the iptables helper chains exist on the host.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'makeIPTablesUtilChains',
  },
  {
    // The seed's type `RuntimeDefault` is how upstream's --help names this boolean flag (the word
    // quoted in its usage text); the flag itself is a switch.
    name: 'seccomp-default', type: 'bool', seedType: 'RuntimeDefault', seedDefault: 'none',
    help: 'Run every workload with the RuntimeDefault seccomp profile unless it sets another.',
    section: RUNTIME, implemented: false, configKey: 'seccompDefault',
  },
  {
    name: 'allowed-unsafe-sysctls', type: 'strings', seedType: 'strings', seedDefault: 'none',
    help: 'Unsafe sysctls pods may set, names or patterns ending in *.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, repeatable: true, configKey: 'allowedUnsafeSysctls',
  },
  {
    name: 'protect-kernel-defaults', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Fail instead of changing kernel tunables that differ from what the agent expects.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'protectKernelDefaults',
  },
  {
    name: 'kernel-memcg-notification', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Learn of memory thresholds from kernel memcg notifications instead of polling.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'kernelMemcgNotification',
  },
  {
    name: 'oom-score-adj', type: 'int32', seedType: 'int32', seedDefault: '-999', default: '-999', min: -1000, max: 1000,
    help: 'OOM score adjustment of the agent process.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'oomScoreAdj',
  },
  {
    name: 'max-open-files', type: 'int', seedType: 'int', seedDefault: '1000000', default: '1000000',
    help: 'Open file limit of the agent process.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'maxOpenFiles',
  },
  {
    name: 'maximum-dead-containers', type: 'int32', seedType: 'int32', seedDefault: '-1', default: '-1',
    help: 'Exited containers kept on the node in total; negative keeps all.',
    section: RUNTIME, deprecated: USE_EVICTION, implemented: false,
  },
  {
    name: 'maximum-dead-containers-per-container', type: 'int32', seedType: 'int32', seedDefault: '1', default: '1',
    help: 'Exited instances kept for each container.',
    section: RUNTIME, deprecated: USE_EVICTION, implemented: false,
  },
  {
    name: 'minimum-container-ttl-duration', type: 'duration', seedType: 'duration', seedDefault: 'none',
    help: 'How long an exited container is kept before it may be removed.',
    section: RUNTIME, deprecated: USE_EVICTION, implemented: false,
  },
  {
    name: 'minimum-image-ttl-duration', type: 'duration', seedType: 'duration', seedDefault: '2m0s', default: '2m0s',
    help: 'How long an unused image is kept before it may be removed.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'imageMinimumGCAge',
  },
  {
    name: 'image-gc-high-threshold', type: 'int32', seedType: 'int32', seedDefault: '85', default: '85', min: 0, max: 100,
    help: 'Disk usage percent that starts image garbage collection; 100 turns it off.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'imageGCHighThresholdPercent',
  },
  {
    name: 'image-gc-low-threshold', type: 'int32', seedType: 'int32', seedDefault: '80', default: '80', min: 0, max: 100,
    help: 'Disk usage percent image garbage collection frees down to; below the high threshold.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'imageGCLowThresholdPercent',
  },
  {
    name: 'eviction-hard', type: 'evictionThresholds', seedType: 'key=value pairs', seedDefault: 'none',
    help: 'Thresholds that evict pods at once, as memory.available<1Gi,nodefs.available<10%.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, repeatable: true, configKey: 'evictionHard',
  },
  {
    name: 'eviction-soft', type: 'evictionThresholds', seedType: 'key=value pairs', seedDefault: 'none',
    help: 'Thresholds that evict pods once held for their grace period.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, repeatable: true, configKey: 'evictionSoft',
  },
  {
    name: 'eviction-soft-grace-period', type: 'evictionDurations', seedType: 'key=value pairs', seedDefault: 'none',
    help: 'Grace period of each soft threshold, as memory.available=1m30s.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, repeatable: true, configKey: 'evictionSoftGracePeriod',
  },
  {
    name: 'eviction-minimum-reclaim', type: 'evictionQuantities', seedType: 'key=value pairs', seedDefault: 'none',
    help: 'Extra amount to free beyond a threshold once eviction starts, as imagefs.available=2Gi.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, repeatable: true, configKey: 'evictionMinimumReclaim',
  },
  {
    name: 'eviction-max-pod-grace-period', type: 'int32', seedType: 'int32', seedDefault: 'none',
    help: 'Most seconds a pod gets to stop on soft eviction; negative uses the pod\'s own value.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'evictionMaxPodGracePeriod',
  },
  {
    name: 'eviction-pressure-transition-period', type: 'duration', seedType: 'duration', seedDefault: '5m0s', default: '5m0s',
    help: 'How long a pressure condition must be gone before the node reports it cleared.',
    section: RUNTIME, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'evictionPressureTransitionPeriod',
  },

  // ---- Node agent: diagnostics ----
  {
    name: 'log-flush-frequency', type: 'duration', seedType: 'duration', seedDefault: '5s', default: '5s',
    help: 'Longest time log lines stay buffered.',
    section: DIAGNOSTICS, implemented: true, configKey: 'logging.flushFrequency',
  },
  {
    name: 'log-text-info-buffer-size', type: 'quantity', seedType: 'quantity', seedDefault: '0', default: '0',
    help: 'Buffer for info lines when text logs are split by stream (alpha, LoggingAlphaOptions gate).',
    section: DIAGNOSTICS, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'logging.options.text.infoBufferSize',
  },
  {
    name: 'log-text-split-stream', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Write errors to stderr and info to stdout (alpha).',
    section: DIAGNOSTICS, deprecated: USE_CONFIG_FILE, implemented: false, configKey: 'logging.options.text.splitStream',
  },
  {
    name: 'logging-format', type: 'string', enum: ['text'], seedType: 'string', seedDefault: 'text', default: 'text',
    help: 'Log line format; only text exists.',
    section: DIAGNOSTICS, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'logging.format',
  },
  {
    name: 'container-log-max-files', type: 'int32', seedType: 'int32', seedDefault: '5', default: '5', min: 2,
    help: 'Log files kept per container, at least 2 (beta).',
    section: DIAGNOSTICS, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'containerLogMaxFiles',
  },
  {
    name: 'container-log-max-size', type: 'quantity', seedType: 'string', seedDefault: '10Mi', default: '10Mi',
    help: 'Size at which a container log file is rotated (beta).',
    section: DIAGNOSTICS, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'containerLogMaxSize',
  },
  {
    name: 'v', short: 'v', type: 'int', seedType: 'int', seedDefault: 'none', min: 0,
    help: 'Log verbosity; higher numbers log more.',
    section: DIAGNOSTICS, implemented: true, configKey: 'logging.verbosity',
  },
  {
    name: 'vmodule', type: 'vmodule', seedType: 'pattern=N,...', seedDefault: 'none',
    help: 'Verbosity per source file, as pattern=N,... (text format only).',
    section: DIAGNOSTICS, implemented: true, configKey: 'logging.vmodule',
  },
  {
    name: 'version', type: 'version', seedType: 'version[=true]', seedDefault: 'none',
    help: 'Print the version and exit; --version=vX.Y.Z changes the version reported.',
    section: DIAGNOSTICS, implemented: true,
  },
  {
    name: 'help', short: 'h', type: 'bool', seedType: 'bool', seedDefault: 'none',
    help: 'Show this help.',
    section: DIAGNOSTICS, implemented: true,
  },

  // ---- Authentication (node agent) ----
  {
    name: 'anonymous-auth', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Let requests no authenticator rejects through as system:anonymous.',
    section: AUTHENTICATION, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'authentication.anonymous.enabled',
  },
  {
    name: 'client-ca-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'CA bundle that authenticates client certificates, by their CommonName.',
    section: AUTHENTICATION, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'authentication.x509.clientCAFile',
  },
  {
    name: 'authentication-token-webhook', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Check bearer tokens with TokenReview requests to the API server.',
    section: AUTHENTICATION, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'authentication.webhook.enabled',
  },
  {
    name: 'authentication-token-webhook-cache-ttl', type: 'duration', seedType: 'duration', seedDefault: '2m0s', default: '2m0s',
    help: 'How long token review answers are cached.',
    section: AUTHENTICATION, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'authentication.webhook.cacheTTL',
  },
  {
    name: 'authorization-mode', type: 'string', enum: ['AlwaysAllow', 'Webhook'], seedType: 'string',
    seedDefault: 'AlwaysAllow', default: 'AlwaysAllow',
    help: 'How requests are authorized: AlwaysAllow, or Webhook (SubjectAccessReview).',
    section: AUTHENTICATION, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'authorization.mode',
  },
  {
    name: 'authorization-webhook-cache-authorized-ttl', type: 'duration', seedType: 'duration', seedDefault: '5m0s', default: '5m0s',
    help: 'How long an "allowed" answer of the webhook is cached.',
    section: AUTHENTICATION, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'authorization.webhook.cacheAuthorizedTTL',
  },
  {
    name: 'authorization-webhook-cache-unauthorized-ttl', type: 'duration', seedType: 'duration', seedDefault: '30s', default: '30s',
    help: 'How long a "denied" answer of the webhook is cached.',
    section: AUTHENTICATION, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'authorization.webhook.cacheUnauthorizedTTL',
  },

  // ---- Events ----
  {
    name: 'event-qps', type: 'int32', seedType: 'int32', seedDefault: '50', default: '50', min: 0,
    help: 'Events created per second; 0 removes the limit.',
    section: EVENTS, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'eventRecordQPS',
  },
  {
    name: 'event-burst', type: 'int32', seedType: 'int32', seedDefault: '100', default: '100', min: 0,
    help: 'Events allowed in a burst above --event-qps; 0 means 100.',
    section: EVENTS, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'eventBurst',
  },

  // ---- Limits (the other rows of that table are declared above) ----
  {
    name: 'streaming-connection-idle-timeout', type: 'duration', seedType: 'duration', seedDefault: '4h0m0s', default: '4h0m0s',
    help: 'Idle time after which exec, attach and port-forward streams close; 0 never (4h cap regardless).',
    section: LIMITS, deprecated: USE_CONFIG_FILE, implemented: true, configKey: 'streamingConnectionIdleTimeout',
  },

  // ---- orch additions ----
  {
    name: 'print-config', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Print the effective configuration (defaults, file, drop-ins and flags merged) and exit.',
    section: 'orch', implemented: true, orchOnly: true,
  },
  clientNamesOption,
];
