/** The node agent's configuration: loading and merging, printing, node labels and start checks. */
export { AgentConfigError, type DirectoryEntry, type LoadAgentConfigurationInput, type LoadedAgentConfiguration, listDropIns, loadAgentConfiguration } from './load.js';
export type { ConfigSource } from './layers.js';
export { type ConfigFormat, formatAgentConfiguration } from './print.js';
export type { AgentConfiguration, ConfigMemoryReservation, ConfigTaint, ConfigVmoduleEntry } from './types.js';
export { agentConfigApiVersion, agentConfigKind, CONFIG_FIELDS, type ConfigField } from './schema.js';
export { allowedNodeLabels, allowedNodeLabelPrefixes, isAllowedNodeLabel, isReservedNodeLabel, validateNodeLabels } from './node-labels.js';
export { CGROUP2_CONTROLLERS, KERNEL_DEFAULTS, PROC_SWAPS, type ExistsCheck, type TextReader, checkCgroupV1, checkKernelDefaults, checkSwap, isSwapOn, sysctlPath } from './start-checks.js';
export { type LockAttempt, type LockFileDeps, type LockWatcher, acquireLockFile, contentionPath, lockContention, nodeLockDeps, waitForLockFile, watchLockContention } from './lock-file.js';
